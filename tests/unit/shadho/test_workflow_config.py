"""The hpo-digits workflow's own config files are valid specs, and the Slurm variant places the
classes on the test cluster's partitions."""

from pathlib import Path

import yaml

import snakemake_shadho as shadho
import snakemake_shadho.digits

WORKFLOW = Path(__file__).parents[3] / "workflows" / "hpo-digits"


def merged(*names):
    """Config files merged the way Snakemake merges repeated --configfile (recursively)."""

    def merge(a, b):
        out = dict(a)
        for k, v in b.items():
            out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
        return out

    config = {}
    for name in names:
        config = merge(config, yaml.safe_load((WORKFLOW / "config" / name).read_text()))
    return config


def test_local_config_is_a_valid_spec():
    spec = shadho.load_spec(merged("config.yaml")["hpo"])
    assert list(spec.subspaces) == ["svm_linear", "svm_rbf", "svm_sigmoid", "svm_poly", "cnn"]
    assert spec.objective == "snakemake_shadho.digits:evaluate" and spec.sticky_template == "digits"
    assert shadho.load_objective(spec.objective) is shadho.digits.evaluate


def test_slurm_config_places_classes_on_the_clusters_partitions():
    spec = shadho.load_spec(merged("config.yaml", "slurm.yaml")["hpo"])
    fast, slow = spec.classes["fast"].resources(), spec.classes["slow"].resources()
    assert fast["slurm_partition"] == "gpu" and fast["gres"] == "gpu:1"
    assert fast["cpus_per_task"] == 2 and fast["mem_mb"] == 4000
    assert slow["slurm_partition"] == "cpu" and "gres" not in slow
    assert [c.name for c in shadho.by_speed(spec.classes)] == ["fast", "slow"]
    # The GPU class speeds the CNN up 16 times, an SVM 4 times; the first round's plan sends
    # the CNN trials there.
    assert spec.classes["fast"].speed_of("cnn") == 16.0
    assert spec.classes["fast"].speed_of("svm_rbf") == 4.0
    plan = shadho.plan_round(spec, 0, [])
    assert {t["hw_class"] for t in plan["trials"] if t["subspace"] == "cnn"} == {"fast"}
