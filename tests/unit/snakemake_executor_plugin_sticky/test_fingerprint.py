"""Direct mode's after-invocation check (``_fingerprint``) and fork-hazard detection
(``_hazards``), in-process."""

import importlib
import sys
import threading
import types
from pathlib import Path

import pytest

from snakemake_executor_plugin_sticky import _hazards
from stickyinvoc import fingerprint as _fingerprint
from stickyinvoc.fingerprint import Fingerprint, describe


@pytest.fixture(autouse=True)
def no_gc_callbacks():
    """Without other tests' gc callbacks: hypothesis's rebind its own module globals on every
    collection, which the fingerprint rightly reports (a worker that loaded it is retired)."""
    import gc

    saved = list(gc.callbacks)
    gc.callbacks.clear()
    yield
    gc.callbacks[:] = saved


@pytest.fixture
def module():
    m = types.ModuleType("fp_probe_lib")
    m.SETTING = 1
    m.helper = len
    sys.modules["fp_probe_lib"] = m
    yield m
    del sys.modules["fp_probe_lib"]


def test_an_untouched_process_shows_no_change(module):
    fp = Fingerprint()
    fp.watch_imports()
    assert fp.changes() == []
    assert describe([]) is None


@pytest.mark.parametrize(
    "change, expected",
    [
        (lambda m: setattr(m, "SETTING", 2), "rebound fp_probe_lib.SETTING"),
        (lambda m: setattr(m, "extra", object()), "added fp_probe_lib.extra"),
        (lambda m: delattr(m, "helper"), "deleted fp_probe_lib.helper"),
    ],
)
def test_a_module_global_rebound_added_or_deleted_is_a_change(module, change, expected):
    fp = Fingerprint()
    change(module)
    assert fp.changes() == [expected]


def test_an_equal_value_written_back_and_a_new_submodule_are_not_changes(module):
    fp = Fingerprint()
    module.SETTING = int("1")  # another object, equal
    module.sub = types.ModuleType("fp_probe_lib.sub")
    assert fp.changes() == []


def test_a_submodule_unloaded_with_its_attribute_is_not_a_change(tmp_path: Path):
    """A template imports a workflow-local package, a script imports its submodule; direct
    mode unloads the submodule and its attribute after the job (a fresh process has neither):
    the worker stays (it was retired after every job). A loaded submodule deleted from its
    package is still a change."""
    package = tmp_path / "fp_local_pkg"
    package.mkdir()
    (package / "__init__.py").write_text("X = 1\n")
    (package / "sub.py").write_text("Y = 2\n")
    (package / "kept.py").write_text("Z = 3\n")
    sys.path.insert(0, str(tmp_path))
    try:
        import fp_local_pkg.kept  # noqa: F401 - loaded "by the template"

        fp = Fingerprint()
        fp.watch_imports()
        exec("import fp_local_pkg.sub\n", {})
        del sys.modules["fp_local_pkg.sub"]  # what the snapshot's restore does
        delattr(sys.modules["fp_local_pkg"], "sub")
        assert fp.changes() == []
        delattr(sys.modules["fp_local_pkg"], "kept")
        assert fp.changes() == ["deleted fp_local_pkg.kept"]
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("fp_local_pkg", "fp_local_pkg.sub", "fp_local_pkg.kept"):
            sys.modules.pop(name, None)
        importlib.invalidate_caches()


def test_a_library_first_imported_by_the_script_is_compared_with_its_import(tmp_path: Path):
    (tmp_path / "fp_fresh_lib.py").write_text("LEVEL = 'default'\n")
    sys.path.insert(0, str(tmp_path))
    try:
        fp = Fingerprint()
        fp.watch_imports()
        exec("import fp_fresh_lib\nfp_fresh_lib.LEVEL = 'changed'\n", {})
        assert fp.changes() == ["rebound fp_fresh_lib.LEVEL"]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fp_fresh_lib", None)


def test_what_an_import_changes_in_modules_loaded_before_belongs_to_that_import(
    module, tmp_path: Path
):
    """torch patches typing and inspect when imported: not a change of the script's."""
    (tmp_path / "fp_patching_lib.py").write_text("import fp_probe_lib\nfp_probe_lib.helper = max\n")
    sys.path.insert(0, str(tmp_path))
    try:
        fp = Fingerprint()
        fp.watch_imports()
        exec("import fp_patching_lib\n", {})
        assert fp.changes() == []
        module.SETTING = 5  # the script's own change afterwards still counts
        assert fp.changes() == ["rebound fp_probe_lib.SETTING"]
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fp_patching_lib", None)
        importlib.invalidate_caches()


def test_library_registries_are_compared(monkeypatch):
    import gc

    fp = Fingerprint()
    gc.disable()
    try:
        assert fp.changes() == ["gc isenabled True -> False"]
    finally:
        gc.enable()


def test_a_gc_callback_left_by_a_job_is_a_change():
    """The first red team's gc_callbacks case, seen differing in direct mode (2026-12-04): a
    job's memory-profiling callback stayed in the worker and fired in later jobs' collections
    (into their logs, after its own globals were gone)."""
    import gc

    fp = Fingerprint()
    callback = lambda phase, info: None  # noqa: E731
    gc.callbacks.append(callback)
    try:
        (change,) = fp.changes()
        assert change.startswith("gc callbacks ")
    finally:
        gc.callbacks.remove(callback)
    assert fp.changes() == []


def test_what_an_import_changes_in_registries_belongs_to_that_import(tmp_path: Path):
    """A library that adds a warnings filter when imported: a fresh process gets it too; the
    script's own filter afterwards is still a change."""
    import warnings

    (tmp_path / "fp_filtering_lib.py").write_text(
        "import warnings\nwarnings.filterwarnings('ignore', message='fp-lib')\n"
    )
    sys.path.insert(0, str(tmp_path))
    saved = list(warnings.filters)
    try:
        fp = Fingerprint()
        fp.watch_imports()
        exec("import fp_filtering_lib\n", {})
        assert fp.changes() == []
        warnings.filterwarnings("ignore", message="fp-script")
        assert [c.split(" ")[:2] for c in fp.changes()] == [["warnings", "filters"]]
    finally:
        warnings.filters[:] = saved
        warnings._filters_mutated()  # type: ignore[attr-defined]
        sys.path.remove(str(tmp_path))
        sys.modules.pop("fp_filtering_lib", None)
        importlib.invalidate_caches()


def test_the_dict_version_tag_is_read_on_this_interpreter():
    """CPython 3.11-3.13: unchanged module dicts are skipped by their version tag."""
    if _fingerprint._TAG is None:
        pytest.skip("no dict version tag on this interpreter: every dict is compared")
    d: dict[str, int] = {}
    tag = _fingerprint._TAG(d)
    before = tag.value
    d["x"] = 1
    assert tag.value != before


def test_gpu_device_files_are_found_among_open_descriptors(tmp_path: Path):
    fds = tmp_path / "fd"
    fds.mkdir()
    (fds / "3").symlink_to("/dev/nvidia0")
    (fds / "4").symlink_to("/dev/dri/renderD128")
    (fds / "5").symlink_to("/tmp/file")
    assert _hazards.gpu_device_files(str(fds)) == ["/dev/dri/renderD128", "/dev/nvidia0"]
    assert _hazards.gpu_device_files(str(tmp_path / "missing")) == []


def test_threads_the_template_left_running_are_a_hazard_the_workers_own_are_not():
    others = [t for t in threading.enumerate() if t is not threading.current_thread()]
    own = threading.Event()
    stop = threading.Event()
    heartbeat = threading.Thread(target=own.wait, name="heartbeat", daemon=True)
    prefetch = threading.Thread(target=stop.wait, name="prefetcher", daemon=True)
    heartbeat.start()
    prefetch.start()
    try:
        reasons = _hazards.fork_hazards([heartbeat, *others])  # not other tests' threads
        assert any("prefetcher" in r for r in reasons)
        assert not any("heartbeat" in r for r in reasons)
    finally:
        own.set()
        stop.set()
        heartbeat.join()
        prefetch.join()
    assert not any("left threads running" in r for r in _hazards.fork_hazards(others))


def test_native_threads_python_does_not_know_are_named(tmp_path: Path):
    """An OpenMP pool's threads are in /proc/self/task, not in threading.enumerate()."""
    tasks = tmp_path / "task"
    tasks.mkdir()
    known = {t.native_id for t in threading.enumerate()}
    for tid in [*known, 999_001, 999_002]:
        (tasks / str(tid)).mkdir()
        (tasks / str(tid) / "comm").write_text("omp\n")
    assert _hazards.native_threads(str(tasks)) == ["omp[999001]", "omp[999002]"]
    assert _hazards.native_threads(str(tmp_path / "missing")) == []


def test_a_forked_main_thread_is_not_a_native_thread(monkeypatch: pytest.MonkeyPatch):
    """Python 3.11 keeps the main thread's native_id from the parent across a fork (the worker
    is forked by its supervisor): the calling thread is known by its id now, not by that."""
    others = _hazards.native_threads()  # other tests' libraries may have left some
    monkeypatch.setattr(threading.current_thread(), "_native_id", 1)  # the parent's id
    assert _hazards.native_threads() == others
    assert not any(name.endswith(f"[{threading.get_native_id()}]") for name in others)


def test_a_native_thread_started_outside_threading_is_a_hazard():
    """A thread that threading does not list (started through _thread, as C libraries do)."""
    import _thread

    stop = threading.Event()
    started = threading.Event()

    def run() -> None:
        started.set()
        stop.wait()

    _thread.start_new_thread(run, ())
    started.wait()
    try:
        reasons = _hazards.fork_hazards()
        assert any("native thread(s)" in r for r in reasons), reasons
    finally:
        stop.set()


def test_rebase_takes_the_process_as_it_is_now_as_a_new_fingerprint_would(module):
    """The NBRewind kernel keeps one fingerprint and rebases it per cell: what changed before
    the rebase is no change after it, what changes after it is."""
    fp = Fingerprint()
    module.SETTING = 2
    sys.modules["fp_probe_new"] = types.ModuleType("fp_probe_new")
    try:
        assert fp.changes()
        fp.rebase()
        assert fp.changes() == []
        fp.rebase()
        module.SETTING = 3
        sys.modules["fp_probe_new"].VALUE = 1
        found = fp.changes()
        assert "rebound fp_probe_lib.SETTING" in found
        assert "added fp_probe_new.VALUE" in found
    finally:
        del sys.modules["fp_probe_new"]


def test_a_module_swapped_in_and_back_is_no_change_and_a_replacement_after_it_is(module):
    """Direct mode puts the script's ``__main__`` in sys.modules and back around every
    invocation: its entries are then the same objects (one comparison, no scan), which must
    not hide a module a later invocation replaces or adds."""
    fp = Fingerprint()
    assert fp.changes() == []
    main = sys.modules["__main__"]
    for _ in range(2):
        sys.modules["__main__"] = types.ModuleType("__main__")
        sys.modules["__main__"] = main
        assert fp.changes() == []
    try:
        sys.modules["fp_probe_lib"] = types.ModuleType("fp_probe_lib")
        assert fp.changes() == ["sys.modules['fp_probe_lib'] replaced"]
    finally:
        sys.modules["fp_probe_lib"] = module
    sys.modules["fp_probe_added"] = types.ModuleType("fp_probe_added")
    try:
        assert fp.changes() == []  # a new module is taken in, as its import leaves it
        sys.modules["fp_probe_added"].VALUE = 1
        assert fp.changes() == ["added fp_probe_added.VALUE"]
    finally:
        del sys.modules["fp_probe_added"]


def test_an_object_in_sys_modules_whose_comparison_raises_is_no_failure():
    class Odd:
        def __eq__(self, other):
            raise ValueError("ambiguous")

        __hash__ = object.__hash__

    fp = Fingerprint()
    sys.modules["fp_odd_entry"] = Odd()
    try:
        assert fp.changes() == []  # not a module: taken in, never compared
        sys.modules["fp_odd_entry"] = Odd()  # the copies are compared: its == raises
        assert fp.changes() == []
    finally:
        del sys.modules["fp_odd_entry"]


@pytest.mark.parametrize("gathered", [True, False])
def test_the_tags_read_in_one_gather_or_one_by_one_see_the_same_changes(
    module, monkeypatch, gathered
):
    """With numpy loaded (and only then) the module dicts' tags are read in one gather."""
    import numpy  # noqa: F401 - loaded, as in a template that uses it

    if not gathered:
        monkeypatch.setitem(sys.modules, "numpy", None)
    fp = Fingerprint()
    assert fp.changes() == []
    assert (fp._gather is not None) == gathered
    module.SETTING = 2
    assert fp.changes() == ["rebound fp_probe_lib.SETTING"]
    module.SETTING = 1  # written back as it was: no change, and the tag is taken again
    assert fp.changes() == []
    module.SETTING = 3
    assert fp.changes() == ["rebound fp_probe_lib.SETTING"]
