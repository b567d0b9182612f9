"""Every bad sticky setting is one line naming the flag, the value and the fix (pure checks)."""

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from snakemake_executor_plugin_sticky.settings import (
    ExecutorSettings,
    listen_address_problem,
    settings_problems,
)
from tests.conftest import examples

BAD = [
    ("max_workers", -1, "--sticky-max-workers -1: must be at least 1"),
    ("max_workers", 0, "--sticky-max-workers 0: must be at least 1"),
    ("heartbeat_timeout", 0.0, "--sticky-heartbeat-timeout 0.0: must be a number of seconds"),
    ("heartbeat_timeout", 1.5, "at least 2"),
    ("heartbeat_timeout", math.nan, "--sticky-heartbeat-timeout nan"),
    ("idle_timeout", -5.0, "--sticky-idle-timeout -5.0: must be a number of seconds above 0"),
    ("idle_timeout", 0.0, "--sticky-idle-timeout 0.0"),
    ("pilot_start_timeout", 0.0, "--sticky-pilot-start-timeout 0.0"),
    ("port", -1, "--sticky-port -1: must be a TCP port"),
    ("port", 65536, "--sticky-port 65536"),
    ("max_requeues", -1, "--sticky-max-requeues -1: must be 0 or more"),
    ("listen_address", "256.1.1.1", "--sticky-listen-address 256.1.1.1: is not a valid IP"),
    ("listen_address", "1.2.3", "--sticky-listen-address 1.2.3: is not a valid IP"),
    ("listen_address", "::zz", "--sticky-listen-address ::zz"),
    ("listen_address", "", "--sticky-listen-address '': must be an address"),
    # Settings of the checkpoint store, given without the store (issue 31).
    ("checkpoints_roots", "data=/data", "--sticky-checkpoints-roots data=/data: has no effect"),
    ("checkpoints_key", "site.key", "--sticky-checkpoints-key site.key: has no effect without"),
    ("checkpoints_plan", True, "--sticky-checkpoints-plan: has no effect without --sticky-chec"),
]


@pytest.mark.parametrize(("name", "value", "expected"), BAD)
def test_each_bad_setting_is_one_line_naming_flag_value_and_fix(name, value, expected):
    problems = settings_problems(dataclasses.replace(ExecutorSettings(), **{name: value}))
    assert len(problems) == 1, problems
    assert expected in problems[0]
    assert "\n" not in problems[0]


def test_defaults_and_ordinary_values_are_accepted():
    assert settings_problems(ExecutorSettings()) == []
    ok = ExecutorSettings(
        max_workers=1,
        heartbeat_timeout=2.0,
        idle_timeout=math.inf,
        port=65535,
        max_requeues=0,
        listen_address="::1",
    )
    assert settings_problems(ok) == []
    store = ExecutorSettings(
        checkpoints="/tmp/store", checkpoints_plan=True, checkpoints_roots="data=/data"
    )
    assert settings_problems(store) == []
    for address in ["0.0.0.0", "127.0.0.1", "localhost", "node-12.cluster", "[::1]", "::"]:
        assert listen_address_problem(address) is None, address


@settings(max_examples=examples(200), deadline=None, derandomize=True)
@given(
    max_workers=st.one_of(st.none(), st.integers(-5, 5)),
    heartbeat=st.floats(allow_nan=True, allow_infinity=True),
    port=st.integers(-10, 70000),
    requeues=st.integers(-3, 3),
)
def test_generated_settings_are_refused_exactly_when_invalid(
    max_workers, heartbeat, port, requeues
):
    s = ExecutorSettings(
        max_workers=max_workers, heartbeat_timeout=heartbeat, port=port, max_requeues=requeues
    )
    problems = settings_problems(s)
    expected = {
        "--sticky-max-workers": max_workers is not None and max_workers < 1,
        "--sticky-heartbeat-timeout": not (heartbeat >= 2.0),
        "--sticky-port": not 0 <= port <= 65535,
        "--sticky-max-requeues": requeues < 0,
    }
    flagged = {flag for flag in expected if any(p.startswith(flag + " ") for p in problems)}
    assert flagged == {flag for flag, bad in expected.items() if bad}
    assert len(problems) == len(flagged)


@pytest.mark.parametrize(
    ("store", "outputs", "clash"),
    [
        ("out", ["out/0.txt"], "out/0.txt"),  # the store is the outputs' folder
        ("out/ckpt", ["out"], "out"),  # inside a directory() output
        ("a.txt", ["a.txt"], "a.txt"),  # a file output's own path
        (".ckpt", ["out/0.txt", "logs/a.log"], None),
        ("out2", ["out/0.txt"], None),  # a shared prefix is not a folder
    ],
)
def test_a_store_among_the_outputs_is_found(store, outputs, clash, tmp_path, monkeypatch):
    """Issue 31's red team, case 25: --sticky-checkpoints out stored into the outputs' folder
    (rm -rf out then deleted the store)."""
    from types import SimpleNamespace

    from snakemake_executor_plugin_sticky.executor import store_clash

    monkeypatch.chdir(tmp_path)
    job = SimpleNamespace(output=outputs[:1], log=outputs[1:])
    assert store_clash(store, [job]) == clash


def test_rule_locations_are_lines_as_written():
    from types import SimpleNamespace

    from snakemake_executor_plugin_sticky._snakemake_compat import rule_location

    rule = SimpleNamespace(name="square", lineno=11, snakefile="/w/Snakefile")
    workflow = SimpleNamespace(linemaps={"/w/Snakefile": {11: 4}})
    assert rule_location(workflow, rule) == "rule square (line 4 of /w/Snakefile)"
    assert rule_location(SimpleNamespace(), rule) == "rule square (line 11 of /w/Snakefile)"


def test_a_second_ctrl_c_while_stopping_is_swallowed_then_handed_back():
    import signal
    import time

    from snakemake_executor_plugin_sticky.executor import _swallow_sigint

    seen = []
    original = signal.signal(signal.SIGINT, lambda signum, frame: seen.append(signum))
    mine = signal.getsignal(signal.SIGINT)
    try:
        _swallow_sigint(seconds=1.0)
        signal.raise_signal(signal.SIGINT)  # inside the window: swallowed
        assert seen == []
        time.sleep(1.05)
        signal.raise_signal(signal.SIGINT)  # after it: the previous handler's, reinstalled
        assert seen == [signal.SIGINT] and signal.getsignal(signal.SIGINT) is mine
    finally:
        signal.signal(signal.SIGINT, original)
