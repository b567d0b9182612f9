"""Malformed, truncated and mixed-version logs: a clear message naming file and line."""

import json

import pytest

from distea import Change, LogFormatError, analyse, read_logs
from distea._cli import main


def _good(logs):
    logs.logger([{"rule": "A", "wildcards": {}, "input": [], "output": [["a.txt", "h"]]}])
    logs.process("p1", [logs.fn("lib.f", 1, 2), {"k": "end", "c": 3}], job="A[a.txt]")


def test_truncated_last_line_is_a_warning_and_the_rest_is_used(logs):
    _good(logs)
    path = logs.root / "p1.jsonl"
    path.write_text(
        path.read_text().rstrip("\n").rsplit("\n", 1)[0] + '\n{"k": "fn", "f": "lib.g", "c'
    )
    trace = read_logs(logs.root)
    assert any(f"{path}:3: truncated last record" in w for w in trace.warnings)
    assert any("ended without writing its function records" in w for w in trace.warnings)
    assert trace.processes["p1"].fn_ids  # lib.f survived
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert [j.name for j in result.jobs] == ["A[a.txt]"]


def test_garbled_record_in_the_middle_is_skipped_with_its_line(logs):
    _good(logs)
    path = logs.root / "p1.jsonl"
    lines = path.read_text().splitlines()
    lines.insert(1, "{not json")
    lines.insert(2, json.dumps({"k": "fn", "f": "lib.h"}))  # lacks its clocks
    path.write_text("\n".join(lines) + "\n")
    trace = read_logs(logs.root)
    assert any(f"{path}:2: unreadable record" in w for w in trace.warnings)
    assert any(f"{path}:3: unreadable record" in w for w in trace.warnings)
    assert trace.functions == ["lib.f"]


def test_newer_format_version_is_refused_by_name(logs):
    _good(logs)
    path = logs.root / "p2.jsonl"
    path.write_text(
        json.dumps({"distea": 99, "k": "header", "source": "tracer", "process": "x"}) + "\n"
    )
    with pytest.raises(
        LogFormatError, match=r"p2\.jsonl:1: written by log format version 99.*upgrade"
    ):
        read_logs(logs.root)


def test_not_a_distea_log(logs):
    (logs.root / "other.jsonl").write_text('{"hello": 1}\n')
    with pytest.raises(LogFormatError, match=r"other\.jsonl:1: not a DISTEA log"):
        read_logs(logs.root)


def test_mostly_corrupt_file_is_refused(logs):
    _good(logs)
    path = logs.root / "p1.jsonl"
    path.write_text(path.read_text() + "garbage\n" * 30)
    with pytest.raises(LogFormatError, match=r"30 of 32 records are unreadable"):
        read_logs(logs.root)


def test_cli_reports_errors_without_traceback(logs, capsys):
    (logs.root / "other.jsonl").write_text("{}\n")
    assert main(["impact", "--logs", str(logs.root), "--change", "func:x"]) == 2
    err = capsys.readouterr().err
    assert "distea: error:" in err and "other.jsonl:1" in err and "Traceback" not in err
    assert main(["impact", "--logs", str(logs.root / "missing"), "--change", "func:x"]) == 2
    assert "no such log directory" in capsys.readouterr().err
    _good(logs)
    (logs.root / "other.jsonl").unlink()
    assert main(["impact", "--logs", str(logs.root), "--change", "nonsense"]) == 2
    assert "write KIND:NAME" in capsys.readouterr().err


def test_cli_table_json_and_report(logs, capsys, tmp_path):
    _good(logs)
    query = ["impact", "--logs", str(logs.root), "--change", "func:lib.f", "--json"]
    assert main([*query, "--explain", "full"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert [j["name"] for j in payload["jobs"]] == ["A[a.txt]"]
    assert payload["outputs"][0]["chain"][0] == "func:lib.f first ran in job A[a.txt]"
    # Without --explain full: the summary (issue 31), names but no chains.
    assert main(query) == 0
    short = json.loads(capsys.readouterr().out)
    assert [j["name"] for j in short["jobs"]] == ["A[a.txt]"] and short["outputs"] == ["a.txt"]
    assert short["counts"]["jobs"] == 1 and short["jobs_by_rule"] == {"A": 1}
    assert short["top_chains"][0]["jobs"] == 1
    report = tmp_path / "r" / "report.md"
    args = ["impact", "--logs", str(logs.root), "--change", "func:lib.f", "--report", str(report)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "A[a.txt]" in out and "a.txt" in out
    assert "`a.txt`" in report.read_text()
    assert main(["list", "--logs", str(logs.root)]) == 0
    assert "lib.f" in capsys.readouterr().out


def test_plain_snakemake_log(tmp_path):
    """Where only .snakemake/log exists: jobs and file edges, without hashes or functions."""
    log = tmp_path / "2026-01-01T000000.snakemake.log"
    log.write_text(
        "Building DAG of jobs...\n"
        "[Sun Nov 29 10:00:00 2026]\nlocalrule prepare:\n    input: data/S1.txt\n"
        "    output: prep/S1.json\n    jobid: 2\n    reason: Missing output files\n"
        "    wildcards: s=S1\n    resources: tmpdir=/tmp\n\n"
        "[Sun Nov 29 10:00:01 2026]\nFinished jobid: 2 (Rule: prepare)\n"
        "[Sun Nov 29 10:00:01 2026]\nrule score:\n    input: prep/S1.json\n"
        "    output: score/S1.txt\n    jobid: 1\n    wildcards: s=S1\n\n"
        "rule other:\n    output: o.txt\n    jobid: 3\n"
    )
    result = analyse(tmp_path, [Change.parse("file:data/S1.txt")])
    assert [j.name for j in result.jobs] == ["prepare[prep/S1.json]", "score[score/S1.txt]"]
    assert any("plain Snakemake log" in w for w in read_logs(tmp_path).warnings)
