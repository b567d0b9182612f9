"""The checkpoint store as Snakemake storage: ``ckpt://path`` names job outputs by content.

``storage.ckpt("ckpt://results/model.bin")`` in a Snakefile, or every output at once with
``--default-storage-provider ckpt --default-storage-prefix ckpt:// --storage-ckpt-root DIR``.
The bytes go to the store's content-addressed ``objects/`` (shared with the sticky executor's
``--sticky-checkpoints`` and deduplicated across names); each query is a small name record
under ``names/`` pointing at them. Writes are atomic, reads are re-hashed, and concurrent
writers of the same query leave one complete record. See :mod:`ckptstore`.

Snakemake imports this module on every command (it finds ``snakemake_storage_plugin_*`` by
name), so it stays small and imports nothing heavy. The settings dataclass uses
``typing.Optional``: Snakemake cannot parse ``X | None`` in it.
"""

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

from snakemake_interface_common.exceptions import WorkflowError
from snakemake_interface_storage_plugins.io import (
    IOCacheStorageInterface,
    Mtime,
    get_constant_prefix,
)
from snakemake_interface_storage_plugins.settings import StorageProviderSettingsBase
from snakemake_interface_storage_plugins.storage_object import (
    StorageObjectGlob,
    StorageObjectRead,
    StorageObjectTouch,
    StorageObjectWrite,
)
from snakemake_interface_storage_plugins.storage_provider import (
    ExampleQuery,
    Operation,
    QueryType,
    StorageProviderBase,
    StorageQueryValidationResult,
)

from ckptstore import CheckpointStore, NameRecord, StoreError

from ._place import place
from ._query import SCHEME, invalid_reason, name_of

__all__ = ["StorageObject", "StorageProvider", "StorageProviderSettings"]


@dataclass
class StorageProviderSettings(StorageProviderSettingsBase):
    root: Optional[Path] = field(
        default=None,
        metadata={
            "help": "The checkpoint store directory (created if new and empty): a local "
            "path, or any path on a shared file system that every job can reach. The same "
            "directory can serve --sticky-checkpoints.",
            "env_var": True,
            "required": True,
            "type": Path,
        },
    )


class StorageProvider(StorageProviderBase):
    """One checkpoint store, opened once per workflow (and per tagged ``storage`` directive)."""

    def __post_init__(self) -> None:
        root = getattr(self.settings, "root", None)
        if root is None:
            raise WorkflowError(
                "the ckpt storage needs a store directory: pass --storage-ckpt-root DIR or "
                "set SNAKEMAKE_STORAGE_CKPT_ROOT"
            )
        root = Path(os.path.expandvars(os.path.expanduser(str(root)))).absolute()
        try:
            self.store = CheckpointStore(root)
        except (StoreError, OSError) as e:
            raise WorkflowError(
                f"cannot use {root} as the ckpt store: {e}. Point --storage-ckpt-root at a "
                "checkpoint store, or at a new or empty directory to create one."
            ) from None

    @classmethod
    def example_queries(cls) -> list[ExampleQuery]:
        return [
            ExampleQuery(
                query="ckpt://results/model.bin",
                type=QueryType.ANY,
                description="A file (or directory() output) kept in the checkpoint store "
                "under the name results/model.bin.",
            )
        ]

    def rate_limiter_key(self, query: str, operation: Operation) -> Any:
        return None  # a file system: no rate limit (see use_rate_limiter)

    def default_max_requests_per_second(self) -> float:
        return 1000.0

    def use_rate_limiter(self) -> bool:
        return False

    @classmethod
    def is_valid_query(cls, query: str) -> StorageQueryValidationResult:
        reason = invalid_reason(query)
        return StorageQueryValidationResult(query=query, valid=reason is None, reason=reason)


class StorageObject(StorageObjectRead, StorageObjectWrite, StorageObjectGlob, StorageObjectTouch):
    """A ``ckpt://`` query: a name in the store, bound to content by a name record."""

    provider: StorageProvider

    @property
    def _name(self) -> str:
        # Snakemake validates queries before using an object; this guard keeps an invalid one
        # (``ckpt:///etc/x``) from ever meaning a path outside the local prefix or the store.
        reason = invalid_reason(self.query)
        if reason is not None:
            raise WorkflowError(f"{self.query} is not a valid ckpt query: {reason}")
        return name_of(self.query)

    @property
    def _store(self) -> CheckpointStore:
        return self.provider.store

    def _record(self) -> Optional[NameRecord]:
        """The name's record if it exists and all its content is present, else None.

        A record whose object was set aside as corrupt counts as absent, so Snakemake reruns
        the job that produces it instead of failing on every later retrieve.
        """
        record = self._resolve()
        if record is None or not all(self._store.has(d) for d in record.digests()):
            return None
        return record

    def _resolve(self) -> Optional[NameRecord]:
        """The name's record; a malformed one is set aside (the name counts as absent, so the
        job making it reruns) and said in one warning line."""
        record = self._store.resolve_name(self._name)
        while self._store.problems:
            self.provider.logger.warning(f"ckpt storage: {self._store.problems.pop(0)}")
        return record

    def _required_record(self) -> NameRecord:
        record = self._resolve()
        if record is None:
            raise WorkflowError(f"{self.query} is not in the ckpt store {self._store.root}")
        missing = sorted(d for d in record.digests() if not self._store.has(d))
        if missing:
            raise WorkflowError(
                f"{self.query}: its stored object {missing[0]} is missing from "
                f"{self._store.root / 'objects'} (set aside as corrupt, or deleted by hand); "
                "the name counts as absent, so rerunning the workflow produces it again"
            )
        return record

    # ---- read ---------------------------------------------------------------------------

    async def inventory(self, cache: IOCacheStorageInterface) -> None:
        """One record read gives existence, store time, size and (for a file) the checksum."""
        key = self.cache_key()
        if key in cache.exists_in_storage:
            return
        record = self._record()
        cache.exists_in_storage[key] = record is not None
        if record is not None:
            cache.mtime[key] = Mtime(storage=record.stored)
            cache.size[key] = 0 if record.is_tree else record.size

    def get_inventory_parent(self) -> Optional[str]:
        parent = os.path.dirname(self._name)
        return f"{SCHEME}{parent}" if parent else None

    def local_suffix(self) -> str:
        return self._name

    def cleanup(self) -> None:
        """Nothing to clean: the store keeps no local state beyond the retrieved copy."""

    def exists(self) -> bool:
        return self._record() is not None

    def mtime(self) -> float:
        """When the content was stored (not when it was last retrieved): the same everywhere."""
        return self._required_record().stored

    def size(self) -> int:
        record = self._required_record()
        return 0 if record.is_tree else record.size

    def local_footprint(self) -> int:
        return self._required_record().size

    def checksum(self) -> Optional[str]:
        """The object digest of a file (free: it names the object); None for a directory."""
        record = self._required_record()
        return None if record.is_tree else record.entry["file"]

    def retrieve_object(self) -> None:
        place(self._store, self._required_record(), self.local_path(), self.query)

    # ---- write --------------------------------------------------------------------------

    def store_object(self) -> None:
        local = self.local_path()
        if not local.exists():
            raise WorkflowError(f"cannot store {self.query}: {local} does not exist")
        try:
            self._store.bind_name(self._name, local)
        except StoreError as e:
            raise WorkflowError(f"cannot store {self.query}: {e}") from None

    def remove(self) -> None:
        """Drop the name; its objects stay until ``python -m ckptstore gc`` finds them unused."""
        self._store.unbind_name(self._name)

    def touch(self) -> None:
        if self._store.touch_name(self._name) is None:
            raise WorkflowError(f"cannot touch {self.query}: it is not in the ckpt store")

    # ---- glob_wildcards -----------------------------------------------------------------

    def list_candidate_matches(self) -> Iterable[str]:
        prefix = name_of(get_constant_prefix(self.query))
        return sorted(f"{SCHEME}{record.name}" for record in self._store.names(prefix))
