"""The unit tier's gate: no processes, no sockets, no kernels (the tier must stay under 20 s).

Every test here runs with process creation and network sockets forbidden. A test that needs
them belongs in tests/integration, marked ``integration``. The guard raises where the process
or socket would start, and fails the test afterwards as well, so that code under test that
catches every exception cannot hide the attempt.
"""

import multiprocessing.process
import os
import socket
import subprocess
from collections.abc import Callable, Iterator
from typing import Any

import pytest

FIX = "move this test to tests/integration (same name, pytestmark = pytest.mark.integration)"


class UnitTierViolation(RuntimeError):
    """A unit test tried to start a process or open a network socket."""


# What each guarded call is, for the message: the function and a description.
_GUARDED: list[tuple[Any, str, str]] = [
    (subprocess.Popen, "_execute_child", "starts a process (subprocess)"),
    (os, "fork", "starts a process (os.fork)"),
    (os, "forkpty", "starts a process (os.forkpty)"),
    (os, "posix_spawn", "starts a process (os.posix_spawn)"),
    (os, "posix_spawnp", "starts a process (os.posix_spawnp)"),
    (os, "system", "starts a process (os.system)"),
    (os, "execv", "replaces the process (os.execv)"),
    (os, "execve", "replaces the process (os.execve)"),
    (multiprocessing.process.BaseProcess, "start", "starts a process (multiprocessing)"),
    (socket.socket, "connect", "opens a network connection (socket.connect)"),
    (socket.socket, "connect_ex", "opens a network connection (socket.connect_ex)"),
    (socket.socket, "bind", "listens on a socket (socket.bind)"),
]


def _forbidden(what: str, seen: list[str]) -> Callable[..., Any]:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        seen.append(what)
        raise UnitTierViolation(f"a unit test {what}: {FIX}")

    return refuse


@pytest.fixture(autouse=True)
def no_processes_or_sockets(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Forbid, for the test's duration, every way to start a process or a network socket."""
    seen: list[str] = []
    for owner, name, what in _GUARDED:
        if hasattr(owner, name):
            monkeypatch.setattr(owner, name, _forbidden(what, seen))
    yield seen
    if seen:
        pytest.fail(f"a unit test {seen[0]}: {FIX}", pytrace=False)
