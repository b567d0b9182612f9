"""No confident wrong answer (issue 15, part 4): every blind spot DISTEA can detect gives a
conservative answer plus a warning; an empty answer comes only with its justification.

Each test reproduces a case of the issue's "Why" on hand-built logs (and, where the decision
needs the workflow's sources, a small workflow directory named by the logger's header)."""

import json
from pathlib import Path

from distea import Change, analyse
from distea._cli import main


def _job(rule, out, inputs=(), **wildcards):
    return {
        "rule": rule,
        "wildcards": wildcards,
        "input": [[p, "h"] for p in inputs],
        "output": [[out, "h"]] if out else [],
    }


def _end(clock, complete):
    mode = "settrace" if complete else "wrap"
    return {"k": "end", "c": clock, "mode": mode, "complete": complete}


def _write(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


FEATURES = """
def f_range(values):
    return max(values) - min(values)


def f_mean(values):
    return sum(values) / len(values)


def f_unused(values):
    return values[0]


EXTRACTORS = {"range": f_range, "mean": f_mean}


def extract(values):
    return {name: fn(values) for name, fn in EXTRACTORS.items()}
"""


def _features_workflow(logs, tmp_path, complete):
    """Two samples: ``feat`` jobs import qclib.features; ``span`` calls f_range directly only
    for sample 1; a dispatch-table call of f_range in every ``feat`` job is invisible to wrap."""
    wf = _write(
        tmp_path / "wf",
        {
            "Snakefile": 'rule feat:\n    output:\n        "feat/{s}.json"\n'
            '    script:\n        "scripts/feat.py"\n',
            "qclib/__init__.py": "",
            "qclib/features.py": FEATURES,
            "scripts/feat.py": "from qclib import features\n",
        },
    )
    logs.logger(
        [_job("feat", "feat/1.json", s=1), _job("feat", "feat/2.json", s=2), _job("all", None)],
        cwd=str(wf),
    )
    fn = logs.fn
    # Job 1 calls f_range directly (seen); job 2 only through EXTRACTORS (unseen by wrap).
    logs.process(
        "script:vm:101",
        [
            fn("scripts.feat.<module>", 1, 9),
            fn("qclib.features.<module>", 2, 3),
            fn("qclib.features.extract", 4, 5),
            fn("qclib.features.f_range", 6, 6),
            _end(10, complete),
        ],
        job="feat[feat/1.json]",
        host="vm",
        pid=101,
    )
    logs.process(
        "script:vm:102",
        [
            fn("scripts.feat.<module>", 1, 9),
            fn("qclib.features.<module>", 2, 3),
            fn("qclib.features.extract", 4, 5),
            _end(10, complete),
        ],
        job="feat[feat/2.json]",
        host="vm",
        pid=102,
    )
    return wf


def test_dispatch_table_function_is_conservative_with_a_warning_under_wrap(logs, tmp_path):
    """Why: a function reached through a dict taken before wrapping, also called directly
    elsewhere, missed jobs silently. Now every process that loaded its module counts."""
    _features_workflow(logs, tmp_path, complete=False)
    result = analyse(logs.root, [Change.parse("func:qclib.features.f_range")])
    assert {j.name for j in result.jobs} == {"feat[feat/1.json]", "feat[feat/2.json]"}
    warning = next(w for w in result.warnings if "wrap tracer" in w)
    assert "qclib/features.py:14" in warning and "settrace" in warning


def test_settrace_logs_trust_the_absence_of_calls(logs, tmp_path):
    """Complete tracers (settrace, monitoring) saw every call: job 2 never ran f_range."""
    _features_workflow(logs, tmp_path, complete=True)
    result = analyse(logs.root, [Change.parse("func:qclib.features.f_range")])
    assert {j.name for j in result.jobs} == {"feat[feat/1.json]"}
    assert not result.warnings


def test_helper_never_called_is_not_flagged_through_jobs(logs, tmp_path):
    """Why: a never-called helper was flagged through every job, even in settrace mode."""
    _features_workflow(logs, tmp_path, complete=True)
    result = analyse(logs.root, [Change.parse("func:qclib.features.f_unused")])
    assert not result.jobs and not result.warnings
    assert any("never ran" in j and "nothing is impacted" in j for j in result.justified)


def test_unknown_function_is_named_not_answered_as_certain(logs, tmp_path):
    _features_workflow(logs, tmp_path, complete=True)
    result = analyse(logs.root, [Change.parse("func:qclib.features.f_rnage")])
    assert not result.jobs
    assert any("not a function of this workflow" in j for j in result.justified)


def test_snakefile_level_helper_is_not_answered_never_ran(logs, tmp_path):
    """Why: a helper the Snakefile calls in params (Snakemake's own process, untraced) was
    answered "never ran: nothing it could impact was executed". Now every job counts."""
    wf = _write(
        tmp_path / "wf",
        {
            "Snakefile": "import settings\n\nrule clip:\n    output:\n        'c/{s}.txt'\n"
            "    params:\n        clip=lambda wc: settings.clip_for(wc.s)\n"
            "    script:\n        'scripts/clip.py'\n",
            "settings.py": "def clip_for(s):\n    return 5.0\n",
            "scripts/clip.py": "print(snakemake.params.clip)\n",
        },
    )
    logs.logger([_job("clip", "c/1.txt", s=1), _job("clip", "c/2.txt", s=2)], cwd=str(wf))
    for i in (1, 2):
        logs.process(
            f"script:vm:{i}",
            [logs.fn("scripts.clip.<module>", 1, 2), _end(3, True)],
            job=f"clip[c/{i}.txt]",
        )
    result = analyse(logs.root, [Change.parse("func:settings.clip_for")])
    assert {j.name for j in result.jobs} == {"clip[c/1.txt]", "clip[c/2.txt]"}
    assert any("Snakemake's own process" in w for w in result.warnings)
    assert not any("never ran" in w for w in result.warnings)


def test_params_get_counts_as_reading_every_parameter(logs):
    """Why: ``snakemake.params.get("decimals", 3)`` was logged as reading ``get``; a change of
    param:report.decimals impacted nothing, with a false "no job read" warning."""
    logs.logger([_job("report", "report.tsv")])
    logs.process(
        "script:vm:7",
        [{"k": "param", "n": "get", "c": 3, "job": "report[report.tsv]"}, _end(4, True)],
        job="report[report.tsv]",
    )
    result = analyse(logs.root, [Change.parse("param:report.decimals")])
    assert [j.name for j in result.jobs] == ["report[report.tsv]"]
    assert any("as a whole" in w for w in result.warnings)
    assert not any("no job read" in w for w in result.warnings)


def test_untraced_job_that_may_run_the_code_is_impacted_with_a_warning(logs, tmp_path):
    """A job that ran without the tracer (its script lacks autotrace) but imports the module."""
    wf = _write(
        tmp_path / "wf",
        {
            "Snakefile": "rule a:\n    output:\n        'a.txt'\n    script:\n"
            "        'scripts/a.py'\n\nrule b:\n    output:\n        'b.txt'\n"
            "    shell:\n        'echo hi > {output}'\n",
            "lib.py": "def f():\n    return 1\n",
            "scripts/a.py": "import lib\n",
        },
    )
    logs.logger([_job("a", "a.txt"), _job("b", "b.txt")], cwd=str(wf))
    result = analyse(logs.root, [Change.parse("func:lib.f")])
    assert [j.name for j in result.jobs] == ["a[a.txt]"]  # b's shell runs no Python
    assert any("not traced" in w and "a[a.txt]" in w for w in result.warnings)


def test_target_without_outputs_is_not_an_impacted_job(logs):
    """Why: ``all[]`` was listed as an impacted job."""
    logs.logger([_job("a", "a.txt", ["data/x.txt"]), _job("all", None, ["a.txt"])])
    result = analyse(logs.root, [Change.parse("file:data/x.txt")])
    assert [j.name for j in result.jobs] == ["a[a.txt]"]


def test_absolute_and_relative_paths_are_the_same_file(logs, tmp_path):
    """Why: ``file:/abs/path`` found nothing where ``./data/C.csv`` worked."""
    wf = tmp_path / "wf"
    wf.mkdir()
    logs.logger([_job("a", "a.txt", ["data/C.csv"])], cwd=str(wf))
    logs.process(
        "script:vm:5",
        [{"k": "open", "p": "data/C.csv", "c": 2}, _end(3, True)],
        job="a[a.txt]",
    )
    answers = [
        {j.name for j in analyse(logs.root, [Change.parse(f"file:{path}")]).jobs}
        for path in (str(wf / "data" / "C.csv"), "./data/C.csv", "data/../data/C.csv")
    ]
    assert answers == [{"a[a.txt]"}] * 3


def test_json_has_warnings_and_the_text_output_shows_them(logs, tmp_path, capsys):
    """Why: --json had no warnings field, so an empty answer looked authoritative."""
    logs.logger([_job("report", "report.tsv")])
    args = ["impact", "--logs", str(logs.root), "--change", "func:lib.nothing"]
    assert main([*args, "--json", "--quiet"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["jobs"] == [] or payload["warnings"]
    assert payload["warnings"] and isinstance(payload["warnings"], list)
    assert main(args) == 0
    assert "WARNINGS (" in capsys.readouterr().out
    report = tmp_path / "r.md"
    assert main([*args, "--report", str(report)]) == 0
    assert "## Warnings" in report.read_text()


def test_change_in_an_installed_library_is_outside_the_traced_code(logs, tmp_path):
    """A library function is never traced: it may run in any job."""
    _features_workflow(logs, tmp_path, complete=True)
    result = analyse(logs.root, [Change.parse("func:json.dumps")])
    assert {j.name for j in result.jobs} == {"feat[feat/1.json]", "feat[feat/2.json]"}
    assert any("outside the traced code" in w for w in result.warnings)


def test_a_lambda_under_a_complete_tracer_starts_at_its_enclosing_function(logs, tmp_path):
    """The instrument tracer (complete) leaves lambdas as written: they never record, so their
    absence is no evidence; the innermost recorded enclosing function is the source, with a
    warning (a helper never called stays unflagged, see above)."""
    _features_workflow(logs, tmp_path, complete=True)
    result = analyse(logs.root, [Change.parse("func:qclib.features.extract.<locals>.<lambda>")])
    assert {j.name for j in result.jobs} == {"feat[feat/1.json]", "feat[feat/2.json]"}
    assert any(
        "not traced individually" in w and "qclib.features.extract" in w for w in result.warnings
    )


def _opened(logs, process: str, path: str, job: str) -> None:
    """A complete trace of one process that opened ``path`` (a folder: listed it) for ``job``."""
    pid = int(process.rsplit(":", 1)[1])
    logs.process(
        process, [{"k": "open", "p": path, "c": 2}, _end(3, True)], job=job, host="vm", pid=pid
    )


def test_a_mistyped_workflow_function_says_so_and_what_the_answer_means(logs, tmp_path):
    """Issue 31's red team, case 14: a typo of a workflow function whose module a worker read
    as data was answered with every job, the warning calling it "an installed package"."""
    _features_workflow(logs, tmp_path, complete=True)
    result = analyse(logs.root, [Change.parse("func:qclib.features.f_rnage")])
    assert not result.jobs
    assert any("did you mean func:qclib.features.f_range?" in j for j in result.justified)
    _opened(logs, "worker:vm:103", "qclib/features.py", "feat[feat/1.json]")
    result = analyse(logs.root, [Change.parse("func:qclib.features.f_rnage")])
    assert result.jobs and not any("installed package" in w for w in result.warnings)
    (typo,) = [w for w in result.warnings if "defines no f_rnage" in w]
    assert "did you mean func:qclib.features.f_range?" in typo, result.warnings


def test_a_file_that_does_not_exist_and_was_only_listed_is_named(logs, tmp_path):
    """Issue 31's red team, case 15: a mistyped file: path impacted every job through a
    folder listing, without a word that no such file exists."""
    wf = _write(tmp_path / "wf", {"Snakefile": "rule a:\n    output: 'a.txt'\n", "data/x": ""})
    logs.logger([_job("a", "a.txt")], cwd=str(wf))
    _opened(logs, "script:vm:101", "data/", "a[a.txt]")
    result = analyse(logs.root, [Change.parse("file:data/nosuch.tsv")])
    assert {j.name for j in result.jobs} == {"a[a.txt]"}
    (warning,) = [w for w in result.warnings if "does not exist here" in w]
    assert "no traced process read data/nosuch.tsv" in warning
    result = analyse(logs.root, [Change.parse("file:data/x")])
    assert not any("does not exist here" in w for w in result.warnings)
