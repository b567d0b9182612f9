"""SHADHO asynchronously: one long-running driver hands trials to sticky workers.

``python -m snakemake_shadho search SPEC --out DIR`` (or ``execution: async`` in the search
spec, which makes ``rules/hpo.smk`` run the search as one job) runs the search on the sticky
runtime, the one the sticky executor runs Snakemake jobs on
(:class:`snakemake_executor_plugin_sticky.manager.Manager`): its workers, authenticated links on
loopback (or the cluster's network for pilots), heartbeats, and the requeue of a trial whose
worker was lost. Each hardware class is a sticky template (:mod:`._trial_worker`): its
``count`` workers import the objective and build the spec's sticky template state once, and
every trial runs in a child forked from that warm process, so no trial sees what another
did to its process. Workers are

- local processes, when no class names a ``slurm_partition``;
- Slurm pilot jobs, one per worker, when every class names one: ``sbatch`` options from the
  class's ``slurm_partition``, ``cpus``, ``mem_mb``, ``gres``, ``constraint``,
  ``slurm_account``, ``qos`` and ``runtime`` through the sticky executor's one mapping of
  resources to Slurm options (:func:`snakemake_executor_plugin_sticky.slurm.sbatch_options`).

The driver keeps each class's workers busy: whenever one of its trials ends, the class gets
its next trial from :class:`.AsyncSearch` at once (no rounds, no barrier). After every result
it rewrites ``DIR/history.jsonl`` (every finished trial's record, atomically) and
``DIR/plans.json`` (the plans so far), so a stopped search keeps every finished trial and a
rerun resumes from them; the report comes last. The runtime's own files (worker logs, its
event log) are in ``DIR/sticky/<run id>/``.
"""

import json
import os
import queue
import secrets
import sys
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Optional

from ._async import AsyncSearch
from ._errors import ShadhoError
from ._failures import check_failures, first_line, is_undeclared
from ._hardware import HardwareClass
from ._spec import SearchSpec
from ._store import read_json, read_jsonl, write_json, write_jsonl
from ._trial import planned_fields
from ._trial_worker import TRIAL_SCRIPT, template_of, templates_source

MAX_REQUEUES = 3
"""How often a trial whose worker was lost runs again before it counts as failed."""


def backend_of(classes: Mapping[str, HardwareClass]) -> str:
    """``slurm`` when every class names a partition, ``local`` when none does; one line
    naming the classes otherwise (the search's workers all go through one backend)."""
    on_slurm = [n for n, c in classes.items() if c.slurm_partition]
    if not on_slurm:
        return "local"
    if len(on_slurm) == len(classes):
        return "slurm"
    local = [n for n in classes if n not in on_slurm]
    raise ShadhoError(
        f"execution: async runs every worker through one backend, but classes "
        f"{', '.join(on_slurm)} name a slurm_partition and {', '.join(local)} do not: give "
        "every class a slurm_partition (Slurm pilots) or none (local processes)"
    )


def pilot_resources(cls: HardwareClass) -> dict[str, Any]:
    """The sticky pilot resources of a class's workers (the Slurm executor plugin's
    vocabulary; the sticky runtime maps them to ``sbatch`` options)."""
    from snakemake_executor_plugin_sticky.slurm import PILOT_RESOURCES

    return {k: v for k, v in cls.resources().items() if k in PILOT_RESOURCES}


@dataclass
class _Ended:
    """What the runtime said about one trial's invocation (from its I/O thread)."""

    invocation_id: int
    ok: bool
    error: Optional[str]
    done: Any


@dataclass
class _Requeued:
    invocation_id: int


_RERUN = "a rerun redoes those trials"


def run_search(
    spec: SearchSpec,
    spec_file: str,
    out_dir: "str | os.PathLike[str]",
    search_dirs: Sequence[str] = (),
    budget: Optional[int] = None,
    env: Optional[Mapping[str, str]] = None,
    log: Callable[[str], None] = lambda line: print(line, file=sys.stderr, flush=True),
    max_requeues: int = MAX_REQUEUES,
) -> list[dict[str, Any]]:
    """Run the search asynchronously on sticky workers of its classes; return the history.

    ``budget`` trials in all (default ``spec.budget``), the finished ones in
    ``out_dir/history.jsonl`` counting toward it (a rerun resumes). ``env`` is added to the
    workers' environment.
    """
    from snakemake_executor_plugin_sticky._metrics import MetricsLog
    from snakemake_executor_plugin_sticky.manager import Manager

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    history_file, plans_file = out / "history.jsonl", out / "plans.json"
    history = read_jsonl(history_file) if history_file.exists() else []
    # Trials an error in the objective failed are redone by a rerun (after the fix).
    history = [r for r in history if not is_undeclared(r)]
    plans = read_json(plans_file) if plans_file.exists() else []
    search = AsyncSearch(spec, history=history)
    search.plans = len(plans)
    total = spec.budget if budget is None else budget
    if len(history) >= total:
        log(f"shadho: {len(history)} trials already finished in {out} (budget {total})")
        return history
    backend = backend_of(spec.classes)
    resources = {n: pilot_resources(c) for n, c in spec.classes.items()}
    if backend == "slurm":
        for warning in check_pilots(resources):
            log(f"shadho: {warning}")
    run_id = f"{time.strftime('%Y%m%dT%H%M%S')}-{secrets.token_hex(3)}"
    run_dir = (out / "sticky" / run_id).resolve()
    records = run_dir / "records"
    records.mkdir(parents=True)
    templates_file = run_dir / "sticky_templates.py"
    dirs = [os.path.abspath(d) for d in search_dirs]
    templates_file.write_text(
        templates_source(os.path.abspath(spec_file), list(spec.classes), dirs), encoding="utf-8"
    )
    script_source = TRIAL_SCRIPT.read_text(encoding="utf-8")
    events: queue.Queue[_Ended | _Requeued] = queue.Queue()
    manager = Manager(
        max_workers=sum(c.count for c in spec.classes.values()),
        max_per_template={template_of(n): c.count for n, c in spec.classes.items()},
        run_dir=run_dir,
        workdir=Path(os.getcwd()),
        on_done=lambda i, ok, error, done: events.put(_Ended(i, ok, error, done)),
        on_requeue=lambda i: events.put(_Requeued(i)),
        metrics=MetricsLog(run_dir / "metrics.jsonl"),
        max_requeues=max_requeues,
        backend=backend,
        run_id=f"shadho-{run_id}",
    )
    # The sticky runtime builds each class's state single-threaded, whatever the driver's
    # environment says (as rule hpo_search it has OMP_NUM_THREADS set to the job's threads;
    # _worker_env); each trial's pools are then sized to its class's cpus (the snakemake
    # object's threads), as a fresh process of that class would size them.
    manager.worker_env.update(env or {})
    running: dict[int, dict[str, Any]] = {}
    ids = iter(range(1, sys.maxsize))
    handed = len(history)
    log(
        f"shadho: {sum(c.count for c in spec.classes.values())} sticky workers starting as "
        + ("Slurm pilots" if backend == "slurm" else "local processes")
        + " ("
        + ", ".join(f"{c.count} {n}" for n, c in spec.classes.items())
        + f"); {len(history)} of {total} trials already finished; runtime files in {run_dir}"
    )
    t0 = time.perf_counter()

    def save(history_too: bool = True) -> None:
        if history_too:
            write_jsonl(history_file, search.history)
        if search.last_plan is not None and len(plans) < search.plans:
            plans.append(search.last_plan)
            write_json(plans_file, plans)

    def hand_out(hw_class: str) -> None:
        nonlocal handed
        trial = search.next_for(hw_class)
        save(history_too=False)  # a new plan, if this trial needed one
        handed += 1
        invocation_id = next(ids)
        running[invocation_id] = trial
        manager.submit(
            _invoke(
                invocation_id,
                trial,
                spec.classes[hw_class],
                templates_file,
                script_source,
                records / f"{invocation_id}.json",
                dirs,
            ),
            resources[hw_class],
        )

    def finish(event: _Ended) -> None:
        trial = running.pop(event.invocation_id)
        hw_class = trial["hw_class"]
        record_file = records / f"{event.invocation_id}.json"
        if event.done is not None and event.done.template_failed:
            raise ShadhoError(
                f"the workers of class {hw_class} could not load the objective or build their "
                f"state ({template_of(hw_class)}):\n{event.error}"
            )
        if not event.ok and event.done is None and _workers_failed(manager, hw_class):
            raise ShadhoError(
                f"the workers of class {hw_class} could not start or build their state; the "
                f"search stopped before trial {trial['trial']} ran: {event.error}"
            )
        record = _read_record(record_file) if event.ok else None
        if record is None:
            why = event.error if not event.ok else "it ended without writing its record"
            record = _lost_record(trial, why or "its invocation failed")
        record_file.unlink(missing_ok=True)
        search.tell(trial, record.get("loss"), float(record.get("duration_s", 0.0)))
        # The worker's own record (host, cpu_s, error...) over the planned fields.
        mine = {**search.history[-1], **record, "hw_class": hw_class}
        search.history[-1] = mine
        save()
        outcome = (
            f"loss {record.get('loss')}"
            if record.get("status") == "ok"
            else f"failed: {first_line(record)}"
        )
        log(
            f"shadho: {len(search.history)}/{total} {trial['trial']} on {hw_class}: "
            f"{outcome} ({time.perf_counter() - t0:.1f} s)"
        )
        if is_undeclared(mine):  # where in the objective, as a job's traceback
            log(textwrap.indent(str(mine.get("error")), "    "))
        for note in event.done.warnings if event.done is not None else []:
            log(f"shadho: trial {trial['trial']}: {note}")
        if event.done is not None and event.done.retire:
            log(
                f"shadho: trial {trial['trial']} changed its {hw_class} worker's process "
                f"({event.done.retire}); a fresh process would not carry that to the next "
                "trial, so the worker is retired and the next trial gets a fresh one (direct "
                "mode)"
            )
        check_failures(search.history, spec.max_failed_trials, _RERUN)
        if handed < total:
            hand_out(hw_class)

    ok = False
    try:
        for name, cls in spec.classes.items():
            for _ in range(cls.count):
                if handed < total:
                    hand_out(name)
        while running:
            event = events.get()
            if isinstance(event, _Requeued):
                trial = running.get(event.invocation_id)
                (records / f"{event.invocation_id}.json").unlink(missing_ok=True)
                if trial is not None:
                    log(
                        f"shadho: trial {trial['trial']} lost its {trial['hw_class']} worker; "
                        "it runs again on a fresh one"
                    )
                continue
            finish(event)
        ok = True
    finally:
        if ok:
            manager.shutdown()
        else:
            manager.cancel()
    return search.history


_SPEC_KEY = {"cpus_per_task": "cpus"}


def check_pilots(resources: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """Ask Slurm, before anything is submitted, whether it would take every class's pilots
    (the sticky executor's check: partitions, limits, GPUs, Slurm's own verdict on the sbatch
    line); raise one error naming each problem's ``hpo.hardware`` key; return the warnings."""
    from snakemake_executor_plugin_sticky._slurm_checks import PilotClass, check_before_submit

    pilots = [
        PilotClass(
            template_of(name),
            dict(res),
            sources={k: f"hpo.hardware.{name}.{_SPEC_KEY.get(k, k)}" for k in res},
        )
        for name, res in resources.items()
    ]
    result = check_before_submit(pilots, os.environ)
    if result.problems:
        raise ShadhoError(result.message())
    return list(result.warnings)


def _workers_failed(manager: Any, hw_class: str) -> bool:
    """Whether the runtime gave up on a class's workers (they failed to start, or were lost
    building their state, too often): the search cannot go on, no trial is to blame."""
    scheduler = manager.scheduler
    return bool(scheduler.failed_classes) or template_of(hw_class) in scheduler.failed_templates


def _invoke(
    invocation_id: int,
    trial: Mapping[str, Any],
    cls: HardwareClass,
    templates_file: Path,
    script_source: str,
    record_file: Path,
    search_dirs: Sequence[str],
) -> Any:
    """The sticky invocation of one trial: ``_trial_job.py`` against its class's template,
    with a ``snakemake`` object whose one output is the trial's record."""
    from snakemake_executor_plugin_sticky._protocol import Invoke
    from snakemake_executor_plugin_sticky._snakemake_compat import script_object

    template = template_of(cls.name)
    smk = script_object(
        output=[str(record_file)],
        params={"trial": dict(trial)},
        wildcards={"trial": str(trial["trial"])},
        threads=cls.cpus,
        resources={"_cores": cls.cpus, "_nodes": 1, "sticky": template},
        rule="shadho_trial",
        scriptdir=str(TRIAL_SCRIPT.parent),
    )
    return Invoke(
        invocation_id=invocation_id,
        template=template,
        templates_file=str(templates_file),
        script_path=str(TRIAL_SCRIPT),
        script_source=script_source,
        scriptdir=None,
        snakemake=smk,
        isolation="fork",
        workdir=os.getcwd(),
        # sys.path as a script: job's preamble leaves it: the objective's folders after the
        # worker's own path (the template built with them too).
        searchpaths=list(search_dirs),
    )


def _read_record(path: Path) -> Optional[dict[str, Any]]:
    try:
        with open(path, encoding="utf-8") as f:
            record = json.load(f)
    except (OSError, json.JSONDecodeError):
        return None
    return record if isinstance(record, dict) else None


def _lost_record(trial: Mapping[str, Any], why: str) -> dict[str, Any]:
    """The record of a trial that ended without one (its process died, or its worker was
    lost more than ``max_requeues`` times): a failure the objective did not declare."""
    record = planned_fields(trial)
    now = time.time()
    record.update(
        status="fail",
        loss=None,
        error=f"RuntimeError: the trial ended without a result: {why}",
        declared=False,
        extra={},
        duration_s=0.0,
        cpu_s=0.0,
        started=now,
        finished=now,
    )
    return record
