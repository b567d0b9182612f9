"""bench/peers.py's pure parts (issue 29, part 1): the marginal cost per claim, the sticky
command as profiles/local runs it."""

from tests.conftest import bench_module

peers = bench_module("peers")


def test_marginal_cost_per_claim_cancels_start_up():
    seconds = {200: 9.0, 600: 17.0, 6000: 125.0}
    assert peers.marginal_ms([200, 600, 6000], seconds) == {"200-600": 20.0, "600-6000": 20.0}
    assert peers.marginal_ms([200], seconds) == {}


def test_the_sticky_run_is_the_shipped_setup_at_one_claim_per_invocation():
    cmd = peers.sticky_cmd(600, "data/claims_6000.tsv", ["all", "--until", "verify"])
    assert cmd[3:6] == ["all", "--until", "verify"]  # before --quiet's list
    i = cmd.index("--config")
    assert cmd[i + 1 : i + 4] == ["claims=data/claims_6000.tsv", "n_claims=600", "batch_size=1"]
    for option in (["--executor", "sticky"], ["--scheduler", "incremental"], ["-j", "2"]):
        j = cmd.index(option[0])
        assert cmd[j : j + 2] == option
    assert cmd[cmd.index("--max-jobs-per-timespan") + 1] == "100000/1s"
    assert not any("isolation" in part for part in cmd)  # the workflow's own mode


def test_the_queued_variant_hands_out_two_jobs_per_worker_and_nothing_else_changes():
    plain = peers.sticky_cmd(600, "t.tsv", ["all"])
    queued = peers.sticky_cmd(600, "t.tsv", ["all"], queued=True)
    j = queued.index("-j")
    assert queued[j : j + 4] == ["-j", "4", "--sticky-max-workers", "2"]
    assert plain[j : j + 2] == ["-j", "2"]
    assert queued[:j] == plain[:j] and queued[j + 4 :] == plain[j + 2 :]
    assert all(peers.is_sticky(s) for s in ("sticky", *peers.FLOOR_SYSTEMS))
    assert not any(peers.is_sticky(s) for s in ("dask", "ray", "limit"))
