"""The third independent red team's cases for the sticky contract (issue 25), kept as written.

A helper that saw only README.md and docs/sticky.md wrote 73 workflows
(``tests/integration/workflows/sticky_redteam25c/<case>/``: a Snakefile, scripts, a
``sticky_templates.py`` with a fork-mode and a direct-mode template, ``case.json``), aimed at
what reaches a script from outside it and the template: ``shell.prefix()``/``suffix()``,
``workdir:``, ``shadow:``, the environment, stdin, signals, the templates file, the process.
First pass: 30 differed from ``--executor local`` (26 in both modes, 4 in direct mode only;
two made a working workflow fail: ``workdir:`` and ``shadow:``), none hung.

Each case: 3 chained jobs run with ``--executor local`` and with ``--executor sticky
--sticky-max-workers 1`` in the same folder (outputs hold absolute paths), then every file
under the case's compared folders and the exit status are compared byte for byte. CI runs the
first-pass failures that are fixed, in the mode they failed in (fork where both), one per
mechanism; the whole set, both modes, with ``STICKY_REDTEAM_FULL=1``. Cases that still differ
by design are :data:`KNOWN` (documented in docs/sticky.md, "Known differences"): they must
still differ, so that one that starts to match is reclassified.
"""

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import WORKFLOWS

pytestmark = pytest.mark.integration

CASES = WORKFLOWS / "sticky_redteam25c"
FULL = os.environ.get("STICKY_REDTEAM_FULL") == "1"
TMPNAME = re.compile(rb"tmp[a-z0-9_]{8}\.")

FIXED = {  # first-pass failures, and the mode CI runs them in
    "workdir_directive": "fork",
    "shadow_minimal": "fork",
    "future_annotations": "fork",
    "main_module_attrs": "fork",
    "interpreter_state": "fork",
    "prefix_export": "fork",
    "prefix_python_env": "fork",
    "prefix_pythonpath": "fork",
    "locale_prefix": "fork",
    "prefix_python_flags": "fork",
    "prefix_pythonwarnings": "fork",
    "prefix_pythonioencoding": "fork",
    "prefix_ulimit": "fork",
    "prefix_command_wrapper": "fork",
    "prefix_unbound_var": "fork",
    "prefix_failing_source": "fork",
    "suffix_redirect": "fork",
    "template_reads_env": "fork",
    "nested_templates_file": "fork",
    "module_templates": "fork",
    "stdin_piped_file": "fork",
    "stdin_devnull": "fork",
    "nohup_background_signals": "fork",
    "pwd_env_mismatch": "fork",
    "benchmark_format": "fork",
    "putenv_leak": "direct",
    "stdout_reconfigure": "direct",
}

KNOWN = {  # still differ, by design, in these modes; each in docs/sticky.md's known differences
    "prefix_side_effect": (("fork", "direct"), "the prefix runs once per run for invocations"),
    "tmpdir_template_cached": (("fork", "direct"), "the template is built in the worker's env"),
    "template_build_output_in_log": (("fork", "direct"), "build output: the worker's log"),
    "template_build_output_fd_log": (("fork", "direct"), "build output: the worker's log"),
    "recursion_depth": (("fork", "direct"), "the worker's frames take part of the limit"),
    "process_limits": (("fork", "direct"), "parent-death signal, the worker link's fds"),
    "pkg_registry": (("direct",), "direct mode does not see in-place container changes"),
}


def all_cases(cases: Path = CASES) -> list[str]:
    """The case folders of a red team (each with its ``case.json``)."""
    return sorted(p.name for p in cases.iterdir() if (p / "case.json").is_file())


def runs(cases: Path, fixed: dict[str, str]) -> list[tuple[str, str]]:
    """(case, mode) to run: every case in both modes under ``STICKY_REDTEAM_FULL=1``, else
    the fixed cases in the mode each was fixed in."""
    if FULL:
        return [(case, mode) for case in all_cases(cases) for mode in ("fork", "direct")]
    return sorted(fixed.items())


def assert_as_classified(
    case: str, mode: str, tmp_path: Path, cases: Path, known: dict[str, tuple]
) -> None:
    """The case matches ``--executor local``, or still differs where ``known`` says it does
    (one that starts to match must be reclassified)."""
    found = compare(case, mode, tmp_path, cases)
    if mode in known.get(case, ((), ""))[0]:
        assert found, f"{case} ({mode}) now matches local: remove it from KNOWN and the docs"
        return
    assert not found, f"{case} ({mode}) differs from --executor local:\n" + "\n".join(found)


def _environment(meta: dict, folder: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PWD"] = meta.get("pwd", str(folder))  # as after `cd folder && snakemake ...`
    for name in ("PYTHONUNBUFFERED", "PYTHONDONTWRITEBYTECODE"):  # this sandbox's only
        env.pop(name, None)
    env.update(meta.get("env", {}))
    return env


def run_case(case: str, executor: str, mode: str, folder: Path, cases: Path = CASES) -> dict:
    """One run of a case of ``cases`` in ``folder`` (emptied first): exit status and compared
    files."""
    meta = json.loads((cases / case / "case.json").read_text())
    shutil.rmtree(folder, ignore_errors=True)
    shutil.copytree(cases / case, folder, symlinks=True)
    launcher = [sys.executable, "-m", "snakemake"]
    if meta.get("launcher") == "console":
        launcher = [shutil.which("snakemake") or "snakemake"]
    cmd = [*launcher, "--executor", executor, "--cores", "1", "--nocolor", "--latency-wait", "3"]
    if executor == "sticky":
        cmd += ["--sticky-max-workers", "1"]
    cmd += [*meta.get("args", []), "--config", f"mode={mode}", *meta.get("config", [])]
    stdin_name = meta.get("stdin", "devnull")
    ignored = [getattr(signal, name) for name in meta.get("sigign", [])]

    def start() -> None:  # `nohup snakemake ... &` leaves signals ignored (case.json "sigign")
        for number in (signal.SIGINT, signal.SIGQUIT, signal.SIGHUP):
            signal.signal(number, signal.SIG_DFL)
        for number in ignored:
            signal.signal(number, signal.SIG_IGN)

    stdin = open(folder / stdin_name, "rb") if stdin_name != "devnull" else subprocess.DEVNULL
    try:
        proc = subprocess.run(
            cmd,
            cwd=folder,
            env=_environment(meta, folder),
            stdin=stdin,
            capture_output=True,
            timeout=meta.get("timeout", 300),
            start_new_session=True,
            preexec_fn=start,
        )
    finally:
        if stdin is not subprocess.DEVNULL:
            stdin.close()
    files = {}
    for relative in meta.get("compare", ["out", "logs"]):
        base = folder / relative
        for path in sorted(base.rglob("*")) if base.is_dir() else []:
            if path.is_file():
                files[str(path.relative_to(folder))] = TMPNAME.sub(b"tmpX.", path.read_bytes())
    output = (proc.stdout + proc.stderr).decode(errors="replace")
    return {"rc": proc.returncode, "files": files, "output": output}


def differences(local: dict, sticky: dict) -> list[str]:
    found = []
    if local["rc"] != sticky["rc"]:
        found.append(f"exit status: local {local['rc']}, sticky {sticky['rc']}")
    for name in sorted(set(local["files"]) | set(sticky["files"])):
        a, b = local["files"].get(name), sticky["files"].get(name)
        if a is None or b is None:
            found.append(f"{name}: only under {'sticky' if a is None else 'local'}")
        elif a != b:
            found.append(f"{name}: local {a[:300]!r} / sticky {b[:300]!r}")
    return found


def compare(case: str, mode: str, tmp_path: Path, cases: Path = CASES) -> list[str]:
    folder = tmp_path / case  # one absolute folder for both runs: outputs hold paths
    local = run_case(case, "local", mode, folder, cases)
    sticky = run_case(case, "sticky", mode, folder, cases)
    found = differences(local, sticky)
    if found:
        found.append("sticky said: " + sticky["output"][-1500:])
    return found


# Fixed by the same mechanism as a case CI runs (a prefix an invocation cannot take: the
# jobs run fresh; test_shell_prefix.py covers it too): in the full set only, for CI's time.
SAME_MECHANISM = {
    "prefix_python_env",
    "prefix_pythonpath",
    "locale_prefix",
    "prefix_pythonwarnings",
    "prefix_pythonioencoding",
    "prefix_ulimit",
    "prefix_unbound_var",
    "suffix_redirect",
    "stdin_devnull",
}


CI_FIXED = {case: mode for case, mode in FIXED.items() if case not in SAME_MECHANISM}


@pytest.mark.parametrize(("case", "mode"), runs(CASES, CI_FIXED))
def test_red_team_case_matches_local(case, mode, tmp_path):
    assert_as_classified(case, mode, tmp_path, CASES, KNOWN)


def test_every_case_is_classified_and_the_known_ones_are_documented():
    cases = set(all_cases())
    assert len(cases) == 73
    assert set(FIXED) <= cases and set(KNOWN) <= cases and not set(FIXED) & set(KNOWN)
    assert SAME_MECHANISM <= set(FIXED)
    docs = (Path(__file__).parents[3] / "docs" / "sticky.md").read_text()
    for phrase in ("recursion limit", "worker's log", "once per run", "parent-death signal"):
        assert phrase in docs, phrase
