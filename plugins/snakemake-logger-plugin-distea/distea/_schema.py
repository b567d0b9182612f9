"""The DISTEA log format: one JSON object per line, versioned, shared by every writer.

Every file starts with a header line ``{"distea": VERSION, "k": "header", ...}`` naming the
writer (``source``: ``tracer``, ``logger`` or ``sticky-manager``) and the process it describes.
Record kinds after the header (short keys keep million-event logs small and fast to parse):

========== =============================================================================
``fn``     ``f`` function name, ``c`` [first entry, last return] clocks within one epoch
``send``   ``m`` message id, ``c`` clock, ``to`` peer; optional ``job`` (the job it serves)
``recv``   ``m`` message id, ``c`` clock, ``from`` peer; optional ``job``
``open``   ``p`` path (relative to the workflow directory), ``c`` clock of the first read; a
           path ending in ``/`` is a listing of that folder (``./``: the workflow directory)
``param``  ``n`` parameter name, ``c`` clock of its first read, ``job``
``tmpl``   ``n`` sticky template name, ``c`` clock when its state started building
``digest`` ``f`` function, ``job`` job key, ``n`` calls, ``h`` digest of (args, return) values
``state``  ``c`` clock, ``job`` the request, ``w`` whether the worker's carried state changed
           during it (true/false/null: unknown), ``e`` the evidence (sticky workers)
``write``  (v3) ``p`` path written (first write per request), ``c``, ``job``
``cfg``    (v3) ``n`` config key path read (``model.alpha``; ``model.*``: the whole mapping),
           ``c``, ``job``
``cfgfile`` (v3) ``p`` a config file Snakemake loaded, ``keys`` its leaf key paths -> digests
``spawn``  (v3) ``c`` clock, ``job``, ``argv`` (its first words; ``["<fork>"]`` for a fork):
           this process started another; a child's header names ``parent`` (its trace name),
           ``parent_clock`` (the spawn's clock, null when unknown) and ``job``
``end``    ``c`` the process's final clock (written when it dumped its records); ``mode`` the
           function tracer, ``complete`` true when it sees every call however reached
``end``    ``c`` the process's final clock (written when it dumped its records)
``ctx``    (v2) Snakemake's own process computed ``job``'s input/params/resources between
           clocks ``c`` [start, end] (functions in between ran for it); ``f``: the clock from
           which this process's history fed the job's start (its end with ``"to": "end"``:
           the job's ``run:`` code ran there); ``"w": "input"`` (v3): workflow code ran while
           the job's input was expanded (an input function chose the jobs producing it)
``job``    logger: ``id``, ``rule``, ``wildcards``, ``input``/``output`` [[path, hash]], ``t``
``done``   logger: ``id``, ``output`` [[path, hash]], ``t``
``fail``   logger: ``id``, ``t``
========== =============================================================================

Readers accept any version up to :data:`SCHEMA_VERSION` and refuse newer ones by name.
"""

from typing import Any

SCHEMA_VERSION = 3
"""2: ``ctx`` records and traces of Snakemake's own process (role ``dag``); 3: ``spawn``,
``cfg`` and ``cfgfile`` records, child processes (role ``child``, header ``parent``), folder
listings."""

REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "header": ("source", "process"),
    "fn": ("f", "c"),
    "send": ("m", "c"),
    "recv": ("m", "c"),
    "open": ("p", "c"),
    "param": ("n", "c"),
    "tmpl": ("n", "c"),
    "digest": ("f", "n", "h"),
    "state": ("c",),
    "end": ("c",),
    "spawn": ("c",),
    "cfg": ("n", "c"),
    "write": ("p", "c"),
    "cfgfile": ("p",),
    "ctx": ("job", "c", "f"),
    "job": ("id", "rule"),
    "done": ("id",),
    "fail": ("id",),
}


def header(source: str, process: str, **fields: Any) -> dict[str, Any]:
    """The first record of every DISTEA log file."""
    return {"distea": SCHEMA_VERSION, "k": "header", "source": source, "process": process, **fields}


def job_key(rule: str, wildcards: Any, outputs: Any) -> str:
    """The name of a job that every process can compute on its own.

    Snakemake job ids exist only in the Snakemake process (a ``script:`` never sees one), so
    a job is named by its rule and outputs (unique per job), or its wildcards when it has none.
    """
    outs = sorted(str(o) for o in (outputs or []))
    if outs:
        return f"{rule}[{','.join(outs)}]"
    items = dict(wildcards or {})
    return f"{rule}[{','.join(f'{k}={v}' for k, v in sorted(items.items()))}]"
