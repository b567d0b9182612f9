"""The asynchronous search's seams with the sticky runtime (issue 30, part 4), without
processes: the templates file it writes, which backend its classes go to, how a class's
resources become pilot options, and the record of a trial that ended without one."""

import pytest

from snakemake_executor_plugin_sticky import slurm
from snakemake_shadho._driver import _lost_record, backend_of, pilot_resources
from snakemake_shadho._errors import ShadhoError
from snakemake_shadho._failures import is_undeclared
from snakemake_shadho._hardware import parse_hardware
from snakemake_shadho._trial_worker import template_of, templates_source
from stickyinvoc import declared_templates


def test_the_templates_file_declares_one_template_per_class_as_literals(tmp_path):
    path = tmp_path / "sticky_templates.py"
    path.write_text(templates_source("/w/spec.yaml", ["gpu", "cpu_2"], ["/w", "/w/scripts"]))
    # The executor reads templates from the syntax tree: every name must be a literal.
    assert list(declared_templates(path)) == ["shadho-gpu", "shadho-cpu_2"]
    assert template_of("gpu") == "shadho-gpu"
    compile(path.read_text(), str(path), "exec")
    assert "class_state('/w/spec.yaml', 'cpu_2', ['/w', '/w/scripts'])" in path.read_text()


def test_classes_go_to_one_backend():
    local = parse_hardware({"a": {"count": 2}, "b": {}})
    assert backend_of(local) == "local"
    pilots = parse_hardware({"a": {"slurm_partition": "gpu"}, "b": {"slurm_partition": "cpu"}})
    assert backend_of(pilots) == "slurm"
    mixed = parse_hardware({"a": {"slurm_partition": "gpu"}, "b": {}, "c": {}})
    with pytest.raises(ShadhoError, match="classes a name a slurm_partition and b, c do not"):
        backend_of(mixed)


def test_a_class_becomes_sbatch_options_through_the_sticky_runtimes_one_mapping():
    (cls,) = parse_hardware(
        {
            "gpu": {
                "count": 2,
                "cpus": 4,
                "mem_mb": 8000,
                "runtime": 30,
                "slurm_partition": "gpu",
                "gres": "gpu:1",
                "constraint": "a100",
                "slurm_account": "lab",
                "qos": "short",
                "speed": 8,
            }
        }
    ).values()
    resources = pilot_resources(cls)
    assert "hw_class" not in resources and "hw_gpu" not in resources  # SHADHO's own
    assert sorted(slurm.sbatch_options(resources)) == sorted(
        [
            "--partition=gpu",
            "--cpus-per-task=4",
            "--mem=8000",
            "--time=30",
            "--gres=gpu:1",
            "--constraint=a100",
            "--account=lab",
            "--qos=short",
        ]
    )


def test_a_trial_that_ended_without_a_record_is_a_failure_the_objective_did_not_declare():
    trial = {
        "trial": "b.3",
        "round": 0,
        "subspace": "b",
        "hw_class": "cpu",
        "tid": 7,
        "vals": {},
        "params": {"x": 1.0},
    }
    record = _lost_record(trial, "the job's code ended its process with status 3")
    assert record["status"] == "fail" and record["loss"] is None
    assert is_undeclared(record)
    assert record["error"].startswith("RuntimeError: the trial ended without a result: ")
    assert record["trial"] == "b.3" and record["params"] == {"x": 1.0}
