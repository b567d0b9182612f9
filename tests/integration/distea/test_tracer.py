"""The tracer in a real subprocess: only workflow code, first/last per epoch, clocks, dump."""

import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import pythons_with_monitoring

pytestmark = pytest.mark.integration

PLUGINS = Path(__file__).resolve().parents[3] / "plugins" / "snakemake-logger-plugin-distea"

PROGRAM = """
import sys
sys.path.insert(0, {plugins!r})
from distea import tracer
import helper

trace = tracer.start("script", job="J[out.txt]")
helper.twice(3)
trace.send("m1", "peer")
helper.twice(4)
json_ok = __import__("json").dumps({{"a": 1}})  # library code: not traced
open("data.txt").read()
trace.recv("m2", 1000, "peer")
helper.nested()
"""

HELPER = """
def twice(x):
    return inner(x) * 2


def inner(x):
    return x + 1


def nested():
    def local():
        return 1
    return local()
"""


def _run(tmp_path: Path, python: str, env: "dict[str, str] | None" = None) -> list[dict]:
    (tmp_path / "helper.py").write_text(textwrap.dedent(HELPER))
    (tmp_path / "main.py").write_text(PROGRAM.format(plugins=str(PLUGINS)))
    (tmp_path / "data.txt").write_text("x")
    traces = tmp_path / "traces"
    shutil.rmtree(traces, ignore_errors=True)
    proc = subprocess.run(
        [python, "main.py"],
        cwd=tmp_path,
        env={"DISTEA_TRACE": str(traces), "PATH": "/usr/bin:/bin", **(env or {})},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    (log,) = traces.glob("script-*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()]


def _check(records: list[dict], nested: bool = True) -> None:
    head = records[0]
    assert head["k"] == "header" and head["job"] == "J[out.txt]" and head["distea"] >= 1
    fns = [r for r in records if r["k"] == "fn"]
    names = {r["f"] for r in fns}
    assert {"main.<module>", "helper.twice", "helper.inner", "helper.nested"} <= names
    assert ("helper.nested.<locals>.local" in names) == nested
    assert not any(n.startswith(("json", "distea", "tracer")) for n in names)
    send = next(r for r in records if r["k"] == "send")
    recv = next(r for r in records if r["k"] == "recv")
    assert recv["c"] == 1001  # Lamport: max(own, sender) + 1
    # Two epochs of twice(): before the send, and between send and receive.
    twice = sorted(r["c"] for r in fns if r["f"] == "helper.twice")
    assert len(twice) == 2
    assert twice[0][1] < send["c"] < twice[1][0] <= twice[1][1] < recv["c"]
    nested = next(r["c"] for r in fns if r["f"] == "helper.nested")
    assert nested[0] > recv["c"]
    opened = next(r for r in records if r["k"] == "open")
    assert opened["p"] == "data.txt" and send["c"] < opened["c"] < recv["c"]
    end = records[-1]
    assert end["k"] == "end" and end["c"] > nested[1]
    module = [r["c"] for r in fns if r["f"] == "main.<module>"]
    assert min(c[0] for c in module) == 1  # entered when tracing started
    assert nested[1] < max(c[1] for c in module) < end["c"]  # returned after everything


def test_settrace_tracer(tmp_path):
    """sys.settrace with line events off: every function, nested ones too."""
    _check(_run(tmp_path, sys.executable, {"DISTEA_TRACE_MODE": "settrace"}))


def test_instrument_tracer(tmp_path):
    """The 3.11 default: function bodies record themselves, nested functions included, also in
    modules imported before the start ("wrap" is the old name of the mode)."""
    for mode in ("instrument", "wrap"):
        _check(_run(tmp_path, sys.executable, {"DISTEA_TRACE_MODE": mode}))


def test_digest_mode_records_call_digests(tmp_path):
    records = _run(tmp_path, sys.executable, {"DISTEA_DIGESTS": "1"})
    digests = {r["f"]: r for r in records if r["k"] == "digest"}
    assert digests["helper.twice"]["n"] == 2 and digests["helper.inner"]["n"] == 2
    again = _run(tmp_path, sys.executable, {"DISTEA_DIGESTS": "1"})
    assert {r["f"]: r["h"] for r in again if r["k"] == "digest"} == {
        f: r["h"] for f, r in digests.items()
    }


def test_sys_monitoring_tracer(tmp_path):
    """Python 3.12+: sys.monitoring, foreign code DISABLEd after its first event."""
    python = next(iter(pythons_with_monitoring()), None)
    if python is None:
        pytest.skip("no Python 3.12+ interpreter here to exercise sys.monitoring")
    _check(_run(tmp_path, python))
