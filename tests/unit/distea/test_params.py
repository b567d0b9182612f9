"""Params by key: what a job's script reads from ``snakemake.params``, however it reads it.

Differential on generated scripts: every sequence of reads gets the same values as from the
real ``snakemake.params``, and the recorded keys are exactly those an oracle says were read
(one key for a keyed read, every key for a read that cannot be attributed, none for names and
length).
"""

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from snakemake.iocontainers import Namedlist

from distea import tracer
from tests.conftest import examples


class _Notes:
    """Stands in for a ProcessTrace: collects ``note_param`` calls."""

    def __init__(self) -> None:
        self.read: set[tuple[str, str]] = set()

    def note_param(self, name: str, job: "str | None") -> None:
        self.read.add((name, job or ""))


class _Smk:
    """The shape of Snakemake's ``snakemake`` object that ``watch_job`` needs."""

    def __init__(self, params: dict[str, Any]) -> None:
        self.rule = "report"
        self.wildcards = Namedlist(fromdict={"s": "S1"})
        self.output = ["report/S1.txt"]
        self._params = params

    @property
    def params(self) -> Namedlist:  # rebuilt on every access, as in Snakemake
        return Namedlist(fromdict=dict(self._params))


def _watched(params: dict[str, Any]) -> tuple[Any, _Notes, str]:
    notes = _Notes()
    smk = _Smk(params)
    job = tracer.watch_job(notes, smk)  # type: ignore[arg-type]
    return smk, notes, job


def test_get_with_a_default_records_the_key_not_get():
    """Issue 15: ``snakemake.params.get("decimals", 3)`` was recorded as a parameter ``get``."""
    smk, notes, job = _watched({"decimals": 2, "label": "x"})
    assert smk.params.get("decimals", 3) == 2
    assert notes.read == {("decimals", job)}
    assert smk.params.get("missing", 7) == 7  # a key the rule lacks: adding it matters
    assert notes.read == {("decimals", job), ("missing", job)}


def test_each_way_of_reading_params():
    cases = {
        "attribute": (lambda p: p.decimals, {"decimals"}),
        "item": (lambda p: p["label"], {"label"}),
        "getattr": (lambda p: getattr(p, "la" + "bel"), {"label"}),
        "iteration": (lambda p: list(p), {"decimals", "label", "clip"}),
        "dict()": (lambda p: dict(p), {"decimals", "label", "clip"}),
        "items": (lambda p: dict(p.items()), {"decimals", "label", "clip"}),
        "index": (lambda p: p[0], {"decimals", "label", "clip"}),
        "str": (lambda p: str(p), {"decimals", "label", "clip"}),
        "vars": (lambda p: sorted(vars(p)), {"decimals", "label", "clip"}),
        "keys": (lambda p: list(p.keys()), set()),
        "len": (lambda p: len(p), set()),
        "isinstance": (lambda p: isinstance(p, (Namedlist, list)), set()),
    }
    for label, (read, expected) in cases.items():
        values = {"decimals": 2, "label": "x", "clip": 1.5}
        smk, notes, job = _watched(values)
        plain = Namedlist(fromdict=values)
        got = read(smk.params)
        assert got == read(plain) or label == "vars", label
        assert {n for n, _ in notes.read} == expected, label


_NAMES = ["decimals", "clip", "label", "window", "mode"]
_OPS = st.one_of(
    st.tuples(st.sampled_from(["attr", "item", "get"]), st.sampled_from(_NAMES)),
    st.tuples(st.sampled_from(["iter", "dict", "items", "index", "keys", "len"]), st.just("")),
)


def _apply(params: Any, op: str, name: str) -> Any:
    if op == "attr":
        return getattr(params, name, "<absent>") if name in params.keys() else "<absent>"
    if op == "item":
        return params[name] if name in params.keys() else "<absent>"
    if op == "get":
        return params.get(name, "<default>")
    if op == "iter":
        return [v for v in params]
    if op == "dict":
        return dict(params)
    if op == "items":
        return list(params.items())
    if op == "index":
        return params[0] if len(params) else None
    if op == "keys":
        return sorted(params.keys())
    return len(params)


def _oracle(present: list[str], op: str, name: str) -> set[str]:
    if op in ("attr", "item"):
        return {name} if name in present else set()
    if op == "get":
        return {name}
    if op in ("iter", "dict", "items"):
        return set(present)
    if op == "index":
        return set(present) if present else set()
    return set()


@settings(max_examples=examples(150), deadline=None)
@given(
    params=st.dictionaries(
        st.sampled_from(_NAMES), st.one_of(st.integers(), st.text(max_size=3)), max_size=4
    ),
    ops=st.lists(_OPS, max_size=8),
)
def test_generated_reads_record_exactly_the_keys_read(params, ops):
    """Same values as the real params; recorded keys = the oracle's keys, over generated reads."""
    smk, notes, job = _watched(params)
    plain = Namedlist(fromdict=dict(params))
    expected: set[str] = set()
    for op, name in ops:
        assert _apply(smk.params, op, name) == _apply(plain, op, name)
        expected |= _oracle(list(params), op, name)
    assert {n for n, _ in notes.read} == expected
    assert all(j == job for _, j in notes.read)
