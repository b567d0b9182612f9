"""Per-user signing of cell records, so that repeat only unpickles what this user trusts.

Restoring a pickle runs code. Like Jupyter's notebook trust, every cell record written by an
audit (or repeat) run is signed with an HMAC-SHA256 key that only this user can read
(``$NBREWIND_KEY_FILE``, else ``$XDG_DATA_HOME/nbrewind/key`` or
``~/.local/share/nbrewind/key``, created 0600 on first use). A record carries the digests of
its checkpoint blobs, so one signature covers the record's facts and every byte restored from
it. ``nbrewind trust NB`` re-signs a reviewed notebook with the local key.
"""

import hashlib
import hmac
import json
import os
import secrets
import stat
from enum import Enum
from pathlib import Path
from typing import Any

UNSIGNED_FIELDS = ("status", "reason", "sig")
"""Fields of a record that change when it is carried over unchanged (restored)."""


class Trust(Enum):
    TRUSTED = "trusted"
    UNSIGNED = "unsigned"
    OTHER_KEY = "signed with another key"
    TAMPERED = "tampered"


class SigningKeyError(Exception):
    """The signing key cannot be used (wrong permissions, unreadable)."""


def key_path() -> Path:
    explicit = os.environ.get("NBREWIND_KEY_FILE")
    if explicit:
        return Path(explicit)
    data_home = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data_home) / "nbrewind" / "key"


def load_key() -> bytes:
    """This user's key, created on first use (0600, written atomically)."""
    path = key_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(secrets.token_hex(32))
        try:
            os.link(tmp, path)  # never replace a key another process created meanwhile
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    mode = path.stat().st_mode
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise SigningKeyError(
            f"the nbrewind signing key {path} is readable by others (mode {oct(mode & 0o777)}); "
            f"anyone who can read it can make you unpickle their code. Run: chmod 600 {path}"
        )
    key = path.read_text().strip()
    if len(key) < 32:
        raise SigningKeyError(
            f"the nbrewind signing key {path} is too short; delete it to make a new one"
        )
    return key.encode()


def key_id(key: bytes) -> str:
    return hashlib.sha256(b"nbrewind-key-id:" + key).hexdigest()[:16]


def _canonical(record: dict[str, Any]) -> bytes:
    # Where a blob lives (inline or in a store) is not signed, only its digest: `nbrewind pack`
    # moves blobs without invalidating signatures, and the digest still pins every byte.
    body = {k: v for k, v in record.items() if k not in UNSIGNED_FIELDS}
    if isinstance(body.get("writes"), dict):
        body["writes"] = {
            name: {k: v for k, v in entry.items() if k not in ("inline", "object")}
            for name, entry in body["writes"].items()
        }
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def sign(record: dict[str, Any], key: bytes) -> str:
    mac = hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()
    return f"hmac-sha256:{key_id(key)}:{mac}"


def verify(record: dict[str, Any], key: bytes) -> Trust:
    sig = record.get("sig")
    if not isinstance(sig, str) or sig.count(":") != 2:
        return Trust.UNSIGNED
    algo, kid, mac = sig.split(":")
    if algo != "hmac-sha256":
        return Trust.UNSIGNED
    if kid != key_id(key):
        return Trust.OTHER_KEY
    expected = hmac.new(key, _canonical(record), hashlib.sha256).hexdigest()
    return Trust.TRUSTED if hmac.compare_digest(expected, mac) else Trust.TAMPERED


# ---- records the audit kernel keeps beside a notebook under JupyterLab -----------------------

LAB_MAC_FIELD = "mac"


def _lab_canonical(notebook_name: str, entry: dict[str, Any]) -> bytes:
    body = {k: v for k, v in entry.items() if k != LAB_MAC_FIELD}
    body["notebook"] = notebook_name
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def lab_mac(notebook_name: str, entry: dict[str, Any], key: bytes) -> str:
    """The MAC the audit kernel puts on each line it appends to a JupyterLab sidecar: only a
    kernel holding this user's key can write a line ``nbrewind import-lab`` accepts (a sidecar
    may arrive with a cloned repository). It covers the notebook's file name, the cell id, the
    source hash and the whole record (with its blob digests)."""
    mac = hmac.new(key, b"nbrewind-lab:" + _lab_canonical(notebook_name, entry), hashlib.sha256)
    return f"hmac-sha256:{key_id(key)}:{mac.hexdigest()}"


def verify_lab_line(notebook_name: str, entry: dict[str, Any], key: bytes) -> Trust:
    mac = entry.get(LAB_MAC_FIELD)
    if not isinstance(mac, str) or mac.count(":") != 2:
        return Trust.UNSIGNED
    algo, kid, _ = mac.split(":")
    if algo != "hmac-sha256":
        return Trust.UNSIGNED
    if kid != key_id(key):
        return Trust.OTHER_KEY
    expected = lab_mac(notebook_name, entry, key)
    return Trust.TRUSTED if hmac.compare_digest(expected, mac) else Trust.TAMPERED
