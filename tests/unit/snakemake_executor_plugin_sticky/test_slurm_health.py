"""Issue 18 part 5, the hybrid Slurm jobs' side: what a job's state from squeue/scontrol
means when sacct gives none, and the deadline of a job that no command knows (pure core)."""

import pytest

from snakemake_executor_plugin_sticky._slurm_health import (
    FAILED_STATES,
    Decision,
    Lookup,
    Outcome,
    SlurmJobsFallback,
    SlurmWatch,
    state_decision,
)


@pytest.mark.parametrize(
    ("state", "outcome"),
    [
        ("COMPLETED", Outcome.SUCCESS),
        ("PENDING", Outcome.WATCH),
        ("RUNNING", Outcome.WATCH),
        ("COMPLETING", Outcome.WATCH),  # its epilog runs: not ended yet
        ("REQUEUED", Outcome.WATCH),
        ("SUSPENDED", Outcome.WATCH),
        ("SOMETHING_NEW", Outcome.WATCH),  # slurmctld knows it: it is not lost
        *[(s, Outcome.FAILED) for s in sorted(FAILED_STATES)],
        ("CANCELLED by 0", Outcome.FAILED),  # squeue's %T never has it; sacct-style text does
    ],
)
def test_states_map_onto_outcomes(state, outcome):
    assert state_decision("12", state, "squeue").outcome is outcome


def test_a_failed_state_names_the_job_the_state_and_where_it_came_from():
    assert state_decision("12", "OUT_OF_MEMORY", "scontrol") == Decision(
        Outcome.FAILED,
        "Slurm job 12 ended OUT_OF_MEMORY (state from scontrol: Slurm accounting gave none). ",
    )


def test_an_unknown_job_is_watched_until_the_deadline_then_fails_once():
    fallback = SlurmJobsFallback(unknown_deadline=120)
    gone = Lookup(None, problem="squeue does not list it; scontrol: no such job")
    assert fallback.decide("5", gone, 10.0, "sacct: down").outcome is Outcome.WATCH
    assert fallback.decide("5", gone, 129.0, "sacct: down").outcome is Outcome.WATCH
    failed = fallback.decide("5", gone, 130.0, "sacct: down")
    assert failed.outcome is Outcome.FAILED
    assert failed.message == (
        "Slurm job 5: no state from sacct, squeue or scontrol for 120 s (sacct: down; squeue "
        "does not list it; scontrol: no such job); it counts as failed, its end being unknown. "
        "Once Slurm accounting answers, look it up (sacct -j 5) and rerun the workflow. "
    )


def test_a_state_or_a_job_left_out_resets_its_deadline():
    fallback = SlurmJobsFallback(unknown_deadline=100)
    gone = Lookup(None)
    fallback.decide("1", gone, 0.0)
    fallback.decide("2", gone, 0.0)
    assert fallback.decide("1", Lookup("RUNNING", "squeue"), 50.0).outcome is Outcome.WATCH
    fallback.forget_all_but({"1"})  # 2: decided by sacct again
    assert fallback.decide("1", gone, 60.0).outcome is Outcome.WATCH
    assert fallback.decide("2", gone, 150.0).outcome is Outcome.WATCH
    assert fallback.decide("1", gone, 160.0).outcome is Outcome.FAILED
    assert fallback.decide("2", gone, 250.0).outcome is Outcome.FAILED


def test_the_accounting_warning_names_what_keeps_running_and_keeps_the_error():
    watch = SlurmWatch(subjects="this run's pilots and Slurm jobs")
    assert watch.probe_due(0.0)
    warning = watch.probe_result(0.0, "sacct: error: Problem talking to the database")
    assert warning is not None
    assert "this run's pilots and Slurm jobs keep running" in warning
    assert watch.accounting_down
    assert watch.accounting_problem == "sacct: error: Problem talking to the database"
    assert watch.probe_due(30.0)
    assert watch.probe_result(30.0, None) == "sticky: Slurm accounting answers again (sacct)"
    assert watch.accounting_problem is None
