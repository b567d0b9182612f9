# SHADHO hardware-aware hyperparameter search as rounds of Snakemake jobs.
#
# Include from a workflow whose config has an `hpo:` entry (see workflows/hpo-digits/):
#
#     configfile: "config/config.yaml"
#     from snakemake_shadho.rules import smk
#     include: smk("hpo")
#     rule all:
#         input: HPO_REPORT
#
# Round r (0 .. rounds-1):
#   checkpoint hpo_plan   rounds/r/plan.json        rank sub-spaces, assign them to hardware
#                                                  classes, ask each sub-space's TPE for trials
#   rule hpo_trial        rounds/r/trials/CLASS/TRIAL.json   one job per trial, with CLASS's
#                                                  resources (threads, slurm_partition, gres...)
#   rule hpo_merge        rounds/r/history.jsonl   every record so far (input of round r+1)
# then rule hpo_report    report/ (best.json, tables, plots, report.md).
#
# With `execution: async` there are no rounds: one job, rule hpo_search, runs the whole search
# (`python -m snakemake_shadho search`) on the sticky runtime: count workers per class, local
# processes or, when the classes name a slurm_partition, one sticky pilot job each, kept for the
# whole search; each trial is forked from its class's warm worker, and a worker that frees
# takes its class's next trial at once. It writes async/history.jsonl after every result (a
# rerun resumes from it) and the same report/.
#
# With `pipeline_depth: d` (d > 1) round r is planned from the history of round r - d, the
# trials of rounds r-d+1 .. r-1 counting as pending: round r's trials are queued while the
# rounds before it still run, so a worker that frees up takes the next trial instead of waiting
# for the slowest trial of its round (docs/shadho-execution.md). Give Snakemake one core more
# than the trials use (`--cores`), for the bookkeeping jobs that plan and merge rounds.
#
# Everything is written atomically and every random choice is seeded from (seed, round,
# sub-space), so an interrupted search resumes (`--rerun-incomplete`) without repeating or
# losing a trial. The search settings are read from the config at run time, not stored in
# the jobs' params: raising `rounds` extends a finished search instead of redoing it.
import json
import os
import sys

import snakemake_shadho as shadho
from snakemake.exceptions import WorkflowError

try:
    HPO_SPEC = shadho.load_spec(config.get("hpo"), "hpo")
except shadho.SpecError as e:
    raise WorkflowError(str(e)) from None
if not HPO_SPEC.objective:
    raise WorkflowError(
        "invalid search spec at 'hpo.objective': no objective is given. "
        "Name it as module:function, e.g. objective: snakemake_shadho.digits:evaluate"
    )

# A typo in the objective (or a module not on the path) stops the search here, naming the
# key, not in every trial (the module's source is read, not imported).
_hpo_objective = shadho.objective_problem(
    HPO_SPEC.objective, [workflow.basedir, os.path.join(workflow.basedir, "scripts")]
)
if _hpo_objective is not None:
    raise WorkflowError(f"invalid search spec at 'hpo.objective': {_hpo_objective}")

try:
    # A module an objective needs (torch for a CNN) missing here stops the search before any
    # trial, with the pip install line, instead of failing every trial of the sub-space.
    shadho.check_requirements(HPO_SPEC)
except shadho.ShadhoError as e:
    raise WorkflowError(str(e)) from None

HPO_DIR = config.get("hpo_dir", "results/hpo")
# The spec as the bookkeeping steps (python -m snakemake_shadho) read it. Written when it changes, and
# deliberately not a rule input: a larger budget extends the search instead of redoing it.
HPO_SPEC_FILE = f"{HPO_DIR}/spec.json"
_hpo_spec_json = json.loads(json.dumps(config["hpo"]))
if not os.path.exists(HPO_SPEC_FILE) or shadho.read_json(HPO_SPEC_FILE) != _hpo_spec_json:
    shadho.write_json(HPO_SPEC_FILE, _hpo_spec_json)
HPO_PYTHON = sys.executable
HPO_REPORT = f"{HPO_DIR}/report/report.md"
HPO_LAST = HPO_SPEC.rounds - 1

# Bookkeeping runs on the host running Snakemake, never as a cluster job (the asynchronous
# driver starts its own Slurm jobs).
localrules: hpo_plan, hpo_merge, hpo_report, hpo_search


wildcard_constraints:
    round=r"\d+",
    hw="|".join(HPO_SPEC.classes),
    trial=r"[A-Za-z0-9_\-]+\.\d+",


def _hpo_resource(key):
    """A resource of the trial's hardware class (None where the class does not set it)."""
    return lambda wildcards: HPO_SPEC.classes[wildcards.hw].resources().get(key)


HPO_RESOURCE_KEYS = sorted({k for c in HPO_SPEC.classes.values() for k in c.resources()})
HPO_TRIAL_RESOURCES = {key: _hpo_resource(key) for key in HPO_RESOURCE_KEYS}
# hw_<class>=1 for the trial's own class only, 0 for the others: `--resources hw_fast=2`
# then caps how many trials of class fast run at once.
for _name in HPO_SPEC.classes:
    HPO_TRIAL_RESOURCES[f"hw_{_name}"] = (lambda n: lambda w: int(w.hw == n))(_name)
if HPO_SPEC.sticky_template:
    # The trial runs as an invocation on a sticky worker that already holds the template.
    HPO_TRIAL_RESOURCES["sticky"] = HPO_SPEC.sticky_template


HPO_DEPTH = HPO_SPEC.pipeline_depth


def _hpo_plan_inputs(wildcards):
    """Plan r reads the history of round r - depth, the plans in between (pending trials) and
    the previous plan (its ranking)."""
    r = int(wildcards.round)
    inputs = {}
    if r - HPO_DEPTH >= 0:
        inputs["history"] = f"{HPO_DIR}/rounds/{r - HPO_DEPTH}/history.jsonl"
    if r >= 1:
        inputs["plan"] = f"{HPO_DIR}/rounds/{r - 1}/plan.json"
    inputs["pending"] = [
        f"{HPO_DIR}/rounds/{p}/plan.json" for p in range(max(0, r - HPO_DEPTH + 1), r)
    ]
    return inputs


def _hpo_plan_args(wildcards, input):
    args = []
    if "history" in input.keys():
        args.append(f"--history {input.history}")
    if int(wildcards.round):
        args.append(f"--previous-plan {input.plan}")
    if input.pending:
        args.append("--pending " + " ".join(input.pending))
    return " ".join(args)


def _hpo_previous(wildcards):
    r = int(wildcards.round)
    if r == 0:
        return []
    return {"history": f"{HPO_DIR}/rounds/{r - 1}/history.jsonl"}


def _hpo_round_trials(wildcards):
    plan = shadho.read_json(checkpoints.hpo_plan.get(round=wildcards.round).output[0])
    return [
        f"{HPO_DIR}/rounds/{wildcards.round}/trials/{t['hw_class']}/{t['trial']}.json"
        for t in plan["trials"]
    ]


checkpoint hpo_plan:
    input:
        unpack(_hpo_plan_inputs),
    output:
        f"{HPO_DIR}/rounds/{{round}}/plan.json",
    params:
        previous=_hpo_plan_args,
    # Bookkeeping first: the next round's trials are queued as soon as possible.
    priority: 10
    shell:
        "{HPO_PYTHON} -m snakemake_shadho plan {HPO_SPEC_FILE} --round {wildcards.round} "
        "{params.previous} --out {output}"


rule hpo_trial:
    input:
        plan=f"{HPO_DIR}/rounds/{{round}}/plan.json",
    output:
        f"{HPO_DIR}/rounds/{{round}}/trials/{{hw}}/{{trial}}.json",
    threads: lambda wildcards: HPO_SPEC.classes[wildcards.hw].cpus
    resources:
        **HPO_TRIAL_RESOURCES,
    params:
        objective=HPO_SPEC.objective,
        objective_args=HPO_SPEC.objective_args,
        basedir=workflow.basedir,
    script:
        "scripts/hpo_trial.py"


rule hpo_merge:
    input:
        unpack(_hpo_previous),
        plan=f"{HPO_DIR}/rounds/{{round}}/plan.json",
        trials=_hpo_round_trials,
    output:
        f"{HPO_DIR}/rounds/{{round}}/history.jsonl",
    params:
        previous=lambda w, input: f"--history {input.history}" if int(w.round) else "",
    priority: 10
    shell:
        "{HPO_PYTHON} -m snakemake_shadho merge --plan {input.plan} {params.previous} --out {output} "
        "{input.trials}"


HPO_REPORT_FILES = dict(
    md=HPO_REPORT,
    best=f"{HPO_DIR}/report/best.json",
    subspaces=f"{HPO_DIR}/report/subspaces.csv",
    classes=f"{HPO_DIR}/report/classes.csv",
    speeds=f"{HPO_DIR}/report/speeds.csv",
    plot=f"{HPO_DIR}/report/convergence.png",
)


if HPO_SPEC.execution == "async":

    rule hpo_search:
        # async/history.jsonl is deliberately not an output: Snakemake deletes a failed job's
        # outputs, and the finished trials must survive for the rerun to resume from them.
        output:
            **HPO_REPORT_FILES,
        # The local workers' cores, and one for the driver.
        threads: 1 + sum(c.cpus * c.count for c in HPO_SPEC.classes.values() if not c.slurm_partition)
        params:
            basedir=workflow.basedir,
            out=f"{HPO_DIR}/async",
        shell:
            "{HPO_PYTHON} -m snakemake_shadho search {HPO_SPEC_FILE} --out {params.out} "
            "--report {output.md} --search-dir {params.basedir} "
            "--search-dir {params.basedir}/scripts"

else:

    rule hpo_report:
        input:
            history=f"{HPO_DIR}/rounds/{HPO_LAST}/history.jsonl",
            plans=[f"{HPO_DIR}/rounds/{r}/plan.json" for r in range(HPO_SPEC.rounds)],
        output:
            **HPO_REPORT_FILES,
        shell:
            "{HPO_PYTHON} -m snakemake_shadho report {HPO_SPEC_FILE} --history {input.history} "
            "--out {output.md} {input.plans}"
