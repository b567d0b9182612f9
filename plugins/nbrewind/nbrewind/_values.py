"""Turning a notebook variable into checkpoint bytes and a stable content hash, and back.

Three kinds of checkpoint:

- ``pickle``: plain pickle (protocol 5). Most data (numbers, containers, numpy, pandas,
  scikit-learn models) takes this path, and its bytes are also what the hash is taken over.
- ``cloudpickle``: objects that reference functions or classes defined in the notebook. Their
  pickle embeds per-process details (file names of cells, class tracker ids), so their hash is
  taken over a *fingerprint* instead: code objects without file names, classes by their
  members. A value's hash is therefore the same in the audit and the repeat kernel.
- ``module``: an imported module, restored by importing it again.

Anything else is ``unpicklable``: it has no checkpoint, and its hash is derived from the cell
that produced it (so a consumer re-runs only if that producer changed).
"""

import hashlib
import importlib
import io
import marshal
import pickle
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


class _PlainPickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
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
        return Serialized("module", name, _digest(b"module:" + name), tname)
    buf = io.BytesIO()
    try:
        _PlainPickler(buf, protocol=PROTOCOL).dump(value)
        blob = buf.getvalue()
        return Serialized("pickle", blob, _digest(blob), tname)
    except _Dynamic:
        pass
    except Exception as e:  # noqa: BLE001 - anything may fail in a user's __reduce__
        plain_error = f"{type(e).__name__}: {e}"
        if not _mentions_lambda(e):
            return _unpicklable(tname, plain_error, unpicklable_identity)
    try:
        import cloudpickle

        blob = cloudpickle.dumps(value, protocol=PROTOCOL)
    except Exception as e:  # noqa: BLE001
        return _unpicklable(tname, f"{type(e).__name__}: {e}", unpicklable_identity)
    return Serialized("cloudpickle", blob, fingerprint(value, fallback=blob), tname)


def _mentions_lambda(e: Exception) -> bool:
    return "lambda" in str(e) or "local object" in str(e)


def _unpicklable(tname: str, error: str, identity: str) -> Serialized:
    return Serialized(
        "unpicklable", None, _digest(f"unpicklable:{tname}:{identity}".encode()), tname, error
    )


def load(kind: str, blob: bytes, namespace: dict[str, Any]) -> Any:
    """Rebuild a value; functions and classes from the notebook are re-bound to ``namespace``
    so they see the live globals, as if their cell had run here."""
    if kind == "module":
        return importlib.import_module(blob.decode())
    if kind == "pickle":
        return pickle.loads(blob)
    if kind == "cloudpickle":
        import cloudpickle

        return _rebind(cloudpickle.loads(blob), namespace)
    raise ValueError(f"no checkpoint of kind {kind!r} can be loaded")


def _rebind(value: Any, namespace: dict[str, Any]) -> Any:
    if isinstance(value, types.FunctionType) and _is_dynamic(value):
        return _rebind_function(value, namespace)
    cls = value if isinstance(value, type) else type(value)
    if _is_dynamic(cls):
        for attr, member in list(vars(cls).items()):
            if isinstance(member, types.FunctionType):
                setattr(cls, attr, _rebind_function(member, namespace))
            elif isinstance(member, staticmethod | classmethod):
                func = member.__func__
                if isinstance(func, types.FunctionType):
                    setattr(cls, attr, type(member)(_rebind_function(func, namespace)))
    return value


def _rebind_function(f: types.FunctionType, namespace: dict[str, Any]) -> types.FunctionType:
    g = types.FunctionType(f.__code__, namespace, f.__name__, f.__defaults__, f.__closure__)
    g.__kwdefaults__ = f.__kwdefaults__
    g.__dict__.update(f.__dict__)
    g.__qualname__ = f.__qualname__
    g.__doc__ = f.__doc__
    g.__annotations__ = f.__annotations__
    g.__module__ = f.__module__
    return g


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
    """:func:`_rebind` for each value of a group loaded as one dict."""
    return {name: _rebind(value, namespace) for name, value in values.items()}
