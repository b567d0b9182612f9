"""The ``nbrewind`` papermill engine: it plans each cell, talks to the kernel, writes records.

Import it as ``nbrewind._engine.NBRewindEngine`` (see there for why).

Papermill's default engine (nbclient) sends no request metadata and drops the metadata the
kernel attaches to its replies, so a kernel alone cannot write cell metadata. This engine is
papermill's supported extension point (entry point ``papermill.engine: nbrewind``)::

    papermill in.ipynb out.ipynb -k nbrewind-audit --engine nbrewind -p alpha 0.5
    papermill out.ipynb again.ipynb -k nbrewind-repeat --engine nbrewind -p alpha 0.7

Under ``nbrewind-audit`` every cell runs and is recorded. Under ``nbrewind-repeat`` each cell is
restored or re-executed as :mod:`nbrewind._plan` decides; restored values are loaded into the
kernel lazily, only when a re-executed cell reads them, so a no-change repeat unpickles nothing.
"""

import copy
import logging
import os
from pathlib import Path
from typing import Any, Optional

from nbclient.exceptions import CellExecutionError
from nbclient.util import run_sync
from papermill.clientwrap import PapermillNotebookClient
from papermill.engines import NBClientEngine
from papermill.utils import merge_kwargs, remove_args

from ckptstore import StoreError, file_digest

from ._dataflow import CellAnalysis, analyse_cell, reads_closure, source_hash
from ._engine import NBRewindError, kernel_mode
from ._inputs import restore_missing
from ._notebook import code_cell_numbers, outputs_digest
from ._objects import (
    STORE_DIRNAME,
    BlobError,
    copy_into,
    get_blob,
    has_object,
    inline_max,
    pin_records,
    restore_file,
)
from ._observe import RNG_INITIAL, RNG_NAMES, is_rng, listing_digest, stat_signature
from ._plan import ANY_NAME, RESTORE, CellFacts, decide
from ._record import (
    FORMAT_VERSION,
    STATE_START,
    checkpoints,
    files_read,
    files_written,
    input_files,
    relative_inside,
    state_after,
)
from ._signing import Trust, key_id, load_key, sign, verify

log = logging.getLogger("nbrewind")
PARAMETER_TAGS = ("parameters", "injected-parameters")


class NBRewindEngine(NBClientEngine):
    """papermill engine ``nbrewind``."""

    @classmethod
    def execute_notebook(cls, nb: Any, kernel_name: Any, output_path: Any = None, **kwargs: Any):
        # Papermill clears outputs before the engine runs; restoring needs them.
        previous = [
            (copy.deepcopy(c.get("outputs", [])), c.get("execution_count")) for c in nb.cells
        ]
        return super().execute_notebook(
            nb,
            kernel_name,
            output_path=output_path,
            nbrewind_previous=previous,
            nbrewind_output=output_path,
            **kwargs,
        )

    @classmethod
    def execute_managed_notebook(
        cls,
        nb_man: Any,
        kernel_name: Any,
        log_output: bool = False,
        stdout_file: Any = None,
        stderr_file: Any = None,
        start_timeout: int = 60,
        execution_timeout: Any = None,
        nbrewind_previous: Any = None,
        nbrewind_output: Any = None,
        **kwargs: Any,
    ):
        mode = kernel_mode(kernel_name)
        input_path = kwargs.get("input_path")
        kwargs = remove_args(["input_path"], **kwargs)
        safe_kwargs = remove_args(["timeout", "startup_timeout"], **kwargs)
        final_kwargs = merge_kwargs(
            safe_kwargs,
            timeout=execution_timeout if execution_timeout else kwargs.get("timeout"),
            startup_timeout=start_timeout,
            kernel_name=kernel_name,
            log=log,
            log_output=log_output,
            stdout_file=stdout_file,
            stderr_file=stderr_file,
        )
        client = RewindClient(nb_man, **final_kwargs)
        client.setup_rewind(
            mode=mode,
            previous=nbrewind_previous or [],
            input_path=_local_path(input_path),
            output_path=_local_path(nbrewind_output),
        )
        return client.execute()


def _local_path(path: Any) -> Optional[Path]:
    if not path or not isinstance(path, str | os.PathLike) or "://" in str(path):
        return None
    path = Path(path)
    if not path.is_absolute():
        try:
            from papermill.iorw import papermill_io

            base = getattr(papermill_io.get_handler(str(path)), "_cwd", None)
        except Exception:  # noqa: BLE001 - best effort: fall back to the process cwd
            base = None
        path = Path(base or os.getcwd()) / path
    return path.resolve()


class RewindClient(PapermillNotebookClient):
    """nbclient's cell loop with restore-or-run decisions and record keeping."""

    def setup_rewind(
        self,
        mode: str,
        previous: list[tuple[list[Any], Any]],
        input_path: Optional[Path],
        output_path: Optional[Path],
    ) -> None:
        self.rewind_mode = mode
        self.previous = previous
        self.records: list[Optional[dict[str, Any]]] = [
            copy.deepcopy(dict(c.metadata.get("nbrewind") or {})) or None for c in self.nb.cells
        ]
        self.site_inputs = set(input_files(self.records))
        """The recorded run's input files: read before any of its cells wrote them."""
        self.key = load_key()
        self.pin_owner = str(output_path) if output_path is not None else None
        notebook_dir = (output_path or input_path or Path.cwd() / "nb").parent
        env_store = os.environ.get("NBREWIND_STORE")
        self.store_root = Path(env_store).resolve() if env_store else notebook_dir / STORE_DIRNAME
        roots = [self.store_root]
        if input_path is not None:
            roots.append(input_path.parent / STORE_DIRNAME)
        self.store_roots = list(dict.fromkeys(roots))
        self.analyses: dict[int, CellAnalysis] = {}
        self.current: dict[str, str] = dict.fromkeys(RNG_NAMES, RNG_INITIAL)
        self.changed_by: dict[str, str] = {}
        self.pending: dict[str, int] = {}  # name -> index of the restored cell holding it
        self.lazy_sent: dict[str, int] = {}  # pending names the kernel knows, by holder
        self.replay: list[dict[str, Any]] = []  # restored cells' effects, for the next run
        self.fn_globals: dict[str, frozenset[str]] = {}
        self.env: Optional[dict[str, Any]] = None
        self.environ: dict[str, str] = {}
        """The kernel's environment as the cells so far left it (its start, then each cell's
        recorded changes): what a restored cell's environment reads are compared with."""
        self.reply_meta: Optional[dict[str, Any]] = None
        self.counts = {"executed": 0, "restored": 0}
        # "prefix" reproduces the published NBRewind artifact (reuse an unchanged prefix, re-run
        # the whole suffix after the first re-executed cell), for comparison in the benchmark.
        self.policy = os.environ.get("NBREWIND_POLICY", "dataflow")
        if self.policy not in ("dataflow", "prefix"):
            raise NBRewindError(
                f"NBREWIND_POLICY={self.policy!r}: use 'dataflow' (default) or 'prefix'"
            )
        self.suffix_dirty = False
        self.state = STATE_START
        """The process state chain the next cell starts in (:func:`state_after`)."""
        self.state_why = ""
        self.parameters_hash: Optional[str] = None
        previous_params = (self.nb.metadata.get("nbrewind") or {}).get("parameters")
        self.previous_parameters = previous_params
        self.on_cell_executed = self._capture_reply
        self.labels = _cell_labels(self.nb.cells)
        self.reached: set[int] = set()
        self.failed_at: Optional[int] = None
        self._needed_after = self._static_reads_after()
        self.history_reader = next(
            (self.labels.get(i, "a cell") for i, a in sorted(self.analyses.items()) if a.history),
            "",
        )

    def _static_reads_after(self) -> list[frozenset[str]]:
        """For each cell, every name a later cell may read (including through the notebook's
        functions): an unpicklable value of a restored cell must not be one of them."""
        reads: list[frozenset[str]] = []
        functions: dict[str, frozenset[str]] = {}
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type == "code":
                analysis = self.analyses[index] = analyse_cell(cell.source)
                functions.update(analysis.functions)
                # An opaque cell (globals(), exec, magics) may read any name; what the audit
                # saw the cell's code read (inside functions, methods...) counts too.
                record = self.records[index] or {}
                extra = {ANY_NAME} if analysis.opaque or record.get("wide") else set()
                extra |= set(record.get("reads") or {})
                reads.append(reads_closure(analysis.reads, functions) | extra)
            else:
                reads.append(frozenset())
        after: list[frozenset[str]] = [frozenset()] * len(reads)
        acc: frozenset[str] = frozenset()
        for index in range(len(reads) - 1, -1, -1):
            after[index] = acc
            acc = acc | reads[index]
        return after

    def papermill_execute_cells(self) -> None:
        try:
            super().papermill_execute_cells()
        finally:
            self._clear_unreached()
            self._report()
            self.nb.metadata["nbrewind"] = {
                "version": FORMAT_VERSION,
                "mode": self.rewind_mode,
                "store": STORE_DIRNAME
                if not os.environ.get("NBREWIND_STORE")
                else str(self.store_root),
                "key_id": key_id(self.key),
                "env": _summarise_env(self.env, self.records),
                "cells": dict(self.counts),
                "parameters": self.parameters_hash,
                "policy": self.policy,
            }
            self._pin()

    def _pin(self) -> None:
        """Register the notebook's live checkpoints with its store, so ``python -m ckptstore
        gc`` keeps them (a rerun of the same notebook replaces the pin)."""
        if self.pin_owner is None:
            return
        try:
            pin_records(self.store_root, self.pin_owner, self.records)
        except (OSError, StoreError) as e:
            log.warning(f"nbrewind: could not pin the notebook's checkpoints: {e}")

    def _clear_unreached(self) -> None:
        """A run that stopped early must not leave the records of an earlier run on the cells
        it never reached: they would claim an execution (and outputs) this run did not do."""
        stopped = self.labels.get(self.failed_at, "a failing cell") if self.failed_at else None
        for index, cell in enumerate(self.nb.cells):
            if cell.cell_type != "code" or index in self.reached:
                continue
            if "nbrewind" in cell.metadata or self.failed_at is not None:
                why = f"not reached: the run stopped at {stopped}" if stopped else "not reached"
                cell.metadata["nbrewind"] = {"status": "not-run", "reason": why}
                self.records[index] = None

    def _report(self) -> None:
        """Say on the console what repeat did, and loudly why when the environment changed."""
        reasons = [(r or {}).get("reason", "") for r in self.records if (r or {}).get("status")]
        for reason in sorted({r for r in reasons if r.startswith("environment changed")}):
            count = reasons.count(reason)
            self.log.warning("nbrewind: %s: %d cell(s) re-executed, not restored", reason, count)
        self.log.info(
            "nbrewind %s: %d cell(s) executed, %d restored",
            self.rewind_mode,
            self.counts["executed"],
            self.counts["restored"],
        )

    async def _capture_reply(self, cell: Any, cell_index: int, execute_reply: Any) -> None:
        self.reply_meta = (execute_reply or {}).get("metadata", {}).get("nbrewind")

    async def _kernel_env(self) -> dict[str, Any]:
        """Ask the kernel (once) for its Python and the versions of the packages the recorded
        values came from: a checkpoint is only valid under the same ones."""
        if self.env is None:
            assert self.kc is not None
            packages = sorted({p for r in self.records if r for p in r.get("packages", {})})
            self._next_request: Optional[dict[str, Any]] = {"query": "env", "packages": packages}
            msg_id = self.kc.execute("", silent=True, store_history=False)
            reply = await self.async_wait_for_reply(await _maybe_await(msg_id))
            meta = ((reply or {}).get("metadata") or {}).get("nbrewind") or {}
            if "env" not in meta:
                raise NBRewindError(
                    f"kernel {self.kernel_name!r} did not answer as an nbrewind kernel; "
                    "reinstall the kernels with `nbrewind install-kernels`"
                )
            self.env = meta["env"]
            self.environ = dict(meta.get("environ") or os.environ)
        return self.env

    async def async_execute_cell(  # type: ignore[override]
        self,
        cell: Any,
        cell_index: int,
        execution_count: Optional[int] = None,
        store_history: bool = True,
    ) -> Any:
        self.reached.add(cell_index)
        if cell.cell_type != "code" or not cell.source.strip():
            return await super().async_execute_cell(
                cell, cell_index, execution_count, store_history
            )
        env = await self._kernel_env()
        analysis = self.analyses.get(cell_index) or analyse_cell(cell.source)
        functions = {**self.fn_globals, **analysis.functions}
        reads = reads_closure(analysis.reads, functions)
        tags = cell.metadata.get("tags", [])
        is_parameters = any(t in tags for t in PARAMETER_TAGS)
        record = self.records[cell_index] if cell_index < len(self.records) else None
        if "injected-parameters" in tags:
            self.parameters_hash = source_hash(cell.source)
        if self.rewind_mode == "audit":
            action, reason = "run", "audit: every cell runs"
        elif self.policy == "prefix" and self.suffix_dirty:
            action, reason = "run", "prefix policy: an earlier cell was re-executed"
        else:
            self._restore_inputs(cell_index, record)
            decision = decide(
                self._facts(cell, cell_index, record, analysis, "injected-parameters" in tags),
                self.current,
                self.changed_by,
                _digest_or_none,
                env,
                listing_now=listing_digest,
                stat_now=stat_signature,
                environ_now=self.environ,
            )
            action, reason = decision.action, decision.reason
            if self.policy == "prefix" and action != RESTORE:
                # The artifact's cache key is (cell source, parent checkpoint): a changed
                # source, new parameter values or a missing checkpoint miss, and so does every
                # later cell. Cells we re-execute for what they are (workflow cells...) hit.
                if "injected-parameters" in tags:
                    self.suffix_dirty = source_hash(cell.source) != self.previous_parameters
                else:
                    self.suffix_dirty = not decision.structural
        self.fn_globals.update(analysis.functions)
        if action == RESTORE:
            assert record is not None
            self._restore(cell, cell_index, record, reason)
            return cell
        return await self._run(cell, cell_index, analysis, reads, reason, is_parameters, record)

    def _restore_inputs(self, index: int, record: Optional[dict[str, Any]]) -> None:
        """At a site that lacks an input file a trusted record names, put it back from the
        store (``nbrewind pack --with-inputs``), so that it is not counted as changed."""
        if not record or verify(record, self.key) is not Trust.TRUSTED:
            return
        produced = {path for r in self.records[:index] if r for path in files_written(r)}
        # Only the recorded run's own inputs (read before any of its cells wrote them): a file
        # an earlier cell wrote then (and writes differently now, or not at all) is that
        # cell's doing, as in a fresh run, not something the site lacks.
        produced |= {path for path in files_read(record) if path not in self.site_inputs}
        for path, digest in restore_missing(record, Path.cwd(), self.store_roots, produced):
            copy_into(digest, self.store_roots, self.store_root)
            log.info("nbrewind: input %s of cell %d restored from the store", path, index)

    def _facts(
        self,
        cell: Any,
        index: int,
        record: Optional[dict[str, Any]],
        analysis: CellAnalysis,
        injected: bool,
    ) -> CellFacts:
        trust = verify(record, self.key) if record else Trust.UNSIGNED
        outputs = self.previous[index][0] if index < len(self.previous) else []
        blobs = trust is Trust.TRUSTED and self._blobs_intact(record or {})
        return CellFacts(
            record=record,
            source_hash=source_hash(cell.source),
            opaque=analysis.opaque,
            workflow=analysis.workflow,
            trust=trust,
            wide=str((record or {}).get("wide") or ""),
            history_reader=self.history_reader,
            state=self.state,
            state_why=self.state_why,
            outputs_digest=outputs_digest(outputs),
            blobs_present=blobs,
            needed_later=self._needed_after[index],
            injected_parameters=injected,
            unrestorable_file=self._unrestorable_file(record) if blobs and record else None,
        )

    def _unrestorable_file(self, record: dict[str, Any]) -> Optional[str]:
        """A file the cell wrote that cannot be put back as it wrote it, if any."""
        for path, digest in sorted(files_written(record).items()):
            if record.get("workflow") or _digest_or_none(path) == digest:
                continue
            if relative_inside(path) is None:
                return path
            if digest is not None and not has_object(digest, self.store_roots):
                return path
        return None

    def _blobs_intact(self, record: dict[str, Any]) -> bool:
        """Every checkpoint of a record is there and matches its signed digest. Checked before
        restoring, so a damaged object means re-execution, not a failed load later."""
        for _, entry in checkpoints(record):
            if entry.get("kind") == "unpicklable":
                continue
            try:
                get_blob(entry, self.store_roots)
            except (BlobError, KeyError, ValueError):
                return False
        return True

    def _restore(self, cell: Any, index: int, record: dict[str, Any], reason: str) -> None:
        outputs, count = self.previous[index]
        cell.outputs = copy.deepcopy(outputs)
        cell.execution_count = count
        for name, entry in record["writes"].items():
            self.current[name] = entry["hash"]
            self.changed_by.pop(name, None)
            self.pending[name] = index
        for _, entry in checkpoints(record):  # values and figures: kept in this run's store
            if "object" in entry:
                copy_into(entry["digest"], self.store_roots, self.store_root)
        for name in record.get("deleted", []):
            self.current.pop(name, None)
            self.pending.pop(name, None)
        replay = (record.get("effects") or {}).get("replay")
        if replay:  # its environment, working directory, sys.path: before the next run
            self.replay.append(replay)
        self.state = state_after(self.state, record)
        self._apply_environ(record)
        # Files it wrote are put back now (the same order of effects as a fresh run): a later
        # cell reads what this one wrote, not what some other run left.
        for path, digest in files_written(record).items():
            if record.get("workflow") or _digest_or_none(path) == digest:
                continue
            if digest is None:
                Path(path).unlink(missing_ok=True)
            elif not restore_file(digest, self.store_roots, Path(path)):
                raise NBRewindError(f"cannot put back {path} ({digest}): not in the store")
        for digest in files_written(record).values():
            if digest is not None and has_object(digest, self.store_roots):
                copy_into(digest, self.store_roots, self.store_root)
        record = dict(record, status="restored", reason=reason)
        cell.metadata["nbrewind"] = record
        self.records[index] = record
        self.counts["restored"] += 1

    async def _run(
        self,
        cell: Any,
        index: int,
        analysis: CellAnalysis,
        reads: frozenset[str],
        reason: str,
        is_parameters: bool,
        old: Optional[dict[str, Any]],
    ) -> Any:
        # Loaded before the cell: what its source reads or deletes. Everything else pending goes
        # to the kernel as lazy: loaded when the code first reaches it (a function's globals).
        wanted = set(self.pending) if analysis.opaque else set(reads) | set(analysis.deleted)
        # What a cell draws from a global random generator is not in its source: the pending
        # states go along with every re-executed cell (the kernel applies numpy's or torch's
        # only once that module is imported).
        wanted |= {n for n in self.pending if is_rng(n)}
        loads: dict[int, list[str]] = {}
        for name in sorted(wanted & set(self.pending)):
            if name not in self.pending:
                continue  # loaded already, with its group
            holder_index = self.pending[name]
            holder = self.records[holder_index]
            assert holder is not None
            entry = holder["writes"][name]
            if entry.get("kind") == "unpicklable":
                log.warning(
                    "nbrewind: %s (from %s) could not be checkpointed",
                    name,
                    self.labels.get(holder_index, "a restored cell"),
                )
                continue
            # Names checkpointed together (aliases, nested containers) load together: one
            # object graph, identity preserved.
            for member in entry.get("group", [name]):
                if self.pending.get(member) == holder_index:
                    loads.setdefault(holder_index, []).append(member)
                    del self.pending[member]
        lazy: dict[int, list[str]] = {}
        for name, holder_index in sorted(self.pending.items()):
            if self.lazy_sent.get(name) != holder_index:
                lazy.setdefault(holder_index, []).append(name)
                self.lazy_sent[name] = holder_index
        request = {
            "v": FORMAT_VERSION,
            "reads": sorted(reads),
            "files": sorted(analysis.strings),
            "workflow": analysis.workflow,
            "store": str(self.store_root),
            "stores": [str(p) for p in self.store_roots],
            "inline_max": inline_max(),
            "load": [self._load_item(i, names) for i, names in loads.items()],
            "lazy": [self._load_item(i, names) for i, names in lazy.items()],
            "replay": self.replay,
        }
        self.replay = []
        self._next_request = request
        self.reply_meta = None
        try:
            await super().async_execute_cell(cell, index, store_history=True)
        except CellExecutionError:
            self._record_failure(cell, index, reason)
            raise
        meta = self.reply_meta
        if not meta or meta.get("status") != "executed":
            said = meta.get("reason") if meta else None
            self._record_failure(cell, index, str(said or reason))
            return cell
        record = {k: v for k, v in meta.items() if k not in ("status",)}
        if record.get("workflow") and old and old.get("source") == source_hash(cell.source):
            # A workflow with nothing to do wrote nothing: its outputs are still the ones it
            # produced before, as they are now on disk.
            for path in old.get("files_written", {}):
                digest = _digest_or_none(path)
                if digest is not None:
                    record["files_written"].setdefault(path, digest)
        record.update(
            v=FORMAT_VERSION,
            source=source_hash(cell.source),
            opaque=analysis.opaque,
            outputs=outputs_digest(cell.outputs),
            execution_count=cell.execution_count,
            state=self.state,
        )
        self._advance_state(index, record, old)
        record["sig"] = sign(record, self.key)
        record["status"], record["reason"] = "executed", reason
        cell.metadata["nbrewind"] = record
        self.records[index] = record
        self.counts["executed"] += 1
        label = self.labels.get(index, f"cell at position {index}")
        why = "is a parameter that changed" if is_parameters else f"was recomputed by {label}"
        old_writes = (old or {}).get("writes", {})
        self._apply_environ(record)
        for name in record.get("loaded", []):
            self.pending.pop(name, None)
        for name, entry in record["writes"].items():
            self.current[name] = entry["hash"]
            self.pending.pop(name, None)
            if old_writes.get(name, {}).get("hash") != entry["hash"]:
                self.changed_by[name] = why
        for name in record.get("deleted", []):
            self.current.pop(name, None)
            self.pending.pop(name, None)
        for name, digest in record.get("reads", {}).items():
            self.current.setdefault(name, digest)
        return cell

    def _apply_environ(self, record: dict[str, Any]) -> None:
        for name, value in (
            ((record.get("effects") or {}).get("replay") or {}).get("environ", {}).items()
        ):
            if value is None:
                self.environ.pop(name, None)
            else:
                self.environ[name] = value

    def _load_item(self, index: int, names: list[str]) -> dict[str, Any]:
        """What the kernel needs to load ``names`` from the restored cell at ``index``: its
        record, and its source (so that its functions' tracebacks show their lines)."""
        return {
            "cell": self.labels.get(index, index),
            "record": self.records[index],
            "names": names,
            "source": self.nb.cells[index].source,
        }

    def _advance_state(
        self, index: int, record: dict[str, Any], old: Optional[dict[str, Any]]
    ) -> None:
        """The state chain after a cell executed now, and, where it is not the one the cell's
        earlier record led to, why (for the later cells' reasons)."""
        before, self.state = self.state, state_after(self.state, record)
        if self.state == before:
            return
        label = self.labels.get(index, f"the cell at position {index}")
        if old and old.get("state") == before and old.get("source") == record.get("source"):
            if state_after(before, old) != self.state:
                self.state_why = f"{label} changes it, and ran now with other inputs"
        elif not old or old.get("source") != record.get("source"):
            self.state_why = f"{label}, which changes it, is new or was edited"

    def _record_failure(self, cell: Any, index: int, reason: str) -> None:
        record = {"status": "error", "reason": reason, "source": source_hash(cell.source)}
        self.state = state_after(
            self.state,
            {"source": record["source"], "effects": {"other": ["failed"]}, "unknowable": reason},
        )
        self.failed_at = index
        cell.metadata["nbrewind"] = record
        self.records[index] = record

    def _send_execute(self, code: str, **kwargs: Any) -> str:
        """``kc.execute`` with our request in the message metadata (nbclient sends none)."""
        assert self.kc is not None
        content = {
            "code": code,
            "silent": kwargs.get("silent", False),
            "store_history": kwargs.get("store_history", True),
            "user_expressions": kwargs.get("user_expressions") or {},
            "allow_stdin": False,
            "stop_on_error": kwargs.get("stop_on_error", True),
        }
        metadata = {"nbrewind": self._next_request} if self._next_request else {}
        self._next_request = None
        msg = self.kc.session.msg("execute_request", content, metadata=metadata)
        self.kc.shell_channel.send(msg)
        return msg["header"]["msg_id"]

    async def async_start_new_kernel_client(self) -> Any:
        kc = await super().async_start_new_kernel_client()
        self._next_request = None
        kc.execute = self._send_execute  # type: ignore[method-assign]
        return kc

    start_new_kernel_client = run_sync(async_start_new_kernel_client)


# nbclient binds the sync wrapper at class definition: re-bind it to our override.
RewindClient.execute_cell = run_sync(RewindClient.async_execute_cell)  # type: ignore[method-assign]


async def _maybe_await(value: Any) -> Any:
    if hasattr(value, "__await__"):
        return await value
    return value


def _cell_labels(cells: Any) -> dict[int, str]:
    """How reasons name a code cell: its number (``code_cell_numbers``, as ``nbrewind
    inspect`` numbers its rows) and its id."""
    labels: dict[int, str] = {}
    for index, number in code_cell_numbers(cells).items():
        if number == "params":
            labels[index] = "the injected parameters cell"
            continue
        ident = cells[index].get("id")
        labels[index] = f"code cell {number}" + (f" (id {ident})" if ident else "")
    return labels


def _digest_or_none(path: str) -> Optional[str]:
    try:
        return file_digest(Path(path)) if os.path.isfile(path) else None
    except OSError:
        return None


def _summarise_env(
    env: Optional[dict[str, Any]], records: list[Optional[dict[str, Any]]]
) -> dict[str, Any]:
    """Run-level fingerprint: Python, platform, and the packages the notebook's values use."""
    if env is None:
        return {}
    packages: dict[str, str] = {}
    for record in records:
        packages.update((record or {}).get("packages", {}))
    return {
        "python": env.get("python"),
        "implementation": env.get("implementation"),
        "system": env.get("system"),
        "packages": dict(sorted(packages.items())),
    }
