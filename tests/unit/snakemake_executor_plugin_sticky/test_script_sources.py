"""The sticky executor reads a rule's script once per run (issue 17: per-job cost at paper
scale), and gets what Snakemake's ``get_source`` gives every job: Snakemake's runtime source
cache serves the copy it made on the first read for the rest of the run anyway."""

import sys
from types import SimpleNamespace

import pytest
from snakemake.iocontainers import Params, Wildcards
from snakemake.script import get_source
from snakemake.sourcecache import SourceCache

from snakemake_executor_plugin_sticky import _snakemake_compat as compat


@pytest.fixture
def workflow(tmp_path):
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    return SimpleNamespace(
        sourcecache=SimpleNamespace(cache_path=tmp_path / "cache", runtime_cache_path=runtime)
    )


@pytest.fixture
def calls(monkeypatch):
    """Every get_source call the adapter makes."""
    made = []

    def counted(*args):
        made.append(args[0])
        return get_source(*args)

    monkeypatch.setitem(compat._resolved, "get_source", counted)
    return made


def rule(tmp_path, name="r"):
    return SimpleNamespace(name=name, basedir=str(tmp_path))


def answer(result):
    path, source, language, is_local, cache_path = result
    return path.get_path_or_uri(secret_free=True), source, language, is_local, cache_path


def test_a_rules_script_is_read_once_with_get_sources_answer(tmp_path, workflow, calls):
    (tmp_path / "s.py").write_text("print(1)\n")
    sources = compat.ScriptSources(workflow)
    wildcards, params = Wildcards(fromdict={"i": "1"}), Params()
    first = sources.get(rule(tmp_path), "s.py", wildcards, params)
    again = sources.get(rule(tmp_path), "s.py", Wildcards(fromdict={"i": "2"}), params)
    assert calls == ["s.py"]
    assert again is first
    cache = SourceCache(workflow.sourcecache.cache_path, workflow.sourcecache.runtime_cache_path)
    assert answer(first) == answer(get_source("s.py", cache, str(tmp_path), wildcards, params))
    assert answer(first)[1:4] == ("print(1)\n", "python", True)


def test_an_edit_mid_run_is_not_seen_by_snakemakes_own_source_cache_either(tmp_path, workflow):
    """Why keeping the answer is the same as reading per job: after the first read, Snakemake
    serves its runtime copy for the rest of the run."""
    script = tmp_path / "s.py"
    script.write_text("print(1)\n")
    sources = compat.ScriptSources(workflow)
    kept = sources.get(rule(tmp_path), "s.py", Wildcards(), Params())
    script.write_text("print(2)\n")
    cache = SourceCache(workflow.sourcecache.cache_path, workflow.sourcecache.runtime_cache_path)
    fresh = get_source("s.py", cache, str(tmp_path), Wildcards(), Params())
    assert fresh[1] == kept[1] == "print(1)\n"


def test_scripts_named_by_wildcards_are_read_per_job(tmp_path, workflow, calls):
    for i in (1, 2):
        (tmp_path / f"s{i}.py").write_text(f"print({i})\n")
    sources = compat.ScriptSources(workflow)
    got = [
        sources.get(rule(tmp_path), "s{wildcards.i}.py", Wildcards(fromdict={"i": i}), Params())
        for i in ("1", "2", "1")
    ]
    assert len(calls) == 3
    assert [g[1] for g in got] == ["print(1)\n", "print(2)\n", "print(1)\n"]


def test_rules_are_kept_apart(tmp_path, workflow, calls):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "s.py").write_text("a\n")
    (tmp_path / "s.py").write_text("b\n")
    sources = compat.ScriptSources(workflow)
    a = sources.get(rule(tmp_path / "a", "one"), "s.py", Wildcards(), Params())
    b = sources.get(rule(tmp_path, "two"), "s.py", Wildcards(), Params())
    assert (a[1], b[1]) == ("a\n", "b\n")
    assert len(calls) == 2


def test_searchpaths_follow_sys_path(tmp_path, workflow, monkeypatch):
    sources = compat.ScriptSources(workflow)
    assert sources.searchpaths() == list(compat.get_snakemake_searchpaths())
    monkeypatch.setattr(sys, "path", [*sys.path, str(tmp_path)])
    assert sources.searchpaths()[-1] == str(tmp_path)
    assert sources.searchpaths() == list(compat.get_snakemake_searchpaths())
    sources.searchpaths().append("not kept")  # callers get their own list
    assert "not kept" not in sources.searchpaths()
