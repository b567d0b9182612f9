"""The generated docs pages (tools/gen_docs.py) are current and say what they must."""

import dataclasses
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

REPO = Path(__file__).resolve().parents[3]


def _gen_docs() -> ModuleType:
    if "gen_docs" in sys.modules:
        return sys.modules["gen_docs"]
    spec = importlib.util.spec_from_file_location("gen_docs", REPO / "tools" / "gen_docs.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["gen_docs"] = module
    spec.loader.exec_module(module)
    return module


gen_docs = _gen_docs()


def test_committed_pages_are_current():
    assert gen_docs.stale_pages() == [], "run: python tools/gen_docs.py"


@pytest.mark.parametrize("plugin", gen_docs.PLUGINS, ids=lambda p: p.distribution)
def test_settings_page_lists_every_field_with_its_help(plugin):
    import importlib

    page = gen_docs.settings_page()
    cls = getattr(importlib.import_module(plugin.module), plugin.cls)
    for field in dataclasses.fields(cls):
        flag = f"`--{plugin.flag_prefix}-{field.name.replace('_', '-')}`"
        rows = [line for line in page.splitlines() if line.startswith(f"| {flag}")]
        assert len(rows) == 1, flag
        first_words = " ".join(str(field.metadata.get("help", "")).split()[:4])
        assert first_words in rows[0], (flag, first_words)


def test_settings_page_shows_defaults_and_choices():
    page = gen_docs.settings_page()
    row = next(line for line in page.splitlines() if line.startswith("| `--sticky-backend`"))
    assert "| `local` |" in row and "Choices: `local`, `slurm`." in row
    row = next(line for line in page.splitlines() if line.startswith("| `--sticky-max-workers`"))
    assert "| int (optional) | none |" in row
    row = next(line for line in page.splitlines() if line.startswith("| `--storage-ckpt-root`"))
    assert "SNAKEMAKE_STORAGE_CKPT_ROOT" in row and "| required |" in row


def test_benchmarks_page_has_every_result_file_and_its_figures():
    page = gen_docs.benchmarks_page()
    for path in sorted((REPO / "bench" / "results").glob("*.json")):
        assert f"## `{path.name}`" in page
    data = json.loads((REPO / "bench" / "results" / "invocation_overhead.json").read_text())
    section = page.split("## `invocation_overhead.json`")[1].split("\n## ")[0]
    assert f"| `sticky_over_baseline` | {data['sticky_over_baseline']:.4g} |" in section
    assert f"| `invocations` | {data['invocations']} |" in section


def test_benchmarks_page_summarises_long_lists_and_escapes_pipes():
    rows = dict(gen_docs._rows({"a": list(range(20)), "b": "x | y", "c": {"d": 0.123456}}, "", 0))
    assert rows == {"a": "(20 entries; see the JSON)", "b": "x \\| y", "c.d": "0.1235"}


def test_check_names_a_stale_page(tmp_path, monkeypatch, capsys):
    for name, make in gen_docs.PAGES.items():
        (tmp_path / name).write_text(make())
    (tmp_path / "CHANGELOG.md").write_text((REPO / "CHANGELOG.md").read_text())
    for folder in (REPO / "plugins").iterdir():
        if (folder / "pyproject.toml").exists():
            (tmp_path / "plugins" / folder.name / "docs").mkdir(parents=True)
            (tmp_path / "plugins" / folder.name / "pyproject.toml").touch()
            for page in ("intro.md", "further.md"):
                text = (folder / "docs" / page).read_text()
                (tmp_path / "plugins" / folder.name / "docs" / page).write_text(text)
            readme = gen_docs.distribution_readme(folder)
            (tmp_path / "plugins" / folder.name / "README.md").write_text(readme)
    monkeypatch.setattr(gen_docs, "DOCS", tmp_path)
    monkeypatch.setattr(gen_docs, "ROOT", tmp_path)
    assert gen_docs.main(["--check"]) == 0
    (tmp_path / "settings.md").write_text("old\n")
    further = tmp_path / "plugins" / "nbrewind" / "docs" / "further.md"
    further.write_text(further.read_text() + "\nA new paragraph.\n")
    assert gen_docs.main(["--check"]) == 1
    err = capsys.readouterr().err
    assert "settings.md is out of date: run python tools/gen_docs.py" in err
    assert "plugins/nbrewind/README.md is out of date" in err


def test_distribution_readmes_carry_their_catalog_pages():
    for folder in (REPO / "plugins").iterdir():
        if (folder / "pyproject.toml").exists():
            readme = (folder / "README.md").read_text()
            assert readme.startswith(gen_docs.GENERATED + f"\n\n# {folder.name}\n")
            assert (folder / "docs" / "intro.md").read_text() in readme
            assert (folder / "docs" / "further.md").read_text() in readme


def _headings(text: str) -> list[str]:
    lines, fenced = [], False
    for line in text.splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("#"):
            lines.append(line)
    return lines


@pytest.mark.parametrize(
    "folder",
    sorted(p.parent for p in (REPO / "plugins").glob("*/pyproject.toml")),
    ids=lambda p: p.name,
)
def test_catalog_pages_have_the_plugin_catalog_layout(folder):
    """The Snakemake plugin catalog renders docs/intro.md under the plugin's name and
    docs/further.md under its own section headings: intro is plain text, further's headings
    start at level 3 (as in snakemake-executor-plugin-slurm's docs/)."""
    intro = (folder / "docs" / "intro.md").read_text()
    further = (folder / "docs" / "further.md").read_text()
    assert intro.strip() and not _headings(intro)
    headings = _headings(further)
    assert headings and all(h.startswith("### ") or h.startswith("#### ") for h in headings)
    assert "### Installation" in headings
