"""stickyinvoc: sticky templates and the accessor for warm state in Snakemake scripts.

Declare a template once, in ``sticky_templates.py`` beside the Snakefile::

    from stickyinvoc import template

    @template("minilm")
    def minilm():
        ...            # expensive: imports, model load, move to GPU
        yield model    # the state; code after the yield is its teardown

Opt a ``script:`` rule in with ``resources: sticky="minilm"`` and reach the state from the
script with ``model = stickyinvoc.state(snakemake)``. Under ``--executor sticky`` the state is
built once per worker and reused by every invocation; under any other executor each job
builds it itself (the create-destroy baseline), from the same Snakefile.
"""

from ._access import STICKY_RESOURCE, in_worker, state, template_name_of
from ._templates import (
    TEMPLATES_ENV_VAR,
    TEMPLATES_FILENAME,
    TemplateBuildError,
    TemplateError,
    TemplateNotFoundError,
    declared_templates,
    find_templates_file,
    template,
)

__all__ = [
    "STICKY_RESOURCE",
    "TEMPLATES_ENV_VAR",
    "TEMPLATES_FILENAME",
    "TemplateBuildError",
    "TemplateError",
    "TemplateNotFoundError",
    "declared_templates",
    "find_templates_file",
    "in_worker",
    "state",
    "template",
    "template_name_of",
]
