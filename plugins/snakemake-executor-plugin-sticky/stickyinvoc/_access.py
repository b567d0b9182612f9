"""The one accessor a rule's script uses to reach its sticky state.

Inside a sticky worker the state is already warm and :func:`state` returns it at once. Anywhere
else (``--executor local``, a plain ``python`` run) :func:`state` builds it in the current
process, once, and tears it down at exit: the create-destroy baseline, from the same script.
"""

import atexit
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Optional

from ._templates import (
    TEMPLATES_FILENAME,
    BuiltState,
    TemplateError,
    TemplateNotFoundError,
    build_state,
    find_templates_file,
    load_templates,
)

STICKY_RESOURCE = "sticky"
"""The rule resource naming the template a rule opts in to: ``resources: sticky="NAME"``."""

_worker_lookup: Optional[Callable[[str], Any]] = None
_local_states: dict[str, BuiltState] = {}


def template_name_of(snakemake: Any) -> Optional[str]:
    """The template a job names through its ``sticky`` resource, or None."""
    resources = getattr(snakemake, "resources", None)
    if resources is None:
        return None
    value = resources.get(STICKY_RESOURCE) if hasattr(resources, "get") else None
    return value if isinstance(value, str) and value else None


def in_worker() -> bool:
    """True when running inside a sticky worker process."""
    return _worker_lookup is not None


def state(snakemake: Any = None, *, template: Optional[str] = None) -> Any:
    """Return the warm state of this job's sticky template.

    Parameters
    ----------
    snakemake
        The ``snakemake`` object of a ``script:`` job; its ``resources.sticky`` names the
        template.
    template
        The template's name, to override (or stand in for) the job's resource.

    Raises
    ------
    TemplateError
        If no template is named, the template is not declared, or it failed to build.
    """
    name = template or template_name_of(snakemake)
    if name is None:
        rule = getattr(snakemake, "rule", "?")
        raise TemplateError(
            f"rule {rule!r} does not name a sticky template: add resources: "
            f'sticky="NAME" to the rule, or call state(snakemake, template="NAME")'
        )
    if _worker_lookup is not None:
        return _worker_lookup(name)
    return _build_here(name, getattr(snakemake, "scriptdir", None))


def _build_here(name: str, scriptdir: Optional[str]) -> Any:
    """Create-destroy path: build the state in this process (once) and tear it down at exit."""
    built = _local_states.get(name)
    if built is not None:
        return built.value
    path = find_templates_file(scriptdir if scriptdir is not None else os.getcwd())
    if path is None:
        raise TemplateError(
            f"no {TEMPLATES_FILENAME} found in {scriptdir or os.getcwd()} or its parents; "
            f"put it beside the Snakefile or set STICKY_TEMPLATES=/path/to/{TEMPLATES_FILENAME}"
        )
    templates = load_templates(Path(path))
    if name not in templates:
        raise TemplateNotFoundError(name, Path(path), sorted(templates))
    built = build_state(name, templates[name])
    _local_states[name] = built
    atexit.register(built.teardown)
    return built.value


def _bind_worker(lookup: Optional[Callable[[str], Any]]) -> None:
    """Called by the sticky worker: route :func:`state` to the worker's warm states."""
    global _worker_lookup
    _worker_lookup = lookup
