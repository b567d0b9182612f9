"""Nothing executes without trust: what `nbrewind trust` shows, and `import-lab`'s refusal.

The globals a checkpoint would import are read from its pickle opcodes, never by loading it;
they are checked against what the real unpickler asks for (``find_class``) on generated data.
A record's own ``type`` is its author's claim: the review must show what the pickle really
imports. Sidecar records without the kernel's MAC are refused by ``import-lab``."""

import base64
import collections
import datetime
import decimal
import fractions
import hashlib
import io
import json
import os
import pickle
import uuid

import nbformat
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nbrewind import import_lab, trust
from nbrewind._cli import main
from nbrewind._dataflow import source_hash
from nbrewind._notebook import lab_records_path, outputs_digest
from nbrewind._review import UNKNOWN_GLOBAL, is_dangerous, pickle_globals
from nbrewind._signing import Trust, lab_mac, load_key, sign, verify, verify_lab_line
from tests.conftest import examples


class _Recorder(pickle.Unpickler):
    """The real unpickler, noting every global it resolves (safe: only generated data)."""

    def __init__(self, data: bytes) -> None:
        super().__init__(io.BytesIO(data))
        self.asked: set[str] = set()

    def find_class(self, module: str, name: str):  # noqa: ANN201
        self.asked.add(f"{module}.{name}")
        return super().find_class(module, name)


_leaves = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.floats(allow_nan=False),
    st.text(max_size=8),
    st.binary(max_size=8),
    st.sampled_from(
        [
            datetime.date(2020, 1, 2),
            datetime.datetime(2021, 3, 4, 5, 6),
            decimal.Decimal("1.5"),
            fractions.Fraction(1, 3),
            uuid.UUID(int=7),
            collections.OrderedDict(a=1),
            collections.Counter("abca"),
            range(3),
            slice(1, 2),
            complex(1, 2),
            frozenset({1, 2}),
        ]
    ),
)
_values = st.recursive(
    _leaves,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.tuples(inner, inner),
        st.dictionaries(st.text(max_size=4), inner, max_size=4),
        st.builds(collections.deque, st.lists(inner, max_size=3)),
    ),
    max_leaves=12,
)


@settings(max_examples=examples(100), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=_values, protocol=st.integers(min_value=0, max_value=5))
def test_opcode_scan_names_exactly_the_globals_the_unpickler_loads(value, protocol):
    blob = pickle.dumps(value, protocol=protocol)
    recorder = _Recorder(blob)
    assert recorder.load() == value or value != value
    assert set(pickle_globals(blob)) == recorder.asked


class _Evil:
    """What an attacker pickles: loading it runs a command (pickling it runs nothing)."""

    def __init__(self, marker) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _memo_obfuscated() -> bytes:
    """STACK_GLOBAL whose module and name come from the memo, not from literals beside it."""
    return (
        b"\x80\x04"
        b"\x8c\x05posix\x94"  # SHORT_BINUNICODE 'posix', MEMOIZE -> memo 0
        b"\x8c\x06system\x94"  # memo 1
        b"0"  # POP
        b"0"  # POP
        b"h\x00h\x01"  # BINGET 0, BINGET 1
        b"\x93"  # STACK_GLOBAL
        b"\x8c\x04true\x85R."  # 'true', TUPLE1, REDUCE, STOP
    )


def test_the_attackers_globals_are_found_however_they_are_spelled(tmp_path):
    for protocol in range(6):
        found = pickle_globals(pickle.dumps(_Evil(tmp_path / "m"), protocol=protocol))
        assert found == (f"{os.system.__module__}.system",)
        assert is_dangerous(found[0])
    assert pickle_globals(_memo_obfuscated()) == ("posix.system",)
    computed = b"\x80\x04K\x01K\x02\x93."  # STACK_GLOBAL of two ints
    assert pickle_globals(computed) == (UNKNOWN_GLOBAL,) and is_dangerous(UNKNOWN_GLOBAL)
    assert pickle_globals(b"not a pickle")[0].startswith("<not a readable pickle")
    assert not (tmp_path / "m").exists(), "reviewing never loads"
    assert not is_dangerous("numpy.dtype") and is_dangerous("builtins.getattr")


@pytest.fixture
def key(tmp_path, monkeypatch):
    monkeypatch.setenv("NBREWIND_KEY_FILE", str(tmp_path / "keys" / "key"))
    monkeypatch.delenv("NBREWIND_STORE", raising=False)
    return load_key()


def _entry(blob: bytes, claimed_type: str) -> dict:
    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
    return {
        "kind": "pickle",
        "hash": digest,
        "type": claimed_type,
        "size": len(blob),
        "digest": digest,
        "inline": base64.b64encode(blob).decode(),
    }


def _foreign_notebook(path, marker):
    """A notebook from someone else: an honest-looking record whose pickle runs a command."""
    nb = nbformat.v4.new_notebook()
    honest = nbformat.v4.new_code_cell("rows = [1, 2]")
    honest.metadata["nbrewind"] = {
        "source": source_hash(honest.source),
        "reads": {},
        "writes": {"rows": _entry(pickle.dumps([1, 2]), "builtins.list")},
        "sig": "hmac-sha256:0000000000000000:00",
    }
    evil = nbformat.v4.new_code_cell("n = 3")
    evil.metadata["nbrewind"] = {
        "source": source_hash(evil.source),
        "reads": {},
        "writes": {"n": _entry(pickle.dumps(_Evil(marker)), "builtins.int")},
        "sig": "hmac-sha256:0000000000000000:00",
    }
    nb.cells = [honest, evil]
    nbformat.write(nb, str(path))
    return path


def test_trust_shows_what_the_pickle_imports_not_the_claimed_type_and_asks(
    tmp_path, key, monkeypatch, capsys
):
    marker = tmp_path / "pwned"
    notebook = _foreign_notebook(tmp_path / "theirs.ipynb", marker)
    monkeypatch.setattr("builtins.input", lambda prompt="": "n")
    assert main(["trust", str(notebook)]) == 1
    shown = capsys.readouterr().out
    assert "checkpoint 'n'" in shown and "type builtins.int, which is not checked" in shown
    assert f"imports {os.system.__module__}.system   <-- can run commands" in shown
    assert "checkpoint 'rows'" in shown and "imports nothing (plain data)" in shown
    nb = nbformat.read(str(notebook), as_version=4)
    assert {verify(c.metadata["nbrewind"], key) for c in nb.cells} == {Trust.OTHER_KEY}
    assert not marker.exists(), "reviewing and declining never unpickle"

    monkeypatch.setattr("builtins.input", lambda prompt="": (_ for _ in ()).throw(EOFError))
    assert main(["trust", str(notebook)]) == 1, "no answer is no"

    assert main(["trust", str(notebook), "--yes"]) == 0
    nb = nbformat.read(str(notebook), as_version=4)
    assert {verify(c.metadata["nbrewind"], key) for c in nb.cells} == {Trust.TRUSTED}
    assert not marker.exists()
    assert trust(notebook) == {"signed": 0, "already": 2, "declined": 0}


def _lab_notebook(tmp_path):
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell("n = 3")
    nb.cells = [cell]
    path = tmp_path / "lab.ipynb"
    nbformat.write(nb, str(path))
    return path, cell


def _lab_record(marker) -> dict:
    return {
        "status": "executed",
        "reads": {},
        "files_read": {},
        "writes": {"n": _entry(pickle.dumps(_Evil(marker)), "builtins.int")},
        "python": "3.11",
        "packages": {},
    }


def test_import_lab_refuses_records_the_kernel_did_not_mac(tmp_path, key):
    marker = tmp_path / "pwned"
    path, cell = _lab_notebook(tmp_path)
    sidecar = lab_records_path(path)
    sidecar.parent.mkdir(parents=True)
    planted = {"cell_id": cell.id, "source": source_hash("n = 3"), "record": _lab_record(marker)}
    other_key = b"f" * 64
    lines = [
        planted,  # no MAC: a file that came with a cloned repository
        {**planted, "mac": lab_mac(path.name, planted, other_key)},  # someone else's kernel
        {**planted, "mac": "hmac-sha256:" + lab_mac(path.name, planted, key).split(":", 1)[1]},
    ]
    lines[2]["record"] = dict(lines[2]["record"], python="3.12")  # edited after MAC'ing
    sidecar.write_text("".join(json.dumps(line) + "\n" for line in lines))
    counts = import_lab(path)
    assert counts == {"imported": 0, "stale": 0, "missing": 1, "refused": 3}
    assert "nbrewind" not in nbformat.read(str(path), as_version=4).cells[0].metadata
    assert not marker.exists()

    # The same record MAC'ed by this user's kernel (as _kernel writes it) is imported.
    genuine = {**planted, "mac": lab_mac(path.name, planted, key)}
    assert verify_lab_line(path.name, genuine, key) is Trust.TRUSTED
    assert verify_lab_line("other.ipynb", genuine, key) is Trust.TAMPERED
    with sidecar.open("a") as f:
        f.write(json.dumps(genuine) + "\n")
    assert import_lab(path)["imported"] == 1
    record = nbformat.read(str(path), as_version=4).cells[0].metadata["nbrewind"]
    assert verify(record, key) is Trust.TRUSTED
    assert record["outputs"] == outputs_digest([])


def test_a_record_signed_by_import_lab_still_says_what_it_imports(tmp_path, key):
    """Signing does not hide anything: `sign` covers the writes' digests and types."""
    record = {"writes": {"n": _entry(b"x", "builtins.int")}, "source": "s"}
    record["sig"] = sign(record, key)
    record["writes"]["n"]["type"] = "builtins.str"
    assert verify(record, key) is Trust.TAMPERED


def test_a_key_others_can_read_is_one_clear_line_not_a_traceback(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("NBREWIND_KEY_FILE", str(tmp_path / "key"))
    (tmp_path / "key").write_text("k" * 64)
    os.chmod(tmp_path / "key", 0o644)
    notebook = _foreign_notebook(tmp_path / "nb.ipynb", tmp_path / "m")
    assert main(["trust", str(notebook), "--yes"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "chmod 600" in err
