"""The nbrewind kernels: IPython kernels that record, and restore, what each cell did.

The papermill engine (:mod:`nbrewind._engine`) drives them: every ``execute_request`` it sends
carries ``metadata.nbrewind`` (the names the cell reads, checkpoints to load first, where the
store is). The kernel loads what it is told (after checking signatures and digests), runs the
cell as the stock kernel would (same outputs), then checks at run time what the cell really
wrote (rebinding and in-place mutation, with aliases), checkpoints it, and returns the record in
the ``execute_reply`` metadata, which the engine writes into the cell's ``metadata.nbrewind``.

Run without that metadata (a client that drops it, such as papermill's default engine), the
kernel refuses with a message naming the fix instead of silently recording nothing. Started by
JupyterLab (which sends cell ids), it behaves as a plain IPython kernel.
"""

import builtins
import contextlib
import hashlib
import json
import os
import platform
import re
import signal
import sys
import threading
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, Optional

from ipykernel.ipkernel import IPythonKernel

from ckptstore import file_digest

from ._dataflow import (
    NAMESPACE_WIDE,
    READ_HOOK,
    CellInstrumenter,
    SeenCode,
    analyse_cell,
    reads_closure,
    source_hash,
)
from ._effects import EffectWatch, replay_figures, replay_warnings, warnings_shown
from ._effects import replay as replay_effects
from ._notebook import lab_records_path
from ._objects import STORE_DIRNAME, BlobError, get_blob, inline_max, put_blob, put_file
from ._observe import (
    RNG_INITIAL,
    RNG_NAMES,
    FileWatch,
    Observed,
    alias_groups,
    is_deferred,
    is_ipython_name,
    live_threads,
    reachable,
    record_path,
    rng_blob,
    rng_state,
    set_rng_state,
    snapshot_changes,
)
from ._observe import snapshot as observe_snapshot
from ._signing import LAB_MAC_FIELD, SigningKeyError, Trust, lab_mac, load_key, verify
from ._values import (
    blob_digest,
    load,
    local_modules_named,
    member_hash,
    module_file,
    rebind_all,
    serialize,
    serialize_group,
    type_name,
)
from ._workflow_cell import WorkflowWatch

ENGINE_MISSING = (
    "the {kernel} kernel records cell checkpoints through the nbrewind papermill engine, and "
    "this client does not use it (papermill's default engine drops kernel metadata), so nothing "
    "would be recorded. Run: papermill IN.ipynb OUT.ipynb -k {kernel} --engine nbrewind "
    "(or: nbrewind run IN.ipynb OUT.ipynb)"
)
_MAX_SNAPSHOT_FILES = 50_000


class RestoreRefused(Exception):
    """A checkpoint the engine asked for is not trusted here."""


class NBRewindRestoreError(Exception):
    """A restored cell's value could not be loaded when the notebook's code reached it."""


RESTORE_DEADLINE = 600.0
"""Seconds one restore (signature and digest checks, unpickling) may take
(``NBREWIND_RESTORE_TIMEOUT``); past it the cell fails with the reason, never hangs."""


@dataclass
class _CellReads:
    """What the running cell's code read, as it happened: name -> hash when first reached
    (before the code could change it), whether it reached a builtin that reads the whole
    namespace, and the restored values it loaded on the way (name -> id)."""

    hashed: dict[str, str]
    wide: str = ""
    hook_failed: str = ""
    loaded: dict[str, int] = field(default_factory=dict)


def environment(packages: "list[str]") -> dict[str, Any]:
    """The facts a checkpoint's validity depends on: Python, platform, and the versions of the
    given distributions (those the notebook's values came from)."""
    from importlib import metadata

    versions: dict[str, str] = {}
    for name in packages:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return {
        "python": platform.python_version(),
        "implementation": sys.implementation.name,
        "system": f"{platform.system()}-{platform.machine()}",
        "packages": versions,
    }


_TOP_TO_DIST: Optional[Mapping[str, list[str]]] = None


def _distributions_of(top_modules: set[str]) -> dict[str, str]:
    """Versions of the distributions providing these top-level modules."""
    global _TOP_TO_DIST
    from importlib import metadata

    found = {}
    for top in sorted(top_modules):
        try:  # most distributions are named like their module: no scan needed
            found[top.lower().replace("_", "-")] = metadata.version(top)
            continue
        except metadata.PackageNotFoundError:
            pass
        recorded = _distribution_recording(top)
        if recorded is not None:
            try:
                found[recorded.lower().replace("_", "-")] = metadata.version(recorded)
                continue
            except metadata.PackageNotFoundError:
                pass
        if _TOP_TO_DIST is None:
            _TOP_TO_DIST = metadata.packages_distributions()
        for dist in _TOP_TO_DIST.get(top, []):
            try:
                found[dist.lower().replace("_", "-")] = metadata.version(dist)
            except metadata.PackageNotFoundError:
                continue
    return found


_SEEDING = re.compile(r"\b(seed|set_state|setstate|manual_seed)\s*\(")
"""A call that sets a global generator's state (``random.seed``, ``np.random.seed``,
``np.random.set_state``, ``random.setstate``, ``torch.manual_seed``) in a cell's source."""


def _distribution_recording(top: str) -> Optional[str]:
    """The name of the installed distribution whose ``RECORD`` lists the loaded module
    ``top`` (``sklearn`` -> ``scikit_learn``), looked up beside the module only: reading
    every distribution's file list (``packages_distributions``) takes a fifth of a second."""
    module = sys.modules.get(top)
    path = getattr(module, "__file__", None)
    if not path:
        return None
    folder = os.path.dirname(path)
    if os.path.basename(path).startswith("__init__."):
        folder = os.path.dirname(folder)
    prefixes = (f"{top}/", f"{top}.")
    try:
        entries = os.listdir(folder)
    except OSError:
        return None
    for entry in entries:
        if not entry.endswith(".dist-info"):
            continue
        try:
            with open(os.path.join(folder, entry, "RECORD")) as f:
                if any(line.startswith(prefixes) for line in f):
                    return entry[: -len(".dist-info")].rsplit("-", 1)[0]
        except OSError:
            continue
    return None


class NBRewindKernel(IPythonKernel):
    """An IPython kernel that audits (and, told by the engine, restores) cells."""

    implementation = "nbrewind"
    implementation_version = "1"
    shell: Any  # IPythonKernel's trait: always set once the kernel is initialised

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.mode = os.environ.get("NBREWIND_MODE", "audit")
        self._hashes: dict[str, tuple[int, str]] = {}
        self._fn_globals: dict[str, frozenset[str]] = {}
        self._record: Optional[dict[str, Any]] = None
        self._key: Optional[bytes] = None
        self._reach: dict[str, tuple[int, frozenset[int]]] = {}
        self._unpicklable: set[str] = set()
        self._rng_known: dict[str, str] = {}
        self._lazy: dict[str, tuple[dict[str, Any], str]] = {}
        """Values of restored cells not loaded yet: name -> (record, cell label); loaded when
        the notebook's code first reaches them."""
        self._stores: list[Path] = []
        self._cached_sources: set[str] = set()
        self._cell: Optional[_CellReads] = None
        self.start_cwd = os.getcwd()
        self._effects = EffectWatch(self.start_cwd)
        _WATCH.importing = self._effects.importing
        self._instrumenter = CellInstrumenter()
        self.shell.ast_transformers.append(self._instrumenter)
        self._seen_code = SeenCode()
        setattr(builtins, READ_HOOK, self._seen_code.__getitem__)

    @property
    def kernel_info(self) -> dict[str, Any]:
        info = super().kernel_info
        info["nbrewind"] = {"mode": self.mode}
        return info

    def finish_metadata(self, parent: Any, metadata: Any, reply_content: Any) -> Any:
        metadata = super().finish_metadata(parent, metadata, reply_content)
        if self._record is not None:
            metadata["nbrewind"] = self._record
        return metadata

    async def do_execute(  # type: ignore[override]
        self,
        code: str,
        silent: bool,
        store_history: bool = True,
        user_expressions: Any = None,
        allow_stdin: bool = False,
        *,
        cell_meta: Optional[dict[str, Any]] = None,
        cell_id: Optional[str] = None,
    ) -> dict[str, Any]:
        self._record = None
        request = (cell_meta or {}).get("nbrewind")

        async def run() -> dict[str, Any]:
            return await super(NBRewindKernel, self).do_execute(
                code,
                silent,
                store_history=store_history,
                user_expressions=user_expressions,
                allow_stdin=allow_stdin,
                cell_meta=cell_meta,
                cell_id=cell_id,
            )

        if request is None:
            if silent or os.environ.get("NBREWIND_ALLOW_PLAIN") == "1":
                return await run()
            if cell_id is not None:  # JupyterLab (it sends cell ids; nbclient does not)
                return await self._lab_cell(code, cell_id, run)
            kernel = f"nbrewind-{self.mode}"
            return self._error_reply("NBRewindEngineMissing", ENGINE_MISSING.format(kernel=kernel))
        if request.get("query") == "env":
            self._record = {
                "status": "env",
                "env": environment(request.get("packages", [])),
                "environ": dict(os.environ),
            }
            return {
                "status": "ok",
                "execution_count": self.execution_count,
                "payload": [],
                "user_expressions": {},
            }
        try:
            with _restore_deadline():
                if request.get("stores"):
                    self._stores = [Path(p) for p in request["stores"]]
                for effects in request.get("replay", []):
                    replay_effects(effects, self.start_cwd)
                    if effects.get("warnings shown"):
                        replay_warnings(effects["warnings shown"], self.shell.user_ns)
                    figures = effects.get("matplotlib figures")
                    if figures:
                        blobs = [(n, get_blob(e, self._stores)) for n, e in figures["open"]]
                        replay_figures(figures, blobs)
                self._register_lazy(request)
                self._apply_loads(request)
        except Exception as e:  # noqa: BLE001 - any failure to restore: a reply, never a hang
            return self._error_reply("NBRewindRestoreError", _restore_failure(e))
        return await self._audited(code, request, run)

    async def _lab_cell(self, code: str, cell_id: str, run: Any) -> dict[str, Any]:
        """Under JupyterLab, which keeps no reply metadata either, the audit kernel appends
        each cell's record beside the notebook; ``nbrewind import-lab NB`` writes them into
        the saved notebook. The repeat kernel there runs cells as the stock kernel does."""
        notebook = _lab_notebook()
        if self.mode != "audit" or notebook is None:
            return await run()
        reply = await self._audited(code, {"store": str(notebook.parent / STORE_DIRNAME)}, run)
        if self._record is not None:
            entry = {"cell_id": cell_id, "source": source_hash(code), "record": self._record}
            try:
                if self._key is None:
                    self._key = load_key()
                # MAC'ed with this user's key: `import-lab` refuses lines without it.
                entry[LAB_MAC_FIELD] = lab_mac(notebook.name, entry, self._key)
            except SigningKeyError as e:
                print(f"nbrewind: record of this cell not kept: {e}", file=sys.stderr)
                return reply
            sidecar = lab_records_path(notebook)
            sidecar.parent.mkdir(parents=True, exist_ok=True)
            with open(sidecar, "a") as f:
                f.write(json.dumps(entry) + "\n")
        return reply

    # ---- restoring ----------------------------------------------------------------------

    def _trusted(self, item: dict[str, Any]) -> dict[str, Any]:
        if self._key is None:
            self._key = load_key()
        record = item["record"]
        trust = verify(record, self._key)
        if trust is not Trust.TRUSTED:
            raise RestoreRefused(
                f"refusing to load checkpoints of cell {item.get('cell')}: {trust.value}"
            )
        source = item.get("source")
        if isinstance(source, str) and source not in self._cached_sources:
            # The restored cell's lines, under the name this kernel gives that cell: a
            # traceback or warning from one of its functions shows them, as in a fresh run.
            self._cached_sources.add(source)
            with contextlib.suppress(Exception):
                count = record.get("execution_count")
                number = count if isinstance(count, int) else 0
                self.shell.compile.cache(self.shell.transform_cell(source), number, source)
        return record

    def _register_lazy(self, request: dict[str, Any]) -> None:
        """Restored cells' values the engine did not ask to load now: loaded when the code
        first reaches them (a function's globals when it is called, a whole-namespace builtin
        such as ``dir()``). Their records are verified now, so a later load cannot be
        refused."""
        if request.get("stores"):
            self._stores = [Path(p) for p in request["stores"]]
        for item in request.get("lazy", []):
            record = self._trusted(item)
            for name in item["names"]:
                self._lazy[name] = (record, str(item.get("cell")))

    def _apply_loads(self, request: dict[str, Any]) -> None:
        ns = self.shell.user_ns
        for name in request.get("drop", []):
            ns.pop(name, None)
            self._forget(name)
        for item in request.get("load", []):
            self._load(self._trusted(item), item["names"])

    def _load(self, record: dict[str, Any], names: list[str]) -> None:
        ns = self.shell.user_ns
        groups: dict[str, dict[str, Any]] = {}
        for name in names:
            self._lazy.pop(name, None)
            entry = record["writes"][name]
            blob = get_blob(entry, self._stores)
            if entry["kind"] == "rng":
                set_rng_state(name, blob)
                self._rng_known[name] = entry["hash"]
                continue
            if "group" in entry:  # names checkpointed together: one object graph
                if entry["digest"] not in groups:
                    groups[entry["digest"]] = rebind_all(load(entry["kind"], blob, ns), ns)
                value = groups[entry["digest"]][name]
            else:
                value = load(entry["kind"], blob, ns)
            ns[name] = value
            self._forget(name)
            self._hashes[name] = (id(value), entry["hash"])

    def _load_lazy(self, names: list[str]) -> None:
        """Load restored values the running code reached (with the names sharing their
        checkpoint), within the restore deadline; a failure fails the cell with the reason."""
        cell = self._cell
        todo = [n for n in names if n in self._lazy]
        for name in todo:
            if name not in self._lazy:
                continue  # loaded with its group
            record, label = self._lazy[name]
            entry = record["writes"][name]
            if entry.get("kind") == "unpicklable":
                raise NBRewindRestoreError(
                    f"{name} (from {label}, restored) could not be checkpointed "
                    f"({entry.get('error', 'unpicklable')}), and this cell reached it; "
                    "run the notebook again with nbrewind-audit"
                )
            members = [
                m for m in entry.get("group", [name]) if self._lazy.get(m, (None,))[0] is record
            ]
            try:
                with _restore_deadline():
                    self._load(record, members)
            except Exception as e:  # noqa: BLE001 - named, never a hang
                raise NBRewindRestoreError(
                    f"restoring {name} (from {label}) failed: {_restore_failure(e)}"
                ) from None
            if cell is not None:
                ns = self.shell.user_ns
                for member in members:
                    if member in ns:
                        cell.loaded[member] = id(ns[member])

    def _ran(self, names: tuple[str, ...]) -> None:
        """The read hook, the first time during a cell that notebook code (a function, a
        method, a lambda) which may read ``names`` starts: loads those still pending and takes
        each one's hash now, before the code can change it; a whole-namespace builtin loads
        everything pending."""
        cell = self._cell
        if cell is None:
            return
        ns = self.shell.user_ns
        for name in names:
            if name in cell.hashed:
                continue
            if name in NAMESPACE_WIDE and name not in ns:
                cell.wide = cell.wide or f"calls {name}() from notebook code"
                self._load_lazy(list(self._lazy))
                continue
            if name in self._lazy:
                self._load_lazy([name])  # its failure is the cell's: NBRewindRestoreError
            if name in ns and not is_ipython_name(name):
                try:
                    cell.hashed[name] = self._hash_of(name)
                except Exception as e:  # noqa: BLE001 - never the user's code's failure
                    cell.hook_failed = cell.hook_failed or f"{name}: {type(e).__name__}: {e}"

    def _forget(self, name: str) -> None:
        self._hashes.pop(name, None)
        self._reach.pop(name, None)
        self._unpicklable.discard(name)

    # ---- auditing -----------------------------------------------------------------------

    async def _audited(self, code: str, request: dict[str, Any], run: Any) -> dict[str, Any]:
        ns = self.shell.user_ns
        analysis = analyse_cell(code)
        if "reads" in request:
            reads = frozenset(request["reads"])
        else:
            reads = reads_closure(analysis.reads, self._fn_globals)
        before = self._user_ids()
        read_hashes = {n: self._hash_of(n) for n in sorted(reads) if n in before}
        rng_before = {
            n: self._rng_known.get(n) if is_deferred(n) else _rng_hash(n) for n in RNG_NAMES
        }
        strings = request.get("files", sorted(analysis.strings))
        # Paths are recorded relative to the kernel's starting directory, whatever a cell
        # does with os.chdir (the engine resolves them from there).
        cwd = self.start_cwd
        literal_files = {record_path(p, cwd): file_digest(Path(p)) for p in strings if _is_file(p)}
        workflow = bool(request.get("workflow", analysis.workflow))
        snapshot = _snapshot_files(Path(cwd)) if workflow else {}
        light_snapshot = None if workflow else observe_snapshot(cwd)
        threads = live_threads()
        modules_before = set(sys.modules)
        store = Path(request["store"]) if request.get("store") else None
        # before the file watch wraps os.stat: not a change of the cell
        self._effects.start(ns)
        _WATCH.start(ignore=[str(store)] if store else [], cwd=cwd)
        started = time.perf_counter()
        watch = WorkflowWatch(self.shell, Path.cwd()) if workflow else None
        registry_before = dict(ns.get("__warningregistry__") or {})
        self._cell = _CellReads(hashed=dict(read_hashes))
        self._seen_code.clear()
        self._seen_code.on_first = self._ran
        try:
            if watch is None:
                reply = await run()
            else:
                with watch:
                    reply = await run()
        finally:
            observed = _WATCH.stop() or Observed()
            self._seen_code.on_first = None
            cell, self._cell = self._cell, None
        read_hashes = cell.hashed
        # Read after the watch stopped: the Snakemake logs it reads are not the cell's reads.
        failure = watch.failure() if watch is not None and reply.get("status") == "ok" else None
        if failure is not None:
            # IPython's `!` does not raise: fail the cell with the workflow's own error.
            reply = self._error_reply("WorkflowFailed", failure)
        seconds = time.perf_counter() - started
        if reply.get("status") != "ok":
            self._effects.abandon()
            self._record = {"status": "error", "seconds": round(seconds, 6)}
            # What the cell did before failing is unknown: forget cached hashes it may touch.
            for name in reads | analysis.writes | set(read_hashes):
                self._forget(name)
            for name in self._user_ids():
                self._lazy.pop(name, None)
            return reply
        try:
            limit = int(request.get("inline_max", inline_max()))
            effects = self._effects.stop()
            if effects.figure_changes is not None:
                opened = []
                for num, blob in effects.figures:
                    kept: dict[str, Any] = {"kind": "figure"}
                    self._put(kept, blob, "", store, limit)
                    if kept["kind"] != "figure":
                        effects.other.append(
                            f"leaves matplotlib figure {num} open ({kept['error']})"
                        )
                        break
                    opened.append([num, kept])
                else:
                    effects.replay["matplotlib figures"] = {
                        "open": opened,
                        **effects.figure_changes,
                    }
            shown = warnings_shown(registry_before, dict(ns.get("__warningregistry__") or {}))
            if shown is None:
                effects.other.append("shows a warning of a category defined in the notebook once")
            elif shown:
                effects.replay["warnings shown"] = shown
            for name, ident in cell.loaded.items():
                before.setdefault(name, ident)  # loaded from a restored cell, not written here

            after = self._user_ids()
            for name in after:
                self._lazy.pop(name, None)  # bound by this cell: the restored value is gone
            rebound = {n for n, i in after.items() if before.get(n) != i}
            deleted = sorted(set(before) - set(after))
            for name in rebound | set(read_hashes):
                self._reach.pop(name, None)
            groups = self._groups(after)
            mutated = set()
            for name, old in read_hashes.items():
                if name in after and name not in rebound:
                    # An unpicklable value (a generator...) a cell read may have changed in ways no
                    # hash shows: count it as written, so that its reader is replayed, not restored.
                    if name in self._unpicklable or self._fresh_hash(name, groups) != old:
                        mutated.add(name)
            for name in sorted(mutated):
                if isinstance(ns.get(name), ModuleType):
                    # a module's own state changed in place (helper.CACHE.append(1)): importing it
                    # again would not give it back
                    effects.other.append(f"changes the state of module {name}")
            mutated_ids = {after[n] for n in mutated}
            mutated |= {n for n, i in after.items() if i in mutated_ids and n not in rebound}
            written: set[str] = set()
            for name in rebound | mutated:
                written |= groups.get(name, {name})

            identity = hashlib.sha256(
                (source_hash(code) + repr(sorted(read_hashes.items()))).encode()
            ).hexdigest()
            writes: dict[str, Any] = {}
            blobs: list[bytes] = []
            top_modules: set[str] = set()
            for group in sorted({groups.get(n, frozenset([n])) for n in written}, key=sorted):
                names = sorted(group)
                if len(names) == 1:
                    value = ns[names[0]]
                    s = serialize(value, f"{identity}:{names[0]}")
                    hashes = {names[0]: s.hash}
                else:
                    s = serialize_group({n: ns[n] for n in names}, f"{identity}:{names}")
                    hashes = {n: member_hash(s.hash, n) for n in names}
                if s.blob is not None and s.kind != "module":
                    blobs.append(s.blob)
                for name in names:
                    value = ns[name]
                    self._hashes[name] = (id(value), hashes[name])
                    if s.kind == "unpicklable":
                        self._unpicklable.add(name)
                    else:
                        self._unpicklable.discard(name)
                    entry: dict[str, Any] = {"kind": s.kind, "hash": hashes[name]}
                    entry["type"] = type_name(value)
                    if len(names) > 1:
                        entry["group"] = names
                    top_modules.add(entry["type"].split(".")[0])
                    if s.kind == "module":
                        top_modules.add(value.__name__.split(".")[0])
                    # A group's one blob would be repeated inline in each member: keep it small.
                    cap = limit if len(names) == 1 else min(limit, GROUP_INLINE_MAX)
                    self._put(entry, s.blob, s.error, store, cap)
                    writes[name] = entry
            for name in deleted:
                self._forget(name)
            for name in analysis.functions:
                if name in writes:
                    self._fn_globals[name] = analysis.functions[name]

            # A cell that seeds a generator sets its state, even to the one it had (seed(1),
            # a draw, then seed(1) and the same draw again): recorded, so that restoring it
            # sets the state in a repeat where an edited earlier cell seeded otherwise.
            seeds = bool(_SEEDING.search(code))
            for name in RNG_NAMES:
                state = rng_state(name)
                if state is None:
                    continue
                blob = rng_blob(state)
                now = blob_digest(blob)
                if now == rng_before[name] and not seeds:
                    continue
                known = self._rng_known.get(name)
                read_hashes[name] = (
                    known if known is not None and known == rng_before[name] else (RNG_INITIAL)
                )
                entry = {"kind": "rng", "hash": now, "type": "rng-state"}
                self._put(entry, blob, "", store, limit)
                writes[name] = entry
                self._rng_known[name] = now

            files_written: dict[str, Optional[str]] = {}
            if workflow:
                for path, stamp in _snapshot_files(Path.cwd()).items():
                    if snapshot.get(path) != stamp:
                        files_written[path] = file_digest(Path(path))
            else:
                changed = observed.files_written | snapshot_changes(
                    light_snapshot, observe_snapshot(cwd)
                )
                for path in sorted(changed):
                    files_written[path] = _keep_file(path, store)
            files_read: dict[str, Optional[str]] = dict(literal_files)
            files_read.update(observed.files_read)
            # The notebook's own modules this cell imported: their source is what it ran, and
            # importing them ran it (whatever it printed or set), so a restore cannot stand in.
            for name in sorted(set(sys.modules) - modules_before):
                module = sys.modules.get(name)
                source = module_file(module) if module is not None else None
                if source is not None:
                    files_read.setdefault(record_path(source, cwd), file_digest(Path(source)))
                    effects.other.append(f"imports the notebook's module {name} (runs its code)")
            # Checkpoints that name a class or function of the notebook's own modules load through
            # that module's current source: the source is an input of the cell that wrote them.
            sources = {src for blob in blobs for src in local_modules_named(blob).values()}
            for source in sorted(sources):
                files_read.setdefault(record_path(source, cwd), file_digest(Path(source)))
            for path in files_written:
                if path not in observed.files_read:
                    files_read.pop(path, None)
            unknowable = ""
            if observed.processes and not workflow:
                events = ", ".join(sorted(set(observed.processes)))
                unknowable = (
                    f"starts processes ({events}): what they read and write is not observed"
                )
            elif live_threads() - threads:
                unknowable = "leaves threads running: what they read and write is not observed"
            elif self._instrumenter.failed:
                unknowable = f"its code {self._instrumenter.failed}: what it reads is not observed"
            elif cell.hook_failed:
                unknowable = f"a value it read could not be hashed ({cell.hook_failed[:200]})"
            top_modules -= {"builtins", "__main__"} | set(sys.stdlib_module_names)
            self._record = {
                "status": "executed",
                "reads": read_hashes,
                "files_read": files_read,
                "dirs_read": observed.dirs_read,
                "stats_read": observed.stats_read,
                "env_read": observed.env_read,
                "writes": writes,
                "mutated": sorted(mutated),
                "deleted": deleted,
                "workflow": workflow,
                "files_written": files_written,
                "unknowable": unknowable,
                "loaded": sorted(cell.loaded),
                "packages": _distributions_of(top_modules),
                "python": ".".join(platform.python_version_tuple()[:2]),
                "seconds": round(seconds, 6),
            }
            if effects.replay or effects.other:
                self._record["effects"] = {"replay": effects.replay, "other": effects.other}
            if cell.wide:
                self._record["wide"] = cell.wide
        except Exception as e:  # noqa: BLE001 - recording must never cost the user the reply
            self._effects.abandon()
            for name in reads | analysis.writes | set(read_hashes):
                self._forget(name)
            self._record = {
                "status": "error",
                "seconds": round(seconds, 6),
                "reason": f"nbrewind could not record this cell ({type(e).__name__}: {e})"[:300],
            }
            print(f"nbrewind: {self._record['reason']}; it runs again next time", file=sys.stderr)
        return reply

    def _put(
        self,
        entry: dict[str, Any],
        blob: Optional[bytes],
        error: str,
        store: Optional[Path],
        limit: int,
    ) -> None:
        if blob is None:
            entry["error"] = error[:300]
            return
        entry["size"] = len(blob)
        entry["digest"] = blob_digest(blob)
        if store is None and len(blob) > limit:
            entry["kind"], entry["error"] = "unpicklable", "no checkpoint store given"
        else:
            entry.update(put_blob(blob, entry["digest"], store or Path("."), limit))

    def _user_ids(self) -> dict[str, int]:
        hidden = self.shell.user_ns_hidden
        return {
            name: id(value)
            for name, value in self.shell.user_ns.items()
            if not is_ipython_name(name) and not (name in hidden and hidden[name] is value)
        }

    def _groups(self, names: Any) -> dict[str, frozenset[str]]:
        """Alias groups among the user's names (reachable objects cached per value)."""
        ns = self.shell.user_ns
        reach = {}
        for name in names:
            value = ns[name]
            cached = self._reach.get(name)
            if cached is None or cached[0] != id(value):
                cached = (id(value), reachable(value))
                self._reach[name] = cached
            reach[name] = cached[1]
        return alias_groups(reach)

    def _hash_of(self, name: str) -> str:
        value = self.shell.user_ns[name]
        cached = self._hashes.get(name)
        if cached is not None and cached[0] == id(value):
            return cached[1]
        return self._fresh_hash(name, self._groups(self._user_ids()))

    def _fresh_hash(self, name: str, groups: dict[str, frozenset[str]]) -> str:
        ns = self.shell.user_ns
        value = ns[name]
        cached = self._hashes.get(name)
        group = sorted(groups.get(name, frozenset([name])))
        if len(group) == 1:
            s = serialize(value, f"unknown-producer:{name}")
            digest = s.hash
        else:
            s = serialize_group({n: ns[n] for n in group}, f"unknown-producer:{group}")
            digest = member_hash(s.hash, name)
        if s.kind == "unpicklable" and cached is not None and cached[0] == id(value):
            return cached[1]  # keeps the identity its producer gave it
        self._hashes[name] = (id(value), digest)
        return digest

    def _error_reply(self, ename: str, evalue: str) -> dict[str, Any]:
        content = {"ename": ename, "evalue": evalue, "traceback": [f"{ename}: {evalue}"]}
        self.send_response(self.iopub_socket, "error", content)
        return {
            "status": "error",
            "execution_count": self.execution_count,
            "user_expressions": {},
            "payload": [],
            **content,
        }


def _lab_notebook() -> Optional[Path]:
    """The notebook JupyterLab runs this kernel for (jupyter_server sets JPY_SESSION_NAME to
    its path, and starts the kernel in the notebook's directory)."""
    name = os.environ.get("JPY_SESSION_NAME", "")
    if not name.endswith(".ipynb"):
        return None
    path = Path(name)
    return path if path.is_absolute() else Path.cwd() / path.name


_WATCH = FileWatch()
GROUP_INLINE_MAX = 2048
"""Blobs of names checkpointed together go to the store beyond this size."""
FILE_KEEP_MAX = 64 * 1024 * 1024
"""Files a cell writes up to this size are kept in the store, so a restored cell can put them
back (``NBREWIND_FILE_KEEP_MAX``)."""


def _restore_deadline() -> contextlib.AbstractContextManager[None]:
    return _deadline(float(os.environ.get("NBREWIND_RESTORE_TIMEOUT", RESTORE_DEADLINE)))


@contextlib.contextmanager
def _deadline(seconds: float) -> Iterator[None]:
    """Raise TimeoutError in the main thread if the block takes longer than ``seconds``."""
    if seconds <= 0 or threading.current_thread() is not threading.main_thread():
        yield
        return

    def expired(signum: int, frame: Any) -> None:
        raise TimeoutError(f"took longer than {seconds:g} s (NBREWIND_RESTORE_TIMEOUT)")

    previous = signal.signal(signal.SIGALRM, expired)
    remaining = signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, *remaining)
        signal.signal(signal.SIGALRM, previous)


def _restore_failure(e: BaseException) -> str:
    text = str(e) or type(e).__name__
    if isinstance(e, BlobError | RestoreRefused | SigningKeyError | NBRewindRestoreError):
        return text
    return (
        f"{type(e).__name__}: {text[:300]} (the cell that wrote it is re-executed when "
        "the notebook is audited again: papermill ... -k nbrewind-audit)"
    )


def _rng_hash(name: str) -> Optional[str]:
    state = rng_state(name)
    return None if state is None else blob_digest(rng_blob(state))


def _keep_file(path: str, store: Optional[Path]) -> Optional[str]:
    """The digest of a file a cell wrote (None: it deleted it), kept in the store if small."""
    if not os.path.isfile(path):
        return None
    digest = file_digest(Path(path))
    limit = int(os.environ.get("NBREWIND_FILE_KEEP_MAX", FILE_KEEP_MAX))
    if store is not None and os.path.getsize(path) <= limit:
        put_file(Path(path), digest, store)
    return digest


def _is_file(path: str) -> bool:
    try:
        return os.path.isfile(path)
    except (OSError, ValueError):
        return False


def _snapshot_files(root: Path) -> dict[str, tuple[int, int]]:
    """Files under ``root`` (hidden directories skipped), by modification time and size."""
    found: dict[str, tuple[int, int]] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not d.startswith(".") and d != "__pycache__"]
        for filename in filenames:
            if filename.startswith(".") or filename.endswith(".ipynb"):
                continue
            path = os.path.join(dirpath, filename)
            try:
                st = os.stat(path)
            except OSError:
                continue
            found[os.path.relpath(path, root)] = (st.st_mtime_ns, st.st_size)
            if len(found) >= _MAX_SNAPSHOT_FILES:
                return found
    return found


def main() -> None:
    from ipykernel.kernelapp import IPKernelApp

    IPKernelApp.launch_instance(kernel_class=NBRewindKernel)


if __name__ == "__main__":
    main()
