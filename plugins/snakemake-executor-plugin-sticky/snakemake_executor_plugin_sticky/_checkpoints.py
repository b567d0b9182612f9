"""Checkpoint-aware rule skipping for one run of the sticky executor.

Three moments of a run use the store:

* **before scheduling** (:meth:`RunCheckpoints.restore_ahead`): every job Snakemake wants to
  run whose upstream jobs are all up to date or restored gets its provenance key; if the key
  is in the store, its outputs are restored (all or nothing, verified by hash), its Snakemake
  metadata is written, and Snakemake recomputes what still needs to run. A fully restored
  workflow therefore costs about a dry run plus the byte copies: Snakemake then reports
  "Nothing to be done".
* **when a job is about to run** (:meth:`RunCheckpoints.restore`): a job whose upstream
  reran is keyed on its now-final inputs; if they came out byte-identical, it is restored
  after all (an early cutoff).
* **after a job succeeds** (:meth:`RunCheckpoints.record_success`): its outputs, logs and
  benchmark are stored under its key, with the key's components so a later rerun can be
  explained.

:meth:`RunCheckpoints.plan` answers the dry-run question (which jobs would be restored, which
would run and why) without copying anything.
"""

import json
import os
import queue
import shutil
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Protocol

from snakemake_interface_common.exceptions import WorkflowError

from ckptstore import CheckpointStore, CorruptObjectError, StoreError, explain_change
from ckptstore._records import SigningKeyError, load_signing_key, refusal

from . import _snakemake_compat as compat
from ._provenance import (
    KeyComputer,
    Uncacheable,
    parse_site_roots,
    planned_digest,
    process_state_measured,
    provenance_key,
)
from ._tree_watch import Declared, TreeWatch

WRITER_DEADLINE_S = 600.0
"""Seconds the end of a run waits for the checkpoint writer to store what it still holds."""
WRITER_NOTE_EVERY_S = 30.0
"""Seconds between two notes saying what the writer is still storing."""


class _Joinable(Protocol):
    def join(self, timeout: Optional[float] = None) -> None: ...

    def is_alive(self) -> bool: ...


def wait_for_writer(
    writer: _Joinable,
    pending: Callable[[], str],
    note: Callable[[str], None],
    deadline: float = WRITER_DEADLINE_S,
    every: float = WRITER_NOTE_EVERY_S,
    clock: Callable[[], float] = time.monotonic,
) -> bool:
    """Wait at most ``deadline`` seconds for the writer thread to finish; every ``every``
    seconds, ``note`` what it is still storing (``pending()``). False if it did not finish."""
    start = clock()
    while True:
        left = deadline - (clock() - start)
        if left <= 0:
            return not writer.is_alive()
        writer.join(timeout=min(every, left))
        if not writer.is_alive():
            return True
        waited = clock() - start
        if waited < deadline:
            note(f"checkpoints: still storing after {waited:.0f} s: {pending()}")


@dataclass
class _StoreTask:
    """One successful job's outputs to store (name -> path, possibly a staged hard link)."""

    key: str
    components: dict[str, str]
    rule: str
    identity: str
    job: str
    outputs: "dict[str, Any]"
    staging: Optional[Path] = None


@dataclass
class PlannedJob:
    """What a run would do with one job: restore it from the store, or run it (and why)."""

    job: Any
    restore: bool
    reasons: list[str] = field(default_factory=list)


class RunCheckpoints:
    """The checkpoint store as one run of the sticky executor uses it."""

    def __init__(
        self,
        workflow: Any,
        logger: Any,
        store_dir: str,
        run_id: str,
        templates_file: Optional[Path],
        template_of: Callable[[Any], Optional[str]],
        signing_key_file: Optional[str] = None,
        site_roots: Optional[str] = None,
    ) -> None:
        try:
            roots = parse_site_roots(site_roots)
        except ValueError as e:
            raise WorkflowError(f"--sticky-checkpoints-roots: {e}") from None
        try:
            key = load_signing_key(signing_key_file) if signing_key_file else None
        except SigningKeyError as e:
            raise WorkflowError(f"--sticky-checkpoints-key: {e}") from None
        try:
            self.store = CheckpointStore(store_dir, signing_key=key)
        except StoreError as e:
            raise WorkflowError(f"--sticky-checkpoints {store_dir}: {e}") from None
        self.workflow, self.logger, self.template_of = workflow, logger, template_of
        # Where Snakemake runs jobs and their paths start: after a `workdir:` directive, not
        # where it was started (workflow.workdir_init); the executor starts after parsing.
        self.workdir = Path(os.getcwd())
        self.keys = KeyComputer(workflow, self.workdir, templates_file, roots)
        if not process_state_measured():
            logger.warning(
                "checkpoints: a Snakefile was read in this Python process before the sticky "
                "plugin was imported, so what the launch set cannot be told from what the "
                "workflow set: run: blocks are keyed by this process's whole library state "
                "(sound, but a store filled by another launch may not restore them); import "
                "snakemake_executor_plugin_sticky first to avoid this"
            )
        self._uncacheable: set[str] = set()  # warnings already given (one per rule and cause)
        if self.store.read_only:
            logger.warning(
                f"checkpoints: the store {self.store.root} is read-only: restoring from it, "
                "storing nothing in it"
            )
        self._run_context = self.store.run(run_id)
        self._run = self._run_context.__enter__()
        self._to_store: dict[Any, tuple[str, dict[str, str]]] = {}
        self._decided: set[Any] = set()  # keyed on final inputs already: never look again
        self._queue: queue.Queue[Optional[_StoreTask]] = queue.Queue()
        self._writer: Optional[threading.Thread] = None
        self._writing: Optional[str] = None  # the job the writer stores now
        self.restored = 0
        self.stored = 0
        self.keys_computed = 0
        self.key_seconds = 0.0
        self._closed = False
        self._restored_keys: dict[Any, tuple[str, dict[str, str]]] = {}
        self._tree: Optional[TreeWatch] = None
        self._suspects: list[tuple[Any, list[str], _StoreTask]] = []
        self._worker_writes: set[str] = set()
        self._restored_temps: list[str] = []
        self._any_failed = False

    # ---- before scheduling -----------------------------------------------------------------

    def restore_ahead(self) -> int:
        """Restore every unchanged job whose upstream is settled; return how many."""
        workflow = self.workflow
        needrun = set(compat.needrun_jobs(workflow))
        done: set[Any] = set()
        order = [list(layer) for layer in compat.toposorted(workflow, needrun)]
        for layer in order:
            for job in layer:
                if not self._settled(job, needrun, done):
                    continue
                self._decided.add(job)
                if self._restore(job):
                    done.add(job)
        self._run.publish()  # a concurrent gc keeps what was just restored
        if done:
            # Snakemake's metadata, once every restore is in place (keys read the restored
            # files, not the metadata): one pass, in the order restored.
            compat.mark_finished(workflow, [j for layer in order for j in layer if j in done])
            # The restored outputs are on disk with their metadata: let Snakemake decide
            # again, from scratch and with its own rules, what still needs to run.
            compat.recompute_needrun(workflow, needrun, done)
            back = compat.keep_needrun(workflow, needrun - done, done)
            if back:
                self.logger.info(
                    f"checkpoints: {len(back)} job(s) run as in a fresh run after the restored "
                    f"jobs they follow ({_count_rules(set(back))})"
                )
            self._restored_temps.extend(f for job in done for f in compat.temp_outputs(job))
            # A restored job Snakemake still wants to run (e.g. a link output whose target
            # is not there) is run, and stored, not counted as restored.
            rerun = done & set(compat.needrun_jobs(workflow))
            for job in rerun:
                done.discard(job)
                self.restored -= 1
                self._to_store[job] = self._restored_keys[job]
            if rerun:
                self.logger.info(
                    f"checkpoints: Snakemake runs {len(rerun)} restored job(s) again "
                    f"({_count_rules(rerun)}): they count as run, not restored"
                )
            if done:
                self.logger.info(
                    f"checkpoints: restored {len(done)} job(s) before scheduling "
                    f"({_count_rules(done)}); {len(compat.needrun_jobs(workflow))} to run"
                )
        if not compat.needrun_jobs(workflow):
            self.close()  # Snakemake stops here: "Nothing to be done"
        return len(done)

    def plan(self) -> list[PlannedJob]:
        """What a run would do, job by job, without restoring or running anything."""
        needrun = set(compat.needrun_jobs(self.workflow))
        would_restore: set[Any] = set()
        planned = []
        for layer in compat.toposorted(self.workflow, needrun):
            for job in sorted(layer, key=lambda j: (j.rule.name, str(j))):
                item = self._plan_one(job, needrun, would_restore)
                if item.restore:
                    would_restore.add(job)
                planned.append(item)
        return planned

    def _plan_one(self, job: Any, needrun: set[Any], would_restore: set[Any]) -> PlannedJob:
        if compat.is_forced(self.workflow, job):
            return PlannedJob(job, False, ["forced"])
        if not _eligible(job):
            return PlannedJob(job, False, ["not restorable (group, checkpoint, pipe or no output)"])
        upstream = [
            d
            for d in compat.dependencies(self.workflow, job)
            if d in needrun and d not in would_restore
        ]
        if upstream:
            names = sorted({d.rule.name for d in upstream})
            return PlannedJob(job, False, [f"upstream rule(s) run: {', '.join(names)}"])
        keyed = self._key(job)
        if keyed is None:
            return PlannedJob(job, False, ["no provenance key"])
        key, comps = keyed
        try:
            manifest = self.store.lookup(key)
        except StoreError as e:
            return PlannedJob(job, False, [str(e)])
        finally:
            self._report_problems()
        if manifest is None:
            return PlannedJob(job, False, self._why_new(job, comps) or ["never stored"])
        reason = refusal(manifest.outputs, *self._declared(job))
        if reason is not None:
            return PlannedJob(job, False, [f"checkpoint {key[:12]} is refused: {reason}"])
        if not all(self.store.has(d) for d in manifest.digests()):
            return PlannedJob(job, False, ["stored objects are missing"])
        for name, entry in manifest.outputs.items():
            full = str(self.workdir / name)
            digest = planned_digest(entry, full, self.keys.digests)
            if digest is not None:
                self.keys.digests.assume(full, digest)
        return PlannedJob(job, True, [f"checkpoint {key[:12]}"])

    # ---- when a job is about to run, and after it succeeded ---------------------------------

    def restore(self, job: Any) -> bool:
        """Restore a job about to run if its key is stored; else note its key for storing."""
        if job in self._decided or not _eligible(job):
            return False
        self._decided.add(job)
        restored = self._restore(job)
        if restored:
            self._run.publish()
        return restored

    def record_success(self, job: Any) -> None:
        """Store a successful job's outputs, logs and benchmark under its key.

        The files are hard-linked into the store's staging area at once (so a temp() output
        deleted a moment later is still stored, whole), and hashed, copied and synced by a
        background writer: storing stays off Snakemake's scheduling path."""
        self.keys.process_may_have_changed()
        if self._tree is not None and job in self._to_store:
            undeclared = self._tree.ended(job)
            if undeclared:
                # Maybe a sticky worker's (a template build or an invocation running beside
                # it, reported by their audit hook, possibly later): decided at the end, on
                # the files as they are now where they can be staged (a temp() output may be
                # gone by then; a link or folder is read then, and not stored if gone).
                task = self._prepare(job)
                if task is not None:
                    self._suspects.append((job, undeclared, task))
                return
        task = self._prepare(job)
        if task is not None:
            self._submit(task)

    def written_by_workers(self, paths: list[str]) -> None:
        """Files sticky workers changed (template builds, invocations): a non-sticky job
        that ran meanwhile is not blamed for them. Called from the manager's thread."""
        self._worker_writes.update(paths)

    def _settle_suspects(self) -> None:
        """Jobs that ran while undeclared files changed: stored if every such file was a
        sticky worker's, else left out of the store with a warning naming the files."""
        suspects, self._suspects = self._suspects, []
        writes = frozenset(self._worker_writes)  # one copy: the manager's thread adds to it
        for job, undeclared, task in suspects:
            left = [p for p in undeclared if p.rstrip(os.sep) not in writes]
            left = [p for p in left if not _under(p, writes)]
            if left:
                self._discard(task)
                self._uncacheable_now(job, left)
            else:
                self._submit(task)

    def _uncacheable_now(self, job: Any, undeclared: list[str]) -> None:
        self._to_store[job] = ("", {})  # uncacheable() pops it and warns
        self.uncacheable(job, undeclared, seen_by="changed while it ran")

    @staticmethod
    def _discard(task: "_StoreTask") -> None:
        if task.staging is not None:
            shutil.rmtree(task.staging, ignore_errors=True)

    def _prepare(self, job: Any) -> Optional["_StoreTask"]:
        """What storing a successful job takes, its files hard-linked into the store's
        staging area where they can be (None: nothing to store)."""
        keyed = self._to_store.pop(job, None)
        if keyed is None or self.store.read_only:
            return None
        key, comps = keyed
        paths = [*map(str, job.output), *map(str, job.log)]
        if job.benchmark is not None:
            paths.append(str(job.benchmark))
        outputs = {self.keys.path(p): p for p in paths if os.path.lexists(p)}
        task = _StoreTask(key, comps, job.rule.name, self._identity(job), str(job), outputs)
        staged = self._stage(outputs)
        if staged is not None:
            task.outputs, task.staging = staged, next(iter(staged.values())).parent
        return task

    def _submit(self, task: "_StoreTask") -> None:
        if task.staging is None:  # a directory, or the store is on another file system
            self._write(task)
            return
        if self._writer is None:
            self._writer = threading.Thread(
                target=self._write_loop, name="checkpoint-writer", daemon=True
            )
            self._writer.start()
        self._queue.put(task)

    def started(self, job: Any) -> None:
        """A job that runs outside a sticky worker (``shell:``, ``run:``, a plain script)
        starts: note the working directory's files, to see at its end what it changed
        outside its declared files (:mod:`._tree_watch`)."""
        if job not in self._to_store:
            return
        if self._tree is None:
            skip = [str(Path(self.workflow.persistence.path)), str(self.store.root)]
            self._tree = TreeWatch(str(self.workdir), self._declared_anywhere(), skip)
        self._tree.started(job)

    def failed(self, job: Any) -> None:
        self._any_failed = True
        self.keys.process_may_have_changed()
        if self._tree is not None:
            self._tree.forget(job)

    def _declared_anywhere(self) -> Declared:
        """Every output, log and benchmark any job of the run declares (directory outputs
        with everything inside them), relative to the working directory."""
        files, folders = [], []
        for job in compat.all_jobs(self.workflow):
            paths = [*job.output, *job.log]
            if job.benchmark is not None:
                paths.append(job.benchmark)
            for f in paths:
                rel = self.keys.path(str(f))
                files.append(rel)
                if getattr(f, "is_directory", False) or os.path.isdir(str(f)):
                    folders.append(rel)
        return Declared(files, folders)

    def uncacheable(self, job: Any, undeclared: list[str], seen_by: str = "changed") -> None:
        """A job that changed files it does not declare is not stored: a restore would put
        back its outputs without those changes, unlike a rerun."""
        if self._to_store.pop(job, None) is None:
            return
        shown = ", ".join(undeclared[:3]) + (
            f" and {len(undeclared) - 3} more" if len(undeclared) > 3 else ""
        )
        if seen_by == "changed":  # the audit hook saw the job itself write them
            what = f"changed {shown}, outside its declared outputs, logs and benchmark"
        else:  # the working directory's listing saw them change while it ran
            what = (
                f"ran while {shown} changed (by it, or by a job running beside it), outside "
                "the declared outputs, logs and benchmarks"
            )
        self.logger.warning(
            f"checkpoints: rule {job.rule.name} ({', '.join(map(str, job.output))}) {what}: "
            "it is not stored and runs every time (declare them as outputs or log: to make "
            "it restorable)"
        )

    def _stage(self, outputs: dict[str, str]) -> Optional[dict[str, Path]]:
        staged: dict[str, Path] = {}
        try:
            staging = self.store.staging_dir()
        except (OSError, StoreError):
            return None
        try:
            for i, (name, path) in enumerate(outputs.items()):
                if os.path.isdir(path) or os.path.islink(path):
                    # A hard link would take a link's target, and cannot take a directory:
                    # these are stored as they are, at once.
                    raise IsADirectoryError(path)
                os.link(path, staging / str(i))
                staged[name] = staging / str(i)
        except OSError:
            shutil.rmtree(staging, ignore_errors=True)
            return None
        return staged if staged else None

    def _write_loop(self) -> None:
        while (task := self._queue.get()) is not None:
            self._write(task)

    def _write(self, task: "_StoreTask") -> None:
        self._writing = task.job
        try:
            self._run.record(
                task.key,
                task.outputs,
                self.workdir,
                meta={"rule": task.rule, "components": task.components},
            )
            self.store.remember(task.identity, task.key)
            self.stored += 1
        except (OSError, StoreError) as e:
            self.logger.warning(f"checkpoints: could not store {task.job}: {e}")
        finally:
            self._writing = None
            if task.staging is not None:
                shutil.rmtree(task.staging, ignore_errors=True)

    def _pending(self) -> str:
        queued = self._queue.qsize()
        now = self._writing
        return (f"{now}" if now else "between jobs") + (
            f", {queued - 1} more job(s) queued" if queued > 1 else ""
        )

    def close(self, complete: bool = False) -> None:
        """Finish storing, then record the run (what garbage collection must keep).

        ``complete``: the run ended normally; if no job failed, the ``temp()`` outputs of
        restored jobs that are still there go, as a fresh run removes them once their
        consumers ran. Snakemake forgets a restored job's consumers when it cleans its
        finished jobs out of the DAG, so it cannot (Snakemake's ``test_github_issue2732``)."""
        if self._closed:
            return
        self._closed = True
        if complete and not self._any_failed:
            for f in compat.removable_temps(self.workflow, self._restored_temps):
                self.logger.info(f"Removing temporary output {f}.")
                _remove_path(f)
        self._settle_suspects()
        if self._writer is not None:
            self._queue.put(None)
            if not wait_for_writer(self._writer, self._pending, self.logger.info):
                self.logger.warning(
                    f"checkpoints: stopped waiting for the checkpoint writer after "
                    f"{WRITER_DEADLINE_S:.0f} s (storing {self._pending()}); the jobs not stored "
                    f"yet run again next time. Check that the store ({self.store.root}) is on a "
                    "file system that answers"
                )
        self._note_resting()
        self._run_context.__exit__(None, None, None)
        self.logger.info(
            f"checkpoints: {self.restored} job(s) restored, {self.stored} stored "
            f"({self.store.root})"
        )
        if self.keys_computed:
            each = 1000 * self.key_seconds / self.keys_computed
            self.logger.info(
                f"checkpoints: {self.keys_computed} provenance key(s) in "
                f"{self.key_seconds:.2f} s ({each:.2f} ms per job)"
            )

    # ---- internals --------------------------------------------------------------------------

    def _note_resting(self) -> None:
        """Name in the run record the keys every eligible job's outputs rest on (its key
        history in the store), so ``ckptstore gc --keep-runs 1`` after a "Nothing to be done"
        run keeps them. Jobs that ran and were not stored (failed, uncacheable) are left out."""
        if self.store.read_only:
            return
        try:
            for job in compat.all_jobs(self.workflow):
                if _eligible(job) and job not in self._to_store:
                    self._run.rests_on(self.store.history(self._identity(job)))
        except (OSError, StoreError) as e:
            self.logger.warning(f"checkpoints: could not note the keys outputs rest on: {e}")
        finally:
            self._report_problems()

    def _settled(self, job: Any, needrun: set[Any], restored: set[Any]) -> bool:
        """Whether a job's inputs are final now: every upstream job that had to run was
        restored. Forced jobs (-R, -F) are never restored: the user asked for a rerun."""
        return (
            _eligible(job)
            and not compat.is_forced(self.workflow, job)
            and all(
                d not in needrun or d in restored for d in compat.dependencies(self.workflow, job)
            )
        )

    def _key(self, job: Any) -> Optional[tuple[str, dict[str, str]]]:
        started = time.perf_counter()
        try:
            return self._key_of(job)
        finally:
            self.key_seconds += time.perf_counter() - started
            self.keys_computed += 1

    def _key_of(self, job: Any) -> Optional[tuple[str, dict[str, str]]]:
        try:
            comps = self.keys.components(job, self.template_of(job))
        except Uncacheable as e:
            said = f"{job.rule.name}: {e}"
            if said not in self._uncacheable:  # once per rule and cause, not per job
                self._uncacheable.add(said)
                self.logger.warning(
                    f"checkpoints: rule {job.rule.name} is not cached: {e}; its jobs run"
                )
            return None
        except Exception as e:  # a key we cannot compute only costs the checkpoint
            self.logger.warning(f"checkpoints: no provenance key for {job} ({e}); it runs")
            return None
        return provenance_key(comps), comps

    def _restore(self, job: Any) -> bool:
        keyed = self._key(job)
        if keyed is None:
            return False
        key, comps = keyed
        if not compat.is_forced(self.workflow, job):
            allowed, required = self._declared(job)
            try:
                manifest = self._run.restore(key, self.workdir, allowed, required)
            except CorruptObjectError as e:
                self.logger.warning(f"checkpoints: {e}; rule {job.rule.name} runs instead")
                manifest = None
            except (StoreError, OSError) as e:  # e.g. an output's folder cannot be written
                self.logger.warning(
                    f"checkpoints: {e}; rule {job.rule.name} ({', '.join(map(str, job.output))}) "
                    "runs instead"
                )
                manifest = None
            finally:
                self._report_problems()
            if manifest is not None:
                self.restored += 1
                self._restored_keys[job] = (key, comps)
                self.logger.debug(
                    f"Restored {', '.join(map(str, job.output))} from checkpoint "
                    f"{key[:12]} (rule {job.rule.name})"
                )
                return True
            reasons = self._why_new(job, comps)
            if reasons:
                self.logger.info(
                    f"checkpoints: rule {job.rule.name} ({', '.join(map(str, job.output))}) "
                    f"reruns: {'; '.join(reasons)}"
                )
        self._to_store[job] = (key, comps)
        return False

    def _why_new(self, job: Any, comps: dict[str, str]) -> list[str]:
        previous = self.store.recall(self._identity(job))
        manifest = self.store.lookup_unverified(previous) if previous else None
        self._report_problems()
        if manifest is None or "components" not in manifest.meta:
            return []
        return explain_change(manifest.meta["components"], comps)

    def _identity(self, job: Any) -> str:
        return json.dumps([job.rule.name, sorted(self.keys.path(str(o)) for o in job.output)])

    def _declared(self, job: Any) -> tuple[set[str], set[str]]:
        """The names a restore may write for a job (its outputs, logs and benchmark) and
        those it must (its outputs), relative to the working directory."""
        outputs = {self.keys.path(str(o)) for o in job.output}
        allowed = outputs | {self.keys.path(str(f)) for f in job.log}
        if job.benchmark is not None:
            allowed.add(self.keys.path(str(job.benchmark)))
        return allowed, outputs

    def _report_problems(self) -> None:
        """Say, once each, which records the store set aside (their jobs run)."""
        while self.store.problems:
            self.logger.warning(f"checkpoints: {self.store.problems.pop(0)}")


def _eligible(job: Any) -> bool:
    """Jobs whose outputs can be restored: not groups, Snakemake checkpoints, pipes or
    services (their outputs are streams or change the DAG), not jobs that update a file in
    place or read one before it is updated (``update()``, ``before_update()``: their order,
    not their inputs' content, decides what they see), and with outputs at all."""
    return (
        not job.is_group()
        and bool(job.output)
        and not job.is_checkpoint
        and not job.is_pipe
        and not job.is_service
        and not compat.updates_in_place(job)
    )


def _under(rel: str, writes: frozenset[str]) -> bool:
    """A folder a worker's write created (``builds/`` for ``builds/marker``)."""
    return rel.endswith(os.sep) and any(w.startswith(rel) for w in writes)


def _count_rules(jobs: set[Any]) -> str:
    counts: dict[str, int] = {}
    for job in jobs:
        counts[job.rule.name] = counts.get(job.rule.name, 0) + 1
    return ", ".join(f"{n} {rule}" for rule, n in sorted(counts.items()))


def render_plan(planned: list[PlannedJob], store: Path) -> str:
    """The plan as a person reads it: per rule, restored and run counts, then each job that
    runs with its reasons."""
    lines = [f"checkpoint plan (store {store}):"]
    per_rule: dict[str, list[int]] = {}
    for item in planned:
        counts = per_rule.setdefault(item.job.rule.name, [0, 0])
        counts[0 if item.restore else 1] += 1
    width = max((len(r) for r in per_rule), default=4)
    lines.append(f"  {'rule':<{width}}  restore  run")
    for rule, (restore, run) in per_rule.items():
        lines.append(f"  {rule:<{width}}  {restore:>7}  {run:>3}")
    total_restore = sum(c[0] for c in per_rule.values())
    total_run = sum(c[1] for c in per_rule.values())
    lines.append(f"  {'total':<{width}}  {total_restore:>7}  {total_run:>3}")
    running = [item for item in planned if not item.restore]
    if running:
        lines.append("jobs that would run:")
        for item in running:
            outputs = ", ".join(map(str, item.job.output)) or "(no outputs)"
            lines.append(f"  {item.job.rule.name} ({outputs}): {'; '.join(item.reasons)}")
    return "\n".join(lines)


def _remove_path(path: str) -> None:
    """Remove a file, link or folder (a ``temp(directory(...))``), as Snakemake removes a
    temporary output; gone already is fine."""
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
        return
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
