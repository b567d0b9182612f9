"""``python -m distea impact`` prints a summary by default (issue 31): a screenful however
many jobs the answer holds; ``--explain full`` prints every chain."""

from distea._query import Change, Impact, ImpactResult
from distea._report import summary, summary_data, table


def big_result(n: int) -> ImpactResult:
    jobs = [
        Impact("job", f"verify[batch=b{k:04d}]", "verify", ("func:cc.features", "x", "y"))
        for k in range(n)
    ]
    jobs.append(Impact("job", "report[]", "report", ("func:cc.features", "a", "b", "c")))
    outputs = [Impact("output", f"results/{k}.tsv", j.name, j.chain) for k, j in enumerate(jobs)]
    return ImpactResult(
        changes=[Change.parse("func:cc.features")],
        sources=[("w1", 1, "ran")] * n,
        jobs=jobs,
        outputs=outputs,
        warnings=[f"warning {k}" for k in range(20)],
        conservative={"report[]": "untraced"},
    )


def test_the_summary_is_a_screenful_however_large_the_answer():
    result = big_result(2000)
    text = summary(result)
    assert len(text.splitlines()) < 40
    assert "2001 jobs" in text and "verify  2000" in text and "report     1" in text
    assert "2000 job(s): func:cc.features -> 2 hop(s) -> verify" in text
    assert "and 1993 more" in text  # outputs: eight shown
    assert "... and 12 more" in text  # warnings: eight shown
    assert "1 of them included without proof" in text
    assert "--explain full" in text
    full = table(result, explain=True)
    assert len(full.splitlines()) > 8000  # every job, output and chain step


def test_summary_data_counts_rules_and_chain_shapes():
    data = summary_data(big_result(3))
    assert data["counts"] == {
        "functions": 0,
        "jobs": 4,
        "outputs": 4,
        "sources": 3,
        "conservative": 1,
    }
    assert data["jobs_by_rule"] == {"verify": 3, "report": 1}
    assert data["top_chains"][0] == {
        "chain": "func:cc.features -> 2 hop(s) -> verify",
        "jobs": 3,
    }
