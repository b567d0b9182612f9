"""A notebook stage run as a Snakemake job (``rules/notebook.smk``): audit, then repeat.

The job executes the rule's notebook through papermill with the ``nbrewind`` engine, with
parameters from the rule (config ``notebook_parameters: {RULE: {...}}``, then the job's
wildcards, then its params by name, later ones winning), in Snakemake's working directory.
The first run is an audit; the executed notebook, with its records, is then kept in
``.nbrewind-stages/notebooks/`` (Snakemake deletes a job's outputs before it runs it) and the
checkpoints in the ``.nbrewind-stages/store`` object store. A later run of the job (new
parameters, an edited notebook, a changed input) is a repeat: the kept records are carried into
the current notebook (by cell id, else by position; a cell whose source changed re-executes),
so only the cells whose inputs changed run.

A restored cell does not write its files again, and Snakemake has deleted the declared
outputs: so the stage keeps the declared outputs it produced in the store too (digests in the
kept notebook's ``metadata.nbrewind_stage``) and puts them back before a repeat; a cell that
re-executes overwrites them.
"""

import copy
import os
import secrets
import sys
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ckptstore import CheckpointStore, file_digest

from ._notebook import read_notebook, write_notebook

RECORDS_DIR = ".nbrewind-stages"
PARAMETER_TAGS = ("parameters",)
_INJECTED = "injected-parameters"


class StageError(Exception):
    """A notebook stage cannot run as declared (with what to do about it)."""


@dataclass(frozen=True)
class Stage:
    """One job of a notebook rule."""

    notebook: Path
    executed: Path
    parameters: dict[str, Any]
    outputs: tuple[Path, ...] = ()
    """Declared outputs other than the executed notebook."""
    inputs: tuple[Path, ...] = ()
    """Declared inputs other than the notebook."""
    workdir: Path = field(default_factory=Path.cwd)
    records_dir: Path = Path(RECORDS_DIR)

    @property
    def kept(self) -> Path:
        """Where the last executed notebook of this job (with its records) is kept."""
        rel = self.executed if not self.executed.is_absolute() else Path(*self.executed.parts[1:])
        return self.records_dir / "notebooks" / rel

    @property
    def store(self) -> Path:
        return self.records_dir / "store"


def parameters_for(
    rule: str,
    config: Mapping[str, Any],
    wildcards: Mapping[str, Any],
    params: Mapping[str, Any],
) -> dict[str, Any]:
    """Papermill parameters of a job: config, then wildcards, then each of the rule's params
    by name (a param called ``parameters`` holding a dict gives several at once)."""
    found: dict[str, Any] = {}
    from_config = (config.get("notebook_parameters") or {}).get(rule) or {}
    if not isinstance(from_config, Mapping):
        raise StageError(
            f"config notebook_parameters.{rule} must map parameter names to values, "
            f"not {type(from_config).__name__}"
        )
    found.update(from_config)
    found.update({str(k): v for k, v in wildcards.items()})
    for name, value in params.items():
        if name != "parameters":
            found[str(name)] = value
            continue
        if not isinstance(value, Mapping):
            raise StageError(
                f"rule {rule}: params.parameters must be a dict of papermill parameters "
                f"(or a function of the wildcards returning one), not {type(value).__name__}"
            )
        found.update(value)
    return found


def has_records(nb: Any) -> bool:
    return any(
        c.cell_type == "code" and isinstance(c.metadata.get("nbrewind"), dict) for c in nb.cells
    )


def carry_records(authored: Any, kept: Any) -> Any:
    """The authored notebook with the records, outputs and execution counts of the kept
    executed notebook, cell by cell: matched by cell id, else by position among code cells
    (papermill's injected parameters cell aside). A record of a cell whose source changed is
    carried too: repeat sees the changed source and re-executes that cell."""
    merged = copy.deepcopy(authored)
    old = [c for c in kept.cells if c.cell_type == "code" and _INJECTED not in _tags(c)]
    by_id = {c.get("id"): c for c in old if c.get("id")}
    code = [c for c in merged.cells if c.cell_type == "code"]
    for position, cell in enumerate(code):
        match = by_id.get(cell.get("id")) if cell.get("id") else None
        if match is None and not by_id and position < len(old):
            match = old[position]
        if match is None or not isinstance(match.metadata.get("nbrewind"), dict):
            continue
        cell.metadata["nbrewind"] = copy.deepcopy(match.metadata["nbrewind"])
        cell.outputs = copy.deepcopy(match.get("outputs", []))
        cell.execution_count = match.get("execution_count")
    if isinstance(kept.metadata.get("nbrewind"), dict):
        merged.metadata["nbrewind"] = copy.deepcopy(kept.metadata["nbrewind"])
    return merged


def _tags(cell: Any) -> list[str]:
    return list(cell.metadata.get("tags", []))


def run_stage(stage: Stage) -> str:
    """Run one job; return the kernel mode used (``audit`` or ``repeat``)."""
    import papermill

    from ._engine import NBRewindEngine

    authored = read_notebook(stage.notebook)
    kept_path = stage.workdir / stage.kept
    kept = read_notebook(kept_path) if kept_path.is_file() else None
    changed = _changed_inputs(stage, kept) if kept is not None else []
    if changed:
        # Records name the files cells opened through Python (computed paths too), but not
        # what C extensions read by themselves (HDF5, netCDF...): a declared input may have
        # readers no record names, so the notebook runs in full, as a fresh run would.
        print(
            f"nbrewind stage: input {changed[0]} changed since the last run: auditing the "
            "whole notebook",
            file=sys.stderr,
        )
        nb, mode = authored, "audit"
    elif kept is not None and has_records(kept):
        nb, mode = carry_records(authored, kept), "repeat"
        _put_back_outputs(stage, kept)
    elif has_records(authored):
        nb, mode = authored, "repeat"
    else:
        nb, mode = authored, "audit"

    from papermill.engines import papermill_engines

    if "nbrewind" not in papermill_engines._engines:
        papermill_engines.register("nbrewind", NBRewindEngine)
    executed = stage.workdir / stage.executed
    executed.parent.mkdir(parents=True, exist_ok=True)
    source = executed.with_name(f".{executed.name}.{secrets.token_hex(4)}.in.ipynb")
    write_notebook(nb, source)
    previous_store = os.environ.get("NBREWIND_STORE")
    os.environ["NBREWIND_STORE"] = str((stage.workdir / stage.store).resolve())
    try:
        papermill.execute_notebook(
            str(source),
            str(executed),
            parameters=stage.parameters,
            kernel_name=f"nbrewind-{mode}",
            engine_name="nbrewind",
            cwd=str(stage.workdir),
            progress_bar=False,
        )
    finally:
        source.unlink(missing_ok=True)
        if previous_store is None:
            os.environ.pop("NBREWIND_STORE", None)
        else:
            os.environ["NBREWIND_STORE"] = previous_store
    _keep(stage, executed)
    return mode


def _keep(stage: Stage, executed: Path) -> None:
    """Keep the executed notebook (records) and the declared outputs (content) for next time."""
    nb = read_notebook(executed)
    store = CheckpointStore(stage.workdir / stage.store)
    outputs = {}
    for path in stage.outputs:
        full = stage.workdir / path
        if full.is_file():
            outputs[str(path)] = store.put_file(full)
    inputs = {str(p): file_digest(stage.workdir / p) for p in stage.inputs}
    nb.metadata["nbrewind_stage"] = {"outputs": outputs, "inputs": inputs}
    kept = stage.workdir / stage.kept
    kept.parent.mkdir(parents=True, exist_ok=True)
    write_notebook(nb, kept)


def _changed_inputs(stage: Stage, kept: Any) -> list[str]:
    recorded = (kept.metadata.get("nbrewind_stage") or {}).get("inputs") or {}
    changed = []
    for path in stage.inputs:
        full = stage.workdir / path
        if recorded.get(str(path)) != (file_digest(full) if full.is_file() else None):
            changed.append(str(path))
    return changed


def _put_back_outputs(stage: Stage, kept: Any) -> None:
    """Declared outputs of the last run, put back where Snakemake deleted them: the cells that
    wrote them may be restored, not re-executed; cells that re-execute overwrite them."""
    recorded = (kept.metadata.get("nbrewind_stage") or {}).get("outputs") or {}
    declared = {str(p) for p in stage.outputs}
    store = CheckpointStore(stage.workdir / stage.store)
    for path, digest in recorded.items():
        if path not in declared or not isinstance(digest, str) or not store.has(digest):
            continue
        target = stage.workdir / path
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.{secrets.token_hex(4)}")
        try:
            store.copy_out(digest, tmp)
            os.replace(tmp, target)
        finally:
            tmp.unlink(missing_ok=True)


def stage_from_snakemake(smk: Any) -> Stage:
    """The stage of a Snakemake ``script:`` job (its ``snakemake`` object)."""
    inputs = dict(smk.input.items())
    outputs = dict(smk.output.items())
    if "notebook" not in inputs or "notebook" not in outputs:
        raise StageError(
            f"rule {smk.rule}: name the notebook input and the executed notebook output "
            "notebook=... (input: notebook='analysis.ipynb', output: "
            "notebook='results/analysis.ipynb')"
        )
    declared = [Path(str(p)) for p in smk.output]
    executed = Path(str(outputs["notebook"]))
    notebook = Path(str(inputs["notebook"]))
    records_dir = Path((smk.config.get("nbrewind") or {}).get("records", RECORDS_DIR))
    return Stage(
        notebook=notebook,
        executed=executed,
        parameters=parameters_for(
            smk.rule, smk.config, dict(smk.wildcards.items()), dict(smk.params.items())
        ),
        outputs=tuple(p for p in declared if p != executed),
        inputs=tuple(Path(str(p)) for p in smk.input if Path(str(p)) != notebook),
        workdir=Path.cwd(),
        records_dir=records_dir,
    )


def main_from_snakemake(smk: Any) -> None:
    """What the rule's script runs: one line on error, no traceback."""
    import papermill

    from ._engine import NBRewindError
    from ._notebook import NotebookError

    try:
        mode = run_stage(stage_from_snakemake(smk))
    except (StageError, NBRewindError, NotebookError) as e:
        sys.exit(f"nbrewind stage {smk.rule}: {e}")
    except papermill.PapermillExecutionError as e:
        sys.exit(f"nbrewind stage {smk.rule}: the notebook failed: {e.ename}: {e.evalue}")
    print(f"nbrewind stage {smk.rule}: {mode} done", file=sys.stderr)
