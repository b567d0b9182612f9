"""Corpora: a header line, a settings line, then ``label<TAB>text`` records."""

import os


class Record:
    __slots__ = ("label", "text", "lineno")

    def __init__(self, label, text, lineno):
        self.label = label
        self.text = text
        self.lineno = lineno

    def __repr__(self):
        return f"Record({self.label!r}, line {self.lineno})"


class CorpusHeader:
    """The first two lines of a corpus file."""

    def __init__(self, title, settings):
        self.title = title
        self.settings = dict(settings)

    @property
    def weight(self):
        return float(self.settings.get("weight", 1.0))

    @property
    def min_len(self):
        return int(self.settings.get("min_len", 2))


def parse_settings(line):
    """``settings: min_len=3 weight=2`` -> ``{"min_len": 3, "weight": 2}``."""
    settings = {}
    for part in line.split(":", 1)[-1].split():
        if "=" not in part:
            continue
        key, value = part.split("=", 1)
        settings[key] = float(value) if "." in value else int(value)
    return settings


def iter_records(lines, first_lineno=3):
    """Yield a Record per non-empty ``label<TAB>text`` line."""
    for lineno, line in enumerate(lines, start=first_lineno):
        line = line.rstrip("\n")
        if not line.strip() or line.startswith("#"):
            continue
        label, _, text = line.partition("\t")
        yield Record(label.strip(), text.strip(), lineno)


def read_corpus(path):
    with open(path, encoding="utf-8") as handle:
        title = handle.readline().strip()
        settings = parse_settings(handle.readline())
        records = list(iter_records(handle))
    return CorpusHeader(title, settings), records


def write_clean(path, header, rows):
    """rows: (label, tokens) pairs."""
    with open(path, "w", encoding="utf-8") as out:
        out.write(f"#weight\t{header.weight:g}\n")
        for label, tokens in rows:
            out.write(f"{label}\t{' '.join(tokens)}\n")


def iter_clean(path):
    """Yield (label, tokens) from a cleaned file (or a shard)."""
    with open(path, encoding="utf-8") as handle:
        for line in handle:
            if line.startswith("#"):
                continue
            label, _, text = line.rstrip("\n").partition("\t")
            yield label, text.split()


def read_weight(path):
    with open(path, encoding="utf-8") as handle:
        first = handle.readline()
    if first.startswith("#weight"):
        return float(first.split("\t")[1])
    return 1.0


def read_clean(path):
    return read_weight(path), list(iter_clean(path))


def plan_shards(n_records, size):
    """Shard lengths: full shards of ``size``; a short tail joins the previous shard."""
    if n_records <= size:
        return [n_records]
    lengths = [size] * (n_records // size)
    tail = n_records - size * len(lengths)
    if tail and tail < size // 3:
        lengths[-1] += tail
    elif tail:
        lengths.append(tail)
    return lengths


def iter_shards(rows, size):
    start = 0
    for length in plan_shards(len(rows), size):
        yield rows[start : start + length]
        start += length


def shard_name(sample, index):
    return f"{sample}-{index:02d}.tsv"


def sample_of(shard):
    return os.path.basename(shard).rsplit("-", 1)[0]
