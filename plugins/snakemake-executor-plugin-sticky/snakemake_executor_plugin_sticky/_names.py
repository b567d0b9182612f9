"""The counters behind default names, at an invocation's start as a fresh job has them.

The standard library numbers what it names by default: threads (``Thread-3 (target)``),
thread pools (``ThreadPoolExecutor-0_0``), multiprocessing processes (``Process-1``,
``ForkPoolWorker-2``). The names show in logs (``%(threadName)s``, ``%(processName)s``). A
fresh ``script:`` process starts each counter at its first value and its template's build
advances it; a worker's counters have also been advanced by the worker's own imports
(Snakemake's executor interface makes a thread pool as it is imported). So each invocation
starts with each loaded counter at its first value plus what its template's build used,
measured around the build (:class:`NameWatch`); a module the invocation imports itself starts
at its first value anyway. In direct mode the worker's own counter objects are put back after
the invocation (:meth:`Names.end`), so that the process compares as it was.

Not reachable from Python: asyncio's task numbers (``Task-N``), a C-level counter of the
``_asyncio`` module, which go on from the worker's where the template or an earlier direct-mode
job ran tasks.
"""

import itertools
import sys
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Optional


@dataclass(frozen=True)
class Counter:
    """One counter: where it lives, its first value, and whether it is kept as
    ``itertools.count(...).__next__`` (else as the ``count`` itself)."""

    module: str
    owner: str
    """A class of the module holding it as a class attribute, or "" for a module global."""
    attribute: str
    first: int
    bound: bool

    def holder(self) -> Optional[Any]:
        module = sys.modules.get(self.module)
        if not isinstance(module, ModuleType):
            return None
        return getattr(module, self.owner, None) if self.owner else module

    def get(self) -> Optional[Any]:
        """The object held now (None: the module is not loaded)."""
        holder = self.holder()
        return None if holder is None else getattr(holder, self.attribute, None)

    def set(self, value: Any) -> None:
        holder = self.holder()
        if holder is not None:
            setattr(holder, self.attribute, value)

    def next_value(self) -> Optional[int]:
        """The number it gives next, read without taking it (None: unloaded or unreadable)."""
        held = self.get()
        count = getattr(held, "__self__", None) if self.bound else held
        if type(count) is not itertools.count:
            return None
        text = repr(count)  # "count(5)"; a step other than 1 would read "count(5, 2)"
        try:
            return int(text[len("count(") : -1])
        except ValueError:
            return None

    def fresh(self, value: int) -> Any:
        count = itertools.count(value)
        return count.__next__ if self.bound else count


COUNTERS = (
    Counter("threading", "", "_counter", 1, bound=True),
    Counter("concurrent.futures.thread", "ThreadPoolExecutor", "_counter", 0, bound=True),
    Counter("multiprocessing.process", "", "_process_counter", 1, bound=False),
)
"""The standard library's default-name counters (module, holder, attribute, first value)."""

OTHER_COUNTERS = {
    "asyncio.tasks._task_name_counter": "the pure-Python Task's names; the C Task (the one "
    "used) counts in C, out of reach (the module's docstring)",
    "asyncio.windows_utils._mmap_counter": "Windows pipe addresses",
    "multiprocessing.connection._mmap_counter": "Windows pipe addresses",
    "multiprocessing.pool.job_counter": "a pool's internal job ids, never shown",
    "multiprocessing.util._afterfork_counter": "the order of after-fork hooks, not a name",
    "multiprocessing.util._finalizer_counter": "the order of multiprocessing's finalizers",
    "weakref.finalize._index_iter": "the order of weakref.finalize objects (the exit reads it)",
    "tkinter.font.Font.counter": "Tk font names, within one Tk interpreter",
}
"""Every other module- or class-level ``itertools.count`` of the standard library, and why it
is left as it is (a test reads the standard library's source and fails on one that is in
neither list)."""


def _values() -> dict[str, Optional[int]]:
    return {c.module: c.next_value() for c in COUNTERS}


class NameWatch:
    """Around a template's load and build: how far it advanced each counter (:attr:`used`).
    A counter whose module the build imported counts from its first value."""

    def __init__(self) -> None:
        self.used: dict[str, int] = {}
        self._before: dict[str, Optional[int]] = {}

    def __enter__(self) -> "NameWatch":
        self._before = _values()
        return self

    def __exit__(self, *_: Any) -> None:
        for counter in COUNTERS:
            now = counter.next_value()
            if now is None:
                continue
            before = self._before.get(counter.module)
            used = now - (counter.first if before is None else before)
            if used > 0:
                self.used[counter.module] = used


class Names:
    """A worker's counters: what each template's build used, set at each invocation's
    start."""

    def __init__(self) -> None:
        self.used: dict[str, dict[str, int]] = {}
        self._saved: dict[Counter, Any] = {}

    def built(self, template: str, used: dict[str, int]) -> None:
        self.used[template] = dict(used)

    def start(self, template: Optional[str]) -> None:
        """At a run of a job of ``template``: each loaded counter at its first value plus
        what the template's build used (the objects held before the first run since the last
        :meth:`end` are kept for it: a benchmark's repeats start here each)."""
        used = self.used.get(template or "", {})
        for counter in COUNTERS:
            held = counter.get()
            if held is None:
                continue
            self._saved.setdefault(counter, held)
            counter.set(counter.fresh(counter.first + used.get(counter.module, 0)))

    def end(self) -> None:
        """After a direct-mode run: the counter objects held before it, back in place."""
        for counter, held in self._saved.items():
            counter.set(held)
        self._saved = {}
