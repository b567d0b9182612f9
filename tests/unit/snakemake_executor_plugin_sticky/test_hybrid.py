"""Hybrid execution under --sticky-backend slurm, its pure parts: the execution mode Snakemake
sees, the slurm plugin's settings, pilot limits and which resources size a pilot."""

import dataclasses
from pathlib import Path
from types import SimpleNamespace

import pytest
from snakemake.resources import Resources
from snakemake_executor_plugin_slurm import ExecutorSettings as SlurmSettings

import snakemake_executor_plugin_sticky as plugin
from snakemake_executor_plugin_sticky import _mode
from snakemake_executor_plugin_sticky._hybrid import SlurmWorkflowView, parse_slurm_options
from snakemake_executor_plugin_sticky._scheduling import (
    Dispatch,
    StartWorker,
    StickyScheduler,
    StopWorker,
)
from snakemake_executor_plugin_sticky.executor import Executor
from snakemake_executor_plugin_sticky.settings import (
    DEFAULT_MAX_PILOTS,
    ExecutorSettings,
    PilotLimits,
    parse_max_pilots,
    pilot_limits,
    settings_problems,
)


@pytest.fixture(autouse=True)
def local_mode_afterwards():
    yield
    _mode.apply_backend("local")


# ---- the execution mode Snakemake reads from common_settings --------------------------------


def test_slurm_backend_makes_the_run_cluster_execution_like_executor_slurm():
    """Snakemake decides --jobs, localrules and remote jobs from common_settings: under
    --sticky-backend slurm it must say non-local, as snakemake-executor-plugin-slurm does."""
    ExecutorSettings(backend="slurm")
    assert plugin.common_settings.non_local_exec is True
    assert plugin.common_settings.local_exec is False
    assert _mode.hybrid()
    ExecutorSettings()  # the local backend: local execution, as before
    assert plugin.common_settings.local_exec is True
    assert not _mode.hybrid()


# ---- the slurm plugin's settings --------------------------------------------------------------


def test_slurm_options_become_the_slurm_plugins_own_settings():
    options = parse_slurm_options(
        "init-seconds-before-status-checks=2 array-jobs=all keep-successful-logs=true "
        "logdir=slurm-logs --slurm-efficiency-threshold=0.5",
        SlurmSettings,
    )
    assert options == {
        "init_seconds_before_status_checks": 2,
        "array_jobs": "all",
        "keep_successful_logs": True,
        "logdir": Path("slurm-logs"),
        "efficiency_threshold": 0.5,
    }
    # Building SlurmSettings runs `sacct` (its status-command default): the hybrid
    # integration tests build it; here, the names are its fields.
    assert set(options) <= {f.name for f in dataclasses.fields(SlurmSettings)}
    assert parse_slurm_options(None, SlurmSettings) == {}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("array-jobs", "'array-jobs' is not NAME=VALUE"),
        ("no-such=1", "'no-such' is not a setting of the slurm executor plugin; known: "),
        ("init-seconds-before-status-checks=soon", "'soon' is not int"),
        ("requeue=perhaps", "'perhaps' is not bool"),
        ("qos='unbalanced", "cannot be split"),
    ],
)
def test_bad_slurm_options_name_the_item(text, expected):
    with pytest.raises(ValueError) as e:
        parse_slurm_options(text, SlurmSettings)
    assert expected in str(e.value)
    assert "\n" not in str(e.value)


def test_the_slurm_executor_sees_its_own_settings_and_plugin_and_the_rest_of_the_workflow():
    workflow = SimpleNamespace(executor_settings="sticky's", executor_plugin="sticky", dag="D")
    view = SlurmWorkflowView(workflow, "slurm's", "slurm")
    assert (view.executor_settings, view.executor_plugin, view.dag) == ("slurm's", "slurm", "D")
    workflow.scheduler = "set later"  # Snakemake sets it after creating the executors
    assert view.scheduler == "set later"


# ---- pilot limits -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("value", "limits"),
    [
        (8, PilotLimits(8)),
        ("3", PilotLimits(3)),
        ("8,train=2", PilotLimits(8, {"train": 2})),
        (" 6 , train=2 ,embed=1", PilotLimits(6, {"train": 2, "embed": 1})),
        ("train=2", PilotLimits(DEFAULT_MAX_PILOTS, {"train": 2})),
        ("gpu-llm=9", PilotLimits(9, {"gpu-llm": 9})),
    ],
)
def test_max_pilots_total_and_per_template(value, limits):
    assert parse_max_pilots(value) == limits


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("0", "'0' is not a count of at least 1"),
        ("many", "'many' is not a count"),
        ("4,8", "gives the total twice"),
        ("4,train=2,train=1", "limits template 'train' twice"),
        ("2,train=3", "allows 3 pilots for 'train' but only 2 in all"),
        ("4,=2", "'' is not a template name"),
        ("4,", "an empty item"),
    ],
)
def test_bad_max_pilots_is_one_line_naming_flag_and_fix(value, expected):
    settings = ExecutorSettings(backend="slurm", max_pilots=value)
    (problem,) = settings_problems(settings)
    assert problem.startswith(f"--sticky-max-pilots {value}: ")
    assert expected in problem


def test_pilot_limits_are_not_the_jobs_limit():
    """--cores/--jobs bound jobs; pilots have their own limit (old runs' --sticky-max-workers
    still counts)."""
    assert pilot_limits(ExecutorSettings(backend="slurm")) == PilotLimits(DEFAULT_MAX_PILOTS)
    assert pilot_limits(ExecutorSettings(backend="slurm", max_workers=3)) == PilotLimits(3)
    limits = pilot_limits(ExecutorSettings(backend="slurm", max_workers=3, max_pilots="5,a=1"))
    assert limits == PilotLimits(5, {"a": 1})


def test_slurm_only_settings_are_refused_with_the_local_backend():
    problems = settings_problems(ExecutorSettings(max_pilots="4", slurm_options="qos=low"))
    assert len(problems) == 2
    assert problems[0].startswith("--sticky-max-pilots 4: applies to Slurm pilots only")
    assert problems[1].startswith("--sticky-slurm-options 'qos=low': applies with")
    assert settings_problems(ExecutorSettings(backend="slurm", slurm_options="qos=low")) == []


def test_a_templates_limit_holds_while_others_scale_out():
    s = StickyScheduler(max_workers=4, max_per_template={"train": 1})
    assert s.submit(1, "train", 0.0) == [StartWorker("w1")]
    assert s.submit(2, "train", 0.0) == []  # its one pilot is on its way
    assert s.submit(3, "embed", 0.0) == [StartWorker("w2")]
    assert s.submit(4, "embed", 0.0) == [StartWorker("w3")]
    assert s.worker_connected("w1", 1.0) == [Dispatch("w1", 1)]
    s.state_built("w1", "train")
    assert s.invocation_done("w1", 1, 2.0) == [Dispatch("w1", 2)]


def test_a_templates_limit_makes_room_across_classes():
    """train's one pilot is idle but of another class (other rule resources): it is stopped
    so that a pilot of the waiting invocation's class can start."""
    s = StickyScheduler(max_workers=4, max_per_template={"train": 1})
    s.submit(1, "train", 0.0, cls="small")
    s.worker_connected("w1", 0.0)
    s.invocation_done("w1", 1, 1.0)
    out = s.submit(2, "train", 1.0, cls="big")
    assert out == [StopWorker("w1", "making room for a 'train' worker"), StartWorker("w2")]
    assert s.workers["w2"].cls == "big"


# ---- which resources size a pilot ------------------------------------------------------------


def pilot_of(template_resources, rule_resources, default_resources):
    """Executor.pilot_resources_of on a stand-in executor (no workflow is run)."""
    defaults = Resources.from_mapping(default_resources)
    rule_res = defaults.copy()
    rule_res.update(Resources.from_mapping(rule_resources))
    fake = SimpleNamespace(
        pilot_resources={"t": template_resources},
        partitions={},
        workflow=SimpleNamespace(
            resource_settings=SimpleNamespace(_parsed_default_resources=defaults)
        ),
    )
    job_resources = {k: rule_res[k].value for k in rule_res}  # evaluated, as a job's are
    rule = SimpleNamespace(resources=rule_res)
    return Executor.pilot_resources_of(fake, "t", job_resources, rule)


def test_default_resources_do_not_override_the_templates_pilot():
    """--default-resources (profiles set mem_mb, runtime, partition for every job) must not
    shrink a template's pilot; what the rule itself asks for still does."""
    template = {"mem_mb": 16000, "runtime": 120, "slurm_partition": "gpu"}
    defaults = {"mem_mb": 4000, "runtime": 60, "slurm_partition": "cpu"}
    assert pilot_of(template, {}, defaults) == template
    assert pilot_of(template, {"runtime": 30}, defaults) == {**template, "runtime": 30}
    assert pilot_of({}, {}, defaults) == {}


def test_settings_fields_keep_optional_spelling():
    """Snakemake builds its parser from these annotations: Optional[...], never X | None."""
    for f in dataclasses.fields(ExecutorSettings):
        assert "|" not in str(f.type), f


# ---- status checks with accounting down ------------------------------------------------------


class FakeSlurmExecutor:
    """The stock executor's status-check contract: report finished jobs, yield running ones."""

    def __init__(self, sacct_answers: bool) -> None:
        self.sacct_answers = sacct_answers
        self.succeeded: list[str] = []
        self.failed: list[tuple[str, str]] = []

    def report_job_success(self, info):
        self.succeeded.append(info.external_jobid)

    def report_job_error(self, info, msg=None, **kwargs):
        self.failed.append((info.external_jobid, msg))

    async def check_active_jobs(self, active_jobs):
        if not self.sacct_answers:
            return  # as snakemake-executor-plugin-slurm 2.8 after 5 failed sacct attempts
        for job in active_jobs:
            if job.external_jobid == "1":
                self.report_job_success(job)
            else:
                yield job


def cycle(executor, jobs):
    import asyncio

    async def collect():
        return [j async for j in executor.check_active_jobs(jobs)]

    return asyncio.run(collect())


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def guarded(sacct_answers, lookup, probe=lambda job_id: None, watch=None, deadline=300.0):
    """A fake stock executor guarded as the run's is; its warnings, infos and clock."""
    from snakemake_executor_plugin_sticky._hybrid import guard_status_checks
    from snakemake_executor_plugin_sticky._slurm_health import SlurmJobsFallback, SlurmWatch

    told: list[str] = []
    logger = SimpleNamespace(warning=told.append, info=told.append)
    executor = FakeSlurmExecutor(sacct_answers=sacct_answers)
    clock = Clock()
    guard_status_checks(
        executor,
        logger,
        watch or SlurmWatch(accounting_every=20.0, subjects="this run's pilots and Slurm jobs"),
        SlurmJobsFallback(unknown_deadline=deadline),
        lookup=lookup,
        probe=probe,
        clock=clock,
    )
    return executor, told, clock


def test_jobs_are_not_lost_when_sacct_fails_their_states_come_from_squeue_and_scontrol():
    from snakemake_executor_plugin_sticky._slurm_health import Lookup

    asked: list[list[str]] = []

    def lookup(ids):
        asked.append(ids)
        seen = {
            "1": Lookup("COMPLETED", "squeue"),
            "2": Lookup("RUNNING", "squeue"),
            "3": Lookup("TIMEOUT", "scontrol"),
        }
        return {i: seen.get(i, Lookup(None, problem="scontrol: no such job")) for i in ids}

    probes: list[str] = []

    def probe(job_id):
        probes.append(job_id)
        return "sacct: error: Problem talking to the database"

    executor, told, clock = guarded(False, lookup, probe)
    jobs = [SimpleNamespace(external_jobid=i, aux={}) for i in ["1", "2", "3", "4"]]
    still = cycle(executor, jobs)
    assert [j.external_jobid for j in still] == ["2", "4"]  # running, and unknown: watched
    assert executor.succeeded == ["1"]
    assert executor.failed == [
        ("3", "Slurm job 3 ended TIMEOUT (state from scontrol: Slurm accounting gave none). ")
    ]
    assert asked == [["1", "2", "3", "4"]]
    for _ in range(5):
        clock.now += 30.0
        still = cycle(executor, still)
    assert len(probes) == 6  # one probe a cycle here: cycles are 30 s apart, probes 20 s
    assert len(told) == 1, told  # one warning for the whole outage
    assert "Slurm accounting does not answer (sacct: error: Problem talking" in told[0]
    assert "this run's pilots and Slurm jobs keep running" in told[0]
    assert "squeue/scontrol" in told[0]


def test_a_job_no_command_knows_fails_after_the_deadline_naming_it():
    from snakemake_executor_plugin_sticky._slurm_health import Lookup

    def lookup(ids):
        return {
            i: Lookup(None, problem="squeue does not list it; scontrol: no such job") for i in ids
        }

    executor, told, clock = guarded(
        False, lookup, lambda job_id: "sacct: error: down", deadline=300
    )
    jobs = [SimpleNamespace(external_jobid="42", aux={"slurm_logfile": "/log/42.log"})]
    for _ in range(5):
        assert [j.external_jobid for j in cycle(executor, jobs)] == ["42"]
        clock.now += 60.0
    assert executor.failed == []
    assert cycle(executor, jobs) == []  # 300 s unknown: failed, not watched forever
    ((job_id, msg),) = executor.failed
    assert job_id == "42"
    assert msg.startswith("Slurm job 42: no state from sacct, squeue or scontrol for 300 s ")
    assert "(sacct: error: down; squeue does not list it; scontrol: no such job)" in msg
    assert "sacct -j 42" in msg and "rerun the workflow" in msg


def test_a_job_known_again_before_the_deadline_starts_afresh():
    from snakemake_executor_plugin_sticky._slurm_health import Lookup

    answers = {"7": Lookup(None, problem="no such job")}
    executor, _, clock = guarded(False, lambda ids: dict(answers), lambda job_id: "sacct: down")
    job = SimpleNamespace(external_jobid="7", aux={})
    cycle(executor, [job])
    clock.now = 250.0
    answers["7"] = Lookup("RUNNING", "squeue")
    cycle(executor, [job])
    answers["7"] = Lookup(None, problem="no such job")
    clock.now = 400.0
    assert cycle(executor, [job]) == [job]  # unknown for 0 s, not since 0.0
    assert executor.failed == []


def test_with_accounting_down_jobs_sacct_keeps_are_looked_up_too():
    """sacct may answer nothing at all rather than fail: the stock check then keeps every
    job forever. With the probe saying accounting is down, squeue decides them."""
    from snakemake_executor_plugin_sticky._slurm_health import Lookup

    executor, told, _ = guarded(
        True,
        lambda ids: {i: Lookup("COMPLETED", "squeue") for i in ids},
        lambda job_id: "sacct: error: Problem talking to the database",
    )
    jobs = [SimpleNamespace(external_jobid=i, aux={}) for i in ["1", "2"]]
    assert cycle(executor, jobs) == []
    assert executor.succeeded == ["1", "2"]  # 1 by the stock check (sacct), 2 by squeue
    assert len(told) == 1


def test_a_job_decided_here_brings_the_next_status_check_back_soon():
    """The stock check adds 10 s to its interval after each cycle in which it saw no job
    finish; a job that finished by squeue's word resets it, as a finish seen by sacct does."""
    from snakemake_executor_plugin_sticky._slurm_health import Lookup

    states = {"1": Lookup("RUNNING", "squeue")}
    executor, _, _ = guarded(False, lambda ids: dict(states), lambda job_id: "sacct: down")
    executor.workflow = SimpleNamespace(
        executor_settings=SimpleNamespace(init_seconds_before_status_checks=2)
    )
    executor.next_seconds_between_status_checks = 60
    job = SimpleNamespace(external_jobid="1", aux={})
    cycle(executor, [job])
    assert executor.next_seconds_between_status_checks == 60  # nothing finished
    states["1"] = Lookup("COMPLETED", "squeue")
    cycle(executor, [job])
    assert executor.next_seconds_between_status_checks == 2


def test_an_outage_the_pilots_told_already_is_not_told_again():
    from snakemake_executor_plugin_sticky._slurm_health import Lookup, SlurmWatch

    watch = SlurmWatch(accounting_every=20.0)
    assert watch.probe_due(0.0)
    assert watch.probe_result(0.0, "sacct: error: down") is not None  # the launcher's warning
    executor, told, clock = guarded(
        False,
        lambda ids: {i: Lookup("RUNNING", "squeue") for i in ids},
        lambda job_id: "sacct: error: down",
        watch=watch,
    )
    job = SimpleNamespace(external_jobid="5", aux={})
    for _ in range(3):
        clock.now += 25.0
        assert cycle(executor, [job]) == [job]
    assert told == []


def test_with_sacct_answering_the_stock_check_decides_alone():
    def lookup(ids):
        raise AssertionError("no lookups while sacct answers")

    executor, told, _ = guarded(True, lookup)
    jobs = [SimpleNamespace(external_jobid=i, aux={}) for i in ["1", "2"]]
    assert [j.external_jobid for j in cycle(executor, jobs)] == ["2"]
    assert executor.succeeded == ["1"] and executor.failed == [] and told == []


def test_lookups_go_through_the_slurm_seam_squeue_then_scontrol(monkeypatch):
    """squeue for all jobs, scontrol show job for those squeue does not list; after scontrol
    fails (slurmctld down) the remaining jobs are not asked again."""
    from snakemake_executor_plugin_sticky import _hybrid, slurm
    from snakemake_executor_plugin_sticky._slurm_health import Lookup

    argvs: list[list[str]] = []

    def run_slurm(args, timeout=30.0, env=None):
        argvs.append(args)
        if args[0] == "squeue":
            return "1|RUNNING\n"
        job_id = args[-1]
        if job_id == "2":
            return "JobId=2 JobName=x JobState=COMPLETED Reason=None\n"
        if job_id == "3":
            raise slurm.SlurmError(
                "scontrol show job -o 3 failed: slurm_load_jobs error: Invalid job id specified"
            )
        raise slurm.SlurmError("scontrol show job -o 4 did not answer within 15 s")

    monkeypatch.setattr(slurm, "run_slurm", run_slurm)
    seen = _hybrid.look_up_slurm_jobs(["1", "2", "3", "4", "5"])
    assert seen["1"] == Lookup("RUNNING", "squeue")
    assert seen["2"] == Lookup("COMPLETED", "scontrol")
    assert seen["3"] == Lookup(
        None, problem="squeue does not list it; scontrol: no such job (slurmctld forgot it)"
    )
    assert (
        seen["4"]
        == seen["5"]
        == Lookup(
            None,
            problem="squeue does not list it; scontrol show job -o 4 did not answer within 15 s",
        )
    )
    assert argvs == [
        ["squeue", "--noheader", "--states=all", "--jobs=1,2,3,4,5", "--format=%i|%T"],
        ["scontrol", "show", "job", "-o", "2"],
        ["scontrol", "show", "job", "-o", "3"],
        ["scontrol", "show", "job", "-o", "4"],
    ]


def test_squeue_knowing_none_of_the_jobs_is_an_answer_not_a_failure(monkeypatch):
    from snakemake_executor_plugin_sticky import slurm

    def run_slurm(args, timeout=30.0, env=None):
        raise slurm.SlurmError(f"{' '.join(args)} failed: slurm_load_jobs error: Invalid job id")

    monkeypatch.setattr(slurm, "run_slurm", run_slurm)
    assert slurm.squeue_states(["9"]) == {}
    assert slurm.squeue_states([]) == {}


def test_an_invocation_on_a_pilot_gets_the_nodes_tmpdir_as_a_slurm_job_would():
    """Cluster execution leaves tmpdir '<TBD>' for the node; the pilot resolves it there."""
    import tempfile

    from snakemake.common.tbdstring import TBDString
    from snakemake.iocontainers import ResourceList

    from snakemake_executor_plugin_sticky.worker import resolve_node_tmpdir

    resources = ResourceList(fromdict={"_cores": 1, "tmpdir": TBDString(), "mem_mb": 5})
    job = SimpleNamespace(resources=resources)
    resolve_node_tmpdir(job)
    assert resources.tmpdir == resources.get("tmpdir") == tempfile.gettempdir()
    assert dict(resources.items())["tmpdir"] == tempfile.gettempdir()
    assert tempfile.gettempdir() in list(resources)
    kept = ResourceList(fromdict={"tmpdir": "/scratch/me"})
    resolve_node_tmpdir(SimpleNamespace(resources=kept))
    assert kept.tmpdir == "/scratch/me"


# ---- routing ----------------------------------------------------------------------------------


class FakeJob:
    def __init__(self, name, sticky=None, group=False):
        self.name, self.group = name, group
        self.resources = {"sticky": sticky} if sticky else {}

    def is_group(self):
        return self.group


def routed(restorable=()):
    """An Executor under the slurm backend with its collaborators recorded, not started."""
    executor = object.__new__(Executor)
    log: list = []
    executor.workflow = SimpleNamespace(scheduler=None)  # no scheduler wake-ups to replace
    executor._fresh_instead = lambda job: False  # no shell prefix, one templates file
    executor._slurm = SimpleNamespace(
        run_jobs=lambda jobs: log.append(("slurm", [j.name for j in jobs]))
    )
    executor._ckpt = SimpleNamespace(
        restore=lambda job: job.name in restorable,
        started=lambda job: log.append(("watched", job.name)),
    )
    executor.run_job_pre = lambda job: log.append(("announce", job.name))
    executor._run_sticky = lambda job, template: log.append(("sticky", job.name, template))
    executor.report_job_submission = lambda info: log.append(("submitted", info.job.name))
    executor.report_job_success = lambda info: log.append(("restored", info.job.name))
    return executor, log


def test_sticky_jobs_go_to_pilots_the_rest_to_slurm_in_one_batch():
    executor, log = routed(restorable={"cached"})
    jobs = [
        FakeJob("align"),
        FakeJob("embed", sticky="minilm"),
        FakeJob("cached"),
        FakeJob("grouped", sticky="minilm", group=True),
        FakeJob("plot"),
    ]
    executor.run_jobs(jobs)
    assert log == [
        ("watched", "align"),  # --sticky-checkpoints: its undeclared writes are looked for
        ("announce", "embed"),
        ("sticky", "embed", "minilm"),
        ("announce", "cached"),
        ("submitted", "cached"),
        ("restored", "cached"),
        ("watched", "grouped"),
        ("watched", "plot"),
        # one call, so that the slurm plugin can group them into job arrays
        ("slurm", ["align", "grouped", "plot"]),
    ]
