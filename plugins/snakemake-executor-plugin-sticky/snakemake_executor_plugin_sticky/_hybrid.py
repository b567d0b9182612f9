"""Jobs that do not opt in, under ``--sticky-backend slurm``: Slurm jobs, submitted by
snakemake-executor-plugin-slurm's own ``Executor`` (its sbatch command line, resource
vocabulary, status checks, log handling and job arrays), not by a re-implementation.

That executor reads its settings and common settings from ``workflow.executor_settings`` and
``workflow.executor_plugin``, which in this run belong to the sticky plugin. It is handed a
view of the workflow in which those two are the slurm plugin's; everything else (the DAG,
the scheduler's callbacks, the spawned-job arguments) is the real workflow's.
"""

import dataclasses
import shlex
import typing
from pathlib import Path
from typing import Any, Optional

SLURM_PLUGIN = "slurm"
_TRUE = {"true", "yes", "1", "on"}
_FALSE = {"false", "no", "0", "off"}


def parse_slurm_options(text: Optional[str], settings_cls: Any) -> dict[str, Any]:
    """``--sticky-slurm-options``: ``NAME=VALUE ...`` (the plugin's ``--slurm-NAME`` flags
    without the prefix) as keyword arguments of ``settings_cls``.

    Pure; raises ValueError naming the item and the fix."""
    fields = {f.name: f for f in dataclasses.fields(settings_cls)}
    known = ", ".join(sorted(n.replace("_", "-") for n in fields))
    options: dict[str, Any] = {}
    try:
        items = shlex.split(text or "")
    except ValueError as e:
        raise ValueError(f"cannot be split into NAME=VALUE items ({e})") from None
    for item in items:
        name, eq, raw = item.partition("=")
        key = name.strip().removeprefix("--").removeprefix("slurm-").replace("-", "_")
        if not eq or not key:
            raise ValueError(f"{item!r} is not NAME=VALUE (e.g. array-jobs=all)")
        if key not in fields:
            raise ValueError(
                f"{name!r} is not a setting of the slurm executor plugin; known: {known}"
            )
        try:
            options[key] = _convert(raw, fields[key].type)
        except ValueError:
            kind = getattr(_unwrap(fields[key].type), "__name__", "a value")
            raise ValueError(f"{item!r}: {raw!r} is not {kind}") from None
    return options


def _unwrap(kind: Any) -> Any:
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    return args[0] if typing.get_origin(kind) is typing.Union and len(args) == 1 else kind


def _convert(raw: str, kind: Any) -> Any:
    kind = _unwrap(kind)
    if kind is bool:
        if raw.lower() in _TRUE:
            return True
        if raw.lower() in _FALSE:
            return False
        raise ValueError(raw)
    if kind is int:
        return int(raw)
    if kind is float:
        return float(raw)
    if kind is Path:
        return Path(raw)
    return raw


def slurm_settings(text: Optional[str]) -> Any:
    """The slurm plugin's settings for this run's Slurm jobs (ValueError if they are bad)."""
    from snakemake_executor_plugin_slurm import ExecutorSettings as SlurmSettings

    options = parse_slurm_options(text, SlurmSettings)
    try:
        return SlurmSettings(**options)
    except Exception as e:  # the plugin validates its settings in __post_init__
        raise ValueError(str(e)) from None


class SlurmWorkflowView:
    """The workflow as the slurm executor must see it: its own settings and plugin."""

    def __init__(self, workflow: Any, executor_settings: Any, executor_plugin: Any) -> None:
        self._workflow = workflow
        self.executor_settings = executor_settings
        self.executor_plugin = executor_plugin

    def __getattr__(self, name: str) -> Any:
        return getattr(self._workflow, name)


def start_slurm_executor(workflow: Any, logger: Any, options: Optional[str]) -> Any:
    """snakemake-executor-plugin-slurm's Executor for this run's jobs that do not opt in."""
    from snakemake_interface_executor_plugins.registry import ExecutorPluginRegistry

    plugin = ExecutorPluginRegistry().get_plugin(SLURM_PLUGIN)
    view = SlurmWorkflowView(workflow, slurm_settings(options), plugin)
    return plugin.executor(view, logger)
