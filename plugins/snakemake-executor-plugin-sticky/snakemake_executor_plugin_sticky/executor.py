"""The Snakemake-facing executor: routes sticky jobs to workers, everything else to ``local``
(under ``--sticky-backend slurm``: to Slurm, through snakemake-executor-plugin-slurm)."""

import datetime
import itertools
import os
import secrets
import shutil
import signal
import socket
import sys
import threading
import time
import traceback
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Optional, Union

from snakemake_interface_common.exceptions import WorkflowError
from snakemake_interface_executor_plugins.executors.base import SubmittedJobInfo
from snakemake_interface_executor_plugins.executors.real import RealExecutor
from snakemake_interface_executor_plugins.jobs import JobExecutorInterface
from snakemake_interface_executor_plugins.settings import ExecMode

from stickyinvoc import STICKY_RESOURCE, TEMPLATES_ENV_VAR, TEMPLATES_FILENAME
from stickyinvoc._templates import TemplateError, find_templates_file, read_declarations

from ._checkpoints import RunCheckpoints, render_plan
from ._hybrid import start_slurm_executor
from ._metrics import MetricsLog, RunTotals, summarize
from ._mode import hybrid
from ._preamble import compile_script
from ._progress import ProgressReporter, end_line, results_line, start_line
from ._protocol import InvocationDone, Invoke
from ._shell_prefix import PrefixEffects, probe
from ._slurm_checks import check_before_submit, pilot_classes
from ._slurm_health import SlurmWatch
from ._snakemake_compat import (
    CliException,
    LocalExecutor,
    ScriptSources,
    all_jobs,
    check_snakemake,
    default_resources,
    final_outputs,
    needrun_jobs,
    prepare_job,
    progress_counts,
    quick_pipe_lookups,
    quiet_wakeups,
    rule_location,
    terminal_stream_handler,
    user_shell,
)
from ._terminal import CondensedOutput
from .manager import Manager
from .settings import ExecutorSettings, PilotLimits, pilot_limits, settings_problems
from .slurm import PILOT_RESOURCES, SlurmError


class Executor(RealExecutor):
    """Runs opted-in ``script:`` jobs as invocations on sticky workers.

    Everything else (``shell:``, ``run:``, other scripts, group jobs) is handed to an embedded
    instance of Snakemake's own local executor, so it behaves exactly as under
    ``--executor local``. Under ``--sticky-backend slurm`` the run is cluster execution (see
    ``_mode``): Snakemake runs ``localrules`` itself, and everything else that does not opt in
    goes to an embedded snakemake-executor-plugin-slurm executor, exactly as under
    ``--executor slurm``. Sticky job outcomes are pushed by the workers; there is no polling.
    """

    _wakeups = False
    """Whether Snakemake's scheduler wakes through :class:`._snakemake_compat.Wakeups`."""

    def __post_init__(self) -> None:
        try:
            self._start()
        except WorkflowError as e:
            # Every check here is about the user's workflow, templates or settings, and says
            # what to fix: Snakemake prints a CliException as that message alone, where a
            # WorkflowError would add this module's frames (issue 31).
            raise CliException(str(e)) from None

    def _start(self) -> None:
        check_snakemake(self.workflow)
        quick_pipe_lookups()  # an aggregating job's prepare: linear, not quadratic
        self.settings: ExecutorSettings = self.workflow.executor_settings or ExecutorSettings()
        _check_settings(self.settings)
        self.hybrid = hybrid()
        # Local backend: jobs that do not opt in run here, as under --executor local.
        self._local = None if self.hybrid else LocalExecutor(self.workflow, self.logger)
        self.templates_file = self._find_templates_file()
        try:
            declarations = (
                read_declarations(self.templates_file) if self.templates_file.is_file() else {}
            )
        except TemplateError as e:
            raise WorkflowError(str(e)) from None
        except SyntaxError as e:  # as Python prints it: the file, the line, the caret
            where = "".join(traceback.format_exception_only(e)).rstrip()
            raise WorkflowError(f"the templates file has a syntax error:\n{where}") from None
        self.declared = {name: d.line for name, d in declarations.items()}
        self.pilot_resources = {name: d.resources for name, d in declarations.items()}
        self.partitions = {name: d.partitions for name, d in declarations.items() if d.partitions}
        self.isolation = {name: d.isolation for name, d in declarations.items()}
        self._check_rules()
        self._check_pilots()
        self.pilot_limits: Optional[PilotLimits] = None
        if self.settings.backend == "slurm":
            self.pilot_limits = pilot_limits(self.settings)
            self._check_pilot_limits(self.pilot_limits)
        self._sources = ScriptSources(self.workflow)
        self._compiled: dict[tuple[str, int], Optional[str]] = {}
        self._told_fresh: set[str] = set()
        self._told_imports: set[str] = set()
        self._prefix: Union[PrefixEffects, str, None] = None
        self._rule_templates: dict[str, Optional[Path]] = {}
        self._manager: Optional[Manager] = None
        self._manager_lock = threading.Lock()
        self._jobs: dict[int, SubmittedJobInfo] = {}
        self._ids = itertools.count(1)
        stamp = datetime.datetime.now().strftime("%Y%m%dT%H%M%S")
        self.run_id = f"{stamp}-{secrets.token_hex(3)}"
        self.run_dir = Path(self.workflow.persistence.path) / "sticky" / self.run_id
        self._progress: Optional[ProgressReporter] = None
        self._open_checkpoints()
        self._condensed: Optional[CondensedOutput] = None
        handler = terminal_stream_handler(self.workflow)
        if handler is not None:
            self._condensed = CondensedOutput(handler, self._busy)
            handler.addFilter(self._condensed)
        # One watch of the cluster's faults for the run: pilots and Slurm jobs share its
        # accounting probe, so that an outage is told once, not once by each.
        self._slurm_watch = SlurmWatch(
            subjects="this run's pilots and Slurm jobs" if self.hybrid else "pilots"
        )
        # Cluster execution: jobs that do not opt in are Slurm jobs of the slurm plugin.
        self._slurm: Any = None
        if self.hybrid:
            try:
                self._slurm = start_slurm_executor(
                    self.workflow, self.logger, self.settings.slurm_options, self._slurm_watch
                )
            except ValueError as e:
                raise CliException(str(e)) from None
        self._announce()

    # ---- what Snakemake calls ---------------------------------------------------------------

    @property
    def cores(self) -> Any:
        return self.workflow.resource_settings.cores

    def get_exec_mode(self) -> ExecMode:
        return ExecMode.DEFAULT

    def get_python_executable(self) -> str:
        return sys.executable if self._local is None else self._local.get_python_executable()

    def run_jobs(self, jobs: list[JobExecutorInterface]) -> None:
        """Under the slurm backend, jobs that are not sticky (nor restored) go to Slurm in one
        batch, so that the slurm plugin can group them into job arrays as it would."""
        if not self._wakeups:  # the scheduler exists once it hands out jobs
            self._wakeups = quiet_wakeups(self.workflow)
        if self._slurm is None:
            super().run_jobs(jobs)
            return
        to_slurm = []
        for job in jobs:
            if self._restored(job, announce=True):
                continue
            template = _template_of_any(job)
            if template is not None and self._fresh_instead(job):
                template = None
            if template is None:
                if self._ckpt is not None:
                    self._ckpt.started(job)
                to_slurm.append(job)  # the slurm plugin announces it as it submits it
                continue
            self.run_job_pre(job)
            self._run_sticky(job, template)
        if to_slurm:
            self._slurm.run_jobs(to_slurm)

    def run_job(self, job: JobExecutorInterface) -> None:
        if self._restored(job):
            return
        template = _template_of_any(job)
        if template is not None and self._fresh_instead(job):
            template = None
        if template is None:
            if self._ckpt is not None:
                self._ckpt.started(job)  # its undeclared writes are seen at its end
            if self._slurm is not None:
                self._slurm.run_jobs([job])
            else:
                assert self._local is not None
                self._local.run_job(job)
            return
        self._run_sticky(job, template)

    def _run_sticky(self, job: JobExecutorInterface, template: str) -> None:
        prepare_job(self.workflow, job)
        invoke = self._invoke(job, template)
        info = SubmittedJobInfo(job=job, external_jobid=f"sticky:{invoke.invocation_id}")
        self._jobs[invoke.invocation_id] = info
        self.report_job_submission(info)
        problem = self._syntax_error(invoke.script_path, invoke.script_source)
        if problem is not None:  # before any worker builds a template for it
            self._jobs.pop(invoke.invocation_id, None)
            self.report_job_error(info, msg=problem)
            return
        pilot = self.pilot_resources_of(template, job.resources, job.rule)
        self._ensure_manager().submit(invoke, pilot)

    def _prefix_effects(self) -> Union[PrefixEffects, str]:
        """What the Snakefile's ``shell.prefix()`` gives a local script job, or why an
        invocation cannot be given it (then the run's sticky jobs run as local script jobs).
        Worked out at the first sticky job (the Snakefile set the prefix while parsed)."""
        if self._prefix is None:
            prefix, suffix, executable = user_shell()
            found = probe(prefix, executable)
            if isinstance(found, PrefixEffects) and found.unsupported:
                found = (
                    f"shell.prefix({prefix!r}) changes what a running interpreter cannot take "
                    f"({', '.join(found.unsupported)})"
                )
            elif isinstance(found, PrefixEffects) and suffix.strip():
                found = f"shell.suffix({suffix!r}) acts after every local script job's interpreter"
            self._prefix = found
        return self._prefix

    def _fresh_instead(self, job: JobExecutorInterface) -> bool:
        """Whether this sticky job runs as a local script job: because of the shell prefix or
        suffix (:meth:`_prefix_effects`), or because its script would find another templates
        file than the workers' (:meth:`_other_templates_file`). Says why once per reason."""
        why = self._prefix_effects()
        if isinstance(why, str):
            why = f"{why}; so this run's sticky jobs run"
        else:
            other = self._other_templates_file(job)
            if other is None:
                return False
            why = (
                f"rule {job.rule.name}'s script finds the templates file {other}, not "
                f"{self.templates_file} (the workers'); give it with --sticky-templates or "
                "$STICKY_TEMPLATES to run it on workers; its jobs run"
            )
        if why not in self._told_fresh:
            self._told_fresh.add(why)
            self.logger.warning(
                f"sticky: {why} as local script jobs (a fresh interpreter, as under "
                "--executor local), not on workers"
            )
        return True

    def _other_templates_file(self, job: JobExecutorInterface) -> Optional[Path]:
        """The templates file ``stickyinvoc.state()`` would find from the job's script folder
        in a fresh run (the nearest upwards), where it is not the workers' file; None where
        it is, or where the file was given (--sticky-templates, $STICKY_TEMPLATES)."""
        rule = job.rule
        if rule.name not in self._rule_templates:
            found: Optional[Path] = None
            script = rule.script
            if isinstance(script, os.PathLike):
                script = os.fspath(script)
            explicit = self.settings.templates or os.environ.get(TEMPLATES_ENV_VAR)
            if not explicit and isinstance(script, str) and "{" not in script:
                if "://" not in script:
                    folder = os.path.dirname(os.path.join(str(rule.basedir), script))
                    nearest = find_templates_file(folder)
                    if nearest is not None and nearest.resolve() != self.templates_file.resolve():
                        found = nearest
            self._rule_templates[rule.name] = found
        return self._rule_templates[rule.name]

    def _syntax_error(self, path: str, source: str) -> Optional[str]:
        """The script's syntax error as Python prints it (its file and line only), or None;
        each script compiled once per run, in this process."""
        key = (path, hash(source))
        if key not in self._compiled:
            try:
                compile_script(source, path)  # behind the preamble, as Snakemake runs it
                self._compiled[key] = None
            except (SyntaxError, ValueError) as e:
                self._compiled[key] = "".join(traceback.format_exception_only(e)).rstrip()
        return self._compiled[key]

    def _restored(self, job: JobExecutorInterface, announce: bool = False) -> bool:
        """Whether --sticky-checkpoints restored ``job`` (then it is reported done)."""
        if self._ckpt is None or not self._ckpt.restore(job):
            return False
        if announce:
            self.run_job_pre(job)
        info = SubmittedJobInfo(job=job, external_jobid="checkpoint")
        self.report_job_submission(info)
        self.report_job_success(info)
        return True

    def shutdown(self) -> None:
        if self._local is not None:
            self._local.shutdown()
        if self._slurm is not None:
            self._slurm.shutdown()
        if self._progress is not None:
            self._progress.stop()
        totals = RunTotals()
        if self._manager is not None:
            self._manager.shutdown()
            # One pass over the file (one record per invocation: 150,000 at paper scale),
            # keeping totals, not the records.
            totals = RunTotals.of(self._manager.metrics.iter_records())
            self._print_summary(totals)
        self._close_checkpoints(complete=True)
        self._close_condensed()
        self._print_end_line(totals)
        self._print_results()

    def cancel(self) -> None:
        """Ctrl-C (or an error in Snakemake): end every job at once, then one line saying
        what stopped, what is left and that a rerun continues."""
        if threading.current_thread() is threading.main_thread():
            _swallow_sigint(seconds=2.0)
        running = list(self._jobs.values())
        self._jobs.clear()
        if self._local is not None:
            self._local.cancel()
        if self._slurm is not None:
            self._slurm.cancel()
        if self._progress is not None:
            self._progress.stop()
        self._close_condensed()
        if self._manager is not None:
            self._manager.cancel()
        for info in running:  # half-written outputs of the ended invocations go
            for path in [*info.job.output, *info.job.log]:
                _remove(str(path))
        self._close_checkpoints()
        done, total = progress_counts(self.workflow)
        counts = f"; {done} of {total} jobs are done" if total else ""
        self.logger.warning(
            f"sticky: run stopped: {len(running)} running invocation(s) ended and their "
            f"partial outputs removed{counts}; run the same command again to continue "
            "(finished jobs are kept)"
        )

    def handle_job_success(self, job: JobExecutorInterface) -> None:
        if self._ckpt is not None:
            self._ckpt.record_success(job)

    def handle_job_error(self, job: JobExecutorInterface) -> None:
        if self._ckpt is not None:
            self._ckpt.failed(job)

    # ---- checkpoints ----------------------------------------------------------------------------

    def _open_checkpoints(self) -> None:
        """With --sticky-checkpoints: restore what is unchanged before anything is scheduled
        (or, with --sticky-checkpoints-plan, print what would be restored and stop)."""
        self._ckpt: Optional[RunCheckpoints] = None
        if not self.settings.checkpoints:
            if self.settings.checkpoints_plan:
                raise WorkflowError(
                    "--sticky-checkpoints-plan needs --sticky-checkpoints DIR (the store)"
                )
            return
        clash = store_clash(self.settings.checkpoints, all_jobs(self.workflow))
        if clash is not None:
            raise WorkflowError(
                f"--sticky-checkpoints {self.settings.checkpoints}: the workflow's output "
                f"{clash} lies in the store's directory, or the store in it (deleting outputs "
                "would delete the store); choose a directory apart from every output, e.g. .ckpt"
            )
        self._ckpt = RunCheckpoints(
            self.workflow,
            self.logger,
            self.settings.checkpoints,
            self.run_id,
            self.templates_file,
            lambda job: None if job.is_group() else _template_of(job),
            self.settings.checkpoints_key,
            self.settings.checkpoints_roots,
        )
        if self.settings.checkpoints_plan:
            plan = self._ckpt.plan()
            self._ckpt.close()
            print(render_plan(plan, self._ckpt.store.root), flush=True)
            # Snakemake has no "stop, successfully" for an executor; SystemExit unwinds its
            # locks and logging like a normal return from the command.
            raise SystemExit(0)
        self._ckpt.restore_ahead()

    def _close_checkpoints(self, complete: bool = False) -> None:
        if self._ckpt is not None:
            self._ckpt.close(complete)

    # ---- templates and rules ------------------------------------------------------------------

    def _find_templates_file(self) -> Path:
        if self.settings.templates:
            return Path(self.settings.templates).resolve()
        if os.environ.get(TEMPLATES_ENV_VAR):
            return Path(os.environ[TEMPLATES_ENV_VAR]).resolve()
        return Path(self.workflow.basedir) / TEMPLATES_FILENAME

    def _check_rules(self) -> None:
        """Fail before any job runs if a rule names an unknown template or cannot opt in."""
        for rule in self.workflow.rules:
            name = _resource_value(rule.resources, STICKY_RESOURCE)
            if name is None or name is _DEFERRED:
                continue  # a function of the job: checked per job, in _invoke
            self._check_rule(rule, name)
            self._check_partition(rule, name, rule.resources)

    def _check_rule(self, rule: Any, name: Any) -> None:
        where = rule_location(self.workflow, rule)
        if not isinstance(name, str) or not name:
            raise WorkflowError(f"{where}: resources: sticky= must name a template (a string)")
        if name not in self.declared:
            known = ", ".join(sorted(self.declared)) or "none"
            found = (
                f"{self.templates_file} declares: {known}"
                if self.templates_file.is_file()
                else f"{self.templates_file} does not exist"
            )
            raise WorkflowError(
                f"{where} names sticky template {name!r}, which is not declared ({found}). "
                f"Declare it with @template({name!r}) in {TEMPLATES_FILENAME} beside the "
                f"Snakefile, or point --sticky-templates at the file that does."
            )
        if not rule.is_script:
            raise WorkflowError(
                f"{where} names sticky template {name!r} but is not a script: rule. Only "
                "Python script: rules run in sticky workers (a run: block cannot be sent to "
                "another process); move its body into a script and use script:."
            )
        script = str(rule.script)
        if "{" not in script and not script.endswith(".py"):
            raise WorkflowError(
                f"{where} names sticky template {name!r}, but its script {script} is not "
                "Python (.py); only Python scripts run in sticky workers."
            )

    def _check_pilots(self) -> None:
        """Slurm pilots: every class's sbatch options judged before any job runs (see
        _slurm_checks); problems stop the run, one line each, nothing submitted."""
        if self.settings.backend != "slurm":
            return
        uses = []
        defaults = default_resources(self.workflow)
        for rule in self.workflow.rules:
            name = _resource_value(rule.resources, STICKY_RESOURCE)
            if isinstance(name, str) and name in self.declared:
                # The rule's own resources, as pilot_resources_of takes them (default
                # resources are not the rule's and do not override the template's).
                values = {
                    k: _resource_value(rule.resources, k)
                    for k in PILOT_RESOURCES
                    if not _is_default(rule.resources, defaults, k)
                }
                own = {k: v for k, v in values.items() if v is not None and v is not _DEFERRED}
                uses.append((rule.name, name, own))
        try:
            result = check_before_submit(
                pilot_classes(self.pilot_resources, uses, self.partitions), os.environ
            )
        except SlurmError as e:  # no sbatch, or slurmctld not answering: no pilot could start
            raise CliException(f"sticky: cannot check the Slurm pilots' options: {e}") from None
        for warning in result.warnings:
            self.logger.warning(warning)
        if result.problems:
            # A CliException prints as its message alone (a WorkflowError adds our frames).
            raise CliException(result.message())

    def pilot_resources_of(self, template: str, resources: Any, rule: Any = None) -> dict[str, Any]:
        """A job's pilot: its template's resources, overridden by the rule's own (constant)
        Slurm resources; a template restricted to partitions defaults to the first.

        Snakemake's default resources (``--default-resources``, and under cluster execution
        its own mem_mb/disk_mb defaults) are in every rule's resources, but they are not the
        rule's: they do not override what the template asks for its pilots."""
        merged = dict(self.pilot_resources.get(template, {}))
        defaults = default_resources(self.workflow)
        for key in PILOT_RESOURCES:
            if rule is not None and _is_default(rule.resources, defaults, key):
                continue
            value = _resource_value(resources, key)
            if value is not None and value is not _DEFERRED:
                merged[key] = value
        allowed = self.partitions.get(template)
        if allowed and "slurm_partition" not in merged:
            merged["slurm_partition"] = allowed[0]
        return merged

    def _check_pilot_limits(self, limits: PilotLimits) -> None:
        """Per-template pilot limits must name declared templates."""
        unknown = sorted(set(limits.per_template) - set(self.declared))
        if unknown:
            known = ", ".join(sorted(self.declared)) or "none"
            raise CliException(
                f"--sticky-max-pilots {self.settings.max_pilots}: limits template(s) "
                f"{', '.join(unknown)}, which {self.templates_file} does not declare "
                f"(declared: {known})"
            )

    def _check_partition(self, rule: Any, template: str, resources: Any) -> None:
        allowed = self.partitions.get(template)
        if not allowed or self.settings.backend != "slurm":
            return  # partitions only mean something for Slurm pilots
        partition = self.pilot_resources_of(template, resources, rule).get("slurm_partition")
        if partition not in allowed:
            raise WorkflowError(
                f"{rule_location(self.workflow, rule)} asks for Slurm "
                f"partition {partition!r}, but sticky template {template!r} may only be built "
                f"on: {', '.join(allowed)} (its partitions= in {self.templates_file})"
            )

    def _invoke(self, job: JobExecutorInterface, template: str) -> Invoke:
        from ._snakemake_compat import Snakemake

        self._check_rule(job.rule, template)
        self._check_partition(job.rule, template, job.resources)
        script = job.rule.script
        if isinstance(script, os.PathLike):  # script: Path("scripts/x.py"), as Snakemake allows
            script = os.fspath(script)
        path, source, language, is_local, cache_path = self._sources.get(
            job.rule, script, job.wildcards, job.params
        )
        if language != "python":
            raise WorkflowError(
                f"rule {job.rule.name}: sticky workers run Python scripts only, "
                f"not {language} ({path.get_path_or_uri(secret_free=True)})"
            )
        scriptdir = path.get_basedir().get_path_or_uri(secret_free=True)
        script_path = path.get_path_or_uri(secret_free=True)
        if is_local:
            script_path = os.path.realpath(script_path)
        snakemake = Snakemake(
            job.input,
            job.output,
            job.params,
            job.wildcards,
            job.threads,
            job.resources,
            job.log,
            self.workflow.config,
            job.rule.name,
            None,
            scriptdir,
        )
        repeats = (job.benchmark_repeats or 1) if job.benchmark is not None else 1
        # What the script: preamble appends to sys.path, computed here as Snakemake does.
        searchpaths = self._sources.searchpaths()
        if cache_path and os.path.dirname(cache_path):
            searchpaths.append(os.path.dirname(cache_path))
        if is_local:
            searchpaths.append(scriptdir)
        prefix = self._prefix_effects()
        return Invoke(
            invocation_id=next(self._ids),
            template=template,
            templates_file=str(self.templates_file),
            script_path=script_path,
            script_source=source,
            scriptdir=scriptdir if is_local else None,
            snakemake=snakemake,
            repeats=repeats,
            benchmarked=job.benchmark is not None,
            isolation=self.isolation.get(template, "fork"),
            # Where a local script job runs: its shadow folder (shadow:), else Snakemake's
            # working directory.
            workdir=os.path.abspath(job.shadow_dir) if job.shadow_dir else os.getcwd(),
            searchpaths=searchpaths,
            prefix=prefix if isinstance(prefix, PrefixEffects) and prefix else None,
        )

    # ---- the manager and its callbacks ------------------------------------------------------

    def _ensure_manager(self) -> Manager:
        with self._manager_lock:
            if self._manager is None:
                self.run_dir.mkdir(parents=True, exist_ok=True)
                limits = self.pilot_limits
                self._manager = Manager(
                    max_workers=(
                        limits.total
                        if limits is not None
                        else self.settings.max_workers or int(self.cores or 1)
                    ),
                    max_per_template=limits.per_template if limits is not None else None,
                    run_dir=self.run_dir,
                    # Where Snakemake runs jobs: after a `workdir:` directive, not where it
                    # was started (workdir_init), as a local script job runs there.
                    workdir=Path(os.getcwd()),
                    on_done=self._on_done,
                    on_requeue=self._on_requeue,
                    metrics=MetricsLog(self.run_dir / "metrics.jsonl"),
                    listen_host=self.settings.listen_address,
                    listen_port=self.settings.port,
                    idle_timeout=self.settings.idle_timeout,
                    heartbeat_timeout=self.settings.heartbeat_timeout,
                    max_requeues=self.settings.max_requeues,
                    start_timeout=self.settings.pilot_start_timeout,
                    backend=self.settings.backend,
                    run_id=self.run_id,
                    pilot_env_names=tuple(getattr(self.workflow, "envvars", None) or ()),
                    slurm_watch=self._slurm_watch,
                )
                if self._ckpt is not None:
                    self._manager.on_worker_writes = self._ckpt.written_by_workers
                self._progress = ProgressReporter(self._manager.metrics, self.logger.info).start()
            return self._manager

    def _on_done(
        self, inv_id: int, ok: bool, error: Optional[str], done: Optional[InvocationDone]
    ) -> None:
        info = self._jobs.pop(inv_id, None)
        if info is None:
            return
        if ok and done is not None and info.job.benchmark is not None:
            try:
                _write_benchmark(self.workflow, info.job, done)
            except OSError as e:
                ok, error = False, f"could not write the benchmark file {info.job.benchmark}: {e}"
        for note in done.warnings if done is not None else []:
            self.logger.warning(f"sticky: {_job_label(info.job)}: {note}")
        if done is not None and done.retire is not None:
            self.logger.warning(
                f"sticky: {_job_label(info.job)}: {done.retire}; a fresh process would not "
                "carry that to the next job, so the worker is retired and the next job gets "
                "a fresh one"
            )
        if done is not None and done.imported:
            self._tell_imports(info.job, done.imported)
        if done is not None and done.undeclared_writes and self._ckpt is not None:
            self._ckpt.written_by_workers(done.undeclared_writes)
            if ok:
                self._ckpt.uncacheable(info.job, done.undeclared_writes)
        if ok:
            self.report_job_success(info)
        else:
            self.report_job_error(info, msg=error)

    def _tell_imports(self, job: JobExecutorInterface, imported: list[str]) -> None:
        """Once per template: its forked jobs import libraries the template does not, which
        every job then imports again (a warm worker need not)."""
        template = _template_of(job) or "?"
        if template in self._told_imports:
            return
        self._told_imports.add(template)
        shown = ", ".join(imported[:3])
        if len(imported) > 3:
            shown += f" and {len(imported) - 3} more librar{'y' if len(imported) == 4 else 'ies'}"
        self.logger.info(
            f"sticky: template {template!r}: a job of rule {job.rule.name} imported {shown}, "
            "which the template does not; every forked job imports them again (as a fresh "
            "process would): import them while building the template to load them once per "
            "worker (docs/sticky.md, 'Warm up the template')"
        )

    def _on_requeue(self, inv_id: int) -> None:
        """The invocation's worker died mid-run: nothing it half-wrote may survive."""
        info = self._jobs.get(inv_id)
        if info is None:
            return
        for path in [*info.job.output, *info.job.log]:
            _remove(str(path))
        if info.job.benchmark is not None:
            _remove(str(info.job.benchmark))

    def _announce(self) -> None:
        """One line before the first job: what runs as invocations of which templates."""
        templates, per_job = [], 0
        jobs = needrun_jobs(self.workflow)
        for job in jobs:
            value = _resource_value(job.rule.resources, STICKY_RESOURCE)
            if value is _DEFERRED:
                per_job += 1
            else:
                templates.append(value if isinstance(value, str) and value else None)
        self.logger.info(
            start_line(
                templates,
                per_job=per_job,
                max_workers=self.settings.max_workers or int(self.cores or 1),
                backend=self.settings.backend,
                restored=self._ckpt.restored if self._ckpt is not None else None,
            )
        )
        if not jobs:  # every job restored: Snakemake says "Nothing to be done" and stops here
            self._print_results()

    def _print_end_line(self, totals: RunTotals) -> None:
        """The run in one line, last, where the per-job output has not scrolled it away."""
        ckpt = self._ckpt
        self.logger.info(
            end_line(
                totals,
                restored=ckpt.restored if ckpt is not None else None,
                stored=ckpt.stored if ckpt is not None else None,
            )
        )

    def _busy(self) -> tuple[int, int]:
        """(jobs running on workers, live workers) for the progress line."""
        manager = self._manager
        workers = len(manager.workers) if manager is not None else 0
        return min(len(self._jobs), workers), workers

    def _close_condensed(self) -> None:
        """The progress line's last state, as an ordinary line, and the filter removed."""
        condensed, self._condensed = self._condensed, None
        if condensed is None:
            return
        last = condensed.close_line()
        condensed.handler.removeFilter(condensed)
        if last is not None:
            self.logger.info(last)

    def _print_results(self) -> None:
        """The final outputs (the default rule's, or the targets asked for), named last."""
        files = final_outputs(self.workflow)
        made = [f for f in files if os.path.exists(f)]
        line = results_line(made, [f for f in files if f not in made])
        if line is not None:
            self.logger.info(line)

    def _print_summary(self, totals: RunTotals) -> None:
        assert self._manager is not None
        summary = summarize(totals)
        if summary:
            self.logger.info(f"{summary}\n  metrics: {self._manager.metrics.path}")


def _swallow_sigint(seconds: float) -> None:
    """Ignore SIGINT for ``seconds`` from now, then hand it to the handler it had.

    A second Ctrl-C while a run stops (a terminal sends one per key press; ``timeout``
    forwards its own) ended the stop half-way, or Snakemake's teardown after it, with a
    traceback: the run is stopping anyway. Not for longer: a notebook that called Snakemake's
    API keeps its Ctrl-C (the first one after the window reaches its own handler)."""
    previous = signal.getsignal(signal.SIGINT)
    until = time.monotonic() + seconds

    def swallow(signum: int, frame: Any) -> None:
        if time.monotonic() < until:
            return
        signal.signal(signal.SIGINT, previous)
        if callable(previous):
            previous(signum, frame)
        elif previous == signal.SIG_DFL:
            raise KeyboardInterrupt

    signal.signal(signal.SIGINT, swallow)


def store_clash(store: Any, jobs: Iterable[Any]) -> Optional[str]:
    """The first output or log of ``jobs`` that lies inside the checkpoint store's directory,
    or that the store lies inside (a ``directory()`` output, or a file path it would replace);
    None when they are apart."""
    root = os.path.abspath(str(store))
    for job in jobs:
        for path in [*job.output, *job.log]:
            out = os.path.abspath(str(path))
            if out == root or out.startswith(root + os.sep) or root.startswith(out + os.sep):
                return str(path)
    return None


def _check_settings(settings: ExecutorSettings) -> None:
    """Refuse bad settings before any job runs: one line per problem, no traceback.

    Snakemake prints a ``CliException`` as ``Error: <message>`` alone (a ``WorkflowError``
    would also list this module's frames): these are command-line (or profile) mistakes."""
    problems = settings_problems(settings)
    if not problems:
        problems = _bind_problems(settings)
    if problems:
        raise CliException("\n".join(problems))


def _bind_problems(settings: ExecutorSettings) -> list[str]:
    """Whether the manager could listen where the settings say (a trial bind, released)."""
    host, port = settings.listen_address, settings.port
    try:
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        socket.create_server((host.strip("[]"), port), family=family).close()
    except (OSError, UnicodeError) as e:
        why = getattr(e, "strerror", None) or str(e)
        flag = f"--sticky-listen-address {host}" + (f" --sticky-port {port}" if port else "")
        return [
            f"{flag}: the manager cannot listen there ({why}); use an address of this machine, "
            "e.g. 127.0.0.1 (the default) or 0.0.0.0, and a free port (or 0)"
        ]
    return []


_DEFERRED = object()


def _resource_value(resources: Any, name: str) -> Any:
    """A resource's value from a rule's (unevaluated) or a job's (evaluated) resources;
    ``_DEFERRED`` when the rule computes it per job."""
    if isinstance(resources, Mapping):  # a rule's Resources
        value: Any = resources[name] if name in resources else None
    else:  # a job's ResourceList, a namedlist: `in` would test values, not names
        value = resources.get(name) if resources is not None else None
    if hasattr(value, "is_evaluable"):
        return _DEFERRED if value.is_evaluable() else value.value
    return value


def _is_default(rule_resources: Any, defaults: Any, key: str) -> bool:
    """Whether a rule's resource ``key`` is the run's default rather than its own."""
    if not isinstance(rule_resources, Mapping) or key not in rule_resources:
        return False
    return key in defaults and rule_resources[key] == defaults[key]


def _job_label(job: Any) -> str:
    """A job as the user recognises it: its rule, wildcards and first output."""
    wildcards = ", ".join(f"{k}={v}" for k, v in dict(job.wildcards).items())
    output = f", output {job.output[0]}" if len(job.output) else ""
    return f"job of rule {job.rule.name}" + (f" ({wildcards})" if wildcards else "") + output


def _template_of_any(job: JobExecutorInterface) -> Optional[str]:
    """The template of a job that opts in; None for others and for group jobs."""
    return None if job.is_group() else _template_of(job)


def _template_of(job: JobExecutorInterface) -> Optional[str]:
    value = _resource_value(job.resources, STICKY_RESOURCE)
    return value if isinstance(value, str) and value else None


def _remove(path: str) -> None:
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    elif os.path.lexists(path):
        os.remove(path)


_USAGE_FIELDS = ("max_vms", "max_uss", "max_pss", "io_in", "io_out")


def _write_benchmark(workflow: Any, job: Any, done: InvocationDone) -> None:
    from ._snakemake_compat import BenchmarkRecord, write_benchmark_records

    records = []
    for seconds, cpu in zip(done.seconds, done.cpu_seconds, strict=False):
        record = BenchmarkRecord(
            jobid=job.jobid,
            rule_name=job.rule.name,
            wildcards=dict(job.wildcards),
            params=dict(job.params),
            running_time=seconds,
            cpu_time=cpu,
            max_rss=done.max_rss_mb,
            threads=job.threads,
            resources=dict(job.resources),
            input=list(job.input),
            # Snakemake's mean_load is cpu_usage / running_time, in percent of one CPU.
            cpu_usage=100.0 * cpu,
            **{k: v for k, v in done.usage.items() if k in _USAGE_FIELDS},
        )
        # The values were measured in the invocation's process, as Snakemake samples a job's.
        record.data_collected = done.max_rss_mb is not None
        records.append(record)
    path = str(job.benchmark)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    write_benchmark_records(records, path, workflow.output_settings.benchmark_extended)
