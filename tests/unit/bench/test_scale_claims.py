"""bench/scale_claims.py's pure parts: the generated dataset of N claims, the split of the
limit loop's work, the verdict comparison and the figures (issue 17, part 3)."""

import csv
import io

import pytest

from tests.conftest import REPO, bench_module

claims = bench_module("scale_claims")

ROWS = [
    {"claim_id": "c0001", "split": "test", "label": "REFUTES", "claim": "a", "evidence": "x"},
    {"claim_id": "c0002", "split": "train", "label": "SUPPORTS", "claim": "b", "evidence": "y"},
    {"claim_id": "c0003", "split": "test", "label": "SUPPORTS", "claim": "c", "evidence": "z"},
    {
        "claim_id": "c0004",
        "split": "test",
        "label": "NOT_ENOUGH_INFO",
        "claim": "d",
        "evidence": "w",
    },
]


def test_n_claims_cycle_over_the_test_claims_with_distinct_ids():
    table = claims.claims_table(ROWS, 7)
    assert [r for r in table if r["split"] == "train"] == [ROWS[1]]  # the head's rows, as is
    ids = claims.test_ids(table)
    assert ids == ["c0001", "c0003", "c0004", "c0001r1", "c0003r1", "c0004r1", "c0001r2"]
    assert len(set(ids)) == 7
    by_id = {r["claim_id"]: r for r in table}
    for claim_id in ids:  # a repeat is its source row, id aside
        source = next(r for r in ROWS if r["claim_id"] == claims.source_id(claim_id))
        assert {**by_id[claim_id], "claim_id": source["claim_id"]} == source


def test_fewer_claims_than_the_dataset_and_a_distinct_subset():
    assert claims.test_ids(claims.claims_table(ROWS, 2)) == ["c0001", "c0003"]
    ids = claims.test_ids(claims.claims_table(ROWS, 5, distinct=2))
    assert ids == ["c0001", "c0003", "c0001r1", "c0003r1", "c0001r2"]


@pytest.mark.parametrize(("n", "distinct"), [(0, None), (5, 0), (5, 4)])
def test_bad_sizes_name_the_fix(n, distinct):
    with pytest.raises(ValueError, match="--distinct must be 1..3|at least one claim"):
        claims.claims_table(ROWS, n, distinct)


def test_the_generated_table_reads_back_as_the_workflow_reads_it():
    """The Snakefile's test_claims and claimcheck.read_claims read it with csv.DictReader."""
    table = claims.claims_table(ROWS, 5)
    text = claims.table_text(table)
    assert text.splitlines()[0] == "\t".join(claims.COLUMNS)
    assert list(csv.DictReader(io.StringIO(text), delimiter="\t")) == table
    # The real dataset's columns are the ones written.
    with (REPO / "workflows/claim-verification/data/claims.tsv").open() as f:
        header = f.readline()
    assert tuple(header.rstrip("\n").split("\t")) == claims.COLUMNS


def test_the_real_dataset_at_20000_claims():
    with (REPO / "workflows/claim-verification/data/claims.tsv").open(newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    table = claims.claims_table(rows, 20_000)
    ids = claims.test_ids(table)
    assert len(ids) == len(set(ids)) == 20_000
    assert len({claims.source_id(i) for i in ids}) == 1053
    assert sum(r["split"] == "train" for r in table) == 453


def test_the_loop_shares_cover_every_claim_once():
    ids = [f"c{i}" for i in range(11)]
    shares = claims.split_ids(ids, 2)
    assert [len(s) for s in shares] == [6, 5]
    assert [i for s in shares for i in s] == ids
    assert claims.split_ids(ids[:1], 2) == [["c0"]]  # no empty share, no idle process


def test_verdicts_must_match_for_every_claim():
    ids = ["a", "b", "c"]
    same = {"a": "REFUTES\t0.9", "b": "SUPPORTS\t0.8", "c": "REFUTES\t0.7"}
    assert claims.verdict_mismatches(ids, same, dict(same)) == []
    assert claims.verdict_mismatches(ids, same, {**same, "b": "SUPPORTS\t0.7999"}) == ["b"]
    assert claims.verdict_mismatches(ids, {"a": same["a"], "b": same["b"]}, same) == ["c"]
    assert claims.verdict_mismatches(ids[:2], same, same) == ["c"]  # not asked for


def test_figures():
    f = claims.figures(1000, sticky_s=50.0, loop_s=20.0)
    assert f == {
        "sticky_inferences_per_s": 20.0,
        "loop_inferences_per_s": 50.0,
        "sticky_over_loop": 2.5,
        "overhead_ms_per_claim": 30.0,
    }


def test_the_loop_sample_is_extrapolated_on_the_line_through_two_points():
    # 10 s of start-up and loading, 0.2 s a claim: 300 claims 70 s, 1,200 claims 250 s.
    assert claims.loop_fit((300, 70.0), (1200, 250.0), 20_000) == pytest.approx(4010.0)
    with pytest.raises(ValueError, match="two sample sizes"):
        claims.loop_fit((1200, 250.0), (300, 70.0), 20_000)


def test_with_a_loop_sample_every_claim_is_checked_against_its_source_claim():
    ids = claims.test_ids(claims.claims_table(ROWS, 7))
    loop = {"c0001": "REFUTES\t0.9", "c0003": "SUPPORTS\t0.8", "c0004": "NEI\t0.5"}
    expected = claims.expected_by_source(ids, loop)
    sticky = dict(expected)
    assert claims.verdict_mismatches(ids, sticky, expected) == []
    sticky["c0003r1"] = "REFUTES\t0.8"  # a repeat verified differently from its source
    assert claims.verdict_mismatches(ids, sticky, expected) == ["c0003r1"]
    partial = claims.expected_by_source(ids, {"c0001": "REFUTES\t0.9"})  # sources missing
    assert set(claims.verdict_mismatches(ids, dict(expected), partial)) == {
        "c0003",
        "c0004",
        "c0003r1",
        "c0004r1",
    }
