"""Audit and repeat through real papermill, real nbclient and real nbrewind kernels."""

import base64
import json
import shutil
from pathlib import Path

import nbformat
import papermill
import pytest

from nbrewind import inspect, pack, trust
from nbrewind._signing import load_key, sign

from .conftest import execute, executed, make_notebook, outputs, statuses, stdout

pytestmark = pytest.mark.integration

CELLS = [
    "alpha = 0.5\nn = 200",
    "import threading\nimport warnings\nimport numpy as np\nimport pandas as pd\n"
    'warnings.simplefilter("ignore")',
    'df = pd.DataFrame({"a": np.arange(n), "b": np.arange(n) * 2.0, "c": 1})',
    'df.drop(columns=["c"], inplace=True)\nprint(df.shape)',
    "lst = [1, 2]\nlst.append(3)",
    "def scale(x):\n    return x * alpha",
    'total = scale(df["b"]).sum()\nprint(total)',
    "lock = threading.Lock()",
    "with lock:\n    extra = len(lst) + 1\nextra",
    "lst.append(extra)\nsize = len(lst)\nsize",
]
PARAMS = "papermill parameters: always executed"
LOCK = "lock = threading.Lock()"


def copy_store(source: Path, dest: Path) -> None:
    """Carry the object store along, if the notebook has one (small values are all inline)."""
    if (source / ".nbrewind").is_dir():
        shutil.copytree(source / ".nbrewind", dest / ".nbrewind")


@pytest.fixture(scope="module")
def audited(tmp_path_factory, nbrewind_kernels, signing_key):
    """The notebook audited once (alpha=0.5), and the same run under the stock kernel."""
    wd = tmp_path_factory.mktemp("audited")
    source = make_notebook(wd / "in.ipynb", CELLS)
    audit = execute(
        source,
        wd / "out.ipynb",
        "nbrewind-audit",
        alpha=0.5,
    )
    stock = execute(
        source,
        wd / "stock.ipynb",
        "python3",
        engine=None,
        alpha=0.5,
    )
    return wd, audit, stock


def record_of(nb, first_line):
    for cell in nb.cells:
        if cell.source.startswith(first_line):
            return cell.metadata["nbrewind"]
    raise AssertionError(first_line)


def test_audit_records_reads_writes_hashes_and_checkpoints(audited):
    _, nb, _ = audited
    drop = record_of(nb, "df.drop")
    assert set(drop["reads"]) == {"df"} and set(drop["writes"]) == {"df"}
    assert drop["mutated"] == ["df"], "in-place mutation (inplace=True) is detected at run time"
    appended = record_of(nb, "lst.append(extra)")
    assert set(appended["writes"]) == {"lst", "size"} and "lst" in appended["mutated"]
    total = record_of(nb, "total =")
    assert set(total["reads"]) == {"scale", "df", "alpha"}, "globals of called functions count"
    assert total["writes"]["total"]["kind"] == "pickle" and "inline" in total["writes"]["total"]
    lock = record_of(nb, LOCK)["writes"]["lock"]
    assert lock["kind"] == "unpicklable" and "error" in lock
    assert record_of(nb, "import threading")["writes"]["np"]["kind"] == "module"
    for cell in nb.cells:
        record = cell.metadata["nbrewind"]
        assert record["status"] == "executed" and record["source"].startswith("sha256:")
        assert record["sig"].startswith("hmac-sha256:")
    run = nb.metadata["nbrewind"]
    assert run["mode"] == "audit" and run["cells"] == {"executed": 11, "restored": 0}
    assert run["env"]["python"].count(".") == 2 and "pandas" in run["env"]["packages"]


def test_audit_outputs_are_those_of_the_stock_kernel(audited):
    _, nb, stock = audited
    assert outputs(nb) == outputs(stock)


def test_repeat_without_change_restores_all_but_what_cannot_be_checkpointed(audited):
    wd, _, _ = audited
    nb = execute(
        wd / "out.ipynb",
        wd / "same.ipynb",
        "nbrewind-repeat",
        alpha=0.5,
    )
    status = statuses(nb)
    assert executed(nb) == {"# Parameters", LOCK}
    assert "cannot be checkpointed" in status[LOCK][1]
    assert outputs(nb) == outputs(audited[2])
    assert nb.metadata["nbrewind"]["cells"] == {"executed": 2, "restored": 9}


def test_repeat_with_a_changed_parameter_re_executes_its_readers_only(audited):
    wd, _, _ = audited
    nb = execute(
        wd / "out.ipynb",
        wd / "alpha.ipynb",
        "nbrewind-repeat",
        alpha=0.7,
    )
    assert executed(nb) == {"# Parameters", LOCK, 'total = scale(df["b"]).sum()'}
    assert statuses(nb)['total = scale(df["b"]).sum()'][1] == (
        "reads alpha, which is a parameter that changed"
    )
    printed = stdout([c for c in nb.cells if c.source.startswith("total")][0])
    assert float(printed) == pytest.approx(sum(i * 2.0 * 0.7 for i in range(200)))


def test_editing_a_middle_cell_re_executes_its_dependents_not_the_suffix(audited):
    wd, _, _ = audited
    edited = nbformat.read(str(wd / "out.ipynb"), as_version=4)
    cell = [c for c in edited.cells if c.source.startswith("lst = [1, 2]")][0]
    cell.source = "lst = [1, 2, 5]\nlst.append(3)"
    nbformat.write(edited, str(wd / "edited.ipynb"))
    nb = execute(
        wd / "edited.ipynb",
        wd / "edited-out.ipynb",
        "nbrewind-repeat",
        alpha=0.5,
    )
    status = statuses(nb)
    assert executed(nb) == {
        "# Parameters",
        LOCK,
        "lst = [1, 2, 5]",
        "with lock:",
        "lst.append(extra)",
    }
    assert status["lst = [1, 2, 5]"][1] == "its source changed"
    assert status["with lock:"][1].startswith("reads lst, which was recomputed by code cell 5 (id ")
    # Cells after the edit that do not depend on it stay restored (not prefix-only reuse).
    assert status["def scale(x):"][0] == status['total = scale(df["b"]).sum()'][0] == "restored"
    size = [c for c in nb.cells if c.source.startswith("lst.append(extra)")][0]
    assert size.outputs[0]["data"]["text/plain"] == "5"


def test_a_tampered_checkpoint_is_detected_and_never_loaded(audited, tmp_path):
    wd, _, _ = audited
    nb = nbformat.read(str(wd / "out.ipynb"), as_version=4)
    record = [c for c in nb.cells if c.source.startswith("df = pd.DataFrame")][0].metadata
    entry = record["nbrewind"]["writes"]["df"]
    evil = b"cos\nsystem\n(S'touch " + str(tmp_path / "pwned").encode() + b"'\ntR."
    entry["inline"] = base64.b64encode(evil).decode()  # bytes changed, signed digest kept
    scale = [c for c in nb.cells if c.source.startswith("def scale")][0].metadata["nbrewind"]
    scale["reads"]["forged"] = "sha256:00"  # a signed fact changed
    nbformat.write(nb, str(tmp_path / "tampered.ipynb"))
    copy_store(wd, tmp_path)
    edited = nbformat.read(str(tmp_path / "tampered.ipynb"), as_version=4)
    [c for c in edited.cells if c.source.startswith("df.drop")][0].source += "\nprint('again')"
    nbformat.write(edited, str(tmp_path / "tampered.ipynb"))
    out = execute(
        tmp_path / "tampered.ipynb",
        tmp_path / "out.ipynb",
        "nbrewind-repeat",
        alpha=0.5,
    )
    status = statuses(out)
    assert (
        "does not match its digest"
        in status['df = pd.DataFrame({"a": np.arange(n), "b": np.arange(n) * 2.0, "c": 1})'][1]
    )
    assert "TAMPERED" in status["def scale(x):"][1]
    assert not (tmp_path / "pwned").exists()
    assert outputs(out)[3][0]["text"] == "(200, 2)\nagain\n"


def test_checkpoints_signed_by_another_key_re_execute_until_trusted(audited, tmp_path, monkeypatch):
    wd, _, _ = audited
    shutil.copy(wd / "out.ipynb", tmp_path / "theirs.ipynb")
    copy_store(wd, tmp_path)
    monkeypatch.setenv("NBREWIND_KEY_FILE", str(tmp_path / "my-key"))
    nb = execute(
        tmp_path / "theirs.ipynb",
        tmp_path / "mine.ipynb",
        "nbrewind-repeat",
        alpha=0.5,
    )
    assert nb.metadata["nbrewind"]["cells"]["restored"] == 0
    assert "signed by another key" in statuses(nb)["def scale(x):"][1]
    assert trust(tmp_path / "theirs.ipynb") == {"signed": 11, "already": 0, "declined": 0}
    nb = execute(
        tmp_path / "theirs.ipynb",
        tmp_path / "mine2.ipynb",
        "nbrewind-repeat",
        alpha=0.5,
    )
    assert nb.metadata["nbrewind"]["cells"]["restored"] == 9


def test_another_python_version_is_detected_and_re_executed(audited, tmp_path, caplog):
    wd, _, _ = audited
    nb = nbformat.read(str(wd / "out.ipynb"), as_version=4)
    key = load_key()
    for cell in nb.cells:  # as if audited (and signed by us) under Python 3.10
        record = cell.metadata["nbrewind"]
        record["python"] = "3.10"
        record["sig"] = sign(record, key)
    nbformat.write(nb, str(tmp_path / "old.ipynb"))
    copy_store(wd, tmp_path)
    out = execute(
        tmp_path / "old.ipynb",
        tmp_path / "new.ipynb",
        "nbrewind-repeat",
        alpha=0.5,
    )
    assert out.metadata["nbrewind"]["cells"]["restored"] == 0
    assert "Python 3.10 -> 3.11" in statuses(out)["def scale(x):"][1]
    assert "environment changed: Python 3.10 -> 3.11" in caplog.text  # said on the console
    assert outputs(out) == outputs(audited[2])


def test_the_kernel_without_the_engine_says_what_to_do(tmp_path):
    source = make_notebook(tmp_path / "in.ipynb", ["x = 1"])
    with pytest.raises(papermill.PapermillExecutionError, match="--engine nbrewind"):
        execute(
            source,
            tmp_path / "out.ipynb",
            "nbrewind-audit",
            engine=None,
        )


def test_the_engine_with_a_stock_kernel_says_what_to_do(tmp_path):
    source = make_notebook(tmp_path / "in.ipynb", ["x = 1"])
    with pytest.raises(Exception, match="-k nbrewind-audit or -k nbrewind-repeat"):
        execute(
            source,
            tmp_path / "out.ipynb",
            "python3",
        )


BIG = [
    "n = 100000",
    "import numpy as np\nbig = np.arange(n, dtype=np.float64)",
    "small = 3",
    "m = big.mean() + small\nprint(m)",
]


def test_repeat_in_another_directory_with_the_store_and_packed(tmp_path, monkeypatch):
    """Large checkpoints go to the store beside the notebook; the notebook and its store move
    together, or ``pack`` makes one self-contained file; repeat restores there."""
    monkeypatch.setenv("NBREWIND_INLINE_MAX", "1024")
    site_a, site_b, site_c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    source = make_notebook(site_a / "in.ipynb", BIG)
    execute(
        source,
        site_a / "out.ipynb",
        "nbrewind-audit",
        cwd=site_a,
    )
    entry = record_of(nbformat.read(str(site_a / "out.ipynb"), 4), "import numpy")["writes"]["big"]
    assert "object" in entry and "inline" not in entry and entry["size"] > 800_000
    rows = {r.index: r for r in inspect(site_a / "out.ipynb")}
    assert rows[1].store_bytes == entry["size"]

    site_b.mkdir()
    shutil.copy(site_a / "out.ipynb", site_b / "moved.ipynb")
    shutil.copytree(site_a / ".nbrewind", site_b / ".nbrewind")
    pack(site_a / "out.ipynb", site_c / "packed.ipynb")
    site_e = tmp_path / "e"
    assert pack(site_a / "out.ipynb", site_e / "bundled.ipynb", bundle=True)["bundled"] == 5
    bundled = record_of(nbformat.read(str(site_e / "bundled.ipynb"), 4), "import numpy")
    assert "inline" not in bundled["writes"]["big"] and "object" in bundled["writes"]["big"]
    digest = bundled["writes"]["big"]["digest"].partition(":")[2]
    assert (site_e / ".nbrewind" / "objects" / digest[:2] / digest[2:]).is_file()
    assert {r.trust for r in inspect(site_e / "bundled.ipynb")} == {"trusted"}
    shutil.rmtree(site_a)
    for site, name in ((site_b, "moved.ipynb"), (site_c, "packed.ipynb")):
        edited = nbformat.read(str(site / name), as_version=4)
        edited.cells[-1].source = "m = big.mean() + small\nprint(m * 2)"
        nbformat.write(edited, str(site / name))
        nb = execute(
            site / name,
            site / "again.ipynb",
            "nbrewind-repeat",
            cwd=site,
        )
        assert executed(nb) == {"m = big.mean() + small"}, site
        assert stdout(nb.cells[-1]) == f"{(49999.5 + 3) * 2}\n"
    # The notebook a repeat writes elsewhere carries its own store: repeatable on its own.
    site_d = tmp_path / "d"
    site_d.mkdir()
    execute(
        site_b / "moved.ipynb",
        site_d / "out.ipynb",
        "nbrewind-repeat",
        cwd=site_d,
    )
    shutil.rmtree(site_b)
    nb = execute(
        site_d / "out.ipynb",
        site_d / "again.ipynb",
        "nbrewind-repeat",
        cwd=site_d,
    )
    assert executed(nb) == set() and nb.metadata["nbrewind"]["cells"]["restored"] == 4
    packed = json.loads((site_c / "packed.ipynb").read_text())
    assert "inline" in packed["cells"][1]["metadata"]["nbrewind"]["writes"]["big"]


def test_missing_store_object_means_re_execution_not_failure(tmp_path, monkeypatch):
    monkeypatch.setenv("NBREWIND_INLINE_MAX", "1024")
    source = make_notebook(tmp_path / "a" / "in.ipynb", BIG)
    execute(
        source,
        tmp_path / "a" / "out.ipynb",
        "nbrewind-audit",
    )
    shutil.rmtree(tmp_path / "a" / ".nbrewind")
    nb = execute(
        tmp_path / "a" / "out.ipynb",
        tmp_path / "a" / "again.ipynb",
        "nbrewind-repeat",
    )
    assert "does not match its digest" in statuses(nb)["import numpy as np"][1]
    assert stdout(nb.cells[-1]) == f"{49999.5 + 3}\n"


def test_inspect_prints_a_table_per_cell(audited):
    wd, _, _ = audited
    import subprocess
    import sys

    done = subprocess.run(
        [sys.executable, "-m", "nbrewind", "inspect", str(wd / "out.ipynb")],
        capture_output=True,
        text=True,
        check=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0].split() == [
        "cell",
        "status",
        "trust",
        "inline",
        "store",
        "reads",
        "writes",
        "why",
    ]
    drop = [line for line in lines if line.split()[0] == "4"][0]
    assert "executed" in drop and "trusted" in drop and drop.split()[5:7] == ["df", "df"]
    assert "lock(unpicklable)" in done.stdout


def test_nbrewind_run_audits_then_repeats(tmp_path):
    import subprocess
    import sys

    source = make_notebook(tmp_path / "in.ipynb", ["k = 2", "v = k * 21\nprint(v)"])

    def nbrewind(*args):
        return subprocess.run(
            [sys.executable, "-m", "nbrewind", "run", *args], capture_output=True, text=True
        )

    audit = nbrewind(str(source), str(tmp_path / "out.ipynb"), "-p", "k", "2")
    assert audit.returncode == 0, audit.stderr
    again = nbrewind(str(tmp_path / "out.ipynb"), str(tmp_path / "again.ipynb"), "--repeat")
    assert again.returncode == 0, again.stderr
    nb = nbformat.read(str(tmp_path / "again.ipynb"), as_version=4)
    assert nb.metadata["nbrewind"]["mode"] == "repeat"
    assert statuses(nb)["v = k * 21"] == (
        "restored",
        "unchanged: same source, same inputs, trusted checkpoint",
    )
    assert stdout(nb.cells[-1]) == "42\n"


def test_prefix_policy_re_executes_the_whole_suffix_for_comparison(audited, monkeypatch):
    """NBREWIND_POLICY=prefix reproduces the published artifact's reuse, for the benchmark."""
    wd, _, _ = audited
    edited = nbformat.read(str(wd / "out.ipynb"), as_version=4)
    cell = [c for c in edited.cells if c.source.startswith("lst = [1, 2]")][0]
    cell.source = "lst = [1, 2, 5]\nlst.append(3)"
    nbformat.write(edited, str(wd / "edited-prefix.ipynb"))
    monkeypatch.setenv("NBREWIND_POLICY", "prefix")
    nb = execute(
        wd / "edited-prefix.ipynb",
        wd / "prefix-out.ipynb",
        "nbrewind-repeat",
        alpha=0.5,
    )
    firsts = [c.source.splitlines()[0] for c in nb.cells]
    edit = firsts.index("lst = [1, 2, 5]")
    assert executed(nb) == {"# Parameters", *firsts[edit:]}
    assert statuses(nb)["def scale(x):"][1] == "prefix policy: an earlier cell was re-executed"
    assert nb.metadata["nbrewind"]["policy"] == "prefix"


def test_plain_nbclient_gets_the_same_clear_message(tmp_path):
    """nbclient on its own (no papermill) drops kernel metadata too."""
    from nbclient import NotebookClient
    from nbclient.exceptions import CellExecutionError

    nb = nbformat.read(str(make_notebook(tmp_path / "in.ipynb", ["x = 1"])), as_version=4)
    client = NotebookClient(nb, kernel_name="nbrewind-repeat", timeout=60)
    with pytest.raises(CellExecutionError, match="NBRewindEngineMissing"):
        client.execute()


def test_ckptstore_gc_on_a_notebook_store_keeps_its_live_checkpoints(tmp_path, monkeypatch):
    """Issue 26: `python -m ckptstore gc .nbrewind` deleted every notebook checkpoint (NBRewind
    wrote objects by computing ckptstore's paths, and registered nothing). The engine now pins
    what the notebook's records use; a rerun of the notebook replaces its pin."""
    import subprocess
    import sys

    monkeypatch.setenv("NBREWIND_INLINE_MAX", "1024")
    site = tmp_path / "a"
    source = make_notebook(site / "in.ipynb", BIG)
    execute(source, site / "out.ipynb", "nbrewind-audit", cwd=site)
    gc = subprocess.run(
        [sys.executable, "-m", "ckptstore", "gc", str(site / ".nbrewind"), "--keep-runs", "1"],
        capture_output=True,
        text=True,
    )
    assert gc.returncode == 0, gc.stdout + gc.stderr
    nb = execute(site / "out.ipynb", site / "again.ipynb", "nbrewind-repeat", cwd=site)
    assert executed(nb) == set() and nb.metadata["nbrewind"]["cells"]["restored"] == 4
