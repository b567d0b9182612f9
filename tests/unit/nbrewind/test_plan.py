"""The repeat policy: restore only what is unchanged, with a reason for every re-execution."""

import pytest

from nbrewind import CellFacts, Trust, decide
from nbrewind._record import FORMAT_VERSION

ENV = {"python": "3.11.7", "packages": {"numpy": "2.4.6"}}
RECORD = {
    "v": FORMAT_VERSION,
    "source": "sha256:src",
    "python": "3.11",
    "packages": {"numpy": "2.4.6"},
    "reads": {"alpha": "sha256:a1", "data": "sha256:d1"},
    "files_read": {"in.csv": "sha256:f1"},
    "writes": {"model": {"kind": "pickle", "hash": "sha256:m1"}},
    "outputs": "sha256:out",
}
CURRENT = {"alpha": "sha256:a1", "data": "sha256:d1"}


def facts(**overrides):
    base = dict(
        record=RECORD,
        source_hash="sha256:src",
        opaque=False,
        workflow=False,
        trust=Trust.TRUSTED,
        outputs_digest="sha256:out",
        blobs_present=True,
        needed_later=frozenset(),
    )
    base.update(overrides)
    return CellFacts(**base)


def files(path):
    return {"in.csv": "sha256:f1"}.get(path)


def test_unchanged_cell_is_restored():
    d = decide(facts(), CURRENT, {}, files, ENV)
    assert d.action == "restore"


@pytest.mark.parametrize(
    "change, reason",
    [
        (dict(record=None), "no checkpoint"),
        (dict(source_hash="sha256:other"), "source changed"),
        (dict(workflow=True), "Snakemake workflow"),
        (dict(opaque=True), "cannot be known"),
        (dict(trust=Trust.TAMPERED), "TAMPERED"),
        (dict(trust=Trust.OTHER_KEY), "another key"),
        (dict(trust=Trust.UNSIGNED), "unsigned"),
        (dict(blobs_present=False), "does not match its digest"),
        (dict(outputs_digest="sha256:edited"), "outputs"),
        (dict(injected_parameters=True), "parameters"),
    ],
)
def test_each_reason_to_re_execute(change, reason):
    d = decide(facts(**change), CURRENT, {}, files, ENV)
    assert d.action == "run" and reason in d.reason


def test_a_changed_input_names_the_input_and_its_cause():
    d = decide(
        facts(),
        {**CURRENT, "alpha": "sha256:a2"},
        {"alpha": "is a parameter that changed"},
        files,
        ENV,
    )
    assert d.action == "run" and d.reason == "reads alpha, which is a parameter that changed"


def test_an_input_recomputed_to_the_same_value_does_not_invalidate():
    """Early cutoff: what counts is the value's hash, not whether its producer ran."""
    d = decide(facts(), dict(CURRENT), {"alpha": "was recomputed by cell 1"}, files, ENV)
    assert d.action == "restore"


def test_a_changed_input_file_re_executes():
    d = decide(facts(), CURRENT, {}, lambda p: "sha256:f2", ENV)
    assert d.action == "run" and "in.csv" in d.reason


def test_another_python_or_package_version_re_executes_with_a_clear_reason():
    d = decide(facts(), CURRENT, {}, files, {**ENV, "python": "3.12.1"})
    assert d.action == "run" and "Python 3.11 -> 3.12" in d.reason
    d = decide(facts(), CURRENT, {}, files, {**ENV, "packages": {"numpy": "2.5.0"}})
    assert d.action == "run" and "numpy 2.4.6 -> 2.5.0" in d.reason


def test_unpicklable_values_re_execute_only_when_a_later_cell_reads_them():
    record = dict(RECORD, writes={"conn": {"kind": "unpicklable", "hash": "sha256:u"}})
    assert decide(facts(record=record), CURRENT, {}, files, ENV).action == "restore"
    d = decide(facts(record=record, needed_later=frozenset({"conn"})), CURRENT, {}, files, ENV)
    assert d.action == "run" and "conn" in d.reason


def test_cells_re_executed_for_what_they_are_are_marked_structural():
    """The prefix-only comparison policy must not count them as cache misses."""
    assert decide(facts(workflow=True), CURRENT, {}, files, ENV).structural
    assert decide(facts(opaque=True), CURRENT, {}, files, ENV).structural
    assert not decide(facts(source_hash="sha256:x"), CURRENT, {}, files, ENV).structural


def test_records_of_an_older_format_are_re_executed():
    d = decide(facts(record={**RECORD, "v": 1}), CURRENT, {}, files, ENV)
    assert d.action == "run" and "format v1" in d.reason


def test_a_cell_the_kernel_could_not_observe_is_re_executed_with_why():
    record = {**RECORD, "unknowable": "starts processes (subprocess.Popen): ..."}
    d = decide(facts(record=record), CURRENT, {}, files, ENV)
    assert d.action == "run" and d.structural and "starts processes" in d.reason


def test_a_changed_directory_listing_re_executes_its_reader():
    record = {**RECORD, "dirs_read": {"d": "sha256:l1"}}
    same = decide(facts(record=record), CURRENT, {}, files, ENV, listing_now=lambda p: "sha256:l1")
    assert same.action == "restore"
    d = decide(facts(record=record), CURRENT, {}, files, ENV, listing_now=lambda p: None)
    assert d.action == "run" and "lists directory d" in d.reason


def test_a_written_file_that_cannot_be_put_back_re_executes_its_writer():
    d = decide(facts(unrestorable_file="out.csv"), CURRENT, {}, files, ENV)
    assert d.action == "run" and "out.csv" in d.reason


def test_an_unpicklable_value_read_by_a_later_opaque_cell_is_replayed():
    record = {**RECORD, "writes": {"g": {"kind": "unpicklable", "hash": "sha256:g"}}}
    d = decide(facts(record=record, needed_later=frozenset({"*"})), CURRENT, {}, files, ENV)
    assert d.action == "run" and "g" in d.reason


def test_cells_are_labelled_by_order_among_code_cells_without_the_injected_one():
    import nbformat
    import papermill  # noqa: F401 - papermill first (it loads the engine entry point)

    from nbrewind._papermill_engine import _cell_labels

    injected = nbformat.v4.new_code_cell("x = 2")
    injected.metadata["tags"] = ["injected-parameters"]
    cells = [
        nbformat.v4.new_markdown_cell("# t"),
        nbformat.v4.new_code_cell("x = 1"),
        injected,
        nbformat.v4.new_markdown_cell("text"),
        nbformat.v4.new_code_cell("y = x"),
    ]
    labels = _cell_labels(cells)
    assert labels[1] == f"code cell 1 (id {cells[1].id})"
    assert labels[2] == "the injected parameters cell"
    assert labels[4] == f"code cell 2 (id {cells[4].id})"
    assert 0 not in labels and 3 not in labels


def test_process_effects_whole_namespace_reads_and_history_re_execute():
    effects = dict(RECORD, effects={"replay": {}, "other": ["logging loggers a -> b"]})
    d = decide(facts(record=effects), CURRENT, {}, files, ENV)
    assert d.action == "run" and d.structural and "logging loggers" in d.reason
    replay_only = dict(RECORD, effects={"replay": {"environ": {"MODE": "x"}}, "other": []})
    assert decide(facts(record=replay_only), CURRENT, {}, files, ENV).action == "restore"
    d = decide(facts(wide="calls dir() from notebook code"), CURRENT, {}, files, ENV)
    assert d.action == "run" and "dir()" in d.reason
    d = decide(facts(history_reader="code cell 4"), CURRENT, {}, files, ENV)
    assert d.action == "run" and "code cell 4 reads IPython's output history" in d.reason


def test_environment_and_stat_reads_are_compared_with_now():
    record = dict(RECORD, env_read={"MODE": "fast"}, stats_read={"data/new.csv": None})
    same = decide(
        facts(record=record),
        CURRENT,
        {},
        files,
        ENV,
        stat_now=lambda p: None,
        environ_now={"MODE": "fast"},
    )
    assert same.action == "restore"
    env = decide(facts(record=record), CURRENT, {}, files, ENV, environ_now={"MODE": "slow"})
    assert env.action == "run" and "environment variable MODE" in env.reason
    stat = decide(
        facts(record=record),
        CURRENT,
        {},
        files,
        ENV,
        stat_now=lambda p: "file:10",
        environ_now={"MODE": "fast"},
    )
    assert stat.action == "run" and "checks data/new.csv" in stat.reason


def test_a_cell_is_restored_only_in_the_process_state_it_was_recorded_in():
    """The state chain (issue 27): a cell recorded after a library option was set is re-run
    when the cells that set it differ now; the same chain restores."""
    recorded = dict(RECORD, state="sha256:chain-a")
    same = decide(facts(record=recorded, state="sha256:chain-a"), CURRENT, {}, files, ENV)
    assert same.action == "restore"
    other = decide(
        facts(record=recorded, state="sha256:chain-b", state_why="cell 2 changes it"),
        CURRENT,
        {},
        files,
        ENV,
    )
    assert other.action == "run" and "other process state" in other.reason
    assert "cell 2 changes it" in other.reason


def test_the_state_chain_moves_only_with_state_changing_cells_and_their_inputs():
    from nbrewind._record import STATE_START, state_after

    plain = {"source": "s1", "reads": {"a": "h1"}}
    assert state_after(STATE_START, plain) == STATE_START
    environ_only = dict(plain, effects={"replay": {"environ": {"MODE": "x"}}, "other": []})
    assert state_after(STATE_START, environ_only) == STATE_START  # env reads compared by name
    option = dict(plain, effects={"replay": {}, "other": ["numpy printoptions ..."]})
    after = state_after(STATE_START, option)
    assert after != STATE_START
    assert state_after(STATE_START, dict(option)) == after  # deterministic
    assert state_after(STATE_START, dict(option, reads={"a": "h2"})) != after  # other inputs
    assert state_after(STATE_START, dict(option, source="s2")) != after  # edited
    assert state_after(after, option) != after  # where it starts counts
    rc = dict(plain, effects={"replay": {"matplotlib rcParams": {"figure.dpi": 72}}})
    rc2 = dict(plain, effects={"replay": {"matplotlib rcParams": {"figure.dpi": 96}}})
    assert state_after(STATE_START, rc) != state_after(STATE_START, rc2)
    # figures count by content, not by where their bytes are kept
    fig = {"open": [[1, {"kind": "figure", "digest": "sha256:f", "inline": "AAA"}]]}
    kept = {"open": [[1, {"kind": "figure", "digest": "sha256:f", "object": "x"}]]}
    assert state_after(
        STATE_START, dict(plain, effects={"replay": {"matplotlib figures": fig}})
    ) == state_after(STATE_START, dict(plain, effects={"replay": {"matplotlib figures": kept}}))
