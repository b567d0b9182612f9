"""Progress lines while workers start and build templates, and the run's one-line summaries.

Pure: metrics events in, lines out (the reporter is stepped by hand, on a fake clock).
"""

from typing import Any

from snakemake_executor_plugin_sticky._progress import (
    BUILDING,
    STARTING,
    Pending,
    ProgressReporter,
    ProgressState,
    end_line,
    progress_line,
    report_due,
    results_line,
    start_line,
)


def fold(*records: dict[str, Any]) -> list[Pending]:
    state = ProgressState()
    for record in records:
        state.feed(record)
    return state.pending()


def test_a_started_worker_is_starting_until_it_connects():
    started = {
        "event": "worker_started",
        "worker": "w1",
        "template": "m",
        "t": 1.0,
        "handle": "pid 7",
    }
    assert fold(started) == [Pending("w1", "m", STARTING, 1.0, "pid 7")]
    assert fold(started, {"event": "worker_connected", "worker": "w1", "t": 2.0}) == []


def test_a_worker_builds_from_dispatch_until_built_or_failed():
    building = {"event": "state_building", "worker": "w1", "template": "m", "t": 2.0}
    assert fold(building) == [Pending("w1", "m", BUILDING, 2.0)]
    for end in ("state_built", "state_failed", "worker_lost", "worker_ended", "worker_stopped"):
        assert fold(building, {"event": end, "worker": "w1", "template": "m", "t": 9.0}) == []


def test_pending_workers_come_longest_waiting_first():
    pending = fold(
        {"event": "state_building", "worker": "w2", "template": "b", "t": 5.0},
        {"event": "worker_started", "worker": "w3", "template": "a", "t": 1.0},
        {"event": "invocation", "worker": "w9", "t": 6.0},  # another worker: no change
    )
    assert [p.worker for p in pending] == ["w3", "w2"]


def test_a_line_is_due_after_the_delay_then_every_interval():
    pending = [Pending("w1", "m", BUILDING, 10.0)]
    assert not report_due([], 100.0, None)
    assert not report_due(pending, 12.0, None, delay=3, interval=10)
    assert report_due(pending, 13.0, None, delay=3, interval=10)
    assert not report_due(pending, 20.0, 13.0, delay=3, interval=10)
    assert report_due(pending, 23.0, 13.0, delay=3, interval=10)


def test_the_progress_line_names_worker_template_and_elapsed_time():
    line = progress_line(
        [
            Pending("w1", "model", BUILDING, 2.0),
            Pending("w2", "prep", STARTING, 5.0, "Slurm job 42"),
        ],
        14.4,
    )
    assert line == (
        "sticky: worker w1 building template 'model' (12 s); "
        "worker w2 starting for template 'prep' (9 s, Slurm job 42)"
    )


class FakeMetrics:
    """What the reporter reads of a MetricsLog, on a clock the test sets."""

    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []
        self.now = 0.0

    def records_since(self, index: int) -> list[dict[str, Any]]:
        return self.records[index:]

    def elapsed(self) -> float:
        return self.now


def test_the_reporter_speaks_while_a_build_lasts_and_stops_after():
    metrics, said = FakeMetrics(), []
    reporter = ProgressReporter(metrics, said.append, delay=3, interval=5)  # type: ignore[arg-type]
    metrics.records.append({"event": "state_building", "worker": "w1", "template": "m", "t": 0.0})
    for now in (1.0, 2.0, 3.5, 4.0, 8.0, 9.0):
        metrics.now = now
        reporter.step()
    assert said == [
        "sticky: worker w1 building template 'm' (4 s)",
        "sticky: worker w1 building template 'm' (9 s)",
    ]
    metrics.records.append({"event": "state_built", "worker": "w1", "template": "m", "t": 9.5})
    metrics.now = 30.0
    assert reporter.step() is None and len(said) == 2


def test_the_start_line_counts_jobs_per_template_and_local_ones():
    line = start_line(
        ["model", None, "model", "prep", None],
        per_job=1,
        max_workers=4,
        backend="local",
        restored=3,
    )
    assert line == (
        "sticky: 6 job(s) to run: 3 as invocations of 2 template(s) ('model' 2, 'prep' 1) on up "
        "to 4 local worker(s), 1 whose rule picks its template per job, 2 through the local "
        "executor; 3 restored from checkpoints"
    )
    assert start_line([None], max_workers=1, backend="slurm") == (
        "sticky: 1 job(s) to run: 1 through the local executor"
    )


def test_the_end_line_sums_invocations_workers_builds_and_checkpoints():
    records = [
        {"event": "worker_started", "worker": "w1", "template": "m"},
        {"event": "worker_started", "worker": "w2", "template": "m"},
        {"event": "state_built", "worker": "w1", "template": "m", "seconds": 2.5},
        {"event": "state_built", "worker": "w2", "template": "m", "seconds": 4.0},
        *[{"event": "invocation", "worker": "w1", "ok": i != 0} for i in range(6)],
    ]
    assert end_line(records, restored=2, stored=6) == (
        "sticky: run summary: 6 invocation(s) (1 failed) on 2 worker(s), 4 on a warm template; "
        "2 template build(s), 6.5 s in all (longest: 'm' on w2, 4.0 s); "
        "checkpoints: 2 restored, 6 stored"
    )
    assert end_line([]) == (
        "sticky: run summary: 0 invocation(s) (0 failed) on 0 worker(s), 0 on a warm template"
    )


def test_the_metrics_log_hands_out_new_records_and_its_clock(tmp_path):
    """The reporter reads a real MetricsLog incrementally, on the records' own clock."""
    from snakemake_executor_plugin_sticky._metrics import MetricsLog

    log = MetricsLog(tmp_path / "metrics.jsonl")
    log.write("worker_started", worker="w1", template="m")
    log.write("state_building", worker="w1", template="m")
    assert [r["event"] for r in log.records_since(1)] == ["state_building"]
    assert log.records_since(2) == []
    assert log.elapsed() >= log.records()[-1]["t"]
    log.close()


def test_the_results_line_names_the_final_outputs_made_and_not_made():
    assert results_line([], []) is None
    assert results_line(["results/report.md"], []) == "sticky: results: results/report.md"
    many = [f"out/{i}.txt" for i in range(5)]
    assert results_line(many, []) == "sticky: results: out/0.txt, out/1.txt, out/2.txt (and 2 more)"
    assert results_line(["a"], ["b"]) == "sticky: not made: b; made: a"
    assert results_line([], ["b"]) == "sticky: not made: b"


def test_final_outputs_are_the_target_rules_outputs_or_the_inputs_of_rule_all():
    from types import SimpleNamespace

    from snakemake_executor_plugin_sticky._snakemake_compat import final_outputs

    everything = SimpleNamespace(rule="all", output=[], input=["r/report.md", "r/a.tsv"])
    target = SimpleNamespace(rule="make", output=["r/x.txt"], input=["in.txt"])
    workflow = SimpleNamespace(dag=SimpleNamespace(targetjobs=[target, everything]))
    assert final_outputs(workflow) == ["r/report.md", "r/a.tsv", "r/x.txt"]
    assert final_outputs(SimpleNamespace()) == []
