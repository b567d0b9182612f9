"""The end of a run waits for the checkpoint writer with a deadline (issue 18 part 5: every
wait has one), saying what it still stores meanwhile."""

from snakemake_executor_plugin_sticky._checkpoints import wait_for_writer


class Writer:
    """A writer thread that finishes after ``busy`` seconds of a fake clock."""

    def __init__(self, busy: float) -> None:
        self.busy = busy
        self.now = 0.0
        self.joins: list[float] = []

    def clock(self) -> float:
        return self.now

    def join(self, timeout=None):
        self.joins.append(timeout)
        self.now = min(self.now + timeout, max(self.busy, self.now))

    def is_alive(self) -> bool:
        return self.now < self.busy


def test_a_writer_that_finishes_is_waited_for_with_notes_of_what_it_stores():
    writer, notes = Writer(busy=70.0), []
    done = wait_for_writer(
        writer, lambda: "job big (2 more job(s) queued)", notes.append, 600, 30, writer.clock
    )
    assert done
    assert writer.joins == [30, 30, 30]
    assert notes == [
        "checkpoints: still storing after 30 s: job big (2 more job(s) queued)",
        "checkpoints: still storing after 60 s: job big (2 more job(s) queued)",
    ]


def test_a_writer_past_the_deadline_is_given_up_on():
    writer, notes = Writer(busy=1e9), []
    assert not wait_for_writer(writer, lambda: "job x", notes.append, 100, 30, writer.clock)
    assert writer.joins == [30, 30, 30, 10]
    assert writer.now == 100 and len(notes) == 3


def test_a_writer_done_at_once_costs_one_join():
    writer, notes = Writer(busy=0.0), []
    assert wait_for_writer(writer, lambda: "", notes.append, 600, 30, writer.clock)
    assert writer.joins == [30] and notes == []
