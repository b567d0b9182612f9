"""What a cell changes in the kernel's process outside its variables, observed, not listed.

Around each audited cell the kernel takes the sticky runtime's process fingerprint
(:class:`stickyinvoc.fingerprint.Fingerprint`: every loaded module's globals by identity, and
the process-global registries of libraries, read through their documented getters: logging,
warnings filters, pandas options, numpy print options, matplotlib ``rcParams``, the decimal
context, the recursion limit...), plus the environment, the working directory, ``sys.path`` and
the files the process holds open. What differs after the cell is its *effect*:

- **replayable** effects are exact and small: environment variables set or removed, the new
  working directory, entries put in front of, after, or taken out of ``sys.path``, warnings
  shown once (the namespace's ``__warningregistry__``, :func:`warnings_shown`). When repeat
  restores the cell, the kernel replays them before the next cell it runs, in cell order, so a
  later cell (an always-executed ``!echo $MODE``, an ``import`` from a directory the restored
  cell put on ``sys.path``) sees what a fresh run shows it;
- **other** effects (a logging handler, a library option, a module attribute rebound, a file
  left open) cannot be replayed from a record: a cell that had any is re-executed instead of
  restored, with the effect named in the reason.

Warning filters put in front of or after the list, and matplotlib's parameters (its backend
through ``matplotlib.use``), are replayable too; matplotlib's are set again only once
matplotlib is imported (replaying never imports a library). So are pyplot's open figures
(:class:`FigureWatch`): a cell that opened new figures, closed some or made another one current
(``plt.subplots`` under a non-inline backend leaves its figure open, where a later
``plt.savefig`` or ``plt.gcf()`` finds it) has them recorded as pickles, each figure's content
compared before and after the cell; a restored cell's figures are unpickled into pyplot under
their numbers once pyplot is imported. A cell that drew into a figure that was already open
reads that figure: it is re-executed, with that named. What an ``import`` changes in
modules loaded before it is part of that library being loaded (the fingerprint absorbs it), as
is a library's own lazy start-up on first use (PIL registering its plugins, multiprocessing
fixing its default start method) and the kernel's own bookkeeping (:data:`_KERNEL_NOISE`): a
fresh run does the same whenever that first use happens.
"""

import hashlib
import io
import os
import pickle
import sys
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any, Optional

from stickyinvoc.fingerprint import Fingerprint
from stickyinvoc.registries import read_registries

from ._record import mask_addresses

_KERNEL_MODULES = (
    "__main__",
    "__mp_main__",
    "IPython",
    "ipykernel",
    "ipython_genutils",
    "jupyter_client",
    "jupyter_core",
    "zmq",
    "tornado",
    "traitlets",
    "comm",
    "debugpy",
    "ptyprocess",
    "pexpect",
    "matplotlib_inline",
    "nbrewind",
    "stickyinvoc",
    "ckptstore",
    "cloudpickle",
    "asyncio",
    "concurrent",
    "selectors",
    "threading",
    "linecache",
)
"""Modules whose globals the kernel itself changes between cells (``__main__`` is the
notebook's namespace, compared by the kernel value by value)."""
_KERNEL_NOISE = (
    # first use of a library, which a fresh run does at its own first use
    "rebound PIL.Image._initialized",
    "rebound matplotlib.pyplot._backend_mod",
    "rebound matplotlib.pyplot.draw_if_interactive",
    "rebound matplotlib.pyplot._REPL_DISPLAYHOOK",
    "added matplotlib.backends.backend",
    "rebound matplotlib.backends.backend",
    # tempfile caches its directory at the first gettempdir(), the kernel's or the cell's
    "rebound tempfile.tempdir",
)
_REPLAYED = ("os environ ", "os cwd ", "sys path ", "threading threads ")
"""Registry entries compared separately (replayed), or by the kernel (threads)."""


@dataclass
class Effects:
    """A cell's effects: ``replay`` (record-ready) and the ``other`` ones, one phrase each;
    ``figures``: the pickles of the figures it opened (number, bytes), which the kernel puts
    in the store and names in ``replay["matplotlib figures"]``."""

    replay: dict[str, Any] = field(default_factory=dict)
    other: list[str] = field(default_factory=list)
    figures: list[tuple[int, bytes]] = field(default_factory=list)
    figure_changes: Optional[dict[str, Any]] = None
    """``{"closed": [...], "active": n}`` to complete with the stored figures."""


class _FigurePickler(pickle.Pickler):
    """Pickles a figure as matplotlib does, except that its callback registries' id counters
    are read, not advanced (matplotlib's own ``__getstate__`` takes the next id), so the same
    figure gives the same bytes and observing it changes nothing."""

    def reducer_override(self, obj: Any) -> Any:
        cbook = sys.modules.get("matplotlib.cbook")
        if cbook is None or type(obj) is not cbook.CallbackRegistry:
            return NotImplemented
        state = dict(vars(obj))
        state["callbacks"] = {
            signal: {cid: proxy() for cid, proxy in cids.items() if cid in obj._pickled_cids}
            for signal, cids in obj.callbacks.items()
        }
        state["_func_cid_map"] = None
        counter = repr(obj._cid_gen)  # "count(N)": the next id, without taking it
        state["_cid_gen"] = int(counter[counter.index("(") + 1 : -1].split(",")[0])
        return (type(obj), (), state)


def figure_bytes(figure: Any) -> bytes:
    buf = io.BytesIO()
    _FigurePickler(buf, protocol=5).dump(figure)
    return buf.getvalue()


class FigureWatch:
    """pyplot's open figures around a cell, by content. The figures a cell left as they
    were are not pickled again at the next cell's start."""

    def __init__(self) -> None:
        self._known: dict[int, tuple[Any, str, bytes]] = {}
        """id(figure) -> (figure, digest, bytes) as the last observation left it."""
        self._before: Optional[tuple[dict[int, tuple[Any, str]], Optional[int]]] = None

    def _now(self, reuse: bool) -> tuple[dict[int, tuple[Any, str]], Optional[int]]:
        plt = sys.modules.get("matplotlib.pyplot")
        helpers = sys.modules.get("matplotlib._pylab_helpers")
        if plt is None or helpers is None:
            return {}, None
        figures: dict[int, tuple[Any, str]] = {}
        known: dict[int, tuple[Any, str, bytes]] = {}
        for num, manager in list(helpers.Gcf.figs.items()):
            figure = manager.canvas.figure
            cached = self._known.get(id(figure)) if reuse else None
            if cached is not None and cached[0] is figure:
                digest, blob = cached[1], cached[2]
            else:
                try:
                    blob = figure_bytes(figure)
                except Exception as e:  # noqa: BLE001 - a user's artist may not pickle
                    blob = b""
                    digest = f"unpicklable: {type(e).__name__}: {e}"[:200]
                else:
                    digest = "sha256:" + hashlib.sha256(blob).hexdigest()
            figures[num] = (figure, digest)
            known[id(figure)] = (figure, digest, blob)
        self._known = known
        active = helpers.Gcf.get_active()
        return figures, (active.num if active is not None else None)

    def start(self) -> None:
        self._before = self._now(reuse=True)

    def stop(self, effects: "Effects") -> bool:
        """Put the cell's figure changes in ``effects``; True when there were any."""
        before, self._before = self._before, None
        if before is None:
            return False
        (old, old_active), (new, active) = before, self._now(reuse=False)
        same = {n for n in old.keys() & new.keys() if old[n][0] is new[n][0]}
        blind = sorted(n for n in same if not new[n][1].startswith("sha256:"))
        if blind:
            # its content cannot be compared: what the cell drew into it is not seen
            effects.other.append(
                f"matplotlib figure {blind[0]} is open and does not pickle ({new[blind[0]][1]})"
            )
            return True
        drawn = sorted(n for n in same if old[n][1] != new[n][1])
        if not drawn and active == old_active and same == set(old) == set(new):
            return False
        if drawn:
            effects.other.append(
                "draws into matplotlib figure " + ", ".join(map(str, drawn)) + ", open before it"
            )
            return True
        opened = sorted(set(new) - same)
        failed = [n for n in opened if not new[n][1].startswith("sha256:")]
        if failed:
            effects.other.append(
                f"leaves matplotlib figure {failed[0]} open, which does not pickle "
                f"({new[failed[0]][1]})"
            )
            return True
        effects.figures = [(n, self._known[id(new[n][0])][2]) for n in opened]
        effects.figure_changes = {"closed": sorted(set(old) - same), "active": active}
        return True

    def abandon(self) -> None:
        self._before = None


_INLINE_PRINTERS = ("IPython.core.pylabtools", "matplotlib_inline.backend_inline")


def _callable_key(value: Any) -> str:
    """A printer function by what it does (its code, constants and defaults), not by where it
    lives (a cell's file name changes from run to run; addresses are masked by the caller)."""
    code = getattr(value, "__code__", None)
    if code is None:
        return f"{type(value).__qualname__}:{value!r}"
    defaults = getattr(value, "__defaults__", None)
    return f"{value.__qualname__}:{code.co_code.hex()}:{code.co_consts!r}:{defaults!r}"


def display_state() -> Optional[str]:
    """How IPython turns the cells' results into outputs, as a digest: its display formatters
    (``%precision``, ``%pprint``, ``for_type`` printers, the inline backend's figure formats)
    and which expressions it displays. Kernel state a fresh run starts from and a later cell's
    output depends on; None outside IPython."""
    getipython = sys.modules.get("IPython.core.getipython")
    shell = getipython.get_ipython() if getipython is not None else None
    if shell is None:
        return None
    parts: list[Any] = [getattr(shell, "ast_node_interactivity", None)]
    formatter = getattr(shell, "display_formatter", None)
    for mime, f in sorted((getattr(formatter, "formatters", None) or {}).items()):
        printers = sorted(
            (f"{getattr(t, '__module__', '')}.{getattr(t, '__qualname__', t)}", _callable_key(v))
            for t, v in list(f.type_printers.items())
            # the inline backend's own figure printers (partials of pylabtools') follow its
            # settings (below), and are registered at pyplot's first use, as in a fresh run
            if getattr(getattr(v, "func", v), "__module__", "") not in _INLINE_PRINTERS
        )
        deferred = sorted((repr(k), _callable_key(v)) for k, v in f.deferred_printers.items())
        traits = {
            name: repr(getattr(f, name))
            for name in ("enabled", "float_precision", "pprint", "max_width", "max_seq_length")
            if hasattr(f, name)
        }
        parts.append((mime, printers, deferred, len(f.singleton_printers), traits))
    config = getattr(shell, "config", None)
    if config is not None and "InlineBackend" in config:  # %config before the backend starts
        parts.append(("config", repr(sorted(config["InlineBackend"].items()))))
    inline = sys.modules.get("matplotlib_inline.config")
    if inline is not None and inline.InlineBackend.initialized():
        # what differs from the defaults: created at first use (a fresh run does the same)
        backend = inline.InlineBackend.instance()
        traits = inline.InlineBackend.class_traits()
        for name in ("figure_formats", "print_figure_kwargs", "rc", "close_figures"):
            value = getattr(backend, name)
            if value != traits[name].default():
                parts.append(
                    (name, repr(sorted(value.items()) if isinstance(value, dict) else value))
                )
    text = mask_addresses(repr(parts))
    return "sha256:" + hashlib.sha256(text.encode()).hexdigest()


def replay_figures(change: dict[str, Any], blobs: list[tuple[int, bytes]]) -> None:
    """A restored cell's figure changes, applied once pyplot is imported: its closed figures
    closed, its opened ones unpickled under their numbers, its current one made current."""
    from ._observe import when_imported

    def apply(plt: Any) -> None:
        import matplotlib._pylab_helpers as helpers

        for num in change.get("closed", []):
            plt.close(num)
        for num, blob in blobs:
            if helpers.Gcf.has_fignum(num):
                plt.close(num)
            figure = pickle.loads(blob)  # registers itself as the next number
            manager = figure.canvas.manager
            if manager is not None and manager.num != num:
                helpers.Gcf.figs.pop(manager.num, None)
                manager.num = num
                helpers.Gcf.figs[num] = manager
        active = change.get("active")
        if active is not None and helpers.Gcf.has_fignum(active):
            plt.figure(active)

    when_imported("matplotlib.pyplot", apply)


@dataclass
class _Before:
    fingerprint: Fingerprint
    environ: dict[str, str]
    cwd: str
    path: list[str]
    fds: dict[int, str]
    display: Optional[str]
    registries: dict[str, dict[Any, Any]]
    classes: dict[int, tuple[type, dict[str, Any]]]


class EffectWatch:
    """One cell's observation: :meth:`start` before it runs, :meth:`stop` after."""

    def __init__(self, start_cwd: str) -> None:
        self.start_cwd = start_cwd
        self._before: Optional[_Before] = None
        self.figures = FigureWatch()
        self._fingerprint: Optional[Fingerprint] = None

    def start(self, namespace: Optional[dict[str, Any]] = None) -> None:
        self.figures.start()
        fingerprint = self._fingerprint
        if fingerprint is None:
            fingerprint = self._fingerprint = Fingerprint()
        else:
            fingerprint.rebase()
        fingerprint.watch_imports()
        self._before = _Before(
            fingerprint,
            dict(os.environ),
            os.getcwd(),
            list(sys.path),
            open_files(),
            display_state(),
            module_warning_registries(),
            library_classes(namespace or {}),
        )

    def importing(self) -> bool:
        """The cell is importing a module now (what that module's code reads is the import's,
        done again by a fresh import wherever the module is needed)."""
        return self._before is not None and self._before.fingerprint.importing

    def abandon(self) -> None:
        self.figures.abandon()
        if self._before is not None:
            self._before.fingerprint.stop_watching()
            self._before = None

    def stop(self) -> Effects:
        before, self._before = self._before, None
        assert before is not None
        effects = Effects()
        baseline = before.fingerprint.registries
        changes = before.fingerprint.changes()
        filters = _filters_change(baseline.get(("warnings", "filters")))
        if filters is not None:
            effects.replay["warnings filters"] = filters
        rc = _rc_change(baseline.get(("matplotlib", "rcParams")))
        if rc is not None:
            effects.replay["matplotlib rcParams"] = rc
        figures = self.figures.stop(effects)
        other = [
            c
            for c in changes
            if not _noise(c)
            and not (filters is not None and c.startswith("warnings filters "))
            and not (rc is not None and c.startswith("matplotlib rcParams "))
            and not (figures and c.startswith("matplotlib.pyplot figures "))
        ]
        environ = dict(os.environ)
        if environ != before.environ:
            effects.replay["environ"] = {
                k: environ.get(k)
                for k in sorted(set(environ) | set(before.environ))
                if environ.get(k) != before.environ.get(k)
            }
        cwd = os.getcwd()
        if cwd != before.cwd:
            effects.replay["cwd"] = _relative(cwd, self.start_cwd)
        if sys.path != before.path:
            change = path_change(before.path, list(sys.path))
            if change is None:
                other.append("sys.path reordered")
            else:
                effects.replay["sys.path"] = change
        fds = open_files()
        opened = sorted(
            path for fd, path in fds.items() if before.fds.get(fd) != path and _user_file(path)
        )
        if opened:
            other.append("leaves files open: " + ", ".join(opened[:3]))
        for cls, old in before.classes.values():
            changed = _class_changes(cls, old)
            if changed:
                more = f" and {len(changed) - 1} more" if len(changed) > 1 else ""
                other.append(f"sets {cls.__module__}.{cls.__qualname__}.{changed[0]}{more}")
        shown: dict[str, list[list[Any]]] = {}
        for name, registry in module_warning_registries().items():
            if registry == before.registries.get(name, {}):
                continue
            entries = warnings_shown(before.registries.get(name, {}), registry)
            if entries is None:
                other.append(f"shows a warning of a category defined in the notebook once ({name})")
            elif entries:
                shown[name] = entries
        if shown:
            effects.replay["warnings shown in modules"] = shown
        display = display_state()
        if display != before.display:
            # in the phrase by content: a magic cell counts in the state chain by what it set
            other.append(f"changes how IPython displays results ({str(display)[7:19]})")
        effects.other = effects.other + other
        return effects


def _noise(change: str) -> bool:
    if change.startswith(_REPLAYED) or change.startswith(_KERNEL_NOISE):
        return True
    if change.startswith("linecache "):
        return True
    if change.startswith("multiprocessing start method None -> "):
        # fixed at the first use of multiprocessing (joblib, a Pool): noise when it is the
        # platform's default, which a fresh run's first use picks too
        import multiprocessing

        default = multiprocessing.get_all_start_methods()[0]
        return change.endswith(f"-> {default!r}")
    words = change.split(" ", 2)
    if len(words) >= 2 and words[0] in ("rebound", "added", "deleted"):
        module = words[1].rsplit(".", 1)[0]
        return module.partition(".")[0] in _KERNEL_MODULES
    if change.startswith("sys.modules["):
        name = change.split("'")[1] if "'" in change else ""
        return name.partition(".")[0] in _KERNEL_MODULES
    return False


_PLAIN = (str, int, float, bool, type(None))


def _rc_change(baseline: Any) -> Optional[dict[str, Any]]:
    """matplotlib parameters the cell set, as plain values to set again (``backend`` through
    ``matplotlib.use``), or None when there are none or one is not plain data."""
    mpl = sys.modules.get("matplotlib")
    if mpl is None or not isinstance(baseline, dict):
        return None
    now = read_registries({"matplotlib": mpl}).get(("matplotlib", "rcParams"))
    if not isinstance(now, dict):
        return None
    changed = {k: v for k, v in now.items() if baseline.get(k) != v}
    if not changed or set(baseline) - set(now):
        return None
    for value in changed.values():
        items = value if isinstance(value, tuple) else (value,)
        if not all(isinstance(v, _PLAIN) for v in items):
            return None
    return {k: list(v) if isinstance(v, tuple) else v for k, v in sorted(changed.items())}


def _filter_entry(entry: Any) -> Optional[list[Any]]:
    action, message, category, module, line = entry
    if not isinstance(category, type) or category.__module__ in ("__main__", None):
        return None
    return [
        action,
        _pattern(message),
        f"{category.__module__}:{category.__qualname__}",
        _pattern(module),
        line,
    ]


def _pattern(value: Any) -> Any:
    """A filter's message or module: None, a plain string (the interpreter's own filters), or
    a compiled pattern (``[pattern, flags]``)."""
    if value is None or isinstance(value, str):
        return value
    return [value.pattern, value.flags]


def _unpattern(value: Any) -> Any:
    import re

    if value is None or isinstance(value, str):
        return value
    return re.compile(value[0], value[1])


def _filters_change(baseline: Any) -> Optional[dict[str, Any]]:
    """Warning filters the cell put in front of or after the list (``simplefilter``,
    ``filterwarnings``) or removed, as entries to put back, or None (unchanged, or not of that
    form, or naming a category of the notebook)."""
    import warnings

    if not isinstance(baseline, tuple):
        return None
    change = path_change(list(baseline), list(warnings.filters))
    if change is None or not any(change.values()):
        return None
    encoded = {key: [_filter_entry(f) for f in entries] for key, entries in change.items()}
    if any(e is None for entries in encoded.values() for e in entries):
        return None
    return encoded


def _decode_filter(entry: list[Any]) -> Any:
    import importlib

    action, message, category_name, module, line = entry
    module_name, _, qualname = category_name.partition(":")
    category: Any = importlib.import_module(module_name)
    for part in qualname.split("."):
        category = getattr(category, part)
    return (action, _unpattern(message), category, _unpattern(module), line)


def _replay_filters(change: dict[str, Any]) -> None:
    import warnings

    decoded = {key: [_decode_filter(e) for e in entries] for key, entries in change.items()}
    filters: Any = warnings.filters  # the list the C accelerator shares: changed in place
    filters[:] = apply_change(filters, decoded)
    warnings._filters_mutated()  # type: ignore[attr-defined]


def _replay_rc(params: dict[str, Any]) -> None:
    """Set matplotlib's parameters again, once matplotlib is imported (replaying never
    imports it by itself)."""
    from ._observe import when_imported

    def apply(mpl: Any) -> None:
        for key, value in params.items():
            if key == "backend":
                mpl.use(value)
            elif key != "backend_fallback":
                mpl.rcParams[key] = value
        if "backend_fallback" in params:
            mpl.rcParams["backend_fallback"] = params["backend_fallback"]

    when_imported("matplotlib", apply)


def path_change(before: list[Any], after: list[Any]) -> Optional[dict[str, list[Any]]]:
    """``after`` as entries put in front of and after ``before`` with some removed, or None
    when it is not of that form (reordered, inserted in the middle): ``sys.path``, warning
    filters."""
    removed = [p for p in before if p not in after]
    kept = [p for p in before if p in after]
    for start in range(len(after) - len(kept) + 1):
        if after[start : start + len(kept)] == kept:
            return {
                "prepend": after[:start],
                "append": after[start + len(kept) :],
                "remove": removed,
            }
    return None


def apply_change(current: list[Any], change: dict[str, list[Any]]) -> list[Any]:
    """``current`` with a :func:`path_change` applied: its entries put in front and after,
    its removed ones taken out."""
    kept = [entry for entry in current if entry not in change["remove"]]
    return list(change["prepend"]) + kept + list(change["append"])


def warnings_shown(before: dict[Any, Any], after: dict[Any, Any]) -> Optional[list[list[Any]]]:
    """The "shown once" memory a cell added to its namespace's ``__warningregistry__`` (a
    warning shown at a location is not shown there again under the default filters), as
    record-ready ``[text, category, line]``; None when a category cannot be named for replay
    (defined in the notebook)."""
    added = []
    for key, value in after.items():
        if key == "version" or key in before or not value:
            continue
        if not (isinstance(key, tuple) and len(key) == 3 and isinstance(key[1], type)):
            return None
        text, category, line = key
        if category.__module__ in ("__main__", None) or not isinstance(text, str):
            return None
        added.append([text, f"{category.__module__}:{category.__qualname__}", line])
    return sorted(added)


def _filters_version() -> Optional[int]:
    """The warnings module's current filters version (what a registry's ``version`` must
    equal to be kept), read by warning once into a private registry with a category the
    filters ignore; None when they do not ignore it (then nothing is replayed)."""
    import warnings

    probe: dict[Any, Any] = {}
    for action, message, category, module, _line in warnings.filters:
        if issubclass(ImportWarning, category) and (module is None or module.match("nbrewind")):
            if message is not None and not message.match("nbrewind probe"):
                continue
            if action != "ignore":
                return None
            break
    else:
        return None
    warnings.warn_explicit("nbrewind probe", ImportWarning, "<nbrewind>", 1, "nbrewind", probe)
    version = probe.get("version")
    return version if isinstance(version, int) else None


def replay_warnings(shown: list[list[Any]], namespace: dict[str, Any]) -> bool:
    """Put a restored cell's "shown once" warnings back into the namespace's registry."""
    import importlib

    version = _filters_version()
    if version is None:
        return False
    registry = namespace.setdefault("__warningregistry__", {})
    if registry.get("version") != version:
        registry.clear()
        registry["version"] = version
    for text, category_name, line in shown:
        module, _, qualname = category_name.partition(":")
        try:
            category: Any = importlib.import_module(module)
            for part in qualname.split("."):
                category = getattr(category, part)
        except (ImportError, AttributeError):
            continue
        registry[(text, category, line)] = True
    return True


def replay(effects: dict[str, Any], start_cwd: str) -> None:
    """Apply a restored cell's replayable effects to this process."""
    for name, value in (effects.get("environ") or {}).items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value
    if "cwd" in effects:
        os.chdir(os.path.join(start_cwd, effects["cwd"]))
    if effects.get("warnings filters"):
        _replay_filters(effects["warnings filters"])
    if effects.get("matplotlib rcParams"):
        _replay_rc(effects["matplotlib rcParams"])
    if effects.get("sys.path"):
        sys.path[:] = apply_change(sys.path, effects["sys.path"])
    if effects.get("warnings shown in modules"):
        replay_module_warnings(effects["warnings shown in modules"])


_CLASS_NOISE = ("__slotnames__", "_abc_impl", "__abstractmethods__")
"""Set by pickling an instance (copyreg) and by ABC bookkeeping, not by the notebook."""


def library_classes(namespace: dict[str, Any]) -> dict[int, tuple[type, dict[str, Any]]]:
    """The library classes a notebook can reach (the classes of its values, with their bases,
    and the classes its imported modules export), each with a copy of its attributes: a cell
    that monkeypatches one (``pd.DataFrame.total = ...``) changes what later cells compute
    from values they read unchanged."""
    found: dict[int, tuple[type, dict[str, Any]]] = {}

    def add(cls: Any) -> None:
        for c in getattr(cls, "__mro__", ()):
            module = getattr(c, "__module__", None) or ""
            if id(c) in found or module in ("builtins", "__main__"):
                continue
            if module.partition(".")[0] in _KERNEL_MODULES:
                continue
            found[id(c)] = (c, dict(vars(c)))

    for value in list(namespace.values()):
        if isinstance(value, type):
            add(value)
        elif isinstance(value, ModuleType):
            if value.__name__.partition(".")[0] in _KERNEL_MODULES:
                continue
            for attr in list(vars(value).values()):
                if isinstance(attr, type):
                    add(attr)
        else:
            add(type(value))
    return found


def _class_changes(cls: type, old: dict[str, Any]) -> list[str]:
    now = vars(cls)
    if len(now) == len(old) and all(now.get(k, _MISSING) is v for k, v in old.items()):
        return []
    keys = set(now) | set(old)
    return sorted(
        k
        for k in keys
        if k not in _CLASS_NOISE and now.get(k, _MISSING) is not old.get(k, _MISSING)
    )


_MISSING = object()


def module_warning_registries() -> dict[str, dict[Any, Any]]:
    """The "shown once" memory of every loaded module but the notebook's namespace and the
    kernel's (a warning raised from a local module's or a library's function is remembered
    in that module's ``__warningregistry__``)."""
    found = {}
    for name, module in list(sys.modules.items()):
        registry = getattr(module, "__dict__", {}).get("__warningregistry__")
        if registry and name.partition(".")[0] not in _KERNEL_MODULES:
            found[name] = dict(registry)
    return found


def replay_module_warnings(shown: dict[str, list[list[Any]]]) -> None:
    """Put restored cells' "shown once" warnings back into their modules' registries, once
    each module is imported."""
    from ._observe import when_imported

    def into(entries: list[list[Any]]) -> Any:
        def apply(module: Any) -> None:
            replay_warnings(entries, module.__dict__)

        return apply

    for name, entries in shown.items():
        when_imported(name, into(entries))


def _relative(path: str, start: str) -> str:
    rel = os.path.relpath(path, start)
    return path if rel == ".." or rel.startswith(".." + os.sep) else rel


def open_files() -> dict[int, str]:
    """The process's open file descriptors that name regular files (Linux ``/proc``)."""
    found: dict[int, str] = {}
    try:
        entries = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for entry in entries:
        try:
            target = os.readlink(f"/proc/self/fd/{entry}")
        except OSError:
            continue
        if target.startswith("/"):
            found[int(entry)] = target
    return found


def _user_file(path: str) -> bool:
    """A file the notebook opened, not one the kernel holds (its history database, sockets,
    the checkpoint store, the interpreter's own files)."""
    if path.startswith(("/dev/", "/proc/", "/sys/")) or "(deleted)" in path:
        return False
    if os.sep + ".ipython" + os.sep in path or os.sep + ".nbrewind" in path:
        return False
    return not path.startswith((sys.prefix, sys.base_prefix))
