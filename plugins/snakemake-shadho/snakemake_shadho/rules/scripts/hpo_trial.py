"""One SHADHO trial: evaluate the planned parameters and write the trial's record.

Runs as a sticky invocation when the search names a template (``sticky_template:``): the
template's state (for example the loaded data set) is passed to the objective as ``state``.
Under any other executor the state is built in this process from the workflow's
``sticky_templates.py``. An objective that raises ``snakemake_shadho.TrialFailed`` or returns
a non-finite loss gives a "fail" record; any other exception fails the job, with the trial
named under the objective's traceback, unless the spec's ``max_failed_trials`` allows such
failures (then a "fail" record too, counted when the next round is planned).
"""

import os

import snakemake_shadho as shadho

trial_name = snakemake.wildcards.trial
plan = shadho.read_json(snakemake.input.plan)
trial = next(t for t in plan["trials"] if t["trial"] == trial_name)
basedir = snakemake.params.basedir
objective = shadho.load_objective(
    snakemake.params.objective, [basedir, os.path.join(basedir, "scripts")]
)
kwargs = dict(snakemake.params.objective_args)
kwargs["threads"] = snakemake.threads
if snakemake.resources.get("sticky"):
    import stickyinvoc

    if not stickyinvoc.in_worker():
        # Outside a sticky worker the templates file is looked up from the script's folder
        # (rules/scripts); point it at the workflow's own.
        os.environ.setdefault(
            stickyinvoc.TEMPLATES_ENV_VAR, os.path.join(basedir, stickyinvoc.TEMPLATES_FILENAME)
        )
    kwargs["state"] = stickyinvoc.state(snakemake)
# Validated with the rest of the spec when the workflow was read (rules/hpo.smk).
max_failed = int((snakemake.config.get("hpo") or {}).get("max_failed_trials", 0))
record, _ = shadho.run_trial(
    objective, trial, kwargs, raise_undeclared=max_failed == 0, max_failed=max_failed
)
# Where the job actually ran and with what: checks that each class's resources reached it.
resources = {k: v for k, v in snakemake.resources.items() if not k.startswith("_")}
record["job"] = {"threads": snakemake.threads, "resources": resources}
shadho.write_json(snakemake.output[0], record)
