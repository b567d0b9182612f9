"""Direct-mode isolation, in-process (no processes started): after any invocation the worker's
interpreter is as it was, and each invocation sees what a fresh ``script:`` process sees.

The differential property test draws sequences of hostile actions, runs them as scripts through
the real :class:`Worker` and compares a fingerprint of the process before and after.
"""

import logging
import os
import signal
import sys
import types
import warnings
import weakref
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stickyinvoc._access as access
from snakemake_executor_plugin_sticky import _audit, _exit
from snakemake_executor_plugin_sticky._isolation import (
    exit_status,
    imported_modules,
    new_libraries,
)
from snakemake_executor_plugin_sticky._protocol import Invoke
from snakemake_executor_plugin_sticky.worker import Worker
from tests.conftest import examples


class RecordingConn:
    def __init__(self) -> None:
        self.sent: list[object] = []

    def send(self, message: object) -> None:
        self.sent.append(message)


@pytest.fixture(scope="module")
def worker():
    w = Worker(RecordingConn(), "w1")  # type: ignore[arg-type]
    access._bind_worker(w.holder.lookup)
    yield w
    access._bind_worker(None)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("iso")
    (root / "sticky_templates.py").write_text(
        "import json\nfrom stickyinvoc import template\n"
        "@template('m')\ndef m():\n    return {'calls': 0}\n"
    )
    for name in ("a", "b"):
        (root / name).mkdir()
        (root / name / "utils.py").write_text(f"WHO = {name!r}\nCOUNT = 0\n")
    return root


counter = iter(range(1, 10**9))


def run(worker: Worker, folder: Path, source: str, scriptdir: str = "", log: str = ""):
    smk = types.SimpleNamespace(
        rule="r", resources={"sticky": "m"}, output=[], log=[log] if log else [], params={}
    )
    where = folder / scriptdir if scriptdir else folder
    inv = Invoke(
        next(counter),
        "m",
        str(folder / "sticky_templates.py"),
        str(where / "job.py"),
        source,
        str(where),
        smk,
        workdir=str(folder),
        isolation="direct",  # in-process: fork mode is tested in tests/integration
    )
    return worker.run(inv)


def fingerprint() -> dict:
    """What a script can change in the interpreter, as comparable values."""
    manager = logging.Logger.manager
    return {
        "env": dict(os.environ),
        "cwd": os.getcwd(),
        "path": list(sys.path),
        "argv": list(sys.argv),
        "modules": set(sys.modules),
        "main": sys.modules["__main__"],
        "streams": (sys.stdout, sys.stderr, sys.stdin),
        "fds": [os.fstat(fd).st_ino for fd in (1, 2)],
        "root": (logging.root.level, list(logging.root.handlers)),
        "loggers": set(manager.loggerDict),
        "disable": manager.disable,
        "filters": list(warnings.filters),
        "showwarning": warnings.showwarning,
        "signals": {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGUSR1)},
        "timer": signal.getitimer(signal.ITIMER_REAL),
        "umask": os.umask(os.umask(0o022)),
        "recursion": sys.getrecursionlimit(),
        "json.dumps": __import__("json").dumps,
        "print": __builtins__["print"] if isinstance(__builtins__, dict) else print,
    }


ACTIONS = {
    "env": "os.environ['ISO_X'] = 'v'; os.environ.pop('ISO_KEEP', None)",
    "chdir": "os.chdir('/')",
    "syspath": "sys.path.insert(0, '/iso-nowhere'); sys.argv.append('-x')",
    "module": "import utils; utils.COUNT += 1; sys.modules['iso_fake'] = types.ModuleType('f')",
    "patch": "import json; json.dumps = lambda *a, **k: 'P'",
    "logging": (
        "import logging; logging.basicConfig(filename=LOG, level=logging.INFO); "
        "logging.getLogger('iso.new').warning('x'); logging.disable(logging.ERROR)"
    ),
    "streams": "f = open(LOG, 'a'); sys.stdout = sys.stderr = f; print('hi'); f.close()",
    "fds": (
        "fd = os.open(LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT); os.dup2(fd, 1); os.close(fd)"
    ),
    "warnings": "import warnings; warnings.simplefilter('error'); warnings.showwarning = id",
    "signals": (
        "import signal; signal.signal(signal.SIGUSR1, signal.SIG_IGN); "
        "signal.setitimer(signal.ITIMER_REAL, 30)"
    ),
    "limits": "os.umask(0o077); sys.setrecursionlimit(5000)",
    "raise": "raise ValueError('boom')",
    "interrupt": "raise KeyboardInterrupt",
    "exit": "sys.exit(4)",
}


@settings(
    max_examples=examples(60),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(actions=st.lists(st.sampled_from(sorted(ACTIONS)), min_size=1, max_size=6))
def test_any_sequence_of_hostile_actions_leaves_the_worker_as_it_was(worker, folder, actions):
    log = str(folder / "iso.log")
    run(worker, folder, "pass\n")  # the template is built (and its imports made) before
    os.environ["ISO_KEEP"] = "1"
    try:
        before = fingerprint()
        body = "\n".join(ACTIONS[a] for a in actions)
        source = f"import os, sys, types\nLOG = {log!r}\n{body}\n"
        done = run(worker, folder, source, "a")
        failing = {"raise", "interrupt", "exit"}
        first_failure = next((a for a in actions if a in failing), None)
        assert done.ok == (first_failure is None), done.error
        after = fingerprint()
        assert after == before
    finally:
        os.environ.pop("ISO_KEEP", None)


def test_each_script_imports_its_own_local_module(worker, folder):
    src = "import utils\nutils.COUNT += 1\nRESULT.append((utils.WHO, utils.COUNT))\n"
    seen: list = []
    builtins_result = __import__("builtins")
    builtins_result.RESULT = seen
    try:
        for where in ("a", "b", "a", "b"):
            assert run(worker, folder, src, where).ok
    finally:
        del builtins_result.RESULT
    assert seen == [("a", 1), ("b", 1), ("a", 1), ("b", 1)]


def test_logging_basicconfig_idiom_writes_each_jobs_own_log(worker, folder, monkeypatch):
    # A fresh process (and a worker) starts with no root handler; pytest adds its own.
    monkeypatch.setattr(logging.root, "handlers", [])
    src = (
        "import logging\n"
        "logging.basicConfig(filename=snakemake.log[0], level=logging.INFO)\n"
        "logging.info('job %s', snakemake.log[0][-5:])\n"
    )
    logs = [folder / f"job{i}.log" for i in range(3)]
    for log in logs:
        assert run(worker, folder, src, log=str(log)).ok
    assert [p.read_text() for p in logs] == [f"INFO:root:job {p.name[-5:]}\n" for p in logs]


def test_replacing_and_closing_stdout_and_stderr_keeps_the_worker(worker, folder):
    log = folder / "streams.log"
    src = (
        "with open(snakemake.log[0], 'w') as f:\n    sys.stderr = sys.stdout = f\n    print('x')\n"
    )
    stdout = sys.stdout
    assert run(worker, folder, src, log=str(log)).ok
    assert sys.stdout is stdout and not sys.stdout.closed
    assert log.read_text() == "x\n"
    assert run(worker, folder, "print('still here')\n").ok


def test_preamble_globals_are_snakemakes(worker, folder):
    src = (
        "import builtins\n"
        "assert __name__ == '__main__' and __file__.endswith('job.py')\n"
        "assert __real_file__.startswith(snakemake_dir) and __real_file__.endswith('.job.py')\n"
        "assert sys.argv == [__real_file__] and sys.modules['__main__'].__dict__ is globals()\n"
        "assert pickle and logger and Snakemake and __builtins__ is builtins\n"
        "assert sys.path[0] == snakemake_dir and sys.path[-2] == str(here)\n"
    )
    scripts = str(folder / ".snakemake" / "scripts")
    done = run(worker, folder, f"snakemake_dir = {scripts!r}\nhere = {str(folder)!r}\n" + src)
    assert done.ok, done.error


def test_every_job_starts_with_the_collectors_counters_where_the_last_one_did(worker, folder):
    # Where the collector's automatic collections fall in a script (and so the order of the
    # __del__ of objects in cycles) must not depend on what the worker did before the job.
    log = folder / "gc_counts.log"
    src = (
        f"import gc\nwith open({str(log)!r}, 'a') as f:\n"
        "    f.write(repr(gc.get_count()) + chr(10))\n"
    )
    kept = []
    for allocations in (0, 333, 5, 650):
        kept.append([[i] for i in range(allocations)])  # moves the worker's own counter
        assert run(worker, folder, "x = [[i] for i in range(777)]\n").ok
        assert run(worker, folder, src).ok
    counts = log.read_text().splitlines()
    assert len(counts) == 4 and len(set(counts)) == 1, counts


def test_a_walk_of_the_collectors_objects_is_said_once(worker, folder):
    # The template's objects are frozen: gc.get_objects() cannot list them as a fresh job's
    # does its build's; the job says so (the worker's own walk at the exit does not count).
    done = run(worker, folder, "import gc\nn = len(gc.get_objects())\ngc.get_referrers(n)\n")
    assert done.ok and len(done.warnings) == 1, done.warnings
    assert "gc.get_objects() and gc.get_referrers()" in done.warnings[0]
    writes = f"import gc\ngc.collect()\nopen({str(folder / 'w.txt')!r}, 'w').close()\n"
    done = run(worker, folder, writes)  # the exit walks the objects for files left open
    assert done.ok and done.warnings == [], (done.error, done.warnings)


def test_script_exits_fail_their_job_once_with_the_cause(worker, folder):
    done = run(worker, folder, "raise KeyboardInterrupt\n")
    assert not done.ok and "KeyboardInterrupt raised by the script" in done.error
    done = run(worker, folder, "sys.exit('bad input')\n")
    assert not done.ok and done.error == "script exited with status 1: bad input"
    assert run(worker, folder, "sys.exit(None)\n").ok
    assert run(worker, folder, "sys.exit(False)\n").ok
    assert run(worker, folder, "pass\n").ok  # the worker is still warm


def test_monkeypatch_is_put_back_and_reported_once(worker, folder):
    import json

    dumps = json.dumps
    done = run(worker, folder, "import json\njson.dumps = len\njson.dumps = str\n")
    assert done.ok and json.dumps is dumps
    assert len(done.warnings) == 1 and "rebound json.dumps" in done.warnings[0]
    assert run(worker, folder, "import json\nx = json.dumps(1)\n").warnings == []


def test_a_reloaded_module_is_put_back_with_one_warning(worker, folder):
    import json

    dumps = json.dumps
    done = run(worker, folder, "import importlib, json\nimportlib.reload(json)\n")
    assert done.ok and json.dumps is dumps
    assert len(done.warnings) == 1 and "rebound json.dumps" in done.warnings[0]


def test_atexit_handlers_run_and_threads_are_joined_when_the_script_ends(worker, folder):
    out = folder / "late.txt"
    src = (
        "import atexit, threading, time\n"
        f"OUT = {str(out)!r}\n"
        "def put(text):\n    with open(OUT, 'a') as f:\n        f.write(text)\n"
        "def late():\n    time.sleep(0.2)\n    put('thread\\n')\n"
        "atexit.register(lambda: put('atexit\\n'))\n"
        "threading.Thread(target=late).start()\n"
    )
    done = run(worker, folder, src)
    assert done.ok and out.read_text() == "thread\natexit\n"


def test_a_daemon_thread_left_running_is_reported(worker, folder):
    src = (
        "import threading, time\n"
        "threading.Thread(target=time.sleep, args=(1,), daemon=True).start()\n"
    )
    done = run(worker, folder, src)
    assert done.ok and any("left thread" in w for w in done.warnings)


def test_exit_status_follows_the_interpreter():
    assert exit_status(None) == (0, None) and exit_status(0) == (0, None)
    assert exit_status(3) == (3, None) and exit_status(True) == (1, None)
    assert exit_status("msg") == (1, "msg")


def test_imported_modules_reads_every_import_form():
    names = imported_modules("import a.b as c\nfrom d import e\nfrom . import f\nimport g\n")
    assert {"a.b", "d", "d.e", "g"} <= names and "f" not in names
    assert imported_modules("this is not python") == frozenset()


def test_new_libraries_are_the_top_level_packages_the_script_imported_whole(tmp_path, monkeypatch):
    """A forked child names what its script imported from the audit's ``import`` events, not
    by walking ``sys.modules`` (which would copy the pages of the template's module names)."""
    for name in ("rt_lib_a", "rt_lib_b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "__init__.py").write_text("")
        (tmp_path / name / "sub.py").write_text("")
    monkeypatch.syspath_prepend(str(tmp_path))
    import rt_lib_b  # noqa: F401 - loaded before the watch: the "template" had it

    watch = _audit.start(str(tmp_path), types.SimpleNamespace(output=[], log=[]))
    try:
        import json.tool  # noqa: F401 - the standard library: never reported

        import rt_lib_a.sub  # noqa: F401
        import rt_lib_b.sub  # noqa: F401 - a new submodule of a library loaded before

        try:
            import rt_lib_missing  # noqa: F401
        except ImportError:
            pass
    finally:
        _audit.stop()
    try:
        assert {"rt_lib_a", "rt_lib_a.sub", "rt_lib_b.sub", "rt_lib_missing"} <= set(watch.imports)
        assert "rt_lib_b" not in watch.imports  # loaded already: no import event
        assert new_libraries(watch.imports, (str(tmp_path),)) == ["rt_lib_a"]
        assert new_libraries(watch.imports, ("/nowhere",)) == []  # not under a library root
    finally:
        for name in ("rt_lib_a", "rt_lib_a.sub", "rt_lib_b", "rt_lib_b.sub"):
            sys.modules.pop(name, None)


def test_the_exit_finalises_only_the_finalize_objects_made_after_its_scope():
    """``weakref.finalize`` objects of the template (made before the scope) are never run by
    an invocation's exit; the invocation's own with ``atexit`` set run, newest first, in a
    scope taken in the worker (direct mode) or in a fork child (only the newest entry read)."""

    class Thing:
        pass

    ran: list[str] = []
    template = [Thing() for _ in range(3)]
    kept = [weakref.finalize(t, ran.append, f"template{i}") for i, t in enumerate(template)]
    for scope in (_exit.ExitScope.now(), _exit.ExitScope.forked()):
        ran.clear()
        job = [Thing() for _ in range(3)]
        first = weakref.finalize(job[0], ran.append, "first")
        quiet = weakref.finalize(job[1], ran.append, "quiet")
        quiet.atexit = False
        last = weakref.finalize(job[2], ran.append, "last")
        _exit._run_finalize_objects(scope)
        assert ran == ["last", "first"]
        assert all(f.alive for f in kept) and quiet.alive and not first.alive and not last.alive
        quiet.detach()
    for f in kept:
        f.detach()


def test_a_failing_flush_of_stdout_at_exit_is_reported_and_fails_as_status_120(monkeypatch):
    """CPython's ``flush_std_files``: a ``sys.stdout`` whose ``flush`` fails is reported as
    unraisable on ``sys.stderr`` (from the stream's frames on) and the exit status is 120."""
    import io

    class Tee:
        def write(self, s: str) -> int:
            return len(s)

    err = io.StringIO()
    monkeypatch.setattr(sys, "unraisablehook", sys.__unraisablehook__)  # not pytest's
    monkeypatch.setattr(sys, "stderr", err)
    monkeypatch.setattr(sys, "stdout", Tee())
    assert _exit._flush_std_files() is True
    text = err.getvalue()
    assert text.startswith("Exception ignored in: <") and "AttributeError" in text
    assert "_exit.py" not in text  # not the worker's own frame
    monkeypatch.setattr(sys, "stdout", io.StringIO())
    assert _exit._flush_std_files() is False


def test_looking_for_open_files_never_evaluates_a_lazy_object():
    """A proxy whose ``__class__`` runs code (a lazy module, a lazy object) is not asked."""
    evaluated: list[str] = []

    class Lazy:
        @property  # type: ignore[misc]
        def __class__(self):  # noqa: ANN204
            evaluated.append("yes")
            raise ImportError("evaluated")

    lazy = Lazy()
    _exit._finish_files(_exit._open_files(), close=False)
    assert evaluated == [] and lazy is not None


def test_a_scripts_own_unraisablehook_gets_the_failed_flush(monkeypatch):
    import io

    class Broken(io.StringIO):
        def flush(self) -> None:
            raise OSError("gone")

    seen: list[tuple[object, object]] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda u: seen.append((u.exc_type, u.object)))
    stream = Broken()
    monkeypatch.setattr(sys, "stdout", stream)
    assert _exit._flush_std_files() is True
    assert seen == [(OSError, stream)]


def test_clearing_a_jobs_modules_finalises_what_only_they_held_newest_module_first():
    order: list[str] = []

    class Held:
        def __init__(self, tag: str) -> None:
            self.tag = tag

        def __del__(self) -> None:
            order.append(self.tag)

    first, second = types.ModuleType("first_helper"), types.ModuleType("second_helper")
    first.__dict__.update(CACHE=Held("first CACHE"), _private=Held("first _private"))
    second.__dict__.update(
        __builtins__=__builtins__, PUBLIC=Held("second PUBLIC"), _priv=Held("second _priv")
    )
    _exit.clear_modules([first, second])
    # As _PyModule_ClearDict, the newest module first: one-underscore names, then the others.
    assert order == ["second _priv", "second PUBLIC", "first _private", "first CACHE"]
    assert second.__builtins__ is __builtins__ and first.CACHE is None


def test_a_file_a_daemon_thread_still_holds_is_left_unflushed_at_exit(tmp_path):
    import threading

    ready, stop = threading.Event(), threading.Event()
    path = tmp_path / "daemon.log"

    def logger_thread() -> None:
        f = open(path, "w")  # noqa: SIM115 - held open by the running thread, as in the case
        f.write("buffered\n")
        ready.set()
        stop.wait()
        f.close()

    t = threading.Thread(target=logger_thread, daemon=True)
    t.start()
    ready.wait()
    held = _exit._held_by_threads([t])
    _exit._finish_files(_exit._open_files(held), close=False)
    assert path.read_text() == ""  # a fresh interpreter never flushes it either
    _exit._finish_files(_exit._open_files(), close=False)
    assert path.read_text() == "buffered\n"
    stop.set()
    t.join()


def test_the_exit_pass_runs_finalizers_made_by_finalizers_and_none_after_a_forked_exit(
    monkeypatch,
):
    ran: list[str] = []

    class Obj:
        pass

    a, b, late = Obj(), Obj(), Obj()
    scope = _exit.ExitScope.now()

    def makes_another() -> None:
        ran.append("a")
        weakref.finalize(b, ran.append, "b (made by a's finalizer)")

    weakref.finalize(a, makes_another)
    monkeypatch.setattr(weakref.finalize, "_shutdown", False)
    _exit._run_finalize_objects(scope)
    assert ran == ["a", "b (made by a's finalizer)"]  # as _exitfunc: the new one in the pass
    weakref.finalize._shutdown = True  # what a forked job's exit sets after the pass
    weakref.finalize(late, ran.append, "late")
    del late  # its object dies in the teardown: a fresh exit never runs it
    assert ran == ["a", "b (made by a's finalizer)"]


def test_the_worker_flushes_the_files_a_template_left_open_and_remembers_them(tmp_path):
    own = tmp_path / "own.txt"
    built = tmp_path / "built.txt"
    with open(own, "w") as worker_file:
        st = os.fstat(worker_file.fileno())
        mine = {(worker_file.fileno(), st.st_dev, st.st_ino)}
        worker_file.write("the worker's\n")
        template_file = open(built, "w")  # noqa: SIM115 - left open, as a template's build may
        template_file.write("built\n")
        files = _exit.flush_template_files(mine)
        assert built.read_text() == "built\n" and own.read_text() == ""  # the worker's: left
        assert any(ref() is template_file for ref in files)
        template_file.write("job 1\n")  # a job's write: what its exit flushes
        _exit._finish_files(files, close=False)
        assert built.read_text() == "built\njob 1\n"
        template_file.close()
