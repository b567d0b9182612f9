"""Pure cores behind the blind-spot decisions and the evaluation: what the sources say
(``distea._static``), the worker-state digest (``distea.tracer.StateFingerprint``) and the
mutation operators of the benchmark (``bench/distea_eval/mutate.py``)."""

import functools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from distea._static import load_workflow
from distea.tracer import StateFingerprint
from tests.conftest import bench_module, examples

bench_module("distea_eval")  # not via sys.path: bench/distea.py would shadow distea
from distea_eval.mutate import OPERATORS, function_mutants  # noqa: E402

MODULE = """
import functools

REGISTRY = {}


def register(name):
    def deco(fn):
        REGISTRY[name] = fn
        return fn
    return deco


@register("a")
def by_decorator(x):
    return x + 1


def in_table(x):
    return x * 2


def in_partial(x, y):
    return x - y


def called_later(x):
    return x


def plain(x):
    return x if x > 0 else -x


TABLE = {"t": in_table}
PARTIAL = functools.partial(in_partial, y=3)


class Holder:
    HANDLERS = [called_later]

    def method(self):
        return [plain(1), called_later]
"""


def test_references_taken_at_import_are_found_and_runtime_ones_are_not(tmp_path):
    (tmp_path / "lib.py").write_text(MODULE)
    wf = load_workflow(tmp_path)
    assert {"lib.by_decorator", "lib.in_table", "lib.in_partial", "lib.called_later"} <= set(
        wf.indirect
    )
    assert "decorated with @register('a')" in wf.indirect["lib.by_decorator"]
    # plain() is only called; a reference inside a function body is read at call time,
    # after wrapping, so it is seen: no blind spot.
    assert "lib.plain" not in wf.indirect
    assert "lib.register.<locals>.deco" in wf.indirect  # nested: never traced by wrap
    assert wf.functions["lib.Holder.method"] == "lib.py:42"


def test_rule_code_decides_whether_an_untraced_job_can_run_a_module(tmp_path):
    (tmp_path / "Snakefile").write_text(
        "import conf\n\nrule a:\n    output:\n        'a'\n    script:\n        's/a.py'\n\n"
        "rule b:\n    output:\n        'b'\n    shell:\n        'sort x > {output}'\n\n"
        "rule c:\n    output:\n        'c'\n    shell:\n        'python s/c.py {output}'\n"
    )
    for name, text in {
        "conf.py": "import helpers\n",
        "helpers.py": "",
        "lib.py": "",
        "s/a.py": "import lib\n",
        "s/c.py": "import helpers\n",
    }.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(text)
    wf = load_workflow(tmp_path)
    assert wf.snakefile_modules == {"conf", "helpers"}
    assert wf.rule_may_run("a", "lib") and not wf.rule_may_run("a", "helpers")
    assert wf.rule_may_run("b", "lib") is None
    assert wf.rule_may_run("c", "helpers") and not wf.rule_may_run("c", "lib")


class _Model:
    def __init__(self):
        self.weights = [1.0, 2.0]
        self.cache = {}


def test_state_digest_sees_writes_and_only_writes():
    model = _Model()
    fp = StateFingerprint()
    first = fp.digest({"template:m": model})
    assert fp.digest({"template:m": model}) == first  # reading changes nothing
    model.cache["k"] = (1, 2)
    assert fp.digest({"template:m": model}) != first
    cached = functools.lru_cache(maxsize=None)(lambda x: x)
    before = fp.digest({"module:lib": {"f": cached}})
    cached(3)
    assert fp.digest({"module:lib": {"f": cached}}) != before


def test_state_digest_unknown_counts_as_unknown():
    import threading

    assert StateFingerprint().digest({"x": threading.Lock()}) is None
    assert StateFingerprint(budget=10).digest({"x": list(range(100))}) is None


@settings(max_examples=examples(60), deadline=None)
@given(
    st.recursive(
        st.none() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=5),
        lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=3), inner),
        max_leaves=20,
    ),
    st.integers(),
)
def test_state_digest_differs_exactly_when_the_state_differs(value, extra):
    """Generated states: equal content, equal digest; one more entry, another digest."""
    fp = StateFingerprint()
    import copy

    assert fp.digest({"s": value}) == fp.digest({"s": copy.deepcopy(value)})
    assert fp.digest({"s": [value]}) != fp.digest({"s": [value, extra]})


@pytest.mark.parametrize("operator", OPERATORS)
def test_every_operator_changes_its_function_and_keeps_the_module_valid(tmp_path, operator):
    import ast

    source = (
        "def f(x, y):\n    if x > 1:\n        return x + 2 * y\n    return y / 2\n\n\n"
        "def g(v):\n    return v == 3\n"
    )
    (tmp_path / "m.py").write_text(source)
    mutants = [m for m in function_mutants(tmp_path, ["m.py"]) if m.name.startswith(operator)]
    assert mutants, f"{operator} applies to no function"
    for mutant in mutants:
        work = tmp_path / "w"
        work.mkdir(exist_ok=True)
        (work / "m.py").write_text(source)
        mutant.apply(work)
        text = (work / "m.py").read_text()
        assert text != source
        ast.parse(text)
        changed = mutant.changes[0].removeprefix("func:m.")

        def body(text, name):
            tree = ast.parse(text)
            return next(ast.dump(n) for n in tree.body if getattr(n, "name", "") == name)

        assert body(text, changed) != body(source, changed)  # the named function changed
        for other in {"f", "g"} - {changed}:
            assert body(text, other) == body(source, other)  # and only it


def test_a_worker_logs_its_first_read_of_each_request(tmp_path):
    from distea.tracer import ProcessTrace

    trace = ProcessTrace(tmp_path, "worker", name="w")
    for job in ("J[0]", "J[1]"):
        trace.set_job(job)
        trace.note_open("ref.txt")
        trace.note_open("ref.txt")
    trace.dump()
    records = [line for p in tmp_path.glob("*.jsonl") for line in p.read_text().splitlines()]
    assert sum('"k":"open"' in line for line in records) == 2
