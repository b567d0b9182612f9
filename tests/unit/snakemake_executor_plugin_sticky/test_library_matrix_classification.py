"""The library matrix classifies every distribution the project's installs pull in directly and
every public stdlib module: a distribution added to a requirement list or an extra fails here
until it is a case (probes of its process-global state) or a stateless entry (why none).
Fast: nothing is imported but the catalogue."""

import pytest

from tests.integration.snakemake_executor_plugin_sticky.library_matrix import (
    CASES,
    STATELESS,
    classify_targets,
    normalise,
)


def test_every_target_is_classified_exactly_once():
    distributions, stdlib = classify_targets()
    targets = distributions | stdlib
    missing = sorted(targets - set(CASES) - set(STATELESS))
    assert not missing, f"add a Case or a STATELESS reason to library_matrix.py for: {missing}"
    both = sorted(set(CASES) & set(STATELESS))
    assert not both, f"both a case and stateless: {both}"


def test_every_entry_is_a_target():
    distributions, stdlib = classify_targets()
    unknown = sorted((set(CASES) | set(STATELESS)) - distributions - stdlib)
    assert not unknown, f"neither a direct requirement nor a stdlib module: {unknown}"


def test_targets_come_from_the_pyprojects_and_the_stdlib():
    distributions, stdlib = classify_targets()
    # The project's own distributions are followed, never classified.
    assert "snakemake-executor-plugin-sticky" not in distributions
    assert {"torch", "numpy", "scikit-learn", "pyyaml", "optuna"} <= distributions
    assert {"decimal", "asyncio", "winreg"} <= stdlib
    assert not any(name.startswith("_") for name in stdlib)
    assert all(normalise(name) == name for name in distributions)


def test_stateless_entries_give_a_reason():
    assert all(reason.strip() for reason in STATELESS.values())
    assert STATELESS["winreg"] == "not on Linux"


@pytest.mark.parametrize("key", sorted(CASES))
def test_probes_compile(key):
    case = CASES[key]
    assert case.key == key and case.probes
    compile(case.imports, f"{key} imports", "exec")
    labels = [probe.label for probe in case.probes]
    assert len(set(labels)) == len(labels), f"{key}: duplicate probe labels"
    for probe in case.probes:
        compile(probe.change, f"{key} / {probe.label} change", "exec")
        compile(probe.observe, f"{key} / {probe.label} observe", "eval")
