"""The metrics log and the end-of-run summary."""

import json

from snakemake_executor_plugin_sticky._metrics import MetricsLog, RunTotals, read_records, summarize
from snakemake_executor_plugin_sticky._progress import end_line


def test_records_are_jsonl_with_event_and_time(tmp_path):
    log = MetricsLog(tmp_path / "m" / "metrics.jsonl")
    log.write("state_built", worker="w1", template="t", seconds=1.5)
    log.close()
    (record,) = [json.loads(x) for x in (tmp_path / "m" / "metrics.jsonl").read_text().splitlines()]
    assert record["event"] == "state_built" and record["seconds"] == 1.5 and record["t"] >= 0


def test_summary_counts_workers_builds_and_latency():
    records = [
        {"event": "state_built", "worker": "w1", "template": "t", "seconds": 2.0},
        *[
            {
                "event": "invocation",
                "worker": "w1",
                "template": "t",
                "ok": i != 0,
                "latency_s": 0.01 * (i + 1),
            }
            for i in range(10)
        ],
        {"event": "worker_lost", "worker": "w2"},
        {"event": "requeued", "id": 3, "worker": "w2"},
    ]
    text = summarize(records)
    assert "10 invocations (1 failed) on 1 worker(s)" in text
    assert "median 55.0 ms" in text
    assert "worker w1: built 't' in 2.00 s, then ran 10 invocation(s)" in text
    assert "1 worker(s) lost, 1 invocation(s) requeued" in text


def test_no_summary_without_invocations():
    assert summarize([{"event": "worker_started"}]) is None


def test_records_are_read_back_not_kept_in_memory(tmp_path):
    """Why (issue 17): one record per invocation stayed in memory for the whole run (about
    0.4 KiB each, 60 MiB at 150,000 invocations); they are read back from the file."""
    import tracemalloc

    path = tmp_path / "metrics.jsonl"
    path.write_text('{"event": "from_an_earlier_log", "t": 0}\n')
    log = MetricsLog(path)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for i in range(2_000):
            log.write("invocation", id=i, worker="w1", template="t", ok=True, latency_s=0.01)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # 50 bytes a record at most (kept in memory, 2,000 records hold about 650 KB).
    assert grown < 100_000, f"{grown} bytes kept for 2,000 records"
    invocations = log.records("invocation")
    assert len(invocations) == 2_000 and invocations[-1]["id"] == 1_999
    assert len(log.records()) == 2_000  # not the earlier log's record
    log.close()
    assert len(log.records("invocation")) == 2_000


def test_read_records_leaves_a_line_being_written_for_the_next_read(tmp_path):
    """Readers of a live run (the Slurm benchmark's pilot killer) see every complete record
    and never a half-written one."""
    path = tmp_path / "metrics.jsonl"
    log = MetricsLog(path)
    log.write("worker_started", worker="w1", slurm_job="42")
    log.write("state_built", worker="w1", seconds=1.5)
    with open(path, "a", encoding="utf-8") as f:
        f.write('{"event": "invocation", "t": 3')  # a writer mid-line
    records = read_records(path)
    log.close()
    assert [r["event"] for r in records] == ["worker_started", "state_built"]
    assert records[0]["slurm_job"] == "42"


def test_the_end_of_run_lines_stream_the_records_from_the_file(tmp_path):
    """Why (issue 17): reading back one record per invocation at the end of a 150,000-job
    run put every record in memory at once, at the main process's peak RSS. The totals are
    gathered in one pass over an iterator; summarize and end_line give what they gave for the
    list."""
    log = MetricsLog(tmp_path / "metrics.jsonl")
    log.write("worker_started", worker="w1", template="t")
    log.write("state_built", worker="w1", template="t", seconds=2.0)
    for i in range(300):
        log.write("invocation", worker="w1", template="t", ok=i % 100 != 0, latency_s=i / 1000)
    log.write("worker_lost", worker="w1")
    log.close()
    records = log.iter_records()
    assert not isinstance(records, list)
    totals = RunTotals.of(records)
    assert next(records, None) is None  # consumed once, in one pass
    assert summarize(totals) == summarize(log.records())
    assert "300 invocations (3 failed) on 1 worker(s)" in summarize(totals)
    assert end_line(totals) == end_line(log.records())
    assert totals.latencies.itemsize == 8  # one float per invocation, not its record
