"""The pure core of the pre-submit checks of Slurm pilots (issue 18 part 3): pilot classes
turned into sbatch options and judged by form, against the cluster's facts, and by Slurm's
(here: recorded) verdict; warnings as snakemake-executor-plugin-slurm gives them."""

import pytest

from snakemake_executor_plugin_sticky._slurm_checks import (
    ClusterFacts,
    Partition,
    PilotClass,
    allocation_warning,
    check_before_submit,
    check_pilots,
    cluster_problems,
    parse_gres_types,
    parse_partitions,
    pilot_classes,
    rejection_problem,
    resource_warnings,
    slurm_minutes,
    static_problems,
)
from snakemake_executor_plugin_sticky.slurm import SlurmError

# What `scontrol show partition -o` prints on the test cluster (tests/slurm/start-cluster.sh),
# with a third, limited partition as sites have them.
SCONTROL_PARTITIONS = (
    "PartitionName=cpu AllowGroups=ALL Default=YES QoS=N/A DefaultTime=NONE MaxTime=UNLIMITED "
    "State=UP TotalCPUs=2 DefMemPerNode=UNLIMITED MaxMemPerNode=UNLIMITED "
    "TRES=cpu=2,mem=23081M,node=1,billing=2\n"
    "PartitionName=gpu AllowGroups=ALL Default=NO DefaultTime=NONE MaxTime=UNLIMITED State=UP "
    "DefMemPerNode=UNLIMITED\n"
    "PartitionName=short Default=NO DefaultTime=00:30:00 MaxTime=02:00:00 State=UP "
    "DefMemPerCPU=2000\n"
)
FACTS = ClusterFacts(parse_partitions(SCONTROL_PARTITIONS), ("gpu",))


def pilot(**resources) -> PilotClass:
    return PilotClass("minilm", resources, ("embed",))


def lines(problems) -> list[str]:
    return [p.line() for p in problems]


def test_scontrol_answers_become_facts():
    parts = parse_partitions(SCONTROL_PARTITIONS)
    assert sorted(parts) == ["cpu", "gpu", "short"]
    assert parts["cpu"].default and not parts["gpu"].default
    assert parts["cpu"].max_time is None and parts["cpu"].default_time is None
    assert parts["short"].max_time == 120 and parts["short"].default_time == 30
    assert parts["short"].def_mem_per_cpu == 2000 and parts["cpu"].def_mem_per_node is None
    config = "AccountingStorageType   = accounting_storage/slurmdbd\nGresTypes  = gpu,shard\n"
    assert parse_gres_types(config) == ("gpu", "shard")
    assert parse_gres_types("GresTypes               = (null)\n") == ()


@pytest.mark.parametrize(
    "value,minutes",
    [(30, 30), ("30", 30), ("1:30", 2), ("1:00:00", 60), ("2-00:00:00", 2880), ("1-12", 2160)],
)
def test_runtimes_slurm_accepts(value, minutes):
    assert slurm_minutes(value) == minutes


@pytest.mark.parametrize("value", ["1h", "", "an hour", 0, -5, True, "1:2:3:4"])
def test_runtimes_slurm_refuses(value):
    assert slurm_minutes(value) is None


def test_a_good_pilot_has_its_options_and_no_problem():
    options, problems = static_problems(
        pilot(slurm_partition="gpu", gpu=1, gpu_model="a100", runtime=60, mem_mb=4000)
    )
    assert problems == []
    assert options == ["--partition=gpu", "--time=60", "--mem=4000", "--gpus=a100:1"]
    assert cluster_problems(pilot(slurm_partition="gpu", gpu=1, runtime=60), FACTS) == []


@pytest.mark.parametrize(
    "resources,option,fix",
    [
        ({"runtime": "1h"}, "runtime='1h'", "give minutes (e.g. 60)"),
        ({"mem_mb": "4G"}, "mem_mb='4G'", "whole number of megabytes"),
        ({"cpus_per_task": 0.5}, "cpus_per_task=0.5", "whole number"),
        ({"gpu": -1}, "gpu=-1", "whole number"),
        ({"gres": "gpu=2"}, "gres='gpu=2'", "NAME:TYPE:COUNT"),
        ({"gres": "'gpu:2'"}, "gres=\"'gpu:2'\"", "NAME:COUNT"),
        ({"gpu": 1, "gpu_model": "a100:2"}, "gpu_model='a100:2'", "the model alone"),
        ({"gpu_model": "a100"}, "gpu_model='a100'", "set gpu to the number"),
        ({"gpu": 1, "gres": "gpu:1"}, "gres='gpu:1'", "use gpu (and gpu_model) alone"),
        ({"partition": "gpu"}, "partition='gpu'", "slurm_partition"),
        ({"slurm_extra": "--partition=gpu"}, "slurm_extra=", "use the matching resource"),
        ({"slurm_extra": "-pgpu"}, "slurm_extra=", "use the matching resource"),
        ({"slurm_extra": "--nodes=2"}, "slurm_extra=", "use the matching resource"),
        ({"slurm_extra": "--export=ALL"}, "slurm_extra=", "use the matching resource"),
        ({"slurm_extra": "--get-user-env"}, "slurm_extra=", "use the matching resource"),
        ({"slurm_extra": "--comment='x"}, "slurm_extra=", "balance its quotes"),
    ],
)
def test_malformed_options_name_template_option_and_fix(resources, option, fix):
    options, problems = static_problems(pilot(**resources))
    assert options == [] and problems
    (line, *_) = lines(problems)
    assert line.startswith("sticky template 'minilm' (pilots of rule embed): "), line
    assert option in line and fix in line, line
    assert "set in resources= of @template('minilm')" in line, line


def test_allowed_extra_arguments_pass():
    options, problems = static_problems(pilot(slurm_extra="--exclusive --nice=10 --begin=now"))
    assert problems == [] and options == ["--exclusive", "--nice=10", "--begin=now"]


def test_partition_gres_and_time_limit_judged_against_the_cluster():
    (bad_partition,) = cluster_problems(pilot(slurm_partition="nosuch"), FACTS)
    line = bad_partition.line()
    assert "slurm_partition='nosuch' (--partition=nosuch)" in line
    assert "invalid partition: this cluster has cpu, gpu, short" in line
    (no_gres,) = cluster_problems(pilot(gres="shard:1"), FACTS)
    assert "defines no gres 'shard' (GresTypes: gpu)" in no_gres.line()
    (gpu_nowhere,) = cluster_problems(pilot(gpu=1), ClusterFacts(FACTS.partitions, ()))
    assert "gpu=1" in gpu_nowhere.line() and "GresTypes: none" in gpu_nowhere.line()
    (too_long,) = cluster_problems(pilot(slurm_partition="short", runtime="3:00:00"), FACTS)
    assert "exceeds partition short's MaxTime of 120 min" in too_long.line()
    assert "never start" in too_long.line() and "at most 120" in too_long.line()
    assert cluster_problems(pilot(slurm_partition="short", runtime=120), FACTS) == []


def test_no_partition_and_no_default_partition():
    facts = ClusterFacts({"a": Partition("a"), "b": Partition("b")}, ())
    (problem,) = cluster_problems(pilot(), facts)
    assert "the cluster has no default partition (partitions: a, b)" in problem.line()


@pytest.mark.parametrize(
    "message,option",
    [
        (
            "sbatch: error: Batch job submission failed: Invalid account or account/partition "
            "combination specified",
            "slurm_account='nolab'",
        ),
        (
            "sbatch: error: Batch job submission failed: Invalid qos specification",
            "qos='vip'",
        ),
        (
            "sbatch: error: Batch job submission failed: Invalid feature specification",
            "constraint='a100'",
        ),
        (
            "allocation failure: Requested node configuration is not available",
            "cpus_per_task=64, constraint='a100'",
        ),
        (
            "sbatch: unrecognized option '--frobnicate'\nTry \"sbatch --help\" for more info",
            "slurm_extra='--frobnicate'",
        ),
    ],
)
def test_slurms_refusal_names_the_option_it_concerns(message, option):
    p = pilot(
        slurm_account="nolab",
        qos="vip",
        constraint="a100",
        cpus_per_task=64,
        slurm_extra="--frobnicate",
    )
    problem = rejection_problem(p, ["--account=nolab"], message)
    line = problem.line()
    assert option in line, line
    assert "sbatch refuses it: " in line and "Try" not in line, line
    if "unrecognized" in message:
        assert "remove or correct --frobnicate" in line, line


def test_more_processors_than_permitted_is_about_cpus():
    problem = rejection_problem(
        pilot(cpus_per_task=64, mem_mb=10),
        ["--cpus-per-task=64"],
        "sbatch: error: More processors requested than permitted",
    )
    assert problem.option == "cpus_per_task=64"


def test_gpu_refusal_is_about_gpu_when_no_gres_was_asked():
    problem = rejection_problem(
        pilot(gpu=3), ["--gpus=3"], "sbatch: error: Invalid generic resource (gres) specification"
    )
    assert problem.option == "gpu=3"


def test_a_refusal_of_nothing_in_particular_shows_the_whole_command_line():
    problem = rejection_problem(pilot(runtime=5), ["--time=5"], "sbatch: error: Something odd")
    assert problem.option == "sbatch --time=5" and "Something odd" in problem.why


def test_warnings_inside_an_allocation():
    assert allocation_warning({"PATH": "/bin"}) is None
    warning = allocation_warning({"SLURM_JOB_ID": "77", "SLURM_CPUS_ON_NODE": "4"})
    assert warning is not None
    assert "inside Slurm job 77" in warning and "without this job's SLURM_* variables" in warning


def test_missing_runtime_and_memory_warned_where_the_partition_imposes_defaults():
    assert resource_warnings(pilot(slurm_partition="cpu"), FACTS) == []  # no limits: no noise
    time_warning, mem_warning = resource_warnings(pilot(slurm_partition="short"), FACTS)
    assert "no runtime given: partition short ends its pilots after 30 min (DefaultTime)" in (
        time_warning
    )
    assert "set runtime in resources= of @template('minilm')" in time_warning
    assert "no mem_mb given: partition short gives its pilots 2000 MB per CPU" in mem_warning
    assert resource_warnings(pilot(slurm_partition="short", runtime=60, mem_mb=8000), FACTS) == []
    # Without facts: the stock plugin's words.
    unknown = resource_warnings(pilot(), None)
    assert len(unknown) == 2 and all("might or might not work" in w for w in unknown)


def test_classes_merge_rule_overrides_and_name_where_each_option_comes_from():
    classes = pilot_classes(
        {"minilm": {"slurm_partition": "cpu", "runtime": 30}, "unused": {"gpu": 1}},
        [
            ("embed", "minilm", {}),
            ("embed_big", "minilm", {}),
            ("embed_gpu", "minilm", {"slurm_partition": "gpu", "gpu": 1}),
        ],
        {"unused": ["gpu"]},
    )
    by_rules = {c.rules: c for c in classes}
    assert set(by_rules) == {("embed", "embed_big"), ("embed_gpu",), ()}
    gpu = by_rules[("embed_gpu",)]
    assert gpu.resources == {"slurm_partition": "gpu", "runtime": 30, "gpu": 1}
    assert gpu.source("gpu") == "the resources of rule embed_gpu"
    assert gpu.source("runtime") == "resources= of @template('minilm')"
    unused = by_rules[()]
    assert unused.resources == {"gpu": 1, "slurm_partition": "gpu"}
    assert unused.source("slurm_partition") == "partitions= of @template('unused')"
    assert unused.label() == "sticky template 'unused'"


def test_check_asks_slurm_only_for_pilots_without_other_problems():
    asked = []

    def trial(options):
        asked.append(options)
        return "sbatch: error: Invalid qos specification" if "--qos=vip" in options else None

    result = check_pilots(
        [pilot(slurm_partition="nosuch"), pilot(runtime="1h"), pilot(qos="vip"), pilot()],
        FACTS,
        trial,
        {"SLURM_JOB_ID": "9"},
    )
    assert asked == [["--qos=vip"], []]
    assert len(result.problems) == 3
    message = result.message()
    assert message.startswith("3 sticky pilot options would be refused by Slurm; nothing was")
    assert "invalid partition" in message and "runtime='1h'" in message and "qos='vip'" in message
    assert any("inside Slurm job 9" in w for w in result.warnings)


class FakeSeam:
    """The Slurm seam's functions, answering as the test cluster does (no process)."""

    SlurmError = SlurmError

    def __init__(self, facts_fail: bool = False) -> None:
        self.facts_fail = facts_fail
        self.envs = []

    def partitions_output(self):
        if self.facts_fail:
            raise SlurmError("scontrol show partition -o failed: slurm_load_partitions: timeout")
        return SCONTROL_PARTITIONS

    def config_output(self):
        return "GresTypes = gpu\n"

    def trial_submit(self, options, env=None):
        self.envs.append(env)
        return None


def test_whole_check_runs_sbatch_without_the_submit_hosts_slurm_variables():
    seam = FakeSeam()
    environ = {"PATH": "/bin", "SLURM_JOB_ID": "5", "SLURM_CONF": "/etc/slurm/slurm.conf"}
    result = check_before_submit([pilot(slurm_partition="nosuch"), pilot()], environ, seam)
    assert [p.option for p in result.problems] == ["slurm_partition='nosuch' (--partition=nosuch)"]
    assert seam.envs == [{"PATH": "/bin", "SLURM_CONF": "/etc/slurm/slurm.conf"}]


def test_without_cluster_facts_slurm_still_judges_and_stock_warnings_apply():
    seam = FakeSeam(facts_fail=True)
    result = check_before_submit([pilot()], {"PATH": "/bin"}, seam)
    assert result.problems == [] and len(seam.envs) == 1
    assert any("might or might not work" in w for w in result.warnings)
