# Impact report as a workflow step (DISTEA). Include it, then ask for impact/report.md:
#
#     from distea.rules import smk
#     include: smk("impact")
#     snakemake impact/report.md --config distea_logs=traces \
#         'distea_changes=["func:wflib.text.normalize","param:score.threshold"]'
#
# Config: distea_logs (folder of DISTEA logs; default .snakemake/distea), distea_changes
# (list of KIND:NAME changes; required). Outputs: the Markdown report, its picture, and the
# plain-text table. The logs are an input directory, so a newer trace re-runs the report.
import shlex
import sys

from snakemake.exceptions import WorkflowError

DISTEA_LOGS = config.get("distea_logs", ".snakemake/distea")
DISTEA_CHANGES = config.get("distea_changes", [])
if isinstance(DISTEA_CHANGES, str):  # --config distea_changes=func:a.b: one change, not letters
    DISTEA_CHANGES = [DISTEA_CHANGES]


def _distea_logs(wildcards):
    """The logs folder; first, a report without changes to ask about is refused in one line
    when the report is asked for (not when the module is only included)."""
    if not DISTEA_CHANGES:
        raise WorkflowError(
            "distea_impact: no change to ask about; add --config "
            "'distea_changes=[\"func:MODULE.FUNCTION\"]' (KIND:NAME, see python -m distea impact)"
        )
    return DISTEA_LOGS


rule distea_impact:
    input:
        logs=_distea_logs,
    output:
        report="impact/report.md",
        picture="impact/report.png",
        table="impact/impact.txt",
    params:
        changes=lambda wildcards: " ".join(
            f"--change {shlex.quote(str(c))}" for c in DISTEA_CHANGES
        ),
        python=shlex.quote(sys.executable),
    log:
        "impact/impact.log",
    shell:
        "{params.python} -m distea impact --logs {input.logs} {params.changes} "
        "--report {output.report} > {output.table} 2> {log}"
