"""The distea logger plugin fed LogRecords as Snakemake's logging emits them."""

import json
import logging

from distea import read_logs
from snakemake_logger_plugin_distea import LogHandler, LogHandlerSettings


def _record(**extra):
    record = logging.LogRecord("snakemake", logging.INFO, __file__, 1, "msg", None, None)
    record.__dict__.update(extra)
    return record


def test_jobs_with_hashes_and_annotations_stripped(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "in.txt").write_text("data")
    handler = LogHandler(None, LogHandlerSettings(dir=str(tmp_path / "logs")))
    assert not handler.writes_to_stream and not handler.writes_to_file
    handler.emit(
        _record(
            event="job_info",
            jobid=3,
            rule_name="step",
            wildcards={"s": "A"},
            input=["in.txt", "missing.txt"],
            output=["out.txt (temp)"],
            log=[],
        )
    )
    (tmp_path / "out.txt").write_text("result")
    handler.emit(_record(event="job_finished", job_id=3))
    handler.emit(_record(event="job_info", jobid=4, rule_name="bad", wildcards={}, output=["x"]))
    handler.emit(_record(event="job_error", jobid=4))
    handler.emit(_record(event="progress", done=1, total=2))  # ignored
    handler.close()
    (log,) = (tmp_path / "logs").glob("snakemake-*.jsonl")
    lines = [json.loads(line) for line in log.read_text().splitlines()]
    assert [r["k"] for r in lines] == ["header", "job", "done", "job", "fail"]
    job = lines[1]
    assert job["input"][0][0] == "in.txt" and len(job["input"][0][1]) == 32
    assert job["input"][1] == ["missing.txt", None]
    assert lines[2]["output"][0][0] == "out.txt" and lines[2]["output"][0][1]
    trace = read_logs(tmp_path / "logs")
    assert trace.jobs["step[out.txt]"].ok is True
    assert trace.jobs["bad[x]"].ok is False


def test_a_broken_record_never_breaks_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    handler = LogHandler(None, LogHandlerSettings(dir=str(tmp_path / "logs")))
    errors = []
    handler.handleError = errors.append  # type: ignore[method-assign]
    try:
        handler.emit(_record(event="job_info", jobid=1, rule_name="r", wildcards=42, output=[]))
    finally:
        handler.close()  # an open log file left to the garbage collector is a ResourceWarning
    assert errors  # reported through logging's own error path, not raised
