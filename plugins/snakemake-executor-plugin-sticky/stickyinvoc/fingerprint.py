"""Direct mode's check that an invocation left the worker's process as a fresh one would be
(NBRewind's kernels take the same fingerprint around each cell).

Direct mode runs invocations in the worker itself. Whatever the snapshot in
:mod:`._isolation` puts back is put back; everything else an invocation could change is
looked at here, after every invocation, against the process as the template left it:

- **every loaded module's globals**, by identity: a name rebound, added or deleted (a new
  submodule attribute and a ``__warningregistry__`` aside: a fresh process gets those too;
  so is a submodule attribute that went with its module, which direct mode unloads when it
  is workflow-local);
- **the process-global registries of libraries** that live outside module globals (C-level
  settings, context variables, option tables), read through each library's documented
  getters (:mod:`stickyinvoc.registries`).

A module first imported during an invocation is compared with itself as its import left it
(``import`` statements are watched while the script runs), so a script that imports numpy and
sets its print options is seen; what a library's import changes in modules loaded before it
(torch patches ``typing`` and ``inspect``) is part of that library being loaded, which the
contract shares, not a change of the script's; so is what it changes in registries read before
it. The worker's own packages are not compared.

Any difference retires the worker: the manager stops it and
the next job gets a fresh worker built from the template, with one warning naming the job and
what changed. The check never puts anything back.
"""

import builtins
import ctypes
import operator
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, Optional

from stickyinvoc.registries import READERS, read_registries

_ALLOWED = frozenset({"__warningregistry__"})
"""Globals a fresh process changes the same way (the warnings module's per-module registry;
direct mode resets its "shown once" memory after each invocation)."""

_SHOWN = 4

_VALUE = operator.attrgetter("value")


def _version_reader() -> Optional[Callable[[dict[str, Any]], Any]]:
    """CPython's per-dict version tag (PEP 509: it changes on every write to the dict), so
    that unchanged module dicts (nearly all) are skipped in one read each. Returns a function
    giving a live view of a dict's tag (``view.value`` reads it; the caller keeps the dict
    alive), or None where this interpreter has no such field (every dict is compared)."""
    if sys.implementation.name != "cpython" or not (3, 11) <= sys.version_info[:2] < (3, 14):
        return None
    if not getattr(sys, "_is_gil_enabled", lambda: True)():
        return None
    offset = 3 * ctypes.sizeof(ctypes.c_ssize_t)  # refcount, type, ma_used, then the tag

    def view(d: dict[str, Any]) -> Any:
        return ctypes.c_uint64.from_address(id(d) + offset)

    probe: dict[str, Any] = {"a": 1}
    tag = view(probe)
    first = tag.value
    probe["a"] = 2
    second = tag.value
    probe["b"] = 3
    return view if first != second != tag.value else None


_TAG = _version_reader()
_OWN = ("snakemake_executor_plugin_sticky", "stickyinvoc")


class Fingerprint:
    """The worker's process as the template left it: taken once, after the template build."""

    def __init__(self) -> None:
        self.modules: dict[str, tuple[Any, dict[str, Any]]] = {}
        self.tags: dict[str, tuple[Any, int]] = {}
        """Each module dict's live tag view, and its value when it last matched the
        baseline."""
        self.registries: dict[tuple[str, str], Any] = {}
        self._tag_lists: Optional[tuple[list[str], list[Any], list[int]]] = None
        """``tags`` as parallel lists (names, views, values), rebuilt when a module is added."""
        self._tag_index: dict[str, int] = {}
        self._gather: Optional[_Gather] = None
        """``tags`` read in one numpy gather, where numpy is loaded (built with ``_tag_lists``)."""
        self._loaded_tag: Optional[tuple[Any, int]] = None
        """sys.modules' own version tag when it was last scanned."""
        self._loaded: dict[str, Any] = {}
        """sys.modules as it was when it was last scanned: where its tag moved but its
        entries are the same objects (a module swapped in and back, as direct mode does with
        ``__main__``), one comparison in C tells that nothing was replaced or added."""
        self._baseline(list(sys.modules.items()))
        self._saved_import: Any = None
        self._depth = 0

    def _baseline(self, items: list[tuple[str, Any]]) -> None:
        fresh: dict[str, Any] = {}
        for name, module in items:
            if name in self.modules or not isinstance(module, ModuleType):
                continue
            if name.partition(".")[0] in _OWN:
                continue
            try:
                namespace = vars(module)
            except TypeError:
                continue
            self.modules[name] = (module, dict(namespace))
            if _TAG is not None:
                tag = _TAG(namespace)
                self.tags[name] = (tag, tag.value)
                self._tag_lists = None
            if name in READERS:
                fresh[name] = module
        if fresh or not self.registries:
            for key, value in read_registries(fresh or None).items():
                self.registries.setdefault(key, value)

    # ---- while the script runs ----------------------------------------------------------

    def watch_imports(self) -> None:
        """Take each module's baseline as its import leaves it (outermost ``import`` only)."""
        original = builtins.__import__
        self._saved_import = original
        count = [len(sys.modules)]

        def watched_import(
            name: str,
            globals: Any = None,
            locals: Any = None,
            fromlist: Any = (),
            level: int = 0,
        ) -> Any:
            loading = self._depth == 0 and level == 0 and name not in sys.modules
            before = self._globals_now() if loading else None
            registries = read_registries() if loading else None
            self._depth += 1
            try:
                return original(name, globals, locals, fromlist, level)
            finally:
                self._depth -= 1
                if self._depth == 0 and len(sys.modules) != count[0]:
                    count[0] = len(sys.modules)
                    if before is not None:
                        self._absorb(before)
                    if registries is not None:
                        self._absorb_registries(registries)
                    self._baseline(list(sys.modules.items()))

        builtins.__import__ = watched_import

    @property
    def importing(self) -> bool:
        """An ``import`` statement is running (code executing now is a module's import)."""
        return self._depth > 0

    def _globals_now(self) -> dict[str, dict[str, Any]]:
        """Each module's globals now: the baseline's own dict where the module did not
        change since (no copy), a copy where it did."""
        if _TAG is None:
            return {name: dict(vars(entry[0])) for name, entry in self.modules.items()}
        tags = self.tags
        return {
            name: (base if _unchanged(tags.get(name)) else dict(vars(module)))
            for name, (module, base) in self.modules.items()
        }

    def _absorb(self, before: dict[str, dict[str, Any]]) -> None:
        """Take into the baseline what an import changed in modules loaded before it."""
        for name, old in before.items():
            module, base = self.modules[name]
            now = vars(module)
            try:
                if now == old:
                    continue
            except Exception:  # noqa: BLE001 - element-wise __eq__: look key by key
                pass
            for key in set(old) | set(now):
                if key not in now:
                    base.pop(key, None)
                elif key not in old or old[key] is not now[key]:
                    base[key] = now[key]
            if name in self.tags and old is base:
                self._retag(name)

    def _absorb_registries(self, before: dict[tuple[str, str], Any]) -> None:
        """Take into the baseline what an import changed in registries read before it (a
        library that adds warning filters, codecs or copyreg entries when imported)."""
        for key, value in read_registries().items():
            if key in before and key in self.registries and not _same(before[key], value):
                self.registries[key] = value

    def rebase(self) -> None:
        """Take the process as it is now as the baseline, as a new fingerprint would, but
        copying again only the module dicts whose version tag moved (a notebook kernel takes
        one per cell: a new one copies all ~2,000 modules' globals, 25 ms)."""
        self.stop_watching()
        loaded = sys.modules
        for name, (module, _) in list(self.modules.items()):
            if loaded.get(name) is not module:
                del self.modules[name]
                self.tags.pop(name, None)
                self._tag_lists = None
        for name in self._moved() if _TAG is not None else list(self.modules):
            module = self.modules[name][0]
            self.modules[name] = (module, dict(vars(module)))
            if name in self.tags:
                self._retag(name)
        new = [(name, loaded[name]) for name in list(loaded) if name not in self.modules]
        if new:
            self._baseline(new)
        self.registries = read_registries()
        self._loaded_tag = None
        self._loaded = dict(loaded)

    def stop_watching(self) -> None:
        if self._saved_import is not None:
            builtins.__import__ = self._saved_import
            self._saved_import = None

    # ---- after it -------------------------------------------------------------------------

    def changes(self) -> list[str]:
        """What differs from the baseline, one short phrase each (empty: nothing)."""
        self.stop_watching()
        found: list[str] = []
        loaded = sys.modules
        # This runs after every invocation, over ~1,600 modules: sys.modules is scanned only
        # if its own version tag moved (a module added, removed or replaced), and the module
        # dicts' tags are read in one C-level pass (without tags, every dict is compared).
        loaded_moved = self._loaded_tag is None or not _unchanged(self._loaded_tag)
        if loaded_moved and _same_entries(loaded, self._loaded):
            loaded_moved = False
            self._loaded_tag = None if _TAG is None else _tag_now(loaded)
        replaced: set[str] = set()
        if loaded_moved:
            replaced = {
                name
                for name, (module, _) in self.modules.items()
                if loaded.get(name, module) is not module
            }
            found.extend(f"sys.modules[{name!r}] replaced" for name in replaced)
        own = self.tags.get("builtins")  # watch_imports wrote __import__ and put it back
        if (
            own is not None
            and not _unchanged(own)
            and vars(builtins) == self.modules["builtins"][1]
        ):
            self._retag("builtins")
        suspects = self._moved() if _TAG is not None else list(self.modules)
        for name in suspects:
            module = loaded.get(name)
            if module is None or name in replaced:
                continue
            changed = _changed_globals(name, self.modules[name][1], vars(module))
            entry_tag = self.tags.get(name)
            if not changed and entry_tag is not None:
                self._retag(name)  # written back as it was
            found.extend(changed)
        now = read_registries()
        for key, value in now.items():
            if key in self.registries and not _same(self.registries[key], value):
                found.append(f"{key[0]} {key[1]} {_short(self.registries[key])} -> {_short(value)}")
        # Modules imported for the first time by a script that needed no other check (for
        # example through importlib) get their baseline now.
        if loaded_moved:
            new = loaded.keys() - self.modules.keys()
            if new:
                self._baseline([(name, loaded[name]) for name in new if name in loaded])
            self._loaded = dict(loaded)
            if _TAG is not None:
                self._loaded_tag = _tag_now(loaded)
        return found

    def _retag(self, name: str) -> None:
        """The module's dict matches the baseline again at its current version tag."""
        view = self.tags[name][0]
        self.tags[name] = (view, view.value)
        if self._tag_lists is not None:
            index = self._tag_index[name]
            self._tag_lists[2][index] = view.value
            if self._gather is not None:
                self._gather.baseline[index] = view.value

    def _moved(self) -> list[str]:
        """Names of the modules whose dict's version tag moved since it last matched."""
        if self._tag_lists is None:
            names = list(self.tags)
            views = [self.tags[n][0] for n in names]
            self._tag_lists = (names, views, [self.tags[n][1] for n in names])
            self._tag_index = {name: i for i, name in enumerate(names)}
            self._gather = _Gather.of(self._tag_lists)
        names, views, values = self._tag_lists
        if self._gather is not None:
            return [names[i] for i in self._gather.moved()]
        now = list(map(_VALUE, views))
        if now == values:
            return []
        return [name for name, a, b in zip(names, now, values, strict=True) if a != b]


class _Memory:
    """``span`` 8-byte words from ``address``, read-only, as numpy's array interface."""

    def __init__(self, address: int, span: int) -> None:
        self.__array_interface__ = {
            "version": 3,
            "shape": (span,),
            "typestr": ("<" if sys.byteorder == "little" else ">") + "u8",  # native
            "data": (address, True),
        }


class _Gather:
    """The module dicts' version tags read in one numpy gather instead of one ctypes read
    each (about 10 us instead of 0.4-1 ms for 3,000 modules, once per invocation). numpy is
    used only where the process has loaded it already: importing it here would change the
    process being compared. A read-only numpy view spans the addresses from the lowest tag to
    the highest (virtual: nothing is copied or mapped); only the tags' own addresses are read,
    those of dicts kept alive by the fingerprint (each module and its dict), as the ctypes
    views read them one by one; it is used only if its first read equals theirs."""

    def __init__(self, np: Any, lowest: int, span: int, offsets: Any, baseline: Any) -> None:
        self.np, self.offsets, self.baseline = np, offsets, baseline
        memory = _Memory(lowest, span)  # no ctypes array type: ctypes caches every length
        self.view = np.asarray(memory)

    @classmethod
    def of(cls, lists: tuple[list[str], list[Any], list[int]]) -> "Optional[_Gather]":
        np = sys.modules.get("numpy")
        _, views, values = lists
        if np is None or not views or not hasattr(np, "asarray"):
            return None
        try:
            addresses = [ctypes.addressof(v) for v in views]
            lowest = min(addresses)
            offsets = np.array([(a - lowest) // 8 for a in addresses], dtype=np.intp)
            baseline = np.array(values, dtype=np.uint64)
            gather = cls(np, lowest, (max(addresses) - lowest) // 8 + 1, offsets, baseline)
            read_one_by_one = np.array([v.value for v in views], dtype=np.uint64)
            if not np.array_equal(gather.view[offsets], read_one_by_one):
                return None  # the gather does not read what the views read: use them
            return gather
        except Exception:  # noqa: BLE001 - an unexpected numpy or address layout: ctypes
            return None

    def moved(self) -> Any:
        """Indexes (into the tag lists) of the tags that differ from the baseline."""
        return self.np.flatnonzero(self.view[self.offsets] != self.baseline)


def _same_entries(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether two ``sys.modules`` copies hold the same objects, compared in C (modules
    compare by identity; an entry whose ``==`` raises counts as a difference)."""
    try:
        return bool(a == b)
    except Exception:  # noqa: BLE001 - an object in sys.modules with its own __eq__
        return False


def _tag_now(d: dict[str, Any]) -> tuple[Any, int]:
    view = _TAG(d)  # type: ignore[misc]
    return (view, view.value)


def _unchanged(entry: Optional[tuple[Any, int]]) -> bool:
    return entry is not None and entry[0].value == entry[1]


def _changed_globals(name: str, before: dict[str, Any], now: dict[str, Any]) -> list[str]:
    try:
        if now == before:
            return []
    except Exception:  # noqa: BLE001 - an element-wise __eq__ (arrays): compare by identity
        pass
    found = []
    for key, value in now.items():
        if key in _ALLOWED:
            continue
        if key not in before:
            if not isinstance(value, ModuleType):
                found.append(f"added {name}.{key}")
        elif before[key] is not value and not (
            isinstance(value, ModuleType) and isinstance(before[key], ModuleType)
        ):
            if not _same(before[key], value):
                found.append(f"rebound {name}.{key}")
    found.extend(
        f"deleted {name}.{key}" for key in before if key not in now and not _unloaded(before[key])
    )
    return found


def _unloaded(value: Any) -> bool:
    """A submodule that is no longer loaded (direct mode removes a workflow-local module a
    script imported, and its attribute on the package with it): a fresh process has neither."""
    if not isinstance(value, ModuleType):
        return False
    return sys.modules.get(getattr(value, "__name__", None) or "") is not value


def _same(a: Any, b: Any) -> bool:
    if a is b:
        return True
    try:
        return bool(type(a) is type(b) and a == b)
    except Exception:  # noqa: BLE001
        return False


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def describe(changes: list[str]) -> Optional[str]:
    """One phrase for a warning: the first few changes and how many more."""
    if not changes:
        return None
    shown = ", ".join(changes[:_SHOWN])
    more = len(changes) - _SHOWN
    return shown + (f" and {more} more" if more > 0 else "")
