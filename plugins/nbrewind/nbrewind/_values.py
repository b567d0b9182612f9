"""Turning a notebook variable into checkpoint bytes and a stable content hash, and back.

Three kinds of checkpoint:

- ``pickle``: plain pickle (protocol 5). Most data (numbers, containers, numpy, pandas,
  scikit-learn models) takes this path, and its bytes are also what the hash is taken over.
- ``cloudpickle``: objects that reference functions or classes defined in the notebook. Their
  pickle embeds per-process details (file names of cells, class tracker ids), so their hash is
  taken over a *fingerprint* instead: code objects without file names, classes by their
  members. A value's hash is therefore the same in the audit and the repeat kernel.
- ``module``: an imported module, restored by importing it again. A module from the
  notebook's own files (not an installed library) is hashed by its source and its state
  (:func:`local_module_digest`), so an edit of ``helper.py`` or ``helper.X = n`` is a change.

Anything else is ``unpicklable``: it has no checkpoint, and its hash is derived from the cell
that produced it (so a consumer re-runs only if that producer changed). So is a value whose
pickle names an object of the notebook by reference (``__main__.f``: a ``functools.lru_cache``
function, an instance of a class pickled by name): a fresh kernel has no such object to find.
"""

import hashlib
import importlib
import io
import marshal
import os
import pickle
import sys
import types
from dataclasses import dataclass
from typing import Any, Optional

PROTOCOL = 5


@dataclass(frozen=True)
class Serialized:
    """A checkpointed value: ``kind``, its ``blob`` (None when unpicklable), its ``hash``."""

    kind: str
    blob: Optional[bytes]
    hash: str
    type_name: str
    error: str = ""


class _Dynamic(Exception):
    """The value references something defined in the notebook itself (``__main__``)."""


def _is_dynamic(obj: Any) -> bool:
    return isinstance(obj, types.FunctionType | type) and getattr(obj, "__module__", "") in (
        "__main__",
        None,
    )


class _Unrestorable(Exception):
    """The value holds an object that would not come back as it is when unpickled."""


def _check_restorable(obj: Any) -> None:
    mpl = sys.modules.get("matplotlib.artist")
    if mpl is not None and isinstance(obj, mpl.Artist):
        # An unpickled figure registers itself with pyplot, so the cell that loads it would
        # display it: the cell that made it is replayed instead.
        raise _Unrestorable(f"a matplotlib {type(obj).__name__} (figures re-register on load)")


class _PlainPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        _check_restorable(obj)
        if _is_dynamic(obj):
            raise _Dynamic
        return NotImplemented


def _digest(data: bytes) -> str:
    return "sha256:" + hashlib.sha256(data).hexdigest()


def type_name(value: Any) -> str:
    t = type(value)
    return f"{t.__module__}.{t.__qualname__}"


def serialize(value: Any, unpicklable_identity: str) -> Serialized:
    """Checkpoint ``value``. ``unpicklable_identity`` names the producing cell and its inputs,
    used as the hash when the value cannot be pickled."""
    tname = type_name(value)
    if isinstance(value, types.ModuleType):
        name = value.__name__.encode()
        local = local_module_digest(value)
        tail = b"" if local is None else b":" + local.encode()
        return Serialized("module", name, _digest(b"module:" + name + tail), tname)
    buf = io.BytesIO()
    try:
        _PlainPickler(buf, protocol=PROTOCOL).dump(value)
        blob = buf.getvalue()
        by_name = _main_references(blob)
        if by_name:
            return _unpicklable(tname, by_name, unpicklable_identity)
        return Serialized("pickle", blob, _digest(blob + local_sources_named(blob)), tname)
    except _Dynamic:
        pass
    except _Unrestorable as e:
        return _unpicklable(tname, str(e), unpicklable_identity)
    except Exception as e:  # noqa: BLE001 - anything may fail in a user's __reduce__
        plain_error = f"{type(e).__name__}: {e}"
        if not _mentions_lambda(e):
            return _unpicklable(tname, plain_error, unpicklable_identity)
    try:
        buf = io.BytesIO()
        _NotebookPickler(buf).dump(value)
        blob = buf.getvalue()
    except Exception as e:  # noqa: BLE001
        return _unpicklable(tname, f"{type(e).__name__}: {e}", unpicklable_identity)
    by_name = _main_references(blob)
    if by_name:
        return _unpicklable(tname, by_name, unpicklable_identity)
    digest = fingerprint(value, fallback=blob)
    sources = local_sources_named(blob)
    if sources:
        digest = _digest(digest.encode() + sources)
    return Serialized("cloudpickle", blob, digest, tname)


def _main_references(blob: bytes) -> str:
    """Why a pickle cannot be loaded in a fresh kernel: it names objects of the notebook
    (``__main__``) by reference, which only this kernel has ('' if it names none)."""
    if b"__main__" not in blob:
        return ""
    from ._review import pickle_globals

    names = [g for g in pickle_globals(blob) if g.startswith(("__main__.", "__mp_main__."))]
    if not names:
        return ""
    shown = ", ".join(names[:3])
    return (
        f"its pickle names {shown} by reference (a functools cache wrapper, or an object "
        "pickled by name), which a fresh kernel does not have"
    )


def serialize_group(values: dict[str, Any], identity: str) -> Serialized:
    """Names checkpointed together, as one ``{name: value}`` pickle (numpy views as views,
    :func:`with_views`)."""
    members = with_views(values)
    if members is None:
        why = "numpy arrays sharing memory in a way a checkpoint cannot rebuild"
        return _unpicklable(type_name(values), why, identity)
    return serialize(members, identity)


_INSTALLED: tuple[str, ...] = ()
_TOOLING = frozenset(
    {
        "nbrewind",
        "ckptstore",
        "stickyinvoc",
        "snakemake_executor_plugin_sticky",
        "snakemake_storage_plugin_ckpt",
        "snakemake_logger_plugin_distea",
        "snakemake_scheduler_plugin_incremental",
        "snakemake_shadho",
        "distea",
    }
)
_SOURCE_DIGESTS: dict[tuple[str, int, int], str] = {}


def module_file(module: types.ModuleType) -> "str | None":
    """The source file of a module from the notebook's own files (not an installed library, not
    the standard library, not built in), else None."""
    global _INSTALLED
    path = getattr(module, "__file__", None)
    if not isinstance(path, str) or not path.endswith(".py") or not os.path.isabs(path):
        return None  # torch._classes says "_classes.py": no file of the notebook's
    name = getattr(module, "__name__", None)  # a module's globals can be anyone's (Snakemake's are)
    if isinstance(name, str) and name.partition(".")[0] in _TOOLING:
        return None  # this tool's own packages (an editable install lives outside site-packages)
    if not _INSTALLED:
        from ._observe import ignored_roots  # the interpreter's, the libraries', home caches

        _INSTALLED = tuple(os.path.join(os.path.realpath(r), "") for r in ignored_roots())
    real = os.path.realpath(path)
    return None if real.startswith(_INSTALLED) else real


_LOCAL_FILES: dict[int, Optional[str]] = {}


def local_modules_named(blob: bytes) -> dict[str, str]:
    """Loaded modules of the notebook's own files whose name a pickle mentions (it imports
    their classes or functions by name when loaded): module name -> source file."""
    found = {}
    for name, module in list(sys.modules.items()):
        key = id(module)
        if key not in _LOCAL_FILES:
            _LOCAL_FILES[key] = (
                module_file(module) if isinstance(module, types.ModuleType) else None
            )
        source = _LOCAL_FILES[key]
        if source is not None and name.encode() in blob:
            found[name] = source
    return found


def local_sources_named(blob: bytes) -> bytes:
    """The source digests of :func:`local_modules_named`: a value pickled by reference to
    ``helper.Model`` changes when helper.py does."""
    named = local_modules_named(blob)
    return "".join(f"{n}={_source_digest(named[n])};" for n in sorted(named)).encode()


def local_module_digest(module: types.ModuleType, _seen: "set[int] | None" = None) -> "str | None":
    """For a module from the notebook's own files: a digest of its source and of its state
    (its globals, values by pickle, its own functions and classes by name, since the source
    covers their code), so editing the file or rebinding an attribute changes it."""
    path = module_file(module)
    if path is None:
        return None
    seen = _seen if _seen is not None else set()
    seen.add(id(module))
    h = hashlib.sha256(_source_digest(path).encode())
    for key, value in sorted(vars(module).items()):
        if key.startswith("__") and key.endswith("__"):
            continue
        h.update(b"\0" + key.encode() + b"=")
        if isinstance(value, types.ModuleType):
            inner = None if id(value) in seen else local_module_digest(value, seen)
            h.update(f"module:{value.__name__}:{inner}".encode())
        elif getattr(value, "__module__", None) == module.__name__ and isinstance(
            value, types.FunctionType | type
        ):
            # its code is the source's; its state is not: a class's attributes (a registry
            # list, a rebound setting), not its functions
            h.update(f"own:{value.__qualname__}".encode())
            if isinstance(value, type):
                h.update(_class_state(value))
        elif getattr(value, "__module__", None) == module.__name__ and hasattr(value, "cache_info"):
            # an lru_cache/cache function of the module: what it has cached is module state
            info = value.cache_info()
            h.update(f"own:{getattr(value, '__qualname__', key)}:cached:{info.misses}".encode())
        else:
            try:
                h.update(pickle.dumps(value, protocol=PROTOCOL))
            except Exception:  # noqa: BLE001 - not comparable: its type at least
                h.update(f"opaque:{type_name(value)}".encode())
    return "sha256:" + h.hexdigest()


def _class_state(cls: type) -> bytes:
    """A module class's own data attributes, by pickle (functions and descriptors are the
    source's code, dunders the class machinery's)."""
    h = hashlib.sha256()
    for key, value in sorted(vars(cls).items()):
        if key.startswith("__") and key.endswith("__"):
            continue
        if isinstance(
            value, types.FunctionType | staticmethod | classmethod | property | type
        ) or hasattr(value, "__get__"):
            h.update(f"{key}:code;".encode())
            continue
        try:
            h.update(key.encode() + b"=" + pickle.dumps(value, protocol=PROTOCOL))
        except Exception:  # noqa: BLE001 - not comparable: its type at least
            h.update(f"{key}:opaque:{type_name(value)};".encode())
    return h.digest()


def _source_digest(path: str) -> str:
    try:
        st = os.stat(path)
    except OSError:
        return "missing"
    key = (path, st.st_mtime_ns, st.st_size)
    digest = _SOURCE_DIGESTS.get(key)
    if digest is None:
        with open(path, "rb") as f:
            digest = _digest(f.read())
        _SOURCE_DIGESTS[key] = digest
    return digest


def _mentions_lambda(e: Exception) -> bool:
    return "lambda" in str(e) or "local object" in str(e)


def _unpicklable(tname: str, error: str, identity: str) -> Serialized:
    return Serialized(
        "unpicklable", None, _digest(f"unpicklable:{tname}:{identity}".encode()), tname, error
    )


def load(kind: str, blob: bytes, namespace: dict[str, Any]) -> Any:
    """Rebuild a value; functions of the notebook, wherever they are in it (a value, a method
    of a class, a lambda in a dict), are bound to ``namespace``, so they read the live globals
    as if their cell had run here."""
    if kind == "module":
        return importlib.import_module(blob.decode())
    if kind == "pickle":
        return pickle.loads(blob)
    if kind == "cloudpickle":
        return _NotebookUnpickler(io.BytesIO(blob), namespace).load()
    raise ValueError(f"no checkpoint of kind {kind!r} can be loaded")


_NAMESPACE_ID = "nbrewind:namespace"


def _cloudpickle_internals() -> Any:
    from cloudpickle import cloudpickle as internals

    return internals


class _NamespaceToken:
    """Stands for the notebook's namespace in a pickle (a persistent id, never its content)."""


try:
    import cloudpickle as _cloudpickle

    _CloudPickler: Any = _cloudpickle.Pickler
except ImportError:  # pragma: no cover - cloudpickle is a dependency
    _CloudPickler = pickle.Pickler


class _NotebookPickler(_CloudPickler):  # type: ignore[misc,valid-type]
    """cloudpickle, except that a function whose globals are the notebook's namespace (a
    ``__main__`` module's globals: cells, and classes' methods defined in them) is saved without
    them: it loads bound to the live namespace of the kernel that loads it (instead of a private
    copy of the globals it read when pickled), wherever it sits in the value. Functions made by
    libraries for the notebook (a dataclass's ``__repr__`` wrapper, a namedtuple's ``__new__``)
    keep their own globals."""

    def __init__(self, file: Any) -> None:
        super().__init__(file, protocol=PROTOCOL)
        self._token = _NamespaceToken()

    def persistent_id(self, obj: Any) -> Optional[str]:
        return _NAMESPACE_ID if obj is self._token else None

    def reducer_override(self, obj: Any) -> Any:
        _check_restorable(obj)
        if isinstance(obj, types.CodeType) and _cell_directory() is not None:
            if os.path.dirname(obj.co_filename) == _cell_directory():
                # cloudpickle names all code <dynamic-code>: keep the cell's file name, so
                # tracebacks and warnings from a restored function name its cell, as a
                # fresh run's do (the directory is the loading kernel's own).
                constructor, args = _cloudpickle_internals()._code_reduce(obj)
                return _cell_code, (constructor, args, os.path.basename(obj.co_filename))
        return super().reducer_override(obj)

    def _dynamic_function_reduce(self, func: Any) -> Any:
        if func.__globals__.get("__name__") != "__main__":
            return super()._dynamic_function_reduce(func)
        internals = _cloudpickle_internals()
        newargs = list(self._function_getnewargs(func))
        newargs[1] = self._token
        state, slotstate = internals._function_getstate(func)
        slotstate["__globals__"] = {}
        return (
            internals._make_function,
            tuple(newargs),
            (state, slotstate),
            None,
            None,
            internals._function_setstate,
        )


_CELL_DIRECTORY: list[Optional[str]] = []


def _cell_directory() -> Optional[str]:
    """Where this kernel's compiler names cells (ipykernel: ``/tmp/ipykernel_<pid>``)."""
    if not _CELL_DIRECTORY:
        try:
            from ipykernel.compiler import get_tmp_directory

            _CELL_DIRECTORY.append(os.path.normpath(get_tmp_directory()))
        except Exception:  # noqa: BLE001 - not an ipykernel: code keeps cloudpickle's name
            _CELL_DIRECTORY.append(None)
    return _CELL_DIRECTORY[0]


def _cell_code(constructor: Any, args: tuple[Any, ...], basename: str) -> types.CodeType:
    """A notebook cell's code object, named as this kernel names that cell (the base name is
    the hash of the cell's source, the same in every ipykernel)."""
    code: types.CodeType = constructor(*args)
    directory = _cell_directory()
    if directory is None:
        return code
    return code.replace(co_filename=os.path.join(directory, basename))


class _NotebookUnpickler(pickle.Unpickler):
    def __init__(self, file: Any, namespace: dict[str, Any]) -> None:
        super().__init__(file)
        self._namespace = namespace

    def persistent_load(self, pid: Any) -> Any:
        if pid == _NAMESPACE_ID:
            return self._namespace
        raise pickle.UnpicklingError(f"unknown persistent id {pid!r}")


# ---- fingerprints of values that embed notebook code ----------------------------------------


def _code_fingerprint(code: types.CodeType) -> bytes:
    consts = tuple(
        _code_fingerprint(c) if isinstance(c, types.CodeType) else c for c in code.co_consts
    )
    return marshal.dumps(
        (code.co_code, code.co_names, code.co_varnames, code.co_freevars, repr(consts))
    )


class _FingerprintPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, types.FunctionType) and _is_dynamic(obj):
            closure = tuple(c.cell_contents for c in obj.__closure__ or ())
            return tuple, (
                (
                    "function",
                    obj.__qualname__,
                    _code_fingerprint(obj.__code__),
                    obj.__defaults__,
                    closure,
                    dict(sorted(obj.__dict__.items())),
                ),
            )
        if isinstance(obj, type) and _is_dynamic(obj):
            members = []
            for attr, member in sorted(vars(obj).items()):
                if attr in ("__dict__", "__weakref__", "__module__", "__doc__"):
                    continue
                if isinstance(member, staticmethod | classmethod):
                    member = ("wrapped", type(member).__name__, member.__func__)
                elif isinstance(member, property):
                    member = ("property", member.fget, member.fset, member.fdel)
                members.append((attr, member))
            return tuple, (("class", obj.__qualname__, obj.__bases__, tuple(members)),)
        if isinstance(obj, types.CodeType):
            return bytes, (_code_fingerprint(obj),)
        return NotImplemented


def fingerprint(value: Any, fallback: bytes) -> str:
    """A hash of ``value`` that does not depend on the process that made it."""
    buf = io.BytesIO()
    try:
        _FingerprintPickler(buf, protocol=PROTOCOL).dump(value)
    except Exception:  # noqa: BLE001 - a fingerprint that cannot be taken only costs a rerun
        return _digest(b"unstable:" + fallback)
    return _digest(b"fingerprint:" + buf.getvalue())


def blob_digest(blob: bytes) -> str:
    return _digest(blob)


def member_hash(group_hash: str, name: str) -> str:
    """The hash of one name of a group of names checkpointed together (one object graph): it
    changes when any value of the group, or how they share objects, changes."""
    return _digest(f"member:{group_hash}:{name}".encode())


def rebind_all(values: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    """A group loaded as one dict, with numpy views rebuilt on their arrays (see
    :func:`with_views`). Functions were bound to the namespace by :func:`load`."""
    return _rebuild_views(values)


_VIEW = "__nbrewind_view__"


def _root(array: Any) -> Any:
    while type(getattr(array, "base", None)).__name__ == "ndarray":
        array = array.base
    return array


def _is_ndarray(value: Any) -> bool:
    return type(value).__name__ == "ndarray" and (type(value).__module__ or "").startswith("numpy")


def with_views(values: dict[str, Any]) -> "dict[str, Any] | None":
    """A group's values with each numpy array that shares another's memory replaced by where
    it lies in the array owning that memory (offset, shape, strides, dtype), so that loading
    rebuilds the views on the restored array instead of copies: ``v[:] = 1`` then changes
    ``a``, as in the run that made them. The owning array goes along (under a hidden key when
    no name holds it). ``values`` itself when no arrays share memory; None when the owner is
    not contiguous (a view could not be rebuilt on it)."""
    arrays = {n: v for n, v in values.items() if _is_ndarray(v)}
    roots: dict[int, list[str]] = {}
    for name, array in arrays.items():
        roots.setdefault(id(_root(array)), []).append(name)
    shared = {k: names for k, names in roots.items() if len(names) > 1}
    if not shared:
        return values
    out = dict(values)
    for key, names in shared.items():
        base = _root(arrays[names[0]])
        if not base.flags["C_CONTIGUOUS"]:
            return None
        owners = [n for n in names if arrays[n] is base]
        owner = owners[0] if owners else f"{_VIEW}:{key}"
        out[owner] = base  # an array no name holds is kept under a hidden key
        start = base.__array_interface__["data"][0]
        for name in names:
            if name == owner:
                continue
            view = arrays[name]
            if view is base:
                continue  # the same array under two names: pickle keeps that identity
            offset = view.__array_interface__["data"][0] - start
            out[name] = (_VIEW, owner, offset, view.shape, view.strides, view.dtype.str)
    return out


def _rebuild_views(values: dict[str, Any]) -> dict[str, Any]:
    marked = {
        n: v for n, v in values.items() if isinstance(v, tuple) and len(v) == 6 and v[0] == _VIEW
    }
    if not marked:
        return values
    import numpy

    out = dict(values)
    for name, (_tag, owner, offset, shape, strides, dtype) in marked.items():
        base = out[owner]
        if not base.flags["OWNDATA"]:
            # unpickled arrays may view pickle's buffer: own the memory, so the views'
            # ``base`` is this array, as in the run that made them
            base = out[owner] = base.copy()
        out[name] = numpy.ndarray(
            shape, dtype=numpy.dtype(dtype), buffer=base, offset=offset, strides=strides
        )
    return {n: v for n, v in out.items() if not n.startswith(_VIEW)}
