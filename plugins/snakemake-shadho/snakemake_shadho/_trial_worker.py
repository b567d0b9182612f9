"""What runs in a sticky worker of an asynchronous search: a class's state, and one trial.

``execution: async`` (:mod:`._driver`) runs its trials as invocations of the sticky runtime
(:mod:`snakemake_executor_plugin_sticky.manager`). Each hardware class is one sticky template,
``shadho-<class>``, declared in a templates file the driver writes into the search's folder
(:func:`templates_source`). A worker builds its class's template once, with
:func:`class_state`: it imports the objective, builds the spec's own sticky template (the
workflow's ``sticky_templates.py``) if it names one, and sets ``$SHADHO_HW_CLASS``. Every trial
then runs in a child forked from that process (the sticky runtime's default isolation), which
executes ``_trial_job.py``: :func:`run_invocation` evaluates the trial and writes its record to
the invocation's one output, a JSON file the driver reads back.
"""

import json
import os
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ._errors import ShadhoError

CLASS_ENV = "SHADHO_HW_CLASS"
"""Set in every worker to the name of its hardware class (an objective may pick its device)."""

TEMPLATE_PREFIX = "shadho-"

TRIAL_SCRIPT = Path(__file__).with_name("_trial_job.py")
"""The script every trial runs as (a sticky invocation's ``script:``)."""


def template_of(hw_class: str) -> str:
    """The sticky template of a hardware class's workers."""
    return f"{TEMPLATE_PREFIX}{hw_class}"


@dataclass
class ClassState:
    """A worker's warm state: the objective, the keyword arguments every trial gets."""

    hw_class: str
    objective: Any
    kwargs: dict[str, Any] = field(default_factory=dict)


def templates_source(spec_file: str, classes: Sequence[str], search_dirs: Sequence[str]) -> str:
    """The templates file of a search: one ``@template`` per class, every value a literal."""
    lines = [
        '"""Written by snakemake_shadho for one asynchronous search: one sticky template per',
        'hardware class (a worker imports the objective and builds the spec\'s state once)."""',
        "",
        "from stickyinvoc import template",
        "",
        "from snakemake_shadho._trial_worker import class_state",
    ]
    for n, name in enumerate(classes):
        lines += [
            "",
            "",
            f"@template({template_of(name)!r})",
            f"def _class_{n}():",
            f"    yield from class_state({spec_file!r}, {name!r}, {list(search_dirs)!r})",
        ]
    return "\n".join(lines) + "\n"


def class_state(
    spec_file: str, hw_class: str, search_dirs: Sequence[str]
) -> Generator[ClassState, None, None]:
    """Build a class's worker state (a sticky template's generator: torn down after the
    ``yield``, which tears down the spec's own template state too)."""
    from ._cli import read_spec
    from ._trial import load_objective

    spec = read_spec(spec_file)
    if not spec.objective:
        raise ShadhoError("the search spec names no objective (objective: module:function)")
    os.environ[CLASS_ENV] = hw_class
    objective = load_objective(spec.objective, search_dirs)
    kwargs: dict[str, Any] = dict(spec.objective_args)
    kwargs["threads"] = spec.classes[hw_class].cpus
    built = None
    if spec.sticky_template:
        built = _build_user_template(spec.sticky_template, search_dirs)
        kwargs["state"] = built.value
    try:
        yield ClassState(hw_class, objective, kwargs)
    finally:
        if built is not None:
            problem = built.teardown()
            if problem:
                print(f"teardown of sticky template {spec.sticky_template!r} failed:\n{problem}")


def _build_user_template(name: str, search_dirs: Sequence[str]) -> Any:
    """The spec's ``sticky_template``, built from the first ``sticky_templates.py`` on
    ``search_dirs`` that declares it (its teardown runs when the worker stops)."""
    from stickyinvoc._templates import build_state, find_templates_file, load_templates

    looked = []
    for folder in search_dirs:
        path = find_templates_file(folder)
        if path is None or path in looked:
            continue
        looked.append(path)
        templates = load_templates(path)
        if name in templates:
            return build_state(name, templates[name])
    where = ", ".join(map(str, looked)) or f"no sticky_templates.py in {list(search_dirs)}"
    raise ShadhoError(
        f"the spec's sticky_template {name!r} is not declared ({where}); declare it with "
        f"@template({name!r}) in the workflow's sticky_templates.py, or remove sticky_template"
    )


def run_invocation(snakemake: Any) -> None:
    """One trial, in a child of its class's worker: evaluate it, write its record."""
    import stickyinvoc

    from ._trial import evaluate

    state: ClassState = stickyinvoc.state(snakemake)
    record = evaluate(state.objective, snakemake.params.trial, **state.kwargs)
    if os.environ.get("SLURM_JOB_ID"):
        record["slurm_job"] = os.environ["SLURM_JOB_ID"]
    # The invocation's declared output, read by the driver once the invocation is done.
    with open(snakemake.output[0], "w", encoding="utf-8") as f:
        json.dump(record, f, allow_nan=False)
