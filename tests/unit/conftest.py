"""The unit tier's gate: no processes, no sockets, no kernels (the tier must stay fast).

Every test here runs with process creation and network sockets forbidden. A test that needs
them belongs in tests/integration, marked ``integration``. The guard is an audit hook
(``sys.addaudithook``): it sees ``subprocess``, ``os.system``/``fork``/``posix_spawn``/
``exec*`` and ``socket.bind``/``connect`` however they are reached, without replacing any
function (tests pickle ``os.system`` by name). ``multiprocessing`` starts its spawn and
forkserver children below the audit events, so ``Process.start`` is refused directly. The
guard raises where the process or socket would start, and fails the test afterwards as well,
so that code under test that catches every exception cannot hide the attempt.
"""

import multiprocessing.process
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Optional

import pytest

FIX = "move this test to tests/integration (same name, pytestmark = pytest.mark.integration)"

# Audit event -> what it does, for the message.
FORBIDDEN = {
    "subprocess.Popen": "starts a process (subprocess)",
    "os.system": "starts a process (os.system)",
    "os.fork": "starts a process (os.fork)",
    "os.forkpty": "starts a process (os.forkpty)",
    "os.posix_spawn": "starts a process (os.posix_spawn)",
    "os.exec": "replaces the process (os.exec*)",
    "socket.bind": "listens on a socket (socket.bind)",
    "socket.connect": "opens a network connection (socket.connect)",
}


class UnitTierViolation(RuntimeError):
    """A unit test tried to start a process or open a network socket."""


class _Guard:
    """What the audit hook reads: the current unit test's list of attempts, or None."""

    seen: Optional[list[str]] = None


def _refuse(what: str) -> None:
    seen = _Guard.seen
    assert seen is not None
    seen.append(what)
    raise UnitTierViolation(f"a unit test {what}: {FIX}")


def _importing() -> bool:
    """Whether a module is being imported: its import-time side effects happen once per
    session, whichever test imports it first (urllib3 probes IPv6 by binding ``::1``)."""
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename.startswith("<frozen importlib._bootstrap"):
            return True
        frame = frame.f_back
    return False


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if _Guard.seen is not None and event in FORBIDDEN and not _importing():
        _refuse(FORBIDDEN[event])


sys.addaudithook(_audit)  # for the whole session; inert outside unit tests (seen is None)

UNIT = Path(__file__).resolve().parent


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A file or socket a unit test leaks fails it (pyproject's filterwarnings only shows a
    ResourceWarning, for the integration tier: there a process's pipes can be collected in a
    later test). The unit tier starts no processes, and its leaks are collected in the test
    that made them; a leak collected in a later test fails that one, still naming the leak."""
    for item in items:
        if UNIT in Path(item.path).parents:
            item.add_marker(pytest.mark.filterwarnings("error::ResourceWarning"))


def _refuse_process_start(self: Any) -> None:
    _refuse("starts a process (multiprocessing)")


@pytest.fixture(autouse=True)
def no_processes_or_sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Forbid, for the test's duration, every way to start a process or a network socket."""
    seen: list[str] = []
    monkeypatch.setattr(multiprocessing.process.BaseProcess, "start", _refuse_process_start)
    _Guard.seen = seen
    try:
        yield seen
    finally:
        _Guard.seen = None
    if seen:
        pytest.fail(f"a unit test {seen[0]}: {FIX}", pytrace=False)
