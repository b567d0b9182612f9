"""What ``shell.prefix()`` does to a ``script:`` job, found by running it as Snakemake would.

Under ``--executor local`` a ``script:`` job runs its interpreter through ``shell()``, so the
Snakefile's ``shell.prefix("export MODE=fast; umask 027; ")`` runs before every script: the
script sees what the prefix exported (and unset), the folder it moved to and its umask. A
sticky invocation has no shell in between. Rather than read the prefix (it is shell code:
``source env.sh``, ``module load``, conditionals), :func:`probe` runs it once per run the way
``shell()`` would, in front of the same interpreter printing what it sees, and once without
it; :func:`effects` is the difference, which every invocation gets (:class:`PrefixEffects`):
variables it exports or unsets, its folder, its umask, ``TZ`` (with ``time.tzset()``).

What a running interpreter cannot take is observed too, not guessed from the prefix's text:
what Python reads only as it starts (its flags, ``sys.path`` from ``PYTHONPATH``, warning
options, the locale's encoding, ...), resource limits, priority and CPU affinity. If the
prefix changes any of it, or fails, or a ``shell.suffix()`` is set (it acts after the
interpreter exits), the executor runs that run's sticky jobs as local script jobs, behind the
real prefix, and says so once: the fresh behaviour, by construction.

The probe runs the prefix once per run: a prefix with side effects of its own (appending to a
file) makes them once for the run's invocations, where local script jobs make them per job.
"""

import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from typing import Any, Optional, Union

# What the script's interpreter sees: run after the prefix, as the job's command would be.
_PRINT = r"""
import faulthandler, json, locale, os, resource, sys
m = os.umask(0); os.umask(m)
names = [n for n in dir(resource) if n.startswith("RLIMIT_")]
limits = {n: resource.getrlimit(getattr(resource, n)) for n in names}
seen = {
    "env": dict(os.environ), "cwd": os.getcwd(), "umask": m,
    "interpreter": {
        "sys.flags": list(sys.flags), "sys.warnoptions": sys.warnoptions, "sys.path": sys.path,
        "int max str digits": sys.get_int_max_str_digits(),
        "stdout/stderr encoding": [(s.encoding, s.errors) for s in (sys.stdout, sys.stderr)],
        "locale (LC_CTYPE)": locale.setlocale(locale.LC_CTYPE),
        "file system encoding": sys.getfilesystemencoding(),
        "faulthandler": faulthandler.is_enabled(),
    },
    "process": {
        "resource limits": limits,
        "priority (nice)": os.getpriority(os.PRIO_PROCESS, 0),
        "CPU affinity": sorted(os.sched_getaffinity(0)),
    },
}
json.dump(seen, open(sys.argv[1], "w", encoding="utf-8"))
"""


@dataclass(frozen=True)
class PrefixEffects:
    """What the prefix changes for the script it runs in front of."""

    environ: dict[str, Optional[str]] = field(default_factory=dict)
    """Variables the prefix sets (value) or unsets (None)."""
    cwd: Optional[str] = None
    """The folder the prefix moved to (None: it stayed)."""
    umask: Optional[int] = None
    """The umask the prefix set (None: unchanged)."""
    unsupported: tuple[str, ...] = ()
    """What else the prefix changes that an invocation in a running interpreter cannot take:
    what Python reads as it starts (``PYTHONPATH``, ``PYTHONHASHSEED``, ``LC_ALL``'s encoding,
    ``PYTHONWARNINGS``, ...), resource limits (``ulimit``), priority and CPU affinity (``nice``,
    ``taskset``). Non-empty: the rule's jobs run as local script jobs instead."""

    def __bool__(self) -> bool:
        return bool(self.environ) or self.cwd is not None or self.umask is not None


def effects(base: dict[str, Any], prefixed: dict[str, Any]) -> PrefixEffects:
    """The difference between what a script sees without the prefix and with it (pure)."""
    before, after = base["env"], prefixed["env"]
    environ: dict[str, Optional[str]] = {
        name: value for name, value in after.items() if before.get(name) != value
    }
    environ.update({name: None for name in before if name not in after})
    environ.pop("_", None)  # the shell's last command: the interpreter either way
    unsupported = [
        name
        for group in ("interpreter", "process")
        for name, value in prefixed.get(group, {}).items()
        if base.get(group, {}).get(name) != value
    ]
    return PrefixEffects(
        environ=environ,
        cwd=prefixed["cwd"] if prefixed["cwd"] != base["cwd"] else None,
        umask=prefixed["umask"] if prefixed["umask"] != base["umask"] else None,
        unsupported=tuple(unsupported),
    )


def apply(found: PrefixEffects) -> None:
    """Give this process what the prefix would have given the script (in an invocation)."""
    for name, value in found.environ.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if "TZ" in found.environ:  # the time module reads TZ when it starts, or at tzset()
        import time

        time.tzset()
    if found.umask is not None:
        os.umask(found.umask)
    if found.cwd is not None:
        os.chdir(found.cwd)


def _sees(prefix: str, executable: str, env: dict[str, str]) -> Union[dict[str, Any], str]:
    with tempfile.TemporaryDirectory(prefix="sticky-prefix-") as folder:
        answer = os.path.join(folder, "seen.json")
        command = " ".join(
            (prefix, shlex.quote(sys.executable), "-c", shlex.quote(_PRINT), shlex.quote(answer))
        )
        try:
            done = subprocess.run(
                [executable, "-c", command],
                capture_output=True,
                text=True,
                env=env,
                timeout=120,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as e:
            return f"could not run it with {executable}: {e}"
        if done.returncode != 0 or not os.path.exists(answer):
            lines = (done.stderr or done.stdout).strip().splitlines()
            why = f"it exits with status {done.returncode}"
            return why + (f": {lines[-1]}" if lines else "")
        with open(answer, encoding="utf-8") as f:
            seen: dict[str, Any] = json.load(f)
        return seen


def probe(prefix: Optional[str], executable: Optional[str]) -> Union[PrefixEffects, str]:
    """What ``prefix`` does to a script run through ``executable`` (``/bin/sh`` if None), or
    why it cannot be run (one line). Runs the interpreter twice: call it once per run."""
    if not prefix or not prefix.strip():
        return PrefixEffects()
    shell = executable or "/bin/sh"
    env = dict(os.environ)
    base = _sees("", shell, env)
    prefixed = _sees(prefix, shell, env)
    if isinstance(prefixed, str):
        return f"shell.prefix({prefix!r}): {prefixed}"
    if isinstance(base, str):
        return f"{shell}: {base}"
    return effects(base, prefixed)
