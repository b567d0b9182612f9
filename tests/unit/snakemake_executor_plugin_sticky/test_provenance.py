"""What goes into a job's provenance key: config reads, directory digests, local imports."""

import os

import pytest

from ckptstore import CheckpointStore
from snakemake_executor_plugin_sticky._provenance import (
    InputDigests,
    entry_digest,
    local_imports,
    planned_digest,
    script_config_reads,
    shell_config_reads,
)


@pytest.mark.parametrize(
    ("source", "expected"),
    [
        ('x = snakemake.config["alpha"]\nprint(snakemake.input[0])', {"alpha"}),
        ('a = snakemake.config.get("a", 1)\nb = snakemake.config["b"]["inner"]', {"a", "b"}),
        ("print(snakemake.output[0], snakemake.params.n)", set()),
        # The object or its config escaping, or a computed key: anything may be read.
        ("helper.run(snakemake)", None),
        ("cfg = snakemake.config", None),
        ('key = "a"\nx = snakemake.config[key]', None),
        ("x = snakemake.config.get(name)", None),
        ("def broken(:\n", None),
    ],
)
def test_script_config_reads(source, expected):
    assert script_config_reads(source) == expected


@pytest.mark.parametrize(
    ("shellcmd", "expected"),
    [
        ("train --alpha {config[alpha]} {input} > {output}", {"alpha"}),
        ("echo {config[a]} {config.b}", {"a", "b"}),
        ("cat {input} > {output}", set()),
        ("dump {config} > {output}", None),
    ],
)
def test_shell_config_reads(shellcmd, expected):
    assert shell_config_reads(shellcmd) == expected


def test_directory_digest_matches_the_tree_digest_of_its_files(tmp_path):
    """A plan assumes a restored directory's digest from its manifest entry; that must equal
    what hashing the directory on disk gives (empty subdirectories included)."""
    folder = tmp_path / "d"
    (folder / "sub").mkdir(parents=True)
    (folder / "empty").mkdir()
    (folder / "b.txt").write_text("b")
    (folder / "sub" / "a.txt").write_text("a")
    store = CheckpointStore(tmp_path / "store")
    entry = store.record("a" * 64, {"d": "d"}, tmp_path).outputs["d"]
    assert InputDigests().digest(str(folder)) == entry_digest(entry)


def test_directory_digest_sees_empty_subdirectories_and_links(tmp_path):
    """What a restore puts back is what the key of a consumer sees: an empty directory or a
    link target that changes (all else equal) changes the digest."""
    folder = tmp_path / "d"
    (folder / "empty1").mkdir(parents=True)
    (folder / "f").write_text("f")
    (folder / "g").write_text("f")
    os.symlink("f", folder / "alias")
    seen = {InputDigests().digest(str(folder))}
    (folder / "empty1").rename(folder / "empty2")
    seen.add(InputDigests().digest(str(folder)))
    (folder / "alias").unlink()
    os.symlink("g", folder / "alias")
    seen.add(InputDigests().digest(str(folder)))
    assert len(seen) == 3


def test_a_plan_knows_the_digest_of_restored_links_before_anything_is_placed(tmp_path):
    """--sticky-checkpoints-plan: a consumer of a symbolic-link output (or of a directory
    holding links) gets a key before the restore, the same one it gets after it; was "no
    provenance key"."""
    site_a = tmp_path / "a"
    (site_a / "d" / "sub").mkdir(parents=True)
    (site_a / "data.txt").write_text("data")
    (site_a / "d" / "sub" / "f").write_text("f")
    os.symlink("sub/f", site_a / "d" / "inner")
    os.symlink("../data.txt", site_a / "d" / "outer")
    os.symlink("data.txt", site_a / "latest")
    store = CheckpointStore(tmp_path / "store")
    store.record("b" * 64, {"latest": "latest", "d": "d", "data.txt": "data.txt"}, site_a)
    manifest = store.lookup("b" * 64)
    site_b = tmp_path / "b"
    site_b.mkdir()
    planned = InputDigests()
    # The link target is itself restored by the plan: known only as an assumed digest.
    planned.assume(str(site_b / "data.txt"), entry_digest(manifest.outputs["data.txt"]))
    before = {
        name: planned_digest(entry, str(site_b / name), planned)
        for name, entry in manifest.outputs.items()
    }
    assert None not in before.values()
    store.restore("b" * 64, site_b)
    after = {name: InputDigests().digest(str(site_b / name)) for name in manifest.outputs}
    assert before == after
    # A link whose target is neither on disk nor restored: only a restore can say.
    assert planned_digest({"link": "gone.txt"}, str(tmp_path / "c" / "x"), InputDigests()) is None


def test_assumed_digest_wins_over_the_file_on_disk(tmp_path):
    path = tmp_path / "x.txt"
    path.write_text("old")
    digests = InputDigests()
    digests.assume(str(path), "sha256:" + "0" * 64)
    assert digests.digest(str(path)) == "sha256:" + "0" * 64


def test_local_imports_follow_workflow_modules_only(tmp_path):
    (tmp_path / "helper.py").write_text("import inner\nimport json\n")
    (tmp_path / "inner.py").write_text("X = 1\n")
    found = local_imports("import helper\nimport numpy\n", [tmp_path])
    assert set(found) == {"helper.py", "inner.py"}


def test_a_script_that_changes_sys_path_or_runs_code_from_text_counts_every_local_file(tmp_path):
    """The red team (issue 26): sys.path.insert(0, "lib") then import mylib, and
    exec(open("helper.py").read()), reached files no static reading names."""
    (tmp_path / "lib").mkdir()
    (tmp_path / "lib" / "mylib.py").write_text("X = 1\n")
    for source in [
        "import sys\nsys.path.insert(0, 'lib')\nimport mylib\n",
        "exec(open('helper.py').read())\n",
        "import importlib\nm = importlib.import_module(name)\n",
    ]:
        before = local_imports(source, [tmp_path])
        assert "*" in before, source
        (tmp_path / "lib" / "mylib.py").write_text("X = 2\n")
        assert local_imports(source, [tmp_path])["*"] != before["*"], source
        (tmp_path / "lib" / "mylib.py").write_text("X = 1\n")
    assert "*" not in local_imports("import os\nprint(os.path.join('a', 'b'))\n", [tmp_path])


def test_a_symbolic_link_input_counts_by_its_target_name_too(tmp_path):
    """The red team: retargeting data/current -> v1.txt to v2.txt (same content) changed
    what a job reading the link's name wrote."""
    (tmp_path / "v1.txt").write_text("same")
    (tmp_path / "v2.txt").write_text("same")
    os.symlink("v1.txt", tmp_path / "current")
    before = InputDigests().digest(str(tmp_path / "current"))
    os.unlink(tmp_path / "current")
    os.symlink("v2.txt", tmp_path / "current")
    assert InputDigests().digest(str(tmp_path / "current")) != before


def test_output_flags_are_part_of_the_named_paths():
    from snakemake.io import protected

    from snakemake_executor_plugin_sticky._provenance import _flags

    assert _flags(protected("out/x.txt")) == ["protected"]
    assert _flags("out/x.txt") == []


def test_the_initial_environment_is_read_from_proc():
    from snakemake_executor_plugin_sticky._provenance import initial_environment

    found = initial_environment()
    assert found is None or found.get("PATH") == os.environ.get("PATH")


def test_a_method_named_like_a_dynamic_builtin_is_not_dynamic(tmp_path):
    """model.eval() (torch) and re.compile(...) made the claim workflow's report depend on
    every local .py file, so editing verify.py reran the report."""
    assert "*" not in local_imports("import re\nr = re.compile('a')\nmodel.eval()\n", [tmp_path])
    assert "*" in local_imports("x = eval('1 + 1')\n", [tmp_path])


def test_process_state_counts_what_changed_since_the_plugin_was_imported(monkeypatch):
    import decimal

    from snakemake_executor_plugin_sticky import _provenance as prov
    from snakemake_executor_plugin_sticky._provenance import changed_process_state

    # as if imported now (another test may have read a Snakefile before this module loaded)
    monkeypatch.setattr(prov, "_STATE_AT_IMPORT", prov._registries_now())

    context = decimal.getcontext()
    before = changed_process_state().get(("decimal", "context"))
    old = context.prec
    try:
        context.prec = old + 3  # as `decimal.getcontext().prec = ...` in a Snakefile
        after = changed_process_state()[("decimal", "context")]
    finally:
        context.prec = old
    assert after != before
    # set by the launch, not since: not there (pytest does not change the limits)
    assert ("resource", "RLIMIT_NOFILE") not in changed_process_state()


def test_process_state_components_name_each_setting_and_leave_the_sites_out():
    from snakemake_executor_plugin_sticky._provenance import process_state_components
    from stickyinvoc.registries import Same

    def f():
        pass

    state = {
        ("numpy", "printoptions"): {"precision": 3},
        ("abc", "cache_token"): 67,
        ("threading", "threads"): (("MainThread", False),),
        ("logging", "loggers"): {"snakemake.logging": (10,), "mylib": (20,)},
        ("copyreg", "dispatch_table"): ((int, Same(f)),),
        ("linecache", "cache"): 3,
    }
    comps = process_state_components(state, lambda text: text.replace("/site/a", "<wd>"))
    assert set(comps) == {
        "process-state:numpy:printoptions",
        "process-state:logging:loggers",
        "process-state:copyreg:dispatch_table",
    }
    # Snakemake's own logger (its command line's) does not count; another does
    quieter = dict(state)
    quieter[("logging", "loggers")] = {"snakemake.logging": (20,), "mylib": (20,)}
    same = process_state_components(quieter, lambda text: text)
    assert same["process-state:logging:loggers"] == comps["process-state:logging:loggers"]
    louder = dict(state)
    louder[("logging", "loggers")] = {"snakemake.logging": (10,), "mylib": (10,)}
    other = process_state_components(louder, lambda text: text)
    assert other["process-state:logging:loggers"] != comps["process-state:logging:loggers"]
    # site paths through the given naming
    a = process_state_components(
        {("sys", "path"): ("/site/a",)}, lambda t: t.replace("/site/a", "<wd>")
    )
    b = process_state_components(
        {("sys", "path"): ("/site/b",)}, lambda t: t.replace("/site/b", "<wd>")
    )
    assert a == b


def test_the_folders_snakemake_put_on_sys_path_are_not_process_state():
    from snakemake_executor_plugin_sticky._provenance import without_path_entries

    added = ("<added since the launch>", ("/wf/rules", "/wf"), "<gone>", ())
    state = {("sys", "path"): added, ("decimal", "context"): "prec=5"}
    assert without_path_entries(state, {"/wf/rules", "/wf"}) == {("decimal", "context"): "prec=5"}
    kept = without_path_entries(state, {"/wf/rules"})
    assert kept[("sys", "path")] == ("<added since the launch>", ("/wf",), "<gone>", ())
    gone = {("sys", "path"): ("<added since the launch>", ("/wf",), "<gone>", ("/x",))}
    assert without_path_entries(gone, {"/wf"})[("sys", "path")][3] == ("/x",)
    whole = {("sys", "path"): ("/wf", "/usr/lib/python3.11")}
    assert without_path_entries(whole, {"/wf"}) == {("sys", "path"): ("/usr/lib/python3.11",)}
    assert without_path_entries(state, set()) is state


def test_a_scripts_imports_are_looked_for_in_pythons_order(tmp_path, monkeypatch):
    from snakemake_executor_plugin_sticky._provenance import (
        local_imports,
        script_search_folders,
    )

    (tmp_path / "scripts").mkdir()
    (tmp_path / "lib").mkdir()
    (tmp_path / "common.py").write_text("X = 'root'\n")
    (tmp_path / "scripts" / "common.py").write_text("X = 'beside the script'\n")
    (tmp_path / "lib" / "textops.py").write_text("Y = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path / "lib"))  # what the Snakefile added
    monkeypatch.syspath_prepend(str(tmp_path))  # the Snakefile's folder, as Snakemake puts it
    folders = script_search_folders(tmp_path / "scripts", [str(tmp_path)])
    assert folders == [tmp_path, tmp_path / "lib", tmp_path / "scripts"]
    found = local_imports("import common\nimport textops\n", folders)
    assert set(found) == {"common.py", "textops.py"}
    before = found["common.py"]
    (tmp_path / "scripts" / "common.py").write_text("X = 'edited, never loaded'\n")
    assert local_imports("import common\n", folders)["common.py"] == before


def test_snakemakes_own_signal_handlers_are_the_launchs(monkeypatch):
    from snakemake_executor_plugin_sticky import _provenance
    from stickyinvoc.registries import Same

    def exit_gracefully(*_):  # as Snakemake's scheduler's SIGTERM handler
        pass

    exit_gracefully.__module__ = "snakemake.scheduling.job_scheduler"

    def users(*_):
        pass

    launch = {("signal", "handlers"): {15: 0, 10: 0}}
    monkeypatch.setattr(_provenance, "_STATE_AT_IMPORT", launch)
    running = {("signal", "handlers"): {15: Same(exit_gracefully), 10: 0}}
    assert _provenance.without_snakemakes_handlers(running) == {}
    mine = {("signal", "handlers"): {15: Same(exit_gracefully), 10: Same(users)}}
    kept = _provenance.without_snakemakes_handlers(mine)
    assert kept[("signal", "handlers")] == {15: 0, 10: Same(users)}


def test_an_unusual_umask_is_read_without_setting_it():
    from snakemake_executor_plugin_sticky._provenance import _read_umask

    old = os.umask(0o077)
    try:
        assert _read_umask() == "0077"
        assert os.umask(0o077) == 0o077  # reading it did not change it
        os.umask(0o022)
        assert _read_umask() is None  # the usual one: keys made before stay valid
    finally:
        os.umask(old)


def test_a_snakefile_read_before_the_plugin_keeps_the_whole_state(monkeypatch):
    """In a Python session that read a Snakefile before importing the plugin, what the
    workflow set cannot be told from what the launch gave: keys hold the whole state."""
    import sys
    import types

    from snakemake_executor_plugin_sticky import _provenance as prov
    from snakemake_executor_plugin_sticky._snakemake_compat import workflow_already_read

    fake = types.ModuleType("snakemake.workflow")
    monkeypatch.setitem(sys.modules, "snakemake.workflow", fake)
    assert not workflow_already_read()  # the module, no workflow yet
    fake.workflow = types.SimpleNamespace(rules=[], included=[])  # type: ignore[attr-defined]
    assert not workflow_already_read()  # a workflow, nothing read
    fake.workflow = types.SimpleNamespace(rules=["a"], included=["Snakefile"])  # type: ignore[attr-defined]
    assert workflow_already_read()

    monkeypatch.setattr(prov, "_STATE_AT_IMPORT", None)
    assert not prov.process_state_measured()
    whole = prov.changed_process_state()
    assert ("os", "umask") in whole or ("sys", "path") in whole  # unchanged ones too


def test_filters_the_launch_put_first_are_not_the_workflows(monkeypatch):
    """Red team (issue 26, process state) F9: `python -W ...`, `PYTHONWARNINGS` or `-X dev`
    put warnings filters in place before Snakemake starts; what the workflow inserts goes in
    front of them, and only that is keyed."""
    import warnings

    from snakemake_executor_plugin_sticky import _provenance as prov

    base = dict(prov._STATE_AT_IMPORT or {})
    launch = (("ignore", None, DeprecationWarning, None, 0),)
    with warnings.catch_warnings():
        for extra in ([], [("ignore", None, FutureWarning, None, 0)]):
            seen = []
            for launched in ((), launch):
                base[("warnings", "filters")] = launched
                monkeypatch.setattr(prov, "_STATE_AT_IMPORT", base)
                warnings.filters[:] = [*extra, *launched]
                seen.append(prov.changed_process_state().get(("warnings", "filters")))
            assert seen[0] == seen[1]  # the launch's filters do not count
        warnings.filters[:] = [("error", None, UserWarning, None, 0)]  # removed the launch's
        assert ("warnings", "filters") in prov.changed_process_state()


def test_pythons_launch_settings_that_change_output_are_keyed_where_unusual(monkeypatch):
    """Red team (issue 26, process state) F7/F8: a fixed PYTHONHASHSEED orders a set of
    strings, PYTHONINTMAXSTRDIGITS lets a long int print: the same code writes otherwise."""
    import sys

    from snakemake_executor_plugin_sticky._provenance import _read_interpreter

    assert _read_interpreter({}) is None
    assert _read_interpreter({"PYTHONHASHSEED": "random", "PATH": "/bin"}) is None
    one = _read_interpreter({"PYTHONHASHSEED": "1"})
    assert one is not None and one != _read_interpreter({"PYTHONHASHSEED": "2"})
    assert _read_interpreter({"PYTHONINTMAXSTRDIGITS": "5000"}) is not None
    old = sys.get_int_max_str_digits()
    try:
        sys.set_int_max_str_digits(5000)
        assert _read_interpreter({}) is not None
    finally:
        sys.set_int_max_str_digits(old)
