"""Direct mode sees every library-matrix change: after each probe's ``change`` (VALUE=7), a
module global is rebound, added or deleted, or :func:`read_registries` reads something else.
A probe whose change neither shows is a reader missing from ``stickyinvoc/registries.py``: a
direct-mode worker would keep that state for the next job instead of retiring.

One subprocess (the libraries stay out of pytest's process) forks a child per case, so that
the cases start from the same process and cannot hide each other's changes.
"""

import dataclasses
import json
import os
import subprocess
import sys

import pytest

from tests.conftest import PLUGINS_PATH
from tests.integration.snakemake_executor_plugin_sticky.library_matrix import CASES, HELPERS

pytestmark = [pytest.mark.integration, pytest.mark.timeout(600)]

# Reads {"helpers": ..., "cases": [...]} on stdin; prints one JSON line per probe.
RUNNER = r'''
import json, os, sys, types

from stickyinvoc.registries import read_registries


def same(a, b):
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:
        return False


def globals_now():
    return {
        name: (module, dict(vars(module)))
        for name, module in list(sys.modules.items())
        if isinstance(module, types.ModuleType)
    }


def changed_globals(before):
    """As direct mode's fingerprint compares module globals (new modules are baselines)."""
    found = []
    for name, (module, old) in before.items():
        if sys.modules.get(name) is not module:
            found.append(f"sys.modules[{name!r}] replaced")
            continue
        new = vars(module)
        for key, value in new.items():
            if key == "__warningregistry__":
                continue
            if key not in old:
                if not isinstance(value, types.ModuleType):
                    found.append(f"added {name}.{key}")
            elif old[key] is not value and not same(old[key], value):
                module = types.ModuleType
                if not (isinstance(value, module) and isinstance(old[key], module)):
                    found.append(f"rebound {name}.{key}")
        found.extend(f"deleted {name}.{key}" for key in old if key not in new)
    return found


def changed_registries(before):
    after = read_registries()
    keys = set(before) | set(after)
    return [f"{k[0]} {k[1]}" for k in sorted(keys) if not same(before.get(k), after.get(k))]


def run_case(case, helpers):
    namespace = {"__name__": "__probe__", "VALUE": 7, "LOG": os.path.abspath("probe.log")}
    exec(helpers, namespace)
    try:
        exec(case["imports"], namespace)
    except ImportError as error:  # a module this Python was built without: nothing to leak
        print(json.dumps({"case": case["key"], "missing": repr(error)}), flush=True)
        return
    for probe in case["probes"]:
        result = {"case": case["key"], "label": probe["label"], "unreadable": probe["unreadable"]}
        before, registries = globals_now(), read_registries()
        try:
            exec(probe["change"], namespace)
        except Exception as error:
            result["raised"] = f"{type(error).__name__}: {error}"
        result["globals"] = changed_globals(before)[:3]
        result["registries"] = changed_registries(registries)[:3]
        print(json.dumps(result), flush=True)


request = json.load(sys.stdin)
for case in request["cases"]:
    sys.stdout.flush()
    pid = os.fork()
    if pid == 0:
        status = 0
        try:
            run_case(case, request["helpers"])
        except BaseException as error:
            print(json.dumps({"case": case["key"], "crashed": repr(error)}), flush=True)
            status = 1
        finally:
            os._exit(status)
    _, status = os.waitpid(pid, 0)
    if status and not os.WIFEXITED(status):
        print(json.dumps({"case": case["key"], "crashed": f"wait status {status}"}), flush=True)
'''


@pytest.fixture(scope="module")
def probe_results(tmp_path_factory: pytest.TempPathFactory) -> list[dict]:
    workdir = tmp_path_factory.mktemp("registries")
    (workdir / "Snakefile").write_text("# read by the fileinput probe\n" * 8)
    (workdir / "logs").mkdir()
    request = {"helpers": HELPERS, "cases": [dataclasses.asdict(c) for c in CASES.values()]}
    paths = [PLUGINS_PATH, os.environ.get("PYTHONPATH", "")]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, paths))}
    proc = subprocess.run(
        [sys.executable, "-c", RUNNER],
        input=json.dumps(request),
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=500,
    )
    assert proc.returncode == 0, proc.stderr[-5000:]
    return [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]


def test_every_probe_ran(probe_results):
    crashed = [r for r in probe_results if "crashed" in r]
    assert not crashed, crashed
    missing = {r["case"] for r in probe_results if "missing" in r}
    ran = {(r["case"], r["label"]) for r in probe_results if "label" in r}
    expected = {(c.key, p.label) for c in CASES.values() if c.key not in missing for p in c.probes}
    assert ran == expected, sorted(expected - ran)


def test_every_change_shows_in_globals_or_registries(probe_results):
    """A change invisible to both needs a reader in stickyinvoc/registries.py. A probe marked
    ``unreadable`` (no getter exists, or the isolation resets that state) is exempt."""
    failures = []
    for r in probe_results:
        if "label" not in r or r["unreadable"]:
            continue
        name = f"{r['case']} / {r['label']}"
        if "raised" in r:
            failures.append(f"{name}: the change raised {r['raised']}")
        elif not (r["globals"] or r["registries"]):
            failures.append(f"{name}: invisible to module globals and read_registries()")
    assert not failures, "\n".join(failures)
