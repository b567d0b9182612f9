"""Cleaning steps: dataclasses registered by ``__init_subclass__``, run in order by a Pipeline."""

from dataclasses import dataclass, field
from typing import ClassVar

from .schema import Table

FILL_DECAY = 0.9
VALUE_COLUMNS = ("temp", "flow", "press", "load")
CLIPPED_COLUMNS = ("temp", "load")


class Step:
    registry: ClassVar[dict] = {}
    key: ClassVar[str] = ""
    order: ClassVar[int] = 0

    def __init_subclass__(cls, key: str = "", order: int = 0, **kwargs):
        super().__init_subclass__(**kwargs)
        if key:
            cls.key = key
            cls.order = order
            Step.registry[key] = cls

    @classmethod
    def from_config(cls, cfg: dict) -> "Step":
        return cls()

    def apply(self, table: Table) -> Table:
        raise NotImplementedError

    def report(self) -> dict:
        return {}


@dataclass
class DropSparse(Step, key="drop_sparse", order=10):
    max_missing: int = 2
    dropped: list = field(default_factory=list)

    @classmethod
    def from_config(cls, cfg: dict) -> "DropSparse":
        return cls(max_missing=int(cfg["max_missing"]))

    def apply(self, table: Table) -> Table:
        kept = []
        for row in table.rows:
            if table.missing(row) > self.max_missing:
                self.dropped.append(row[0])
            else:
                kept.append(row)
        table.rows = kept
        return table

    def report(self) -> dict:
        return {"dropped_t": list(self.dropped)}


@dataclass
class FillForward(Step, key="fill", order=20):
    decay: float = FILL_DECAY
    filled: list = field(default_factory=list)

    def apply(self, table: Table) -> Table:
        last = [0.0 for _ in table.header]
        for row in table.rows:
            for i, value in enumerate(row):
                if value is None:
                    row[i] = round(last[i] * self.decay, 3)
                    self.filled.append(i)
                else:
                    last[i] = value
        return table

    def report(self) -> dict:
        return {"filled": len(self.filled)}


@dataclass
class Clip(Step, key="clip", order=30):
    limit: float = 100.0
    columns: tuple = CLIPPED_COLUMNS
    clipped: int = 0

    @classmethod
    def from_config(cls, cfg: dict) -> "Clip":
        return cls(limit=float(cfg["clip"]))

    def apply(self, table: Table) -> Table:
        indices = [table.header.index(c) for c in self.columns]
        for row in table.rows:
            for i in indices:
                if row[i] > self.limit:
                    row[i] = self.limit
                    self.clipped += 1
        return table

    def report(self) -> dict:
        return {"clipped": self.clipped}


@dataclass
class Pipeline:
    steps: list = field(default_factory=list)
    log: dict = field(default_factory=dict)

    @classmethod
    def from_config(cls, cfg: dict) -> "Pipeline":
        ordered = sorted(Step.registry.values(), key=lambda c: c.order)
        return cls([c.from_config(cfg) for c in ordered])

    def run(self, table: Table) -> Table:
        for step in self.steps:
            before = len(table.rows)
            table = step.apply(table)
            self.log[step.key] = before - len(table.rows)
        return table

    def summary(self) -> dict:
        out = dict(self.log)
        for step in self.steps:
            out.update(step.report())
        return out
