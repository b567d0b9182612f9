"""The terminal's progress line (issue 31, part 4): the line, and the filter that replaces
Snakemake's per-job records with it."""

import io
import logging

from snakemake_executor_plugin_sticky._terminal import CondensedOutput, status_line


def test_the_line_counts_jobs_rate_workers_and_time_left():
    assert status_line(0, 0, 0.0, 0, 0) == "sticky: 0/0 jobs done"
    assert status_line(1, 203, 0.0, 2, 2, started=1) == (
        "sticky: 1/203 jobs done (0%), 2/2 workers busy"
    )
    assert status_line(101, 201, 10.0, 2, 2, started=1) == (
        "sticky: 101/201 jobs done (50%), 10.0 jobs/s, 2/2 workers busy, about 0:10 left"
    )
    assert status_line(4000, 8000, 4.0, 1, 2, started=0).endswith("about 0:04 left")
    assert "about 1:06:40 left" in status_line(1, 4001, 1.0, 0, 0, started=0)


def record(event, **fields):
    r = logging.LogRecord("snakemake.logging", logging.INFO, "", 0, "msg", None, None)
    r.event = event
    r.__dict__.update(fields)
    return r


def test_per_job_records_become_one_redrawn_line_others_pass_on_a_fresh_line():
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    now = [0.0]
    condensed = CondensedOutput(handler, lambda: (1, 2), clock=lambda: now[0])
    assert not condensed.filter(record("job_info"))
    assert not condensed.filter(record("progress", done=1, total=4))
    now[0] = 2.0
    assert not condensed.filter(record("progress", done=3, total=4))
    assert stream.getvalue() == (
        "\rsticky: 1/4 jobs done (25%), 1/2 workers busy\x1b[K"
        "\rsticky: 3/4 jobs done (75%), 1.0 jobs/s, 1/2 workers busy, about 0:01 left\x1b[K"
    )
    round_message = record(None)
    round_message.msg = "Select jobs to execute..."
    assert not condensed.filter(round_message), "said at every scheduling round"
    assert condensed.filter(record("error"))  # printed, after the line is cleared
    assert condensed.filter(record(None))
    assert stream.getvalue().endswith("\r\x1b[K"), "cleared once"
    assert stream.getvalue().count("\r\x1b[K") == 1
    assert condensed.close_line() == (
        "sticky: 3/4 jobs done (75%), 1.0 jobs/s, 1/2 workers busy, about 0:01 left"
    )
