# NBRewind notebook stages as Snakemake rules: papermill runs a notebook as a job, under the
# nbrewind-audit kernel the first time and the nbrewind-repeat kernel afterwards.
#
# Include it, then declare each stage with `use rule` (see workflows/notebook-stage/):
#
#     from nbrewind.rules import smk
#     include: smk("notebook")
#
#     use rule nbrewind_notebook as train with:
#         input:
#             notebook="notebooks/train.ipynb",   # the notebook, as authored
#             data="data/{sample}.csv",           # whatever it reads
#         output:
#             notebook="results/{sample}/train.ipynb",  # the executed notebook (required)
#             model="results/{sample}/model.json",      # whatever it writes
#         params:
#             alpha=config["alpha"],                    # papermill parameters, by name
#             model=lambda wildcards, output: output.model,
#
# Papermill parameters (the notebook needs a cell tagged `parameters`): config
# `notebook_parameters: {RULE: {...}}`, then the job's wildcards by name, then the rule's
# params by name (`parameters=` a dict gives several at once), later ones winning. A change of
# a param that does not derive from input/output reruns the job (Snakemake's params rerun
# trigger); the notebook runs in Snakemake's working directory, so it reads and writes the
# paths the rule declares.
#
# Records kept between runs: Snakemake deletes a job's outputs before running it, so the
# executed notebook (with its records) is kept in `.nbrewind-stages/notebooks/` and the
# checkpoints (and the declared outputs the stage wrote) in the `.nbrewind-stages/store`
# object store (config `nbrewind: {records: DIR}` to move it). The next run of the job carries
# those records into the current notebook and repeats it: only the cells whose source or
# inputs changed run; the others are restored. Delete `.nbrewind-stages/` to audit afresh.

import os

# Absolute: `use rule` resolves a relative script path against the using Snakefile.
NBREWIND_STAGE_SCRIPT = os.path.join(str(workflow.current_basedir), "scripts", "nbrewind_stage.py")


rule nbrewind_notebook:
    # A template for `use rule ... with:`: its output pattern matches no file, so it never
    # runs itself.
    input:
        notebook="{nbrewind_template}.ipynb",
    output:
        notebook="{nbrewind_template,(?!)}.executed.ipynb",
    params:
        parameters={},
    script:
        NBREWIND_STAGE_SCRIPT
