"""``import distea.autotrace`` runs the rest of a script with recording functions: the script's
own functions are seen, and the script behaves exactly as without tracing (output, exit status,
errors, ``__future__`` imports, ``multiprocessing`` with spawn)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from tests.conftest import PLUGINS_PATH

HEAD = "import distea.autotrace  # noqa\n"
SCRIPTS = {
    "dispatch": """
        def spread(xs):
            return max(xs) - min(xs)

        def twice(f):
            def wrapper(xs):
                return 2 * f(xs)
            return wrapper

        TABLE = {"spread": twice(spread)}
        print(TABLE["spread"]([1, 4, 2]), __name__, __file__.endswith("main.py"))
        if __name__ == "__main__":
            print("main block", sorted(k for k in globals() if not k.startswith("__")))
        """,
    "error": """
        def fail():
            raise ValueError("boom")

        print("before")
        fail()
        print("never")
        """,
    "exit": """
        import sys

        def leave():
            sys.exit(3)

        leave()
        """,
    "spawn": """
        import multiprocessing

        def square(x):
            return x * x

        if __name__ == "__main__":
            with multiprocessing.get_context("spawn").Pool(1) as pool:
                print(pool.map(square, [1, 2, 3]))
        """,
}
FUTURE = """from __future__ import annotations
import distea.autotrace  # noqa

def f(x: NotDefinedAnywhere) -> AlsoNot:
    return x

print(f(1), f.__annotations__)
"""
GUARDED = """try:
    import distea.autotrace  # noqa
except ImportError:
    pass

def local():
    return 7

print(local())
"""


def _run(folder: Path, source: str, traced: bool) -> tuple[subprocess.CompletedProcess, list]:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "main.py").write_text(source)
    traces = folder / "traces"
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": PLUGINS_PATH}
    if traced:
        env["DISTEA_TRACE"] = str(traces)
    proc = subprocess.run(
        [sys.executable, "main.py"], cwd=folder, env=env, capture_output=True, text=True, timeout=60
    )
    records = [
        json.loads(line)
        for log in traces.glob("script-*.jsonl")
        for line in log.read_text().splitlines()
    ]
    return proc, records


def _same(tmp_path: Path, source: str) -> tuple[subprocess.CompletedProcess, set[str]]:
    plain, _ = _run(tmp_path / "plain", source, traced=False)
    traced, records = _run(tmp_path / "traced", source, traced=True)
    assert traced.returncode == plain.returncode
    assert traced.stdout == plain.stdout
    return traced, {r["f"] for r in records if r["k"] == "fn"}


@pytest.mark.integration
@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_rest_of_script_runs_instrumented_and_unchanged(tmp_path, name):
    source = HEAD + textwrap.dedent(SCRIPTS[name])
    proc, functions = _same(tmp_path, source)
    if name == "dispatch":
        assert {"main.spread", "main.twice.<locals>.wrapper"} <= functions
        assert "main block" in proc.stdout
    elif name == "error":
        assert proc.returncode == 1 and "ValueError: boom" in proc.stderr
        assert 'raise ValueError("boom")' in proc.stderr  # the user's line, in the traceback
        assert "main.fail" in functions
    elif name == "exit":
        assert proc.returncode == 3 and "main.leave" in functions
    else:
        assert proc.stdout.strip() == "[1, 4, 9]"


@pytest.mark.integration
def test_future_imports_keep_their_effect(tmp_path):
    proc, functions = _same(tmp_path, FUTURE)
    assert proc.returncode == 0 and "NotDefinedAnywhere" in proc.stdout
    assert "main.f" in functions


@pytest.mark.integration
def test_an_import_inside_try_keeps_the_plain_path(tmp_path):
    proc, functions = _same(tmp_path, GUARDED)
    assert proc.stdout.strip() == "7"
    assert "main.<module>" in functions and "main.local" not in functions
    assert not os.environ.get("DISTEA_TRACE_MODE")
