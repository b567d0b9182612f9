"""Keys of ``run:`` blocks in included files (issue 26): Snakemake puts the folder of the
Snakefile and of each included file on ``sys.path``, so a block in ``rules/r.smk`` can
``import foo`` from ``rules/foo.py``. The key must find that module where Python will (it
restored a stale output when the module, not imported yet when the jobs were keyed, was looked
for beside the Snakefile only), and the folder an ``include:`` adds to ``sys.path`` is the
workflow's layout, not a change of Snakemake's process (a helper moved into an included file
reran its job for nothing: the red team's ``nc_move_helper_to_include``).

Site A runs the workflow with a store; for each edit, site B (a fresh copy with the edit and
the store) must end with site C's outputs (the same copy, no store), rerunning exactly the
rules the edit touches."""

import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.integration.snakemake_executor_plugin_sticky.test_checkpoint_redteam import (
    snakemake as run_snakemake,
)

pytestmark = pytest.mark.integration

FILES = {
    "Snakefile": (
        'include: "rules/r.smk"\n\n'
        "def helper(s):\n"
        '    return s + "-v1"\n\n'
        "rule all:\n"
        '    input: "out/late.txt", "out/early.txt", "out/pkg.txt", "out/helped.txt"\n\n'
        "rule helped:\n"
        '    output: "out/helped.txt"\n'
        "    run:\n"
        '        with open(output[0], "w") as fh:\n'
        '            fh.write(helper("x") + "\\n")\n'
    ),
    "rules/r.smk": (
        "import early\n\n"
        "rule late:\n"
        '    output: "out/late.txt"\n'
        "    run:\n"
        "        import late\n"
        '        with open(output[0], "w") as fh:\n'
        '            fh.write(late.VALUE + "\\n")\n\n'
        "rule early:\n"
        '    output: "out/early.txt"\n'
        "    run:\n"
        '        with open(output[0], "w") as fh:\n'
        '            fh.write(early.VALUE + "\\n")\n\n'
        "rule pkg:\n"
        '    output: "out/pkg.txt"\n'
        "    run:\n"
        "        from rpkg import sub\n"
        '        with open(output[0], "w") as fh:\n'
        '            fh.write(sub.VALUE + "\\n")\n'
    ),
    "rules/late.py": 'VALUE = "late v1"\n',
    "rules/early.py": 'VALUE = "early v1"\n',
    "rules/rpkg/__init__.py": "",
    "rules/rpkg/sub.py": 'VALUE = "pkg v1"\n',
    "extra/helpers.smk": "# helpers\n",
}

EDITS = {
    # a module a block imports when it runs, from its included file's folder
    "late_module": ([("rules/late.py", "late v1", "late v2")], {"late"}),
    # a module the included file imported while Snakemake read it
    "early_module": ([("rules/early.py", "early v1", "early v2")], {"early"}),
    # a package's submodule, imported when the block runs
    "package": ([("rules/rpkg/sub.py", "pkg v1", "pkg v2")], {"pkg"}),
    # the helper moved verbatim into a newly included file in another folder: nothing reruns
    "helper_moved_to_include": (
        [
            (
                "Snakefile",
                'def helper(s):\n    return s + "-v1"\n',
                'include: "extra/helpers.smk"\n',
            ),
            ("extra/helpers.smk", "# helpers\n", 'def helper(s):\n    return s + "-v1"\n'),
        ],
        set(),
    ),
}


def snakemake(site: Path, store: "str | None") -> subprocess.CompletedProcess:
    done = run_snakemake(site, 1, store)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-4000:]
    return done


def outputs(site: Path) -> dict[str, bytes]:
    return {str(p.relative_to(site)): p.read_bytes() for p in sorted((site / "out").rglob("*"))}


@pytest.fixture(scope="module")
def site_a(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("includes")
    site = root / "a"
    for rel, text in FILES.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)
    store = str(root / "store")
    said = snakemake(site, store)
    assert "0 job(s) restored, 4 stored" in said.stderr + said.stdout
    return site, store


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_an_edit_in_an_included_files_folder_through_the_store_ends_like_a_fresh_run(
    tmp_path, site_a, edit
):
    site, store = site_a
    changes, rerun = EDITS[edit]
    site_b = tmp_path / "b"
    shutil.copytree(site, site_b, ignore=shutil.ignore_patterns(".snakemake", "out", "__pycache__"))
    for rel, old, new in changes:
        text = (site_b / rel).read_text()
        assert old in text, (rel, old)
        (site_b / rel).write_text(text.replace(old, new))
    site_c = tmp_path / "c"
    shutil.copytree(site_b, site_c)
    said = snakemake(site_b, store)
    snakemake(site_c, None)
    assert outputs(site_b) == outputs(site_c)
    text = said.stdout + said.stderr
    reran = set(re.findall(r"checkpoints: rule (\w+) \(\S+\) reruns: ", text))
    assert reran == rerun, text[-3000:]
    assert os.path.exists(site_b / "out" / "helped.txt")
