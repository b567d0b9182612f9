"""A content-addressed checkpoint store on a file system (local or shared).

Layout under the store's root::

    FORMAT                      "ckptstore 1"
    objects/ab/cdef...          file contents, named by their sha256, read-only
    keys/ab/<key>.json          what a job with provenance key <key> produced: outputs -> digests
    runs/<run id>.json          the keys each run used (for garbage collection)
    active/<run id>.json        runs in progress: their objects are never collected
    index/<sha256>.json         each job's last keys (to explain its reruns)
    corrupt/                    records and objects set aside as damaged, kept for inspection
    names/ab/<sha256>.json      a stable name (a ``ckpt://`` storage query) -> its content
    pins/ab/<sha256>.json       objects another tool's live records use (a notebook's
                                checkpoints, :meth:`CheckpointStore.pin`): never collected
    tmp/                        half-written files; renamed into place only when complete

Every write goes to ``tmp/`` first and is renamed into place, so a reader never sees half an
object or half a manifest, and two runs writing the same key or object at once only ever
replace a complete file by an identical one. Every read re-hashes what it copies: a truncated
or tampered object is reported (:class:`CorruptObjectError`, naming the object), moved aside,
and never restored. Every record read is parsed strictly (:mod:`ckptstore._records`): a
malformed one is moved to ``corrupt/`` with a one-line note in :attr:`CheckpointStore.problems`
and counts as absent, so its job runs instead of the whole run failing.

Trust: whoever can write the store decides what a restore writes into the declared outputs of
a job. Names are always checked (a manifest can only name the job's own declared outputs,
logs and benchmarks, as safe relative paths; see :func:`ckptstore._records.refusal`); with a
``signing_key``, manifests are also signed on write and restored only when their signature
checks, for stores that writers without the key can reach.
"""

import errno
import hashlib
import json
import os
import secrets
import shutil
import socket
import stat
import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from . import _materialise
from ._records import (
    MalformedRecordError,
    ManifestRecord,
    check_entry,
    manifest_body,
    parse_index,
    parse_manifest,
    refusal,
    sign,
    untrusted_reason,
)

FORMAT = "ckptstore 1"
CHUNK = 1 << 20
ACTIVE_STALE_SECONDS = 24 * 3600.0
"""An active-run marker older than this whose process is gone counts as abandoned."""


class StoreError(Exception):
    """The store cannot be used (missing, unreadable, not a store)."""


class RefusedRecordError(StoreError):
    """A well-formed record this reader will not restore from (names a path the job does not
    declare, or is not signed with the reader's key); the job runs instead."""


class ReadOnlyStoreError(StoreError):
    """A write was asked of a store opened read-only (a read-only mount)."""


class CorruptObjectError(StoreError):
    """An object's content no longer matches its name (truncated or tampered)."""

    def __init__(self, digest: str, path: Path) -> None:
        self.digest, self.path = digest, path
        super().__init__(
            f"checkpoint object {digest} ({path}) does not match its hash: "
            "it was truncated or altered; it was set aside and will not be restored"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.digest, self.path))


@dataclass(frozen=True)
class Manifest:
    """What one job produced: output path (relative to the working directory) -> entry.

    An entry is ``{"file": digest, "mode": bits}`` for a file, ``{"link": target}`` for a
    symbolic link, or ``{"tree": {relpath: digest}, ...}`` for a ``directory()`` output (its
    kinds: :mod:`ckptstore._materialise`)."""

    key: str
    outputs: dict[str, dict[str, Any]]
    meta: dict[str, Any] = field(default_factory=dict)

    def digests(self) -> set[str]:
        found: set[str] = set()
        for entry in self.outputs.values():
            found |= _materialise.entry_digests(entry)
        return found


@dataclass
class GcReport:
    kept_runs: int
    deleted_objects: int
    deleted_keys: int
    freed_bytes: int
    protected_by_active_runs: int
    problems: list[str] = field(default_factory=list)


def file_digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(CHUNK):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


LAYOUT = ("objects", "keys", "runs", "active", "tmp")
"""The directories of a store; FORMAT is written after them, so a store is complete once
FORMAT exists."""


class CheckpointStore:
    """A checkpoint store rooted at a directory (created on first use if ``create``).

    Every write is atomic (a rename), but not synced to disk unless ``fsync``: a machine crash
    can then leave an empty or partial file behind a complete name. That costs nothing but
    the checkpoint: every read re-hashes objects and parses records, and treats a damaged one
    as absent (its job reruns). ``fsync=True`` buys durability for about one disk flush per
    file (milliseconds on network file systems), which the executor does not pay per job.

    A store this process cannot write (a read-only mount) opens with :attr:`read_only` set:
    restoring works, every write raises :class:`ReadOnlyStoreError`, and runs leave no trace.
    ``signing_key`` (see :mod:`ckptstore._records`) signs every manifest written and makes
    :meth:`lookup` refuse manifests whose signature does not check."""

    def __init__(
        self,
        root: "str | os.PathLike[str]",
        create: bool = True,
        fsync: bool = False,
        signing_key: Optional[bytes] = None,
    ) -> None:
        self.root = Path(root).expanduser()
        self.fsync = fsync
        self.signing_key = signing_key
        self._stale_stages = _materialise.StaleStages()  # one listing per output folder
        self.problems: list[str] = []
        """One line per record set aside as malformed since the store was opened (callers
        report and clear them)."""
        marker = self.root / "FORMAT"
        if self.root.exists() and not self.root.is_dir():
            raise StoreError(
                f"{self.root} is a file, not a checkpoint store directory; point at a store, "
                "or at a new or empty directory to create one"
            )
        try:
            if not marker.exists():
                if not create:
                    if not self.root.exists():
                        raise StoreError(
                            f"{self.root} does not exist; name an existing checkpoint store"
                        )
                    raise StoreError(f"{self.root} is not a checkpoint store (no FORMAT file)")
                # A directory holding only the store's own layout (and FORMAT, written since
                # the check above) is a store another process is creating right now, or an
                # interrupted creation: finish it, do not refuse it.
                own = {*LAYOUT, marker.name}
                foreign = sorted(
                    p.name
                    for p in (self.root.iterdir() if self.root.exists() else ())
                    if p.name not in own
                )
                if foreign:
                    raise StoreError(
                        f"{self.root} is not empty (it holds {foreign[0]!r}) and not a "
                        "checkpoint store; choose an empty or new directory"
                    )
                for sub in LAYOUT:
                    (self.root / sub).mkdir(parents=True, exist_ok=True)
                if not marker.exists():
                    self._write_atomically(marker, FORMAT.encode(), durable=True)
            found = marker.read_text().strip()
        except PermissionError as e:
            raise StoreError(f"checkpoint store {self.root} is not accessible: {e}") from None
        except OSError as e:
            raise StoreError(f"cannot open the checkpoint store {self.root}: {e}") from None
        except UnicodeDecodeError:
            found = "<binary data>"
        if found != FORMAT:
            raise StoreError(
                f"{self.root} is not a checkpoint store this version reads (its FORMAT holds "
                f"{found[:40]!r}, expected {FORMAT!r})"
            )
        self.read_only = not _writable(self.root / "tmp")

    # ---- objects --------------------------------------------------------------------------

    def object_path(self, digest: str) -> Path:
        algo, _, hexdigest = digest.partition(":")
        if algo != "sha256" or len(hexdigest) != 64:
            raise ValueError(f"not a sha256 digest: {digest!r}")
        return self.root / "objects" / hexdigest[:2] / hexdigest[2:]

    def has(self, digest: str) -> bool:
        try:
            return self.object_path(digest).is_file()
        except ValueError:
            return False

    def put_file(self, path: "str | os.PathLike[str]") -> str:
        """Store a file's content (once, whatever the number of writers); return its digest."""
        self._check_writable()
        tmp = self._tmp_path()
        h = hashlib.sha256()
        try:
            with open(path, "rb") as src, open(tmp, "wb") as dst:
                while chunk := src.read(CHUNK):
                    h.update(chunk)
                    dst.write(chunk)
                if self.fsync:
                    dst.flush()
                    os.fsync(dst.fileno())
            digest = "sha256:" + h.hexdigest()
            target = self.object_path(digest)
            if target.is_file():
                # Content-addressed: an identical object is already there. Refresh its time,
                # so garbage collection counts it as used by this (possibly active) run.
                os.utime(target)
                return digest
            target.parent.mkdir(parents=True, exist_ok=True)
            os.chmod(tmp, stat.S_IRUSR | stat.S_IRGRP | stat.S_IROTH)
            os.replace(tmp, target)
            return digest
        finally:
            tmp.unlink(missing_ok=True)

    def staging_dir(self) -> Path:
        """A new, empty folder inside the store (on its file system, so files can be hard-
        linked into it and stored from it later); the caller removes it. What a killed caller
        leaves there, :meth:`gc` removes after a day."""
        self._check_writable()
        folder = self._tmp_path()
        folder.mkdir()
        return folder

    def put_bytes(self, data: bytes) -> str:
        """Store bytes (once, whatever the number of writers); return their digest."""
        self._check_writable()
        tmp = self._tmp_path()
        try:
            with open(tmp, "wb") as f:
                f.write(data)
            return self.put_file(tmp)
        finally:
            tmp.unlink(missing_ok=True)

    # ---- pins: the live records of other tools (NBRewind's notebook checkpoints) ----------

    def pin(self, owner: str, digests: Iterable[str]) -> None:
        """Keep ``digests`` for ``owner`` (e.g. a notebook's path): :meth:`gc` never deletes
        a pinned object. A new pin of the same owner replaces its old one, so the objects
        only the old one held become garbage."""
        self._check_writable()
        found = sorted({d for d in digests if _is_digest(d)})
        body = {"owner": owner, "digests": found, "time": time.time()}
        self._write_atomically(self._pin_path(owner), json.dumps(body, indent=1).encode())

    def unpin(self, owner: str) -> bool:
        """Drop ``owner``'s pin; False if it had none."""
        path = self._pin_path(owner)
        existed = path.is_file()
        path.unlink(missing_ok=True)
        return existed

    def pins(self) -> Iterator[tuple[str, set[str]]]:
        """Every pin: (owner, digests). A malformed one is set aside (noted in
        :attr:`problems`) and raises :class:`StoreError`: what it protected is unknown."""
        for path in sorted(self.root.glob("pins/*/*.json")):
            try:
                body = json.loads(path.read_text())
                owner, digests = body["owner"], body["digests"]
                if not isinstance(owner, str) or not isinstance(digests, list):
                    raise TypeError("owner or digests")
                if not all(isinstance(d, str) and _is_digest(d) for d in digests):
                    raise TypeError("digests")
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError) as e:
                self._set_aside(path, f"pin {path.name} is malformed ({e!r})")
                raise StoreError(
                    f"pin {path.name} is malformed; what it kept is unknown, so nothing is "
                    "deleted this time (it was moved to corrupt/; pin its owner again)"
                ) from None
            yield owner, set(digests)

    def _pin_path(self, owner: str) -> Path:
        name = hashlib.sha256(owner.encode()).hexdigest()
        return self.root / "pins" / name[:2] / f"{name}.json"

    def copy_out(self, digest: str, dest: Path) -> None:
        """Copy an object to ``dest`` (a temporary name), checking its hash on the way."""
        source = self.object_path(digest)
        h = hashlib.sha256()
        with open(source, "rb") as src, open(dest, "wb") as dst:
            while chunk := src.read(CHUNK):
                h.update(chunk)
                dst.write(chunk)
        if "sha256:" + h.hexdigest() != digest:
            dest.unlink(missing_ok=True)
            self._quarantine(source)
            raise CorruptObjectError(digest, source)

    # ---- job manifests --------------------------------------------------------------------

    def record(
        self,
        key: str,
        outputs: dict[str, "str | os.PathLike[str]"],
        workdir: "str | os.PathLike[str]" = ".",
        meta: Optional[dict[str, Any]] = None,
    ) -> Manifest:
        """Store a finished job's outputs under its provenance key (signed with the store's
        ``signing_key``, if any)."""
        self._check_writable()
        workdir = Path(workdir)
        entries: dict[str, dict[str, Any]] = {}
        for name, path in outputs.items():
            entries[str(name)] = _materialise.snapshot(workdir / path, self.put_file)
        record = ManifestRecord(key, entries, dict(meta or {}))
        if self.signing_key is not None:
            record = ManifestRecord(key, entries, record.meta, sign(record, self.signing_key))
        body = json.dumps(manifest_body(record), indent=1)
        self._write_atomically(self._key_path(key), body.encode())
        return Manifest(key, entries, record.meta)

    def lookup(self, key: str) -> Optional[Manifest]:
        """The manifest stored under ``key``, or None (absent, or malformed: then it is set
        aside and noted in :attr:`problems`).

        Raises :class:`RefusedRecordError` if the store has a ``signing_key`` and the
        manifest's signature does not check."""
        record = self._read_manifest(key)
        if record is None:
            return None
        if self.signing_key is not None:
            reason = untrusted_reason(record, self.signing_key)
            if reason is not None:
                raise RefusedRecordError(
                    f"checkpoint {key[:12]} is refused: {reason} (this run requires manifests "
                    "signed with its key)"
                )
        return Manifest(record.key, record.outputs, record.meta)

    def lookup_unverified(self, key: str) -> Optional[Manifest]:
        """The manifest under ``key`` without its signature checked: for explaining and
        collecting, never for restoring."""
        record = self._read_manifest(key)
        return None if record is None else Manifest(record.key, record.outputs, record.meta)

    def _read_manifest(self, key: str) -> Optional[ManifestRecord]:
        path = self._key_path(key)
        try:
            text = path.read_bytes()
        except FileNotFoundError:
            return None
        except OSError as e:
            self.problems.append(f"checkpoint record {path} is unreadable ({e}); its job runs")
            return None
        try:
            return parse_manifest(text, key)
        except MalformedRecordError as e:
            self._set_aside(path, f"checkpoint record {path.name} is malformed ({e})")
            return None

    def restore(
        self,
        key: str,
        workdir: "str | os.PathLike[str]" = ".",
        allowed: Optional[set[str]] = None,
        required: "set[str] | frozenset[str]" = frozenset(),
    ) -> Optional[Manifest]:
        """Put a key's outputs back into ``workdir``, all or nothing, each as the kind it was
        (file with its mode, directory with its empty subdirectories, links and modes,
        symbolic link; see :mod:`ckptstore._materialise`).

        ``allowed`` are the names the manifest may hold (the job's declared outputs, logs and
        benchmarks, relative to ``workdir``) and ``required`` those it must hold (the declared
        outputs). Any other name is refused (:class:`RefusedRecordError`) before anything is
        placed; names are always checked to be safe relative paths, also with ``allowed``
        None (the store's own tests and tools).

        Returns None if the key is unknown, malformed or an object is missing. Raises
        :class:`CorruptObjectError` if an object fails its hash check; nothing is placed then.
        No staging leftover remains, whatever happens.
        """
        manifest = self.lookup(key)
        if manifest is None:
            return None
        reason = refusal(
            manifest.outputs, manifest.outputs if allowed is None else allowed, required
        )
        if reason is not None:
            raise RefusedRecordError(f"checkpoint {key[:12]} is refused: {reason}")
        self._mark_used(key, manifest)
        if not all(self.has(d) for d in manifest.digests()):
            return None
        try:
            self._place(manifest, Path(workdir))
        except FileNotFoundError:
            if all(self.has(d) for d in manifest.digests()):
                raise  # the working directory's side: let its own error speak
            return None  # an object went away meanwhile (removed by hand)
        return manifest

    def _mark_used(self, key: str, manifest: Manifest) -> None:
        """Refresh the times of a key and its objects: a concurrent :meth:`gc` then counts
        them as used by this (active) run and keeps them. A read-only store cannot be
        touched; its writers' gc must then know its readers (see the README)."""
        if self.read_only:
            return
        for path in [
            self._key_path(key),
            *(self.object_path(d) for d in sorted(manifest.digests())),
        ]:
            try:
                os.utime(path)
            except OSError:
                pass  # gone: the has() check that follows sees it

    def _place(self, manifest: Manifest, workdir: Path) -> None:
        """Materialise a validated manifest's outputs under ``workdir`` (names already
        checked by :meth:`restore`): each is staged beside its target, and all are renamed
        into place only when every one is staged; no stage is left behind, whatever happens."""
        staged: list[tuple[Path, Path]] = []
        try:
            for name, entry in manifest.outputs.items():
                target = workdir / name
                target.parent.mkdir(parents=True, exist_ok=True)
                self._stale_stages.clear(target)
                staged.append((_materialise.stage_path(target), target))
                _materialise.build(entry, staged[-1][0], self.copy_out)
            _materialise.place(staged)  # every object checked: now place them
        finally:
            for stage, _ in staged:
                _materialise.remove(stage)

    # ---- what a job was last checkpointed as (to explain reruns) ------------------------------

    HISTORY = 10
    """How many past keys of a job are remembered, to explain its reruns."""

    def remember(self, identity: str, key: str) -> None:
        """Note that the job known as ``identity`` (e.g. rule and outputs) now has ``key``.

        The previous keys are kept too (newest first), so a rerun can be explained later."""
        self._check_writable()
        keys = [key, *(k for k in self.history(identity) if k != key)][: self.HISTORY]
        self._write_atomically(
            self._index_path(identity),
            json.dumps({"identity": identity, "key": key, "history": keys}).encode(),
        )

    def recall(self, identity: str) -> Optional[str]:
        """The key the job known as ``identity`` had when it was last stored."""
        keys = self.history(identity)
        return keys[0] if keys else None

    def history(self, identity: str) -> list[str]:
        """The keys the job known as ``identity`` had, newest first."""
        found = self._read_index(self._index_path(identity))
        return found[1] if found is not None and found[0] == identity else []

    def identities(self) -> Iterator[tuple[str, list[str]]]:
        """Every remembered job: (identity, keys newest first); malformed entries are set
        aside (noted in :attr:`problems`)."""
        for path in sorted(self.root.glob("index/*.json")):
            found = self._read_index(path)
            if found is not None:
                yield found

    def _read_index(self, path: Path) -> Optional[tuple[str, list[str]]]:
        try:
            text = path.read_bytes()
        except OSError:
            return None
        try:
            return parse_index(text)
        except MalformedRecordError as e:
            self._set_aside(path, f"checkpoint index entry {path.name} is malformed ({e})")
            return None

    def _index_path(self, identity: str) -> Path:
        return self.root / "index" / f"{hashlib.sha256(identity.encode()).hexdigest()}.json"

    # ---- runs and garbage collection --------------------------------------------------------

    @contextmanager
    def run(self, run_id: Optional[str] = None) -> Iterator["RunRecord"]:
        """Mark a run active while it uses the store; record its keys when it ends.

        A run that used no key (restored, stored, or named with :meth:`RunRecord.rests_on`)
        leaves no record. A "Nothing to be done" rerun names the keys its up-to-date outputs
        rest on, so its record keeps them, as the run that stored them did. A read-only store
        records nothing at all."""
        run_id = run_id or f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
        record = RunRecord(self, run_id)
        if self.read_only:
            yield record
            return
        marker = self.root / "active" / f"{run_id}.json"
        record.marker, record.started = marker, time.time()
        record.publish(force=True)
        try:
            yield record
        finally:
            if record.keys:
                body = json.dumps(
                    {"id": run_id, "finished": time.time(), "keys": sorted(record.keys)},
                    indent=1,
                )
                # One per run, and what garbage collection trusts: always synced.
                self._write_atomically(
                    self.root / "runs" / f"{run_id}.json", body.encode(), durable=True
                )
            marker.unlink(missing_ok=True)

    def gc(self, keep_runs: int) -> GcReport:
        """Delete keys and objects not used by the latest ``keep_runs`` finished runs.

        Only runs that restored or stored something count. Never deletes anything an active
        run restored, is storing, or may still need (a key or object used since the oldest
        active run started, or written after the oldest kept run), nor the content of a bound
        name (see :meth:`bind_name`): names are deleted only by :meth:`unbind_name`, and their
        objects become garbage then. Malformed records are set aside, never deleted, and
        listed in the report's ``problems``.
        """
        if isinstance(keep_runs, bool) or not isinstance(keep_runs, int) or keep_runs < 1:
            raise ValueError(
                f"keep_runs must be a whole number of at least 1, got {keep_runs!r} (gc keeps "
                "the keys of the latest N runs that restored or stored something)"
            )
        self._check_writable()
        started = time.time()
        all_runs = self._finished_runs()
        runs = sorted((r for r in all_runs if r["keys"]), key=lambda r: r["finished"])
        kept = runs[-keep_runs:]
        keep_keys: set[str] = set()
        for run in kept:
            keep_keys.update(run["keys"])
        active = self._active_runs()
        for run in active:  # what running workflows restored (published in their markers)
            keep_keys.update(run["keys"])
        cutoff = min((r["finished"] for r in kept), default=0.0)
        cutoff = min([cutoff, *(a["started"] for a in active)])
        # With no finished run to measure "recent" by (a store used only through its names),
        # objects nothing refers to are garbage unless an active writer may still bind them.
        object_cutoff = cutoff if kept else min([started, *(a["started"] for a in active)])
        deleted_keys = 0
        live_digests: set[str] = set()
        for record in self.names():  # a bound name keeps its content, whatever the runs
            live_digests |= record.digests()
        try:
            for _, pinned in self.pins():  # another tool's live records (notebooks)
                live_digests |= pinned
            pins_known = True
        except StoreError:
            pins_known = False  # a damaged pin: delete no object this time
        for key_file in self.root.glob("keys/*/*.json"):
            key = key_file.stem
            if not _is_key(key):
                self._set_aside(key_file, f"{key_file} is not a checkpoint record name")
                continue
            manifest = self.lookup_unverified(key)
            try:
                young = key_file.stat().st_mtime >= cutoff
            except FileNotFoundError:
                continue
            if key in keep_keys or young or manifest is None:
                if manifest is not None:
                    live_digests |= manifest.digests()
                continue
            key_file.unlink(missing_ok=True)
            deleted_keys += 1
        deleted, freed, protected = 0, 0, 0
        for obj in self.root.glob("objects/*/*"):
            digest = "sha256:" + obj.parent.name + obj.name
            if digest in live_digests or not pins_known:
                continue
            try:
                st = obj.stat()
            except FileNotFoundError:
                continue
            if st.st_mtime >= object_cutoff:
                protected += 1  # written or used while a kept or active run was going: keep
                continue
            freed += st.st_size
            obj.unlink(missing_ok=True)
            deleted += 1
        for old in runs[:-keep_runs]:
            old["path"].unlink(missing_ok=True)
        for empty in (r for r in all_runs if not r["keys"]):  # older versions wrote these
            empty["path"].unlink(missing_ok=True)
        # Half-written files and staged hard links of writers that died (a killed run):
        # nothing renames them into place any more.
        for leftover in self.root.glob("tmp/*"):
            if time.time() - leftover.lstat().st_mtime > ACTIVE_STALE_SECONDS:
                _remove(leftover)
        problems, self.problems = self.problems, []
        return GcReport(len(kept), deleted, deleted_keys, freed, protected, problems)

    # ---- internals ----------------------------------------------------------------------------

    def _finished_runs(self) -> list[dict[str, Any]]:
        """Readable run records, each with its ``path``; a malformed one is set aside (its
        keys then only count as recent by their own age, see :meth:`gc`)."""
        found = []
        for path in self.root.glob("runs/*.json"):
            try:
                run = json.loads(path.read_text())
                keys = run["keys"]
                if not isinstance(keys, list) or not all(
                    isinstance(k, str) and _is_key(k) for k in keys
                ):
                    raise TypeError("keys")
                found.append({**run, "path": path, "finished": float(run["finished"])})
            except FileNotFoundError:
                continue
            except (OSError, ValueError, KeyError, TypeError) as e:
                self._set_aside(path, f"run record {path.name} is malformed ({e!r})")
        return found

    def _active_runs(self) -> list[dict[str, Any]]:
        """Active-run markers that are not abandoned. A marker that cannot be parsed counts
        as active since its file's time (never less protection because of damage)."""
        found = []
        for marker in self.root.glob("active/*.json"):
            try:
                mtime = marker.stat().st_mtime
                info = json.loads(marker.read_text())
                if not isinstance(info, dict):
                    raise TypeError("not an object")
                pid, started = int(info.get("pid", 0)), float(info.get("started", mtime))
                host = info.get("host")
                keys = [k for k in info.get("keys", []) if isinstance(k, str) and _is_key(k)]
            except FileNotFoundError:
                continue  # the run just ended
            except (OSError, ValueError, TypeError, AttributeError):
                pid, started, host, keys = 0, mtime, None, []
            abandoned = (host == socket.gethostname() and not _pid_alive(pid)) or (
                time.time() - started > ACTIVE_STALE_SECONDS
            )
            if not abandoned:
                found.append({"pid": pid, "host": host, "started": started, "keys": keys})
        return found

    def _key_path(self, key: str) -> Path:
        if not _is_key(key):
            raise ValueError(f"a provenance key is lowercase hex, got {key!r}")
        return self.root / "keys" / key[:2] / f"{key}.json"

    def _tmp_path(self) -> Path:
        return self.root / "tmp" / f"{os.getpid()}-{secrets.token_hex(8)}"

    def _write_atomically(self, path: Path, data: bytes, durable: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = (self.root / "tmp") if (self.root / "tmp").is_dir() else path.parent
        tmp_file = tmp / f"{os.getpid()}-{secrets.token_hex(8)}"
        try:
            with open(tmp_file, "wb") as f:
                f.write(data)
                if self.fsync or durable:
                    f.flush()
                    os.fsync(f.fileno())
            os.replace(tmp_file, path)
        finally:
            tmp_file.unlink(missing_ok=True)

    def _quarantine(self, path: Path) -> bool:
        """Move a bad file aside (kept for inspection), so it is never read again; False if
        it cannot be moved (a read-only store: it is then skipped at every read)."""
        bad = self.root / "corrupt"
        try:
            bad.mkdir(exist_ok=True)
            os.replace(path, bad / f"{path.parent.name}{path.name}-{secrets.token_hex(3)}")
        except OSError:
            return False
        return True

    def _set_aside(self, path: Path, what: str) -> None:
        """Quarantine a malformed record and note it, in one line, in :attr:`problems`."""
        moved = self._quarantine(path)
        where = f"set aside in {self.root / 'corrupt'}" if moved else "skipped (read-only store)"
        self.problems.append(f"{what}: {where}; its job runs")

    def _check_writable(self) -> None:
        if self.read_only:
            raise ReadOnlyStoreError(f"the checkpoint store {self.root} is read-only")

    # ---- names: stable paths bound to content (the `ckpt` Snakemake storage plugin) ---------

    def bind_name(self, name: str, path: "str | os.PathLike[str]") -> "NameRecord":
        """Store a file's (or a directory's) content and bind ``name`` to it.

        The content goes to ``objects/`` first (deduplicated with every other name and key);
        only then is the small name record renamed into place, so a reader of ``name`` sees
        the old binding or the new one, never a record whose objects are not all there. Two
        writers binding the same name at once each leave a complete record; the last one
        wins. While binding, the writer is marked active, so a concurrent :meth:`gc` never
        deletes an object in the window between its write and the record that refers to it.
        """
        full = Path(path)
        self._check_writable()
        with self._writing():
            if full.is_dir():
                files = sorted(p for p in full.rglob("*") if p.is_file())
                entry: dict[str, Any] = {
                    "tree": {str(p.relative_to(full)): self.put_file(p) for p in files}
                }
                size = sum(p.stat().st_size for p in files)
            elif full.is_file():
                entry = {"file": self.put_file(full)}
                size = full.stat().st_size
            else:
                raise FileNotFoundError(f"cannot store {full} as {name!r}: no such file")
            record = NameRecord(name, entry, size, time.time())
            self._write_atomically(self._name_path(name), record.to_json().encode())
        return record

    def resolve_name(self, name: str) -> Optional["NameRecord"]:
        """The record ``name`` is bound to, or None (unbound, or its record is unreadable).

        An unreadable record is set aside like a damaged manifest: the name then counts as
        absent, so whatever produces it runs again instead of reading garbage.
        """
        path = self._name_path(name)
        try:
            record = NameRecord.from_json(path.read_text())
        except FileNotFoundError:
            return None
        except (ValueError, KeyError, TypeError, UnicodeDecodeError) as e:
            self._set_aside(path, f"name record {path.name} of {name!r} is malformed ({e})")
            return None
        return record if record.name == name else None

    def unbind_name(self, name: str) -> bool:
        """Drop ``name``; its objects stay until :meth:`gc` finds nothing else uses them."""
        try:
            self._name_path(name).unlink()
        except FileNotFoundError:
            return False
        return True

    def touch_name(self, name: str) -> Optional["NameRecord"]:
        """Give ``name`` a new store time (same content); None if it is not bound."""
        record = self.resolve_name(name)
        if record is None:
            return None
        record = NameRecord(record.name, record.entry, record.size, time.time())
        self._write_atomically(self._name_path(name), record.to_json().encode())
        return record

    def names(self, prefix: str = "") -> Iterator["NameRecord"]:
        """Every bound name starting with ``prefix`` (a scan of all records: O(names))."""
        for path in self.root.glob("names/*/*.json"):
            try:
                record = NameRecord.from_json(path.read_text())
            except FileNotFoundError:
                continue  # unbound while scanning
            except (ValueError, KeyError, TypeError, UnicodeDecodeError):
                continue  # resolve_name sets it aside when someone asks for it
            if record.name.startswith(prefix):
                yield record

    def _name_path(self, name: str) -> Path:
        if not name:
            raise ValueError("a name must not be empty")
        hexdigest = hashlib.sha256(name.encode()).hexdigest()
        return self.root / "names" / hexdigest[:2] / f"{hexdigest}.json"

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """Mark a short write active (see :meth:`gc`) without recording a run for it.

        The marker only has to be visible while the write lasts, not to survive a crash (a
        dead writer's marker is ignored anyway), so it is renamed into place without fsync.
        """
        marker = self.root / "active" / f"write-{os.getpid()}-{secrets.token_hex(6)}.json"
        staged = self._tmp_path()
        staged.write_text(
            json.dumps({"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()})
        )
        marker.parent.mkdir(exist_ok=True)
        os.replace(staged, marker)
        try:
            yield
        finally:
            marker.unlink(missing_ok=True)


@dataclass
class RunRecord:
    """The keys one run restored or recorded (what garbage collection must keep)."""

    store: CheckpointStore
    run_id: str
    keys: set[str] = field(default_factory=set)
    marker: Optional[Path] = None
    started: float = 0.0
    _published: int = -1

    def publish(self, force: bool = False) -> None:
        """Write the keys used so far into the run's active marker, so a concurrent
        :meth:`CheckpointStore.gc` keeps them even where this run could not refresh their
        times (another user's objects). Cheap: only when keys were added since."""
        if self.marker is None or (not force and len(self.keys) == self._published):
            return
        body = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": self.started,
            "keys": sorted(self.keys),
        }
        self.store._write_atomically(self.marker, json.dumps(body).encode())
        self._published = len(self.keys)

    def rests_on(self, keys: Iterable[str]) -> None:
        """Keys the site's current outputs rest on (jobs up to date in this run, restored or
        stored by earlier ones): kept by :meth:`CheckpointStore.gc` as if this run had used
        them, so a "Nothing to be done" run keeps what its outputs came from."""
        self.keys.update(k for k in keys if _is_key(k))

    def lookup(self, key: str) -> Optional[Manifest]:
        """A lookup alone does not count as using the key (only restoring or storing it)."""
        return self.store.lookup(key)

    def restore(
        self,
        key: str,
        workdir: "str | os.PathLike[str]" = ".",
        allowed: Optional[set[str]] = None,
        required: "set[str] | frozenset[str]" = frozenset(),
    ) -> Optional[Manifest]:
        manifest = self.store.restore(key, workdir, allowed, required)
        if manifest is not None:
            self.keys.add(key)
        return manifest

    def record(
        self,
        key: str,
        outputs: dict[str, "str | os.PathLike[str]"],
        workdir: "str | os.PathLike[str]" = ".",
        meta: Optional[dict[str, Any]] = None,
    ) -> Manifest:
        self.keys.add(key)
        return self.store.record(key, outputs, workdir, meta)


def _is_digest(digest: str) -> bool:
    algo, _, hexdigest = digest.partition(":")
    return (
        algo == "sha256"
        and len(hexdigest) == 64
        and all(c in "0123456789abcdef" for c in hexdigest)
    )


def _is_key(key: str) -> bool:
    return bool(key) and len(key) <= 128 and all(c in "0123456789abcdef" for c in key)


def _writable(folder: Path) -> bool:
    """Whether this process can create files in ``folder`` (False on a read-only mount or
    without write permission)."""
    probe = folder / f".probe-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        fd = os.open(probe, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except OSError as e:
        if e.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return False
        raise StoreError(f"cannot write to the checkpoint store {folder.parent}: {e}") from None
    os.close(fd)
    os.unlink(probe)
    return True


def _pid_alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@dataclass(frozen=True)
class NameRecord:
    """What a name is bound to: ``{"file": digest}`` or ``{"tree": {relpath: digest}}``.

    ``size`` is the content's total size in bytes; ``stored`` is when it was bound (seconds
    since the epoch): the name's modification time, the same at every site that reads it."""

    name: str
    entry: dict[str, Any]
    size: int
    stored: float

    @property
    def is_tree(self) -> bool:
        return "tree" in self.entry

    def digests(self) -> set[str]:
        return set(self.entry["tree"].values()) if self.is_tree else {self.entry["file"]}

    def to_json(self) -> str:
        return json.dumps(
            {"name": self.name, "entry": self.entry, "size": self.size, "stored": self.stored},
            indent=1,
        )

    @classmethod
    def from_json(cls, text: str) -> "NameRecord":
        data = json.loads(text)
        if not isinstance(data, dict):
            raise MalformedRecordError("not a JSON object")
        entry = check_entry(data["entry"], "entry")
        if "link" in entry:  # names are bound to stored content only (see put_name)
            raise MalformedRecordError("entry: a name is bound to a file or a directory")
        name, size, stored = data["name"], data["size"], data["stored"]
        if not isinstance(name, str) or not isinstance(size, int) or size < 0:
            raise MalformedRecordError("'name' or 'size' has the wrong type")
        return cls(name, entry, size, float(stored))
