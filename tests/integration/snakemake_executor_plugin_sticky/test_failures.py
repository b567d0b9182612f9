"""Failures are reported like Snakemake's own executors report them, and stay contained."""

import pytest

pytestmark = pytest.mark.integration


def test_invocation_exception_fails_that_job_only_and_worker_stays_warm(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--keep-going", "--config", "fail_on=[3]", "count=6", cores=1)
    assert run.returncode != 0
    assert "Error in rule invocation" in run.output
    assert "ValueError: invocation 3 fails on purpose" in run.output
    assert 'scripts/invocation.py", line' in run.output  # the user's traceback, not ours
    assert not (wd / "out/3.txt").exists()
    for i in [0, 1, 2, 4, 5]:
        assert (wd / f"out/{i}.txt").exists()
    # One worker (-c 1) built the state once and served every invocation, the failed one too.
    assert len(run.events("state_built")) == 1
    assert len({r["worker"] for r in run.events("invocation")}) == 1


def test_missing_output_is_reported(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "out/2.txt", "--config", "missing_on=[2]")
    assert run.returncode != 0
    assert "MissingOutputException" in run.output or "Missing files after" in run.output


def test_retries_rerun_a_failed_invocation(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--retries", "1", "--config", "flaky_on=[1]", "count=3")
    assert run.returncode == 0, run.output
    assert "fails on its first attempt" in run.output
    assert run.read("out/1.txt") == "1 30\n"


def test_template_failure_fails_its_jobs_with_one_traceback(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--keep-going", env={"TEST_TEMPLATE_FAILS": "1"}, cores=1)
    assert run.returncode != 0
    assert run.output.count("RuntimeError: the counter template cannot start") == 1, run.output
    assert 'sticky_templates.py", line' in run.output  # the template's own traceback
    assert "sticky template 'counter' failed to build" in run.output
    assert not (wd / "out").exists() or not list((wd / "out").iterdir())
    # Jobs that do not need the template still ran.
    assert (wd / "shell.txt").exists() and (wd / "run.txt").exists()


def test_unknown_template_is_an_error_before_any_job_runs(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    run = run_snakemake(wd, "--config", "template=nosuch")
    assert run.returncode != 0
    assert "names sticky template 'nosuch', which is not declared" in run.output
    assert "sticky_templates.py declares: counter, other" in run.output
    assert not (wd / "shell.txt").exists()


STARTUP_ERRORS = {
    # Issue 31's red team (cases 20, 21, 24, 25): each was the right message followed by three
    # "File ..." lines of the executor's frames; case 20 also named the compiled Snakefile's
    # line (24) instead of the line as written (14).
    "missing-templates": (
        ["--sticky-templates", "nosuch.py"],
        "rule invocation (line 14 of {wd}/Snakefile) names sticky template 'counter', which is "
        "not declared ({wd}/nosuch.py does not exist)",
    ),
    "templates-syntax": ([], "the templates file has a syntax error:"),
    "store-is-a-file": (
        ["--sticky-checkpoints", "Snakefile"],
        "Snakefile is a file, not a checkpoint store directory",
    ),
    "store-not-empty": (["--sticky-checkpoints", "scripts"], "is not empty"),
    "missing-key": (
        ["--sticky-checkpoints", "ckpt", "--sticky-checkpoints-key", "nokey"],
        "nokey",
    ),
    "roots-not-name-path": (
        ["--sticky-checkpoints", "ckpt", "--sticky-checkpoints-roots", "data"],
        "data",
    ),
    "store-holds-outputs": (
        ["--sticky-checkpoints", "out"],
        "--sticky-checkpoints out: the workflow's output out/",
    ),
}


@pytest.mark.parametrize("case", STARTUP_ERRORS)
def test_startup_errors_are_one_line_without_frames(workflow, run_snakemake, case):
    wd = workflow("sticky_basic")
    args, expected = STARTUP_ERRORS[case]
    if case == "templates-syntax":
        templates = wd / "sticky_templates.py"
        templates.write_text(templates.read_text() + "\ndef broken(:\n    pass\n")
    run = run_snakemake(wd, *args)
    assert run.returncode != 0
    lines = [ln for ln in run.output.splitlines() if ln.startswith("Error: ")]
    assert len(lines) == 1 and expected.format(wd=wd) in lines[0], run.output
    assert "Traceback" not in run.output, run.output
    frames = [ln for ln in run.output.splitlines() if ln.lstrip().startswith('File "')]
    # The one File line allowed: a syntax error's, in the user's file, as Python prints it.
    assert all(f'File "{wd}/sticky_templates.py"' in ln for ln in frames), run.output
    assert not (wd / "shell.txt").exists()


def test_run_block_cannot_opt_in(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    snakefile = wd / "Snakefile"
    head = 'rule run_rule:\n    output:\n        "run.txt",\n'
    opted_in = head + '    resources:\n        sticky="counter",\n'
    snakefile.write_text(snakefile.read_text().replace(head, opted_in))
    run = run_snakemake(wd)
    assert run.returncode != 0
    assert "rule run_rule" in run.output and "is not a script: rule" in run.output


def test_non_python_script_cannot_opt_in(workflow, run_snakemake):
    wd = workflow("sticky_basic")
    snakefile = wd / "Snakefile"
    snakefile.write_text(snakefile.read_text().replace('"scripts/invocation.py"', '"scripts/x.R"'))
    (wd / "scripts" / "x.R").write_text("writeLines('hi', snakemake@output[[1]])\n")
    run = run_snakemake(wd)
    assert run.returncode != 0
    assert "scripts/x.R is not Python" in run.output
    assert not (wd / "shell.txt").exists()


def test_a_script_syntax_error_is_its_file_and_line_before_any_template_builds(
    workflow, run_snakemake
):
    """Issue 31: the script is compiled in Snakemake's process before the job is sent, so no
    worker builds a template for a script that cannot run, and the message is the user's
    file and line as Python prints them, without the executor's frames."""
    wd = workflow("sticky_basic")
    script = wd / "scripts" / "invocation.py"
    script.write_text(script.read_text() + "\nbroken = (1,\n")
    run = run_snakemake(wd, "out/1.txt")
    assert run.returncode != 0
    assert 'scripts/invocation.py", line' in run.output
    assert "SyntaxError: '(' was never closed" in run.output
    assert "snakemake_executor_plugin_sticky" not in run.output, run.output
    assert not list(wd.glob(".snakemake/sticky/*/metrics.jsonl"))  # no worker was started


def test_a_templates_file_that_fails_to_import_is_one_traceback_of_its_own_lines(
    workflow, run_snakemake
):
    """Issue 31: the import error of the templates file, once for the run however many
    workers tried it, with the file's line and the exception, without the executor's frames
    or the import system's."""
    wd = workflow("sticky_basic")
    templates = wd / "sticky_templates.py"
    templates.write_text("import no_such_module_for_sticky\n" + templates.read_text())
    run = run_snakemake(wd, "--keep-going", cores=2)
    assert run.returncode != 0
    assert run.output.count("Traceback (most recent call last)") == 1, run.output
    assert 'sticky_templates.py", line 1, in <module>' in run.output
    assert "No module named 'no_such_module_for_sticky'" in run.output
    for frame in ("snakemake_executor_plugin_sticky", "stickyinvoc/", "<frozen importlib"):
        assert frame not in run.output, run.output
