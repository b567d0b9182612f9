"""The discrete-event simulator over the workflow's whole space with every strategy
(integration: seconds of CPU, too slow for the unit tier)."""

from pathlib import Path

import pytest

import snakemake_shadho as shadho
from snakemake_shadho import _simulate as sim

pytestmark = pytest.mark.integration


def _workflow_options():
    import yaml

    config = Path(__file__).parents[3] / "workflows" / "hpo-digits" / "config" / "config.yaml"
    return yaml.safe_load(config.read_text())["hpo"]["space"]["model"]["exclusive"]


def test_every_strategy_runs_the_workflow_space_and_shadho_sends_costly_cnns_fast():
    """The workflow's whole space (SVMs and CNN) through every strategy with the same budget;
    with CNN trials far costlier than SVM fits, SHADHO runs more CNNs per worker on the fast
    class."""
    options = _workflow_options()
    spec = shadho.load_spec(
        {
            "space": {"model": {"exclusive": options}},
            "hardware": {"fast": {"count": 2, "speed": 4}, "slow": {"count": 8}},
            "trials_per_round": 20,
            "n_startup_jobs": 3,
        }
    )
    entries = {}
    for name, sub in spec.subspaces.items():
        rows = []
        for s in shadho.SubspaceOptimizer(sub.space, n_startup_jobs=10**6).ask(30, seed=2):
            if name == "cnn":  # cost grows with channels (index 0..2) and epochs (2..8)
                cost, loss = (1 + s.vals["channels"]) * s.vals["epochs"], 0.05
            else:
                cost, loss = 0.1, 0.1
            rows.append({"vals": s.vals, "loss": loss, "cost": cost})
        entries[name] = rows
    pool = sim.EvaluatedPool(entries, {n: s.space for n, s in spec.subspaces.items()})
    joint, to_vals = sim.joint_space_from_config(options)
    results = [
        sim.simulate_shadho(spec, pool, 4, 0),
        sim.simulate_agnostic(spec, pool, 4, 0),
        sim.simulate_joint_tpe(spec, joint, to_vals, pool, 4, 0),
    ]
    for r in results:
        assert len(r.trials) == 80 and len(r.round_ends) == 4
        assert any(t.subspace == "cnn" for t in r.trials)
    # After the first round (no costs known yet), a fast worker runs far more of SHADHO's CNN
    # trials than a slow one. The CNN, the incumbent here, is served by both classes (issue 30,
    # part 3), so the 8 slow workers run some; the 2 fast ones still run at least twice as many
    # each (34 later CNN trials, 13 on fast: 6.5 per fast worker, 2.6 per slow one).
    later_cnn = [t for t in results[0].trials[20:] if t.subspace == "cnn"]
    on_fast = sum(results[0].speeds[t.worker] == 4 for t in later_cnn)
    assert later_cnn and on_fast / 2 > 2 * (len(later_cnn) - on_fast) / 8
    assert results[0].makespan < results[1].makespan
