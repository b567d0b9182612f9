"""Tables of numbers read from CSV files, and the sample sheet the Snakefile selects from."""

import csv
import functools
from dataclasses import dataclass, field
from typing import Optional

MISSING_TOKENS = frozenset({"", "NA", "nan"})
DECIMALS = 4


@functools.lru_cache(maxsize=64)
def column_index(header: tuple, name: str) -> int:
    return header.index(name)


def parse_cell(text: str) -> Optional[float]:
    text = text.strip()
    if text in MISSING_TOKENS:
        return None
    return float(text)


def format_cell(value: Optional[float]) -> str:
    if value is None:
        return "NA"
    return f"{value:.{DECIMALS}f}"


@dataclass
class Table:
    header: tuple
    rows: list = field(default_factory=list)
    name: str = ""

    @classmethod
    def from_csv(cls, path: str, name: str = "") -> "Table":
        with open(path, newline="") as f:
            reader = csv.reader(f)
            header = tuple(next(reader))
            rows = [[parse_cell(cell) for cell in row] for row in reader if row]
        return cls(header, rows, name)

    def column(self, name: str) -> list:
        i = column_index(self.header, name)
        return [row[i] for row in self.rows]

    def missing(self, row: list) -> int:
        return sum(1 for value in row[1:] if value is None)

    def to_csv(self, path: str) -> None:
        with open(path, "w", newline="") as f:
            writer = csv.writer(f, lineterminator="\n")
            writer.writerow(self.header)
            for row in self.rows:
                writer.writerow([format_cell(value) for value in row])


@dataclass(frozen=True)
class Sample:
    name: str
    group: str
    path: str
    weight: float = 1.0


@dataclass
class SampleSheet:
    samples: dict = field(default_factory=dict)

    @classmethod
    def from_tsv(cls, path: str) -> "SampleSheet":
        sheet = cls()
        with open(path, newline="") as f:
            for row in csv.DictReader(f, delimiter="\t"):
                sample = Sample(row["sample"], row["group"], row["path"], float(row["weight"]))
                sheet.samples[sample.name] = sample
        return sheet

    def select(self, groups: list) -> list:
        return [s for s in self.samples.values() if s.group in groups]

    def members(self, group: str) -> list:
        return sorted(s.name for s in self.samples.values() if s.group == group)

    def weight_of(self, name: str) -> float:
        weight = self.samples[name].weight
        if weight > 1.0:
            return round(weight * 2 - 1.0, 3)
        return weight

    def __getitem__(self, name: str) -> Sample:
        return self.samples[name]
