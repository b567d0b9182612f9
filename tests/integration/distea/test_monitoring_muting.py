"""sys.monitoring with muting (events DISABLEd while recording them again could not change the
record, re-enabled at every clock change) writes exactly the records the plain callbacks write.

Each program runs in a Python 3.12+ child twice, once per kind of callbacks
(``ProcessTrace.mute_monitoring``), and the two logs must agree record for record after the
header: every first entry and last return per epoch, every message, read and clock. The
programs reach workflow functions through calls, loops, a dispatch table,
``functools.partial``, a decorator's closure, callbacks, generators resumed across epochs,
recursion (also ticking the clock between returns), a send where only muted code runs until
the next return, exceptions, threads (joined, so that both
runs interleave alike), job contexts and spans, with sends, receives, file and parameter
reads, template and state notes between and inside the calls. Skipped without a 3.12+.
"""

import json
import shutil
import subprocess
import textwrap
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.conftest import examples, pythons_with_monitoring

pytestmark = pytest.mark.integration

PLUGINS = Path(__file__).resolve().parents[3] / "plugins" / "snakemake-logger-plugin-distea"

WORKFLOW = """
import functools
import threading

TRACE = None
SENT = [0]


def leaf(x):
    return x + 1


def twice(x):
    return leaf(x) * 2


def fact(n):
    return 1 if n <= 1 else n * fact(n - 1)


def rec_tick(n):
    if n == 0:
        return 0
    below = rec_tick(n - 1)
    TRACE.note_state("J", True, "between returns")
    return below + 1


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def decorated(x):
    return leaf(x)


def scaled(x, factor):
    return x * factor


DISPATCH = {"twice": twice, "leaf": leaf, "half": functools.partial(scaled, factor=0.5)}
CALLBACKS = [leaf, decorated, lambda x: x - 1]


def gen(n):
    for i in range(n):
        yield leaf(i)


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return twice(self.v)


def boom(x):
    raise ValueError(x)


def guarded(x):
    try:
        boom(x)
    except ValueError:
        return leaf(x)


def message():
    SENT[0] += 1
    return f"m{SENT[0]}"


def send_in_loop(n):
    ids = [message() for _ in range(n)]
    for i in range(n):
        leaf(i)
        if i == n // 2:
            TRACE.send(ids[i], "peer")  # only muted code runs after it until the return


def within(ops):
    run(ops)
    return leaf(len(ops))


def run(ops):
    for op in ops:
        step(op)


def step(op):
    kind = op[0]
    if kind == "call":
        twice(op[1])
    elif kind == "loop":
        for i in range(op[1]):
            leaf(i)
    elif kind == "dispatch":
        for key in DISPATCH:
            DISPATCH[key](3)
    elif kind == "callbacks":
        for cb in CALLBACKS:
            cb(2)
    elif kind == "gen":
        g = gen(4)
        next(g)
        TRACE.send(message(), "peer")
        next(g)
        TRACE.note_template("t")
        list(g)
    elif kind == "rec":
        fact(op[1])
    elif kind == "rectick":
        rec_tick(op[1])
    elif kind == "sendloop":
        send_in_loop(op[1])
    elif kind == "send":
        TRACE.send(message(), "peer")
    elif kind == "recv":
        TRACE.recv(message(), op[1], "peer")
    elif kind == "open":
        with open(f"data{op[1]}.txt") as f:
            f.read()
    elif kind == "param":
        TRACE.note_param(f"p{op[1]}", "J")
    elif kind == "tmpl":
        TRACE.note_template("t")
    elif kind == "state":
        TRACE.note_state("J", False, "e")
    elif kind == "guarded":
        guarded(op[1])
    elif kind == "box":
        Box(op[1]).get()
    elif kind == "inside":
        within(op[1])
    elif kind == "ctx":
        token = TRACE.begin_context()
        run(op[1])
        TRACE.end_context(token, "J")
    elif kind == "span":
        with TRACE.span("virtual.py"):
            run(op[1])
    elif kind == "thread":
        t = threading.Thread(target=run, args=(op[1],))
        t.start()
        t.join()
"""

MAIN = """
import json
import sys

sys.path.insert(0, {plugins!r})
from distea import tracer

tracer.ProcessTrace.mute_monitoring = sys.argv[1] == "muting"
import workflow

with open("program.json") as f:
    program = json.load(f)
trace = tracer.start("script", job="J")
rearmed = [0]
real_rearm = trace._rearm
# Counts the code objects re-armed, from code outside the workflow (its file name starts "<").
COUNTER = "def counted(codes):\\n    rearmed[0] += len(codes)\\n    real_rearm(codes)\\n"
exec(compile(COUNTER, "<n>", "exec"))
trace._rearm = counted
workflow.TRACE = trace
workflow.run(program)
workflow.run(program)  # again: now the events of the first pass are muted
trace.dump()
workflow.run([["loop", 3], ["call", 1], ["dispatch"], ["rec", 3]])  # records nothing, no error
print(json.dumps({{"rearmed": rearmed[0], "mode": trace.mode}}))
"""


PYTHONS = pythons_with_monitoring()


def _run(folder: Path, python: str, kind: str) -> tuple[list[dict], dict[str, Any]]:
    traces = folder / f"traces-{kind}"
    shutil.rmtree(traces, ignore_errors=True)
    proc = subprocess.run(
        [python, "main.py", kind],
        cwd=folder,
        env={"DISTEA_TRACE": str(traces), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    (log,) = traces.glob("script-*.jsonl")
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert records[0]["k"] == "header" and records[-1]["k"] == "end"
    return records[1:], json.loads(proc.stdout.splitlines()[-1])


def _differential(folder: Path, python: str, program: list[Any]) -> dict[str, Any]:
    """Run ``program`` with plain and muting callbacks; assert equal records; return the
    muting run's facts."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "workflow.py").write_text(textwrap.dedent(WORKFLOW))
    (folder / "main.py").write_text(MAIN.format(plugins=str(PLUGINS)))
    for i in range(4):
        (folder / f"data{i}.txt").write_text(str(i))
    (folder / "program.json").write_text(json.dumps(program))
    plain, plain_facts = _run(folder, python, "plain")
    muted, facts = _run(folder, python, "muting")
    assert plain_facts == {"rearmed": 0, "mode": "monitoring"}
    assert facts["mode"] == "monitoring"
    assert muted == plain
    return facts


EVERYTHING: list[Any] = [
    ["call", 1],
    ["loop", 5],
    ["sendloop", 6],
    ["dispatch"],
    ["callbacks"],
    ["gen"],
    ["rec", 6],
    ["rectick", 3],
    ["guarded", 2],
    ["box", 3],
    ["inside", [["call", 2]]],
    ["inside", [["loop", 3], ["send"], ["call", 1]]],  # a muted return, on the stack, re-armed
    ["recv", 40],
    ["open", 0],
    ["param", 1],
    ["ctx", [["dispatch"], ["open", 1], ["call", 4]]],
    ["span", [["callbacks"], ["tmpl"]]],
    ["thread", [["call", 3], ["send"], ["loop", 4], ["gen"]]],
    ["loop", 3],
    ["state"],
    ["rec", 4],
]
# Each kind of clock change between two runs of muted calls, the epoch still open after it.
for change in (["state"], ["tmpl"], ["param", 2], ["open", 2], ["recv", 0], ["send"]):
    EVERYTHING += [["loop", 3], ["loop", 3], change, ["loop", 3], ["send"]]


@pytest.mark.skipif(not PYTHONS, reason="no Python 3.12+ interpreter here (sys.monitoring)")
@pytest.mark.parametrize("python", PYTHONS or ["none"])
def test_muting_records_what_plain_callbacks_record(tmp_path, python):
    facts = _differential(tmp_path, python, EVERYTHING)
    assert facts["rearmed"] > 0  # events were muted, and re-armed at clock changes


LEAVES = st.one_of(
    st.tuples(st.sampled_from(["call", "guarded", "box", "open", "param"]), st.integers(0, 3)),
    st.tuples(st.sampled_from(["loop", "sendloop"]), st.integers(1, 12)),
    st.tuples(st.sampled_from(["rec", "rectick"]), st.integers(1, 6)),
    st.tuples(st.just("recv"), st.integers(0, 80)),
    st.sampled_from(["dispatch", "callbacks", "gen", "send", "tmpl", "state"]).map(lambda k: (k,)),
)
OPS = st.recursive(
    LEAVES,
    lambda inner: st.tuples(
        st.sampled_from(["inside", "ctx", "span", "thread"]), st.lists(inner, max_size=5)
    ),
    max_leaves=20,
)


@pytest.mark.skipif(not PYTHONS, reason="no Python 3.12+ interpreter here (sys.monitoring)")
@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(program=st.lists(OPS, min_size=1, max_size=10))
def test_muting_is_invisible_on_generated_programs(tmp_path, program):
    folder = tmp_path / f"p{abs(hash(json.dumps(program))) % 10**8}"
    _differential(folder, PYTHONS[0], json.loads(json.dumps(program)))


RACE = """
import sys
import threading

sys.path.insert(0, {plugins!r})
from distea import tracer

sys.setswitchinterval(1e-5)  # switch threads often: the worker runs between any two steps
trace = tracer.start("script", job="J")
import spinner

worker = threading.Thread(target=spinner.spin)
worker.start()
for i in range(150):
    trace.send(f"m{{i}}", "peer")
    seen = spinner.COUNT[0]
    while spinner.COUNT[0] < seen + 2:  # the worker called again after the send
        pass
spinner.STOP[0] = True
worker.join()
"""
SPINNER = """
COUNT = [0]
STOP = [False]


def tick():
    COUNT[0] += 1


def spin():
    while not STOP[0]:
        tick()
"""


@pytest.mark.skipif(not PYTHONS, reason="no Python 3.12+ interpreter here (sys.monitoring)")
def test_muting_misses_no_epoch_of_a_thread_calling_while_another_sends(tmp_path):
    """A thread calls a muted function in a loop while the main thread sends: a callback's
    check and its DISABLE are never split by a clock change, so every epoch has the call."""
    (tmp_path / "spinner.py").write_text(SPINNER)
    (tmp_path / "main.py").write_text(RACE.format(plugins=str(PLUGINS)))
    records, _ = _run_plain_script(tmp_path, PYTHONS[0])
    sends = [r["c"] for r in records if r["k"] == "send"]
    ticks = sorted(r["c"][0] for r in records if r["k"] == "fn" and r["f"] == "spinner.tick")
    assert len(sends) == 150
    for before, after in zip(sends, sends[1:] + [records[-1]["c"]], strict=True):
        assert any(before < first < after for first in ticks), (before, after)


def _run_plain_script(folder: Path, python: str) -> tuple[list[dict], str]:
    traces = folder / "traces"
    proc = subprocess.run(
        [python, "main.py"],
        cwd=folder,
        env={"DISTEA_TRACE": str(traces), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    (log,) = traces.glob("script-*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()], proc.stdout
