"""The pure parts of the Slurm seam: resource vocabulary to sbatch options, state table."""

import pytest

from snakemake_executor_plugin_sticky.slurm import PilotState, pilot_state, sbatch_options


def test_resource_vocabulary_maps_to_sbatch_options():
    opts = sbatch_options(
        {
            "slurm_partition": "gpu",
            "slurm_account": "lab",
            "runtime": 30,
            "mem_mb": 4000,
            "cpus_per_task": 2,
            "constraint": "a100",
            "qos": "high",
            "gpu": 1,
            "gpu_model": "a100",
        }
    )
    assert opts == [
        "--partition=gpu",
        "--account=lab",
        "--time=30",
        "--mem=4000",
        "--cpus-per-task=2",
        "--constraint=a100",
        "--qos=high",
        "--gpus=a100:1",
    ]


def test_gres_and_extra_arguments_pass_through():
    assert sbatch_options({"gres": "gpu:2", "slurm_extra": "--exclusive --nice=10"}) == [
        "--gres=gpu:2",
        "--exclusive",
        "--nice=10",
    ]


def test_no_resources_means_the_cluster_defaults():
    assert sbatch_options({}) == []


def test_extra_may_not_override_what_the_executor_manages():
    with pytest.raises(ValueError, match="slurm_extra may not set --job-name"):
        sbatch_options({"slurm_extra": "--job-name=x"})
    with pytest.raises(ValueError, match="may not set -p"):
        sbatch_options({"slurm_extra": "-p debug"})


def test_unknown_resource_names_are_rejected_with_the_known_ones():
    with pytest.raises(ValueError, match="unknown pilot resource.*partition.*use.*slurm_partition"):
        sbatch_options({"partition": "gpu"})


@pytest.mark.parametrize(
    "state,expected",
    [
        ("PENDING", PilotState.PENDING),
        ("CONFIGURING", PilotState.PENDING),
        ("RUNNING", PilotState.RUNNING),
        ("COMPLETED", PilotState.ENDED),
        ("CANCELLED by 0", PilotState.ENDED),
        ("PREEMPTED", PilotState.ENDED),
        ("TIMEOUT", PilotState.ENDED),
        ("NODE_FAIL", PilotState.ENDED),
        ("", PilotState.ENDED),
        ("SOMETHING_NEW", PilotState.ENDED),
    ],
)
def test_state_table(state, expected):
    assert pilot_state(state) is expected
