"""Hardware classes: named pools of identical workers, and the Snakemake resources that place
a trial on one.

A class maps to the resources the stock Slurm executor plugin and the sticky executor's Slurm
backend read (``slurm_partition``, ``gres``, ``constraint``, ``cpus_per_task``, ``mem_mb``,
``runtime``), plus ``hw_class`` (the class name, for logs and reports) and a numeric
``hw_<name>=1``, so ``snakemake --resources hw_fast=2 hw_slow=4`` caps how many trials of each
class run at once on a local machine.
"""

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Optional

from ._errors import SpecError
from ._space import NAME_PATTERN

_SLURM_KEYS = ("slurm_partition", "gres", "constraint", "slurm_account", "qos")
_KNOWN_KEYS = {"count", "cpus", "mem_mb", "speed", "speed_by_subspace", "runtime", *_SLURM_KEYS}


@dataclass(frozen=True)
class HardwareClass:
    """A pool of ``count`` identical workers with a declared relative ``speed`` (1.0 = reference).

    From the config, ``speed`` is the declared speed: the prior of the speed measured from the
    trials' durations (:func:`._speeds.measured_classes` returns the classes with their
    measured speeds in these same fields). SHADHO sorts classes by speed and predicts a
    trial's duration on a class as its reference cost (duration on a speed-1 worker) divided
    by it, which is how a round's trials are balanced across classes. ``speed_by_subspace``
    overrides it for named sub-spaces: a GPU class may run the CNN 8 times as fast as the
    reference and an SVM only twice (``speed: 2, speed_by_subspace: {cnn: 8}``).
    """

    name: str
    count: int = 1
    cpus: int = 1
    speed: float = 1.0
    mem_mb: Optional[int] = None
    runtime: Optional[int] = None
    slurm_partition: Optional[str] = None
    gres: Optional[str] = None
    constraint: Optional[str] = None
    slurm_account: Optional[str] = None
    qos: Optional[str] = None
    speed_by_subspace: tuple[tuple[str, float], ...] = ()

    @property
    def capacity(self) -> float:
        """Reference work per unit time the whole class can do: workers times speed."""
        return self.count * self.speed

    def speed_of(self, subspace: Optional[str]) -> float:
        """This class's speed on trials of ``subspace`` (``speed`` unless overridden)."""
        return dict(self.speed_by_subspace).get(subspace or "", self.speed)

    def resources(self) -> dict[str, Any]:
        """Snakemake ``resources:`` of a trial on this class (unset optional keys omitted)."""
        res: dict[str, Any] = {
            "hw_class": self.name,
            f"hw_{self.name}": 1,
            "cpus_per_task": self.cpus,
        }
        for key in ("mem_mb", "runtime", *_SLURM_KEYS):
            value = getattr(self, key)
            if value is not None:
                res[key] = value
        return res


def _positive(key: str, value: Any, kind: type) -> Any:
    ok = isinstance(value, int | float) and not isinstance(value, bool)
    if ok and kind is int:
        ok = float(value).is_integer()
    if not ok or not math.isfinite(float(value)) or value <= 0:
        raise SpecError(key, f"expected a positive {kind.__name__}, got {value!r}")
    return kind(value)


def parse_hardware(config: Any, key: str = "hardware") -> dict[str, HardwareClass]:
    """Hardware classes from their config form: ``{name: {count, cpus, mem_mb, speed, ...}}``."""
    if not isinstance(config, Mapping) or not config:
        raise SpecError(
            key,
            "no hardware class is declared",
            "Declare at least one, e.g. hardware: {cpu: {count: 2, cpus: 1}}.",
        )
    classes: dict[str, HardwareClass] = {}
    for name, entry in config.items():
        where = f"{key}.{name}"
        if not isinstance(name, str) or not NAME_PATTERN.match(name):
            raise SpecError(
                where,
                f"class name {name!r} is not a plain identifier",
                "Use letters, digits and _ (it becomes a resource name hw_<name>).",
            )
        entry = {} if entry is None else entry
        if not isinstance(entry, Mapping):
            raise SpecError(where, f"expected a mapping of settings, got {entry!r}")
        unknown = sorted(set(entry) - _KNOWN_KEYS)
        if unknown:
            raise SpecError(
                f"{where}.{unknown[0]}",
                "unknown hardware setting",
                f"Known settings: {', '.join(sorted(_KNOWN_KEYS))}.",
            )
        fields: dict[str, Any] = {"name": name}
        for k in ("count", "cpus", "mem_mb", "runtime"):
            if entry.get(k) is not None:
                fields[k] = _positive(f"{where}.{k}", entry[k], int)
        if entry.get("speed") is not None:
            fields["speed"] = _positive(f"{where}.speed", entry["speed"], float)
        by_subspace = entry.get("speed_by_subspace")
        if by_subspace is not None:
            if not isinstance(by_subspace, Mapping):
                raise SpecError(
                    f"{where}.speed_by_subspace",
                    f"expected a mapping of sub-space to speed, got {by_subspace!r}",
                    "For example speed_by_subspace: {cnn: 8}.",
                )
            fields["speed_by_subspace"] = tuple(
                (str(sub), _positive(f"{where}.speed_by_subspace.{sub}", value, float))
                for sub, value in by_subspace.items()
            )
        for k in _SLURM_KEYS:
            if entry.get(k) is not None:
                fields[k] = str(entry[k])
        classes[name] = HardwareClass(**fields)
    return classes


def by_speed(classes: Mapping[str, HardwareClass]) -> list[HardwareClass]:
    """Classes fastest first; equal speeds keep their declaration order."""
    return sorted(classes.values(), key=lambda c: -c.speed)
