"""The store's small JSON records, parsed strictly: manifests, name records, index entries.

This module owns what a record may contain. Everything read from a store is checked here
before anything else uses it: a record that does not parse into the expected shape raises
:class:`MalformedRecordError` (the store sets the file aside and its job runs), so a damaged
or hostile record can never crash a run or name a path outside the place it is restored to.

What a record may name:

* an output name (a manifest's key) is a *safe relative path*: not absolute, no ``..``,
  ``.`` or empty component, no backslash or NUL, not ``~``-prefixed;
* a tree entry (a file inside a ``directory()`` output) is a safe relative path too, and no
  entry lies inside another (``a`` and ``a/b`` cannot both be files);
* a digest is ``sha256:`` plus 64 lowercase hex digits.

Whether a safe name may be restored *for a given job* (it must be one of the job's declared
outputs, logs or benchmarks) is :func:`refusal`'s question, asked by the caller that knows
the job.

Optional signing (:func:`sign`, :func:`verify`): with an HMAC key shared by the sites, every
manifest written carries ``"sig": "hmac-sha256:<key id>:<mac>"`` over its canonical JSON, and
a reader holding the key restores only manifests whose signature checks (as NBRewind's cell
records do).
"""

import hashlib
import hmac
import json
import os
import re
import stat
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
KEY = re.compile(r"[0-9a-f]{1,128}")


class MalformedRecordError(ValueError):
    """A record in the store does not have the shape this version writes."""


class SigningKeyError(Exception):
    """The manifest signing key cannot be used (unreadable, too short, readable by others)."""


def unsafe_path_reason(name: Any) -> Optional[str]:
    """Why ``name`` is not a safe relative path to restore to, or None if it is."""
    if not isinstance(name, str) or not name:
        return "not a non-empty string"
    if "\0" in name or "\\" in name:
        return "contains a NUL or backslash"
    if name.startswith("/") or os.path.isabs(name):
        return "is absolute"
    if name.startswith("~"):
        return "starts with '~'"
    parts = name.split("/")
    if ".." in parts:
        return "contains '..'"
    if "" in parts or "." in parts:
        return "is not normalised (empty or '.' component)"
    return None


def check_digest(value: Any, where: str) -> str:
    if not isinstance(value, str) or not DIGEST.fullmatch(value):
        raise MalformedRecordError(f"{where}: {value!r} is not a sha256 digest")
    return value


MODE_BITS = 0o1777
"""Permission bits an entry may restore (rwx for all, and the sticky bit): never set-user-
or set-group-ID bits, which a hostile store could otherwise plant on a restored file."""


def check_entry(entry: Any, where: str) -> dict[str, Any]:
    """An output's entry, checked. The kinds (whose placing :mod:`ckptstore._materialise`
    owns where present)::

        {"file": DIGEST[, "mode": BITS]}
        {"link": TARGET}
        {"tree": {REL: DIGEST}[, "links": {REL: TARGET}, "dirs": [REL], "modes": {REL: BITS}]}

    Every REL is a safe relative path (``"."`` too, in ``modes``: the directory itself), no
    entry lies inside a file or link entry, and modes carry no set-ID bits. A link's target
    is content, kept verbatim (a fresh run makes the same link); the link itself is only
    ever placed at a checked name."""
    if not isinstance(entry, dict):
        raise MalformedRecordError(f"{where}: not an entry object")
    if "file" in entry:
        _only(entry, {"file", "mode"}, where)
        check_digest(entry["file"], where)
        if "mode" in entry:
            _check_mode(entry["mode"], where)
        return entry
    if "link" in entry:
        _only(entry, {"link"}, where)
        _check_target(entry["link"], where)
        return entry
    if not isinstance(entry.get("tree"), dict):
        raise MalformedRecordError(f"{where}: not a 'file', 'link' or 'tree' entry")
    _only(entry, {"tree", "links", "dirs", "modes"}, where)
    tree, links = entry["tree"], entry.get("links", {})
    dirs, modes = entry.get("dirs", []), entry.get("modes", {})
    if not isinstance(links, dict) or not isinstance(dirs, list) or not isinstance(modes, dict):
        raise MalformedRecordError(f"{where}: 'links', 'dirs' or 'modes' has the wrong type")
    for rel in [*tree, *links, *dirs, *(m for m in modes if m != ".")]:
        reason = unsafe_path_reason(rel)
        if reason is not None:
            raise MalformedRecordError(f"{where}: tree entry {rel!r} {reason}")
    for rel, digest in tree.items():
        check_digest(digest, f"{where}/{rel}")
    for rel, target in links.items():
        _check_target(target, f"{where}/{rel}")
    for rel, bits in modes.items():
        _check_mode(bits, f"{where}/{rel}")
    leaves = set(tree) | set(links)
    if len(leaves) != len(tree) + len(links) or leaves & set(dirs):
        raise MalformedRecordError(f"{where}: one tree entry is listed as two kinds")
    for rel in [*tree, *links, *dirs]:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            inner = "/".join(parts[:i])
            if inner in leaves:
                raise MalformedRecordError(
                    f"{where}: tree entry {rel!r} lies inside the file or link {inner!r}"
                )
    return entry


def _only(entry: dict[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(entry) - allowed)
    if extra:
        raise MalformedRecordError(f"{where}: unexpected field {extra[0]!r}")


def _check_mode(bits: Any, where: str) -> None:
    if isinstance(bits, bool) or not isinstance(bits, int) or bits & ~MODE_BITS or bits < 0:
        raise MalformedRecordError(f"{where}: mode {bits!r} is not permission bits (0..0o1777)")


def _check_target(target: Any, where: str) -> None:
    if not isinstance(target, str) or not target or "\0" in target:
        raise MalformedRecordError(f"{where}: a link target must be a non-empty string")


@dataclass(frozen=True)
class ManifestRecord:
    """A parsed manifest: ``outputs`` maps safe relative names to checked entries."""

    key: str
    outputs: dict[str, dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)
    sig: Optional[str] = None


def parse_manifest(text: "str | bytes", expected_key: str) -> ManifestRecord:
    """Parse a manifest file's text; raise :class:`MalformedRecordError` if it is not one."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise MalformedRecordError(f"not JSON ({e.__class__.__name__})") from None
    if not isinstance(data, dict):
        raise MalformedRecordError("not a JSON object")
    key, outputs, meta = data.get("key"), data.get("outputs"), data.get("meta", {})
    if key != expected_key:
        raise MalformedRecordError(f"its key {key!r} is not its file name's")
    if not isinstance(outputs, dict) or not outputs:
        raise MalformedRecordError("'outputs' is missing or empty")
    for name, entry in outputs.items():
        reason = unsafe_path_reason(name)
        if reason is not None:
            raise MalformedRecordError(f"output {name!r} {reason}")
        check_entry(entry, f"output {name!r}")
    if not isinstance(meta, dict):
        raise MalformedRecordError("'meta' is not an object")
    components = meta.get("components", {})
    if not isinstance(components, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in components.items()
    ):
        raise MalformedRecordError("'meta.components' is not a string -> string object")
    sig = data.get("sig")
    if sig is not None and not isinstance(sig, str):
        raise MalformedRecordError("'sig' is not a string")
    return ManifestRecord(key, outputs, meta, sig)


def manifest_body(record: ManifestRecord) -> dict[str, Any]:
    body: dict[str, Any] = {"key": record.key, "outputs": record.outputs, "meta": record.meta}
    if record.sig is not None:
        body["sig"] = record.sig
    return body


def refusal(
    outputs: Iterable[str], allowed: Iterable[str], required: Iterable[str] = ()
) -> Optional[str]:
    """Why a manifest's output names may not be restored for a job, or None.

    ``allowed`` are the job's declared outputs, logs and benchmarks (relative to the working
    directory); ``required`` the declared outputs, which must all be there. Names are checked
    again here (safe, relative, normalised), so a caller never relies on the parser alone."""
    allowed_set, names = set(allowed), list(outputs)
    for name in names:
        reason = unsafe_path_reason(name)
        if reason is not None:
            return f"it names {name!r}, which {reason}"
        if name not in allowed_set:
            return f"it names {name!r}, which is not an output, log or benchmark of the job"
    missing = sorted(set(required) - set(names))
    if missing:
        return f"it lacks the declared output {missing[0]!r}"
    return None


# ---- index entries (a job's key history) ---------------------------------------------------


def parse_index(text: "str | bytes") -> tuple[str, list[str]]:
    """An index entry: (identity, keys newest first)."""
    try:
        data = json.loads(text)
    except (ValueError, UnicodeDecodeError) as e:
        raise MalformedRecordError(f"not JSON ({e.__class__.__name__})") from None
    if not isinstance(data, dict) or not isinstance(data.get("identity"), str):
        raise MalformedRecordError("not an index entry (no 'identity')")
    keys = data.get("history") or [data.get("key")]
    if (
        not isinstance(keys, list)
        or not keys
        or not all(isinstance(k, str) and KEY.fullmatch(k) for k in keys)
    ):
        raise MalformedRecordError("its key history is not a list of hex keys")
    return data["identity"], keys


# ---- signing -------------------------------------------------------------------------------


def load_signing_key(path: "str | os.PathLike[str]") -> bytes:
    """The HMAC key shared by the sites that may write a store (at least 32 characters,
    readable by its owner only)."""
    path = Path(path).expanduser()
    try:
        mode = path.stat().st_mode
        text = path.read_text().strip()
    except OSError as e:
        raise SigningKeyError(f"cannot read the checkpoint signing key {path}: {e}") from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SigningKeyError(
            f"the checkpoint signing key {path} is readable by others (mode "
            f"{oct(mode & 0o777)}); anyone who can read it can sign manifests. Run: chmod 600 "
            f"{path}"
        )
    if len(text) < 32:
        raise SigningKeyError(
            f"the checkpoint signing key {path} is too short (at least 32 characters); make "
            "one with: python -c 'import secrets; print(secrets.token_hex(32))'"
        )
    return text.encode()


def key_id(key: bytes) -> str:
    return hashlib.sha256(b"ckptstore-key-id:" + key).hexdigest()[:16]


def _canonical(record: ManifestRecord) -> bytes:
    body = {"key": record.key, "outputs": record.outputs, "meta": record.meta}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(record: ManifestRecord, key: bytes) -> str:
    mac = hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()
    return f"hmac-sha256:{key_id(key)}:{mac}"


def untrusted_reason(record: ManifestRecord, key: bytes) -> Optional[str]:
    """Why a manifest is not trusted under ``key`` (None: its signature checks)."""
    sig = record.sig
    if sig is None:
        return "it is not signed"
    parts = sig.split(":")
    if len(parts) != 3 or parts[0] != "hmac-sha256":
        return "its signature is not an hmac-sha256 signature"
    if parts[1] != key_id(key):
        return "it is signed with another key"
    expected = hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()
    if not hmac.compare_digest(expected, parts[2]):
        return "its signature does not match its content (altered after signing)"
    return None
