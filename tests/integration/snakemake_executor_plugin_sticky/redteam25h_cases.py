"""The eighth sticky red team's cases (issue 25, 2026-12-06): written from docs/sticky.md and README.md only, aimed at the garbage collector's state and timing (frozen template objects, the collector's heuristics, weak caches, gc.callbacks, tracemalloc) and at the fresh-exit contract (the interpreter's exit collections, __del__ and logging at teardown, atexit after shutdown). 29 cases."""

# ruff: noqa: E501
import functools

from redteam_cases import HEADER, add_case  # noqa: F401

CASES = {}
case = functools.partial(add_case, CASES)

# ---------------------------------------------------------------------------
# (1) The template's objects are frozen: gc.get_objects(), gc.get_referrers()
#     and gc.collect() do not see them in a sticky job; a fresh job built them
#     itself, so they are ordinary objects of its own collector there.
# ---------------------------------------------------------------------------

case(
    "leak_check_live_dataframes",
    "An RNA-seq step merges its read counts with the gene table the template loaded, then runs the leak check many pandas pipelines carry between steps: gc.collect() and a census of the pandas DataFrames still alive (isinstance over gc.get_objects()). In a fresh job the template's gene table is an ordinary tracked object of the job's own process, so the census lists it ((4, 2) beside the result's (4, 5)); in a sticky job the template's objects are frozen, and gc.get_objects() does not return the permanent generation, so the census misses the template's table. Expected to differ in both modes (OUT's last line).",
    r"""
import gc

import pandas as pd

genes = st["genes"]
counts = pd.DataFrame({"gene": ["TP53", "MYC", "EGFR", "BRCA1"], "reads": [120 * k, 45 * k, 300 * k, 80 * k]})
tpm = counts.merge(genes, on="gene")
tpm["rpk"] = tpm["reads"] / (tpm["length"] / 1000.0)
tpm["tpm"] = tpm["rpk"] / tpm["rpk"].sum() * 1e6
del counts
# leak check before the next step: which DataFrames are still alive?
gc.collect()
live = sorted(obj.shape for obj in gc.get_objects() if isinstance(obj, pd.DataFrame))
with open(OUT, "w") as f:
    f.write(tpm[["gene", "tpm"]].round(3).to_csv(index=False))
    f.write(f"live DataFrames after the merge: {len(live)} {live}\n")
""",
    build="""    import pandas as pd

    genes = pd.DataFrame({"gene": ["BRCA1", "TP53", "EGFR", "MYC"], "length": [81189, 19149, 188307, 7813]})
    return {"genes": genes}""",
)

case(
    "torch_tensor_census",
    "The PyTorch forum's memory-leak snippet, as ML scripts log it after an inference: walk gc.get_objects() and count the tensors still alive and their elements (torch.is_tensor). A fresh job loaded the tiny model itself, so its 4 parameters (46 elements) are tracked objects of its collector and are counted beside the job's input and output; in a sticky job the template's parameters are frozen and gc.get_objects() skips them, so the census is 4 tensors and 46 elements short. Expected to differ in both modes.",
    r"""
import gc

import torch

model = st["model"]
x = torch.arange(8 * k, dtype=torch.float32).reshape(k, 8) / 10.0
with torch.no_grad():
    y = model(x)
n_tensors = 0
n_elements = 0
for obj in gc.get_objects():
    if torch.is_tensor(obj):
        n_tensors += 1
        n_elements += obj.numel()
with open(OUT, "w") as f:
    for row in y.tolist():
        f.write(" ".join(f"{v:.5f}" for v in row) + "\n")
    f.write(f"tensors alive: {n_tensors} ({n_elements} elements)\n")
""",
    build="""    import torch

    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(8, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2)).eval()
    return {"model": model}""",
    n=2,
)

case(
    "referrers_before_release",
    "Before it mutates a large lookup table in place (to save a copy), a k-mer counting script asks the collector who else holds the table (gc.get_referrers), the usual check against aliasing: if only its own globals hold it, it edits in place, otherwise it copies. In a fresh job the template's state dict (a tracked dict of the job's own process) is found as a referrer, so the script copies and logs 'shared with the template state'; in a sticky job the state dict is frozen and gc.get_referrers() does not search the permanent generation, so the script believes it is the only holder, edits the template's table in place and logs 'only this script' (in direct mode the next job then also sees the edited table). Expected to differ in both modes.",
    r"""
import gc

vocab = st["vocab"]
holders = gc.get_referrers(vocab)
others = [h for h in holders if h is not globals()]
if others:
    decision = "shared with the template state: copy before editing"
    vocab = dict(vocab)
else:
    decision = "only this script holds it: edit in place"
for kmer in ("AAAA", "CCCC", "GGGG"):
    vocab[kmer] = vocab.get(kmer, 0) + k
with open(OUT, "w") as f:
    f.write(f"referrers besides this script: {len(others)} ({sorted(type(h).__name__ for h in others)})\n")
    f.write(decision + "\n")
    f.write(f"AAAA={vocab['AAAA']} CCCC={vocab['CCCC']} GGGG={vocab['GGGG']} size={len(vocab)}\n")
    f.write(f"template's own AAAA: {st['vocab']['AAAA']}\n")
""",
    build="""    import itertools

    vocab = {"".join(p): 0 for p in itertools.product("ACGT", repeat=4)}
    return {"vocab": vocab, "alphabet": "ACGT"}""",
)

case(
    "drop_template_taxonomy_verify_freed",
    "A metagenomics step uses the template's taxonomy tree (nodes with parent pointers and children lists: reference cycles), collapses it to a genus table, then releases the tree before its memory-heavy phase and verifies the release the standard way: a weakref to the root, del, gc.collect(), and a check that the weakref is dead (logging the collector's count). In a fresh job the tree is the job's own cyclic garbage: gc.collect() finds it (a positive count) and the weakref is dead. In a sticky job the tree's objects are frozen, gc.collect() skips them, the count is 0 and the weakref still answers, so the script logs 'tree still alive'. One job (the state is changed).",
    r"""
import gc
import weakref

tree = st.pop("taxonomy")
rows = []
for phylum in tree.children:
    for genus in phylum.children:
        rows.append(f"{phylum.name}\t{genus.name}\t{genus.parent.parent.name}")
root_ref = weakref.ref(tree)
del tree, phylum, genus
freed = gc.collect()
with open(OUT, "w") as f:
    f.write("\n".join(rows) + "\n")
    f.write(f"collector freed objects: {freed > 0}\n")
    f.write("tree released\n" if root_ref() is None else "tree still alive\n")
""",
    build="""    class Taxon:
        def __init__(self, name, parent=None):
            self.name = name
            self.parent = parent
            self.children = []
            if parent is not None:
                parent.children.append(self)

    root = Taxon("Bacteria")
    for phylum in ("Firmicutes", "Proteobacteria", "Actinobacteria"):
        p = Taxon(phylum, root)
        for i in range(3):
            Taxon(f"{phylum[:4].lower()}_genus{i}", p)
    return {"taxonomy": root, "n_taxa": 13}""",
    n=1,
)

case(
    "drop_template_scratch_workspace",
    "The template keeps a scratch workspace (an object that owns a tempfile.TemporaryDirectory holding a reference index, and lists its own bound cleanup method in an on_close list: a reference cycle). A job reads the index, then drops the workspace from the state and runs gc.collect() to free the disk before writing its large results, and records whether the scratch folder is gone. In a fresh job the workspace is the job's own cyclic garbage: the collection finalises it, the TemporaryDirectory's finaliser removes the folder, and the script writes 'scratch removed: True'. In a sticky job the workspace is frozen, the collection does not touch it, the folder stays and the script writes False (and the worker, seeing nothing deleted, is not retired). One job.",
    r"""
import gc
import os

ws = st.pop("workspace")
path = ws.path
with open(os.path.join(path, "genome.fa.fai")) as fh:
    index = [line.split("\t")[:2] for line in fh]
del ws
gc.collect()
with open(OUT, "w") as f:
    for name, length in index:
        f.write(f"{name}\t{length}\n")
    f.write(f"scratch removed: {not os.path.exists(path)}\n")
""",
    build="""    import tempfile

    class Workspace:
        def __init__(self):
            self.tmp = tempfile.TemporaryDirectory(prefix="ws-")
            self.path = self.tmp.name
            self.on_close = [self.cleanup]

        def cleanup(self):
            self.tmp.cleanup()

    ws = Workspace()
    with open(os.path.join(ws.path, "genome.fa.fai"), "w") as fh:
        fh.write("chr1\\t248956422\\t6\\t60\\t61\\nchr2\\t242193529\\t253105708\\t60\\t61\\n")
    return {"workspace": ws}""",
    n=1,
)

# ---------------------------------------------------------------------------
# (2) Garbage the template's build leaves behind: in a fresh job it is the
#     job's own, still uncollected when the script starts.
# ---------------------------------------------------------------------------

case(
    "build_minidom_garbage_gc_collect_logged",
    "The template reads its model parameters from an XML config with xml.dom.minidom and keeps only the resulting dict; the parsed document (parentNode/childNodes/ownerDocument cycles) becomes garbage at the end of the build. The job script follows the common ML memory-hygiene habit of calling gc.collect() before its numeric work and logging how much it freed. In a fresh job the build ran in the job's own process a moment earlier, so that collection finds the whole minidom document (a deterministic, positive count); in a sticky job the build's garbage was collected or frozen in the worker before the job's collector counters were reset, so it reports 0. Expected to differ in both modes (OUT's first line).",
    r"""
import gc

freed = gc.collect()
params = st["params"]
score = sum(v * (i + k) for i, (name, v) in enumerate(sorted(params.items())))
with open(OUT, "w") as f:
    f.write(f"gc.collect() before scoring freed {freed} objects\n")
    f.write(f"params={len(params)} score={score:.2f}\n")
""",
    build="""    from xml.dom import minidom

    xml = "<model>" + "".join(f'<param name="w{i:02d}" value="{i * 0.25}"/>' for i in range(40)) + "</model>"
    doc = minidom.parseString(xml)
    params = {p.getAttribute("name"): float(p.getAttribute("value")) for p in doc.getElementsByTagName("param")}
    return {"params": params}""",
)

case(
    "build_weak_registry_garbage",
    "An assembly-QC template loads three assemblies (draft1, draft2, final), each a list of contigs that point back to their assembly (cycles), registers every contig by name in a weakref.WeakValueDictionary (the usual interning registry) and keeps only the final assembly. The job resolves contig names through the registry and reports its size before and after gc.collect(). In a fresh job the two draft assemblies are still uncollected cyclic garbage when the script starts, so 'draft1_ctg0' still resolves and the registry shrinks from 15 to 5 at the collection; in a sticky job the build's garbage was already collected (or frozen) in the worker, so the name does not resolve and the counts are 5 and 5 (or 15 and 15 if frozen). Expected to differ in both modes.",
    r"""
import gc

registry = st["registry"]
before = len(registry)
found = {name: (registry.get(name) is not None) for name in ("draft1_ctg0", "final_ctg2")}
gc.collect()
after = len(registry)
with open(OUT, "w") as f:
    f.write(f"registry entries before/after gc.collect(): {before}/{after}\n")
    for name, ok in sorted(found.items()):
        f.write(f"{name}: {'resolved' if ok else 'unknown'}\n")
    f.write(f"final assembly length: {sum(c.length for c in st['assembly'].contigs) * k}\n")
""",
    build="""    import weakref

    class Assembly:
        def __init__(self, name):
            self.name = name
            self.contigs = []

    class Contig:
        def __init__(self, name, length, assembly):
            self.name = name
            self.length = length
            self.assembly = assembly

    registry = weakref.WeakValueDictionary()
    keep = None
    for asm_name in ("draft1", "draft2", "final"):
        asm = Assembly(asm_name)
        for i in range(5):
            c = Contig(f"{asm_name}_ctg{i}", 1000 * (i + 1), asm)
            asm.contigs.append(c)
            registry[c.name] = c
        if asm_name == "final":
            keep = asm
    del asm, c
    return {"assembly": keep, "registry": registry}""",
)

# ---------------------------------------------------------------------------
# (3) The collector's own heuristics: a full collection runs only when the
#     objects promoted since the last one exceed a quarter of the long-lived
#     objects. A fresh job's long-lived objects include Snakemake's and the
#     template's; a sticky job's are only its own (the rest are frozen), so
#     full collections come much sooner, even after the script's own
#     gc.collect() has set the counters equal.
# ---------------------------------------------------------------------------

case(
    "gen2_heuristic_chunk_profiler",
    "A streaming VCF-like parser reads 400 chunks of 300 records (each record points back to its chunk: a cycle), keeps a weakref.WeakValueDictionary of 'recently seen' records, and profiles the collector with gc.callbacks, recording at which chunk each full (generation 2) collection ran. It starts from gc.collect() so the profile has a clean baseline: the counters are then the same in both runs. What still differs is CPython's full-collection rule (long_lived_pending > long_lived_total / 4): in a fresh job long_lived_total counts Snakemake's and the template's objects (tens of thousands), in a sticky job they are frozen and not counted, so full collections run earlier and more often, the recorded chunk numbers differ and a different number of records is still alive at the end. Expected to differ in both modes.",
    r"""
import gc
import weakref

gc.collect()
chunk_no = [0]
full = []


def on_gc(phase, info):
    if phase == "stop" and info["generation"] == 2:
        full.append(chunk_no[0])


class Record:
    __slots__ = ("chunk", "pos", "__weakref__")

    def __init__(self, chunk, pos):
        self.chunk = chunk
        self.pos = pos


recent = weakref.WeakValueDictionary()
gc.callbacks.append(on_gc)
total = 0
for c in range(400):
    chunk_no[0] = c
    chunk = []
    for i in range(300):
        rec = Record(chunk, c * 1000 + i)
        chunk.append(rec)
        if i % 50 == 0:
            recent[(c, i)] = rec
    total += len(chunk)
    del chunk, rec
gc.callbacks.remove(on_gc)
with open(OUT, "w") as f:
    f.write(f"records parsed: {total * k}\n")
    f.write(f"full collections at chunks: {full}\n")
    f.write(f"recent records still in memory: {len(recent)}\n")
""",
)

case(
    "gen2_heuristic_buffer_pool",
    "A read-processing script recycles 256-byte buffers through a small pool: each Read takes a buffer and gives it back in __del__, and reads point back to their batch (a cycle), so a batch's buffers return only when the collector frees the batch. The script reports how many buffers the pool had to allocate, a figure such tools log as their memory high-water mark. It calls gc.collect() first, so the counters agree. Batches that reach generation 2 come back only at a full collection, and full collections run much sooner in a sticky job (its long-lived objects exclude the frozen template and Snakemake, so CPython's long_lived_pending > long_lived_total / 4 rule is met earlier), so the pool allocates a different number of buffers. Expected to differ in both modes.",
    r"""
import gc

gc.collect()


class BufferPool:
    def __init__(self):
        self.free = []
        self.created = 0

    def take(self):
        if self.free:
            return self.free.pop()
        self.created += 1
        return bytearray(256)

    def give(self, buf):
        self.free.append(buf)


POOL = BufferPool()


class Read:
    def __init__(self, batch, i):
        self.batch = batch
        self.i = i
        self.buf = POOL.take()

    def __del__(self):
        POOL.give(self.buf)


checksum = 0
for b in range(400):
    batch = {"id": b, "reads": []}
    for i in range(300):
        batch["reads"].append(Read(batch, i))
    checksum += sum(r.i for r in batch["reads"])
    del batch
with open(OUT, "w") as f:
    f.write(f"checksum {checksum * k}\n")
    f.write(f"buffers allocated by the pool: {POOL.created}\n")
""",
)

case(
    "gc_stats_run_manifest",
    "A provenance step writes a small run manifest: the Python version and the collector's configuration and history (gc.isenabled(), gc.get_threshold(), and the number of collections per generation so far from gc.get_stats(), which memory-profiling wrappers log). These numbers are deterministic in a fresh interpreter (start-up, Snakemake's preamble and the template build always run the same collections). In a sticky job gc.get_stats() is the worker's history (its start, its build, the collections it ran before freezing and before each job), which the reset of the counters (gc.get_count) does not touch. Expected to differ in both modes.",
    r"""
import gc
import json
import platform

manifest = {
    "job": k,
    "python": platform.python_version(),
    "gc_enabled": gc.isenabled(),
    "gc_threshold": list(gc.get_threshold()),
    "gc_collections_so_far": [s["collections"] for s in gc.get_stats()],
    "gc_uncollectable_so_far": sum(s["uncollectable"] for s in gc.get_stats()),
}
with open(OUT, "w") as f:
    json.dump(manifest, f, indent=1, sort_keys=True)
    f.write("\n")
""",
)

# ---------------------------------------------------------------------------
# (4) Collector settings the template's build leaves: a fresh job keeps them.
# ---------------------------------------------------------------------------

case(
    "template_gc_save_restore_idiom",
    "The template unpickles a large read index with the collector switched off, using the common save/restore idiom (was = gc.isenabled(); gc.disable(); ...; if was: gc.enable()). A fresh job builds with the collector on, so it is on again after the build, and the job's spans (small parent/child cycles) are collected as they go. If a sticky worker builds with the collector off (as the gc documentation advises before a fork: 'disable gc early in the parent process'), the idiom leaves it off: the job would report gc.isenabled() False and all 40 traces still in memory. A probe of how the worker builds; expected the same if it builds with the collector on.",
    r"""
import gc
import weakref


class Span:
    def __init__(self, parent=None):
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)


alive = weakref.WeakSet()
for req in range(40):
    root = Span()
    alive.add(root)
    for _ in range(30):
        Span(root)
    del root
with open(OUT, "w") as f:
    f.write(f"index entries: {len(st['index'])}\n")
    f.write(f"gc enabled in the job: {gc.isenabled()}\n")
    f.write(f"traces all collected before the explicit pass: {len(alive) < 40}\n")
    gc.collect()
    f.write(f"traces left after gc.collect(): {len(alive)}\n")
""",
    build="""    import gc
    import pickle

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        blob = pickle.dumps({f"read{i}": (i, i * 2) for i in range(2000)})
        index = pickle.loads(blob)
    finally:
        if was_enabled:
            gc.enable()
    return {"index": index}""",
)

case(
    "template_disables_gc_for_latency",
    "A low-latency scoring template turns automatic garbage collection off for good (gc.disable(), the well-known trick for latency-sensitive services, which then collect explicitly between requests). A fresh job that builds it keeps the collector off: its 40 request traces (parent/child cycles) are all still in memory before its explicit gc.collect(), and gc.isenabled() is False. A sticky job must give the job the collector as the build left it; if the worker re-enables it in the child (the gc documentation's 'enable gc in the child' advice for forks) or when it resets the counters, traces are collected automatically, gc.isenabled() is True and the counts differ.",
    r"""
import gc
import weakref


class Span:
    def __init__(self, parent=None):
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)


alive = weakref.WeakSet()
for req in range(40):
    root = Span()
    alive.add(root)
    for _ in range(30):
        Span(root)
    del root
with open(OUT, "w") as f:
    f.write(f"policy: {st['policy']}\n")
    f.write(f"gc enabled during request handling: {gc.isenabled()}\n")
    f.write(f"traces in memory before the explicit collection: {len(alive)}\n")
    gc.collect()
    f.write(f"traces left after it: {len(alive)}\n")
""",
    build="""    import gc

    gc.disable()
    return {"calls": 0, "policy": "manual-gc"}""",
)

case(
    "template_raises_gc_threshold",
    "The template raises the collector's first threshold (gc.set_threshold(100000, 50, 50)), a common trick to speed up loading many small Python objects, and never lowers it. In a fresh job the threshold stays, so the job's 1,240 span objects never trigger a collection and all 40 traces are still in memory before its explicit gc.collect(). A sticky job must keep the build's threshold while it resets the counters; if the reset goes through set_threshold or the worker's own setting, the job sees (700, 10, 10), collections run and the counts and the printed threshold differ.",
    r"""
import gc
import weakref


class Span:
    def __init__(self, parent=None):
        self.parent = parent
        self.children = []
        if parent is not None:
            parent.children.append(self)


alive = weakref.WeakSet()
for req in range(40):
    root = Span()
    alive.add(root)
    for _ in range(30):
        Span(root)
    del root
with open(OUT, "w") as f:
    f.write(f"threshold: {gc.get_threshold()}\n")
    f.write(f"traces in memory before the explicit collection: {len(alive)}\n")
    gc.collect()
    f.write(f"traces left after it: {len(alive)}\n")
""",
    build="""    import gc

    gc.set_threshold(100000, 50, 50)
    return {"calls": 0, "gc": "tuned"}""",
)

# ---------------------------------------------------------------------------
# (5) The fresh interpreter's exit: collections, __del__ and logging there.
# ---------------------------------------------------------------------------

case(
    "gc_callbacks_exit_collection_log",
    "A profiling script logs every full collection from a gc.callbacks hook (generation 2, 'stop' phase: collected and uncollectable counts) to its log, and never removes the hook. It starts from gc.collect(), builds and drops a small dependency graph (cycles), calls gc.collect() once, then leaves a second graph to the interpreter's exit. A fresh interpreter's exit runs exactly one collection with callbacks (the one in Py_FinalizeEx while the modules are still loaded; the later one in finalize_modules runs none), so the log ends with one more line counting exactly the second graph. Sticky's exit steps must reproduce that: an extra gc.collect() of its own (when it releases globals, or before atexit), garbage of its own machinery, or the hook not being called would add, change or drop lines. In direct mode the hook outlives the job's globals.",
    r"""
import gc

gc.collect()


def on_gc(phase, info):
    if phase == "stop" and info["generation"] == 2:
        with open(LOG, "a") as f:
            f.write(f"full gc: collected={info['collected']} uncollectable={info['uncollectable']}\n")


gc.callbacks.append(on_gc)


class Task:
    def __init__(self, name):
        self.name = name
        self.deps = []
        self.dependents = []


def graph(n):
    tasks = [Task(f"t{i}") for i in range(n)]
    for a, b in zip(tasks, tasks[1:]):
        b.deps.append(a)
        a.dependents.append(b)
    return tasks


g = graph(12)
order = [t.name for t in g]
del g
gc.collect()
g2 = graph(5)
with open(OUT, "w") as f:
    f.write(" ".join(order) + f" (job {k})\n")
del g2
""",
)

case(
    "atexit_final_gc_collect_count",
    "A job registers an atexit hook that does a last gc.collect() and appends its count to the output ('final cleanup collected N objects'), as memory-conscious tools do to report leftovers. The script starts from gc.collect(), and drops 12 cyclic sample records before it ends. In a fresh interpreter nothing collects between the script's end and the atexit hooks (the collections in Py_FinalizeEx come after them), so the hook's count is exactly those records (and their lists), a deterministic number. If sticky's exit steps collect before the atexit handlers (when releasing the script's globals or joining threads) the hook finds 0; if they leave garbage of their own, it finds more.",
    r"""
import atexit
import gc

gc.collect()


def final_cleanup():
    n = gc.collect()
    with open(OUT, "a") as f:
        f.write(f"final cleanup collected {n} objects\n")


atexit.register(final_cleanup)


class Sample:
    def __init__(self, name):
        self.name = name
        self.replicates = []


samples = []
for i in range(12):
    s = Sample(f"S{i:02d}")
    s.replicates.append(s)
    samples.append(s)
with open(OUT, "w") as f:
    f.write(",".join(s.name for s in samples) + f" job={k}\n")
del samples, s
""",
)

case(
    "unclosed_handles_atexit_then_del",
    "A helper module tracks open handles in a weakref.WeakSet, reports the ones still open from an atexit hook, and each handle's __del__ warns if it was never closed; handles hold their bound close method in a callback list (a cycle). The script redirects sys.stderr to its log (Snakemake's documented idiom for script logs), starts from gc.collect(), opens four handles, closes two and drops them all. In a fresh interpreter the atexit hook still sees the two unclosed handles (nothing collected yet), and the __del__ warnings come from the first collection of Py_FinalizeEx, which runs before finalize_modules puts sys.stderr back to sys.__stderr__, so both warnings land in the log after the atexit line. Sticky differs if it collects before the atexit handlers, or restores sys.stderr before its exit collection (the docs list the restore before the globals are 'cleared and collected'): the warnings would go to the worker's log.",
    r"""
import gc
import sys

sys.stderr = open(LOG, "w")
gc.collect()
import handles  # noqa: E402

hs = [handles.Handle(name) for name in ("a.bam", "b.bam", "c.bam", "d.bam")]
hs[0].close()
hs[2].close()
with open(OUT, "w") as f:
    f.write(f"job {k}: opened {len(hs)} handles\n")
del hs
""",
    files={
        "scripts/handles.py": """import atexit
import sys
import weakref

_open = weakref.WeakSet()


class Handle:
    def __init__(self, name):
        self.name = name
        self.closed = False
        self.on_close = [self.close]
        _open.add(self)

    def close(self):
        if not self.closed:
            self.closed = True
            _open.discard(self)

    def __del__(self):
        if not self.closed:
            print(f"handles: {self.name} was never closed", file=sys.stderr)


def _report():
    names = sorted(h.name for h in _open if not h.closed)
    print(f"handles: {len(names)} still open at exit: {', '.join(names)}", file=sys.stderr)


atexit.register(_report)
""",
    },
)

case(
    "pool_del_logs_after_logging_shutdown",
    "A database-style connection pool logs through the script's logging.basicConfig(filename=LOG) handler, and its __del__ logs 'pool closed with N idle connections'; the pool keeps its bound release method as a callback (a cycle), so dropping it leaves it to the collector. The script starts from gc.collect() and drops the pool at its end. In a fresh interpreter logging.shutdown (an atexit hook) closes the FileHandler first; then Py_FinalizeEx's collection runs the pool's __del__, whose record makes the closed FileHandler (mode 'a') reopen the file and append the line, so the log ends with it. Sticky's exit must do the same: if it removes the script's handlers from their loggers when it 'flushes and closes' them, or collects before the atexit hooks, the line goes elsewhere or comes before 'job done'.",
    r"""
import gc
import logging

logging.basicConfig(filename=LOG, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("pool")
gc.collect()


class ConnectionPool:
    def __init__(self, size):
        self.idle = [f"conn{i}" for i in range(size)]
        self.callbacks = [self.release]
        log.info("pool opened with %d connections", size)

    def release(self, conn):
        self.idle.append(conn)

    def __del__(self):
        log.info("pool closed with %d idle connections", len(self.idle))


pool = ConnectionPool(2 + k)
conn = pool.idle.pop()
with open(OUT, "w") as f:
    f.write(f"job {k} used {conn}\n")
pool.release(conn)
log.info("job %d done", k)
del pool, conn
""",
)

case(
    "snakemake_object_reporter_cycle",
    "A script hangs a run report on the snakemake object (report.smk = snakemake; snakemake.report = report: a cycle through the job's snakemake object) so helper functions can reach it, and the report writes the log in its __del__ through pathlib (Path.write_text). In a fresh interpreter the cycle is reachable from __main__ until finalize_modules; then the collection after the modules leave sys.modules finalises it while pathlib's globals are still bound, so the log holds the report's lines. Sticky promises the job's own copy of the snakemake object, which goes with __main__: if the worker still holds the job's snakemake object (to collect outputs or report), the report is never finalised at the job's end and the log stays empty or missing (in direct mode this is a documented difference; fork mode should match).",
    r"""
from pathlib import Path


class RunReport:
    def __init__(self, smk):
        self.smk = smk
        self.lines = []
        smk.report = self

    def add(self, line):
        self.lines.append(line)

    def __del__(self):
        Path(self.smk.log[0]).write_text("".join(line + "\n" for line in self.lines))


report = RunReport(snakemake)
values = [k * i for i in range(1, 6)]
report.add(f"job {k}: {len(values)} values")
report.add(f"sum {sum(values)}")
with open(OUT, "w") as f:
    f.write(" ".join(map(str, values)) + "\n")
del report
""",
)

case(
    "helper_module_cache_del_flush",
    "A helper module keeps a module-level k-mer cache whose __del__ appends its hit/miss statistics to a report path (pathlib), the 'flush stats on interpreter exit' pattern; the script points it at its log. In a fresh interpreter the helper module, its dict and the cache become garbage when finalize_modules empties sys.modules, and the next collection runs the cache's __del__ while the helper's globals (Path) are still bound, so the statistics line is in the log. Sticky's fork-mode teardown says workflow modules leave sys.modules and a further collection runs; direct mode says the globals of modules the job imported are not cleared. If the helper (or its cache) is kept alive, or cleared before the collection (Path = None), the line is missing.",
    r"""
import kmercache

kmercache.CACHE.report_to = LOG
reads = ["ACGTACGTGG", "TTGACCAGTA", "ACGTACGTGG", "GGGCCCAAAT", "ACGTACGTGG"]
with open(OUT, "w") as f:
    for r in reads:
        f.write(f"{r} {' '.join(kmercache.CACHE.get(r, 3 + k % 2))}\n")
""",
    files={
        "scripts/kmercache.py": """from pathlib import Path


class KmerCache:
    def __init__(self):
        self.table = {}
        self.hits = 0
        self.misses = 0
        self.report_to = None

    def get(self, seq, k):
        key = (seq, k)
        if key in self.table:
            self.hits += 1
        else:
            self.misses += 1
            self.table[key] = sorted({seq[i:i + k] for i in range(len(seq) - k + 1)})
        return self.table[key]

    def __del__(self):
        if self.report_to:
            with Path(self.report_to).open("a") as f:
                f.write(f"kmer cache: {len(self.table)} entries, {self.hits} hits, {self.misses} misses\\n")


CACHE = KmerCache()
""",
    },
)

case(
    "template_teardown_logs_to_job_log",
    "The template yields its state and logs 'model released' in its teardown (the docs' yield/teardown form, with logging as a real template would). The job configures logging.basicConfig(filename=LOG). A fresh job builds the template itself and tears it down at its exit, after the script's own work and, being registered when logging was already imported, before logging.shutdown, so the teardown's record goes to the job's log handler: every job's log ends with 'INFO template: model released (N calls)'. Sticky tears the state down once, when the worker stops, so no job's log has the line (or only the last one's). Expected to differ in both modes.",
    r"""
import logging

logging.basicConfig(filename=LOG, level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
log = logging.getLogger("job")
st["calls"] += 1
log.info("job %d scored with %s", k, st["name"])
with open(OUT, "w") as f:
    f.write(f"job {k} calls={st['calls']}\n")
""",
    build="""    import logging

    state = {"name": "tiny-scorer", "calls": 0}
    yield state
    logging.getLogger("template").info("model released (%d calls)", state["calls"])""",
)

case(
    "atexit_thread_pool_after_shutdown",
    "The template loads its shards with a concurrent.futures.ThreadPoolExecutor (so the build imports concurrent.futures.thread). The job registers an atexit hook that checksums its output lines in a small thread pool, falling back to a serial loop if the pool refuses, and records which path it took. In a fresh interpreter the threading shutdown (before the atexit hooks) runs concurrent.futures' own exit hook, so submit raises 'cannot schedule new futures after interpreter shutdown' and the hook records that message and the serial fallback. Sticky must reproduce threading's shutdown for the job, including the hook the template's import registered in threading's _threading_atexits (fork mode) and without it reaching the next job (direct mode); otherwise the job records 'parallel'.",
    r"""
import atexit
import hashlib
from concurrent.futures import ThreadPoolExecutor

lines = [f"{shard}\t{k * len(shard)}" for shard in st["shards"]]


def checksum_outputs():
    def digest(s):
        return hashlib.sha1(s.encode()).hexdigest()[:10]

    try:
        with ThreadPoolExecutor(max_workers=2) as ex:
            digests = list(ex.map(digest, lines))
        how = "parallel"
    except RuntimeError as e:
        digests = [digest(s) for s in lines]
        how = f"serial ({e})"
    with open(OUT, "a") as f:
        f.write(f"checksums {how}: {' '.join(digests)}\n")


atexit.register(checksum_outputs)
with open(OUT, "w") as f:
    f.write("\n".join(lines) + "\n")
""",
    build="""    from concurrent.futures import ThreadPoolExecutor

    def load(i):
        return f"shard{i:02d}"

    with ThreadPoolExecutor(max_workers=1) as ex:
        shards = list(ex.map(load, range(4)))
    return {"shards": shards}""",
)

# ---------------------------------------------------------------------------
# (6) Collector state a job leaves behind (direct mode) and frozen objects in
#     the census a leak audit takes.
# ---------------------------------------------------------------------------

case(
    "direct_gc_callback_left_registered",
    "A script installs a gc.callbacks logger built by a factory (a closure over its log path and io.open, so it keeps working after the script's globals are cleared) and, like most scripts, never removes it. A fresh job's log has one line per full collection it ran: its explicit gc.collect() and the collection at interpreter exit. In fork mode the hook dies with the child. In direct mode the hook stays in the worker's gc.callbacks unless the check restores that list (it is a container changed in place in the gc module): the next job's collections (the worker's reset before the script, its explicit one, its exit) then append lines to the previous job's log, and each job's own log gets its predecessors' hooks' lines in its place. Expected to differ in direct mode (job 1's and job 2's logs).",
    r"""
import gc
import io


def make_gc_logger(path, _open=io.open):
    def on_gc(phase, info):
        if phase == "stop" and info["generation"] == 2:
            with _open(path, "a") as f:
                f.write(f"full collection: {info['collected']} unreachable\n")

    return on_gc


gc.collect()
gc.callbacks.append(make_gc_logger(LOG))


class Node:
    def __init__(self):
        self.edges = []


nodes = [Node() for _ in range(25)]
for a, b in zip(nodes, nodes[1:]):
    a.edges.append(b)
    b.edges.append(a)
degree = sum(len(n.edges) for n in nodes)
del nodes, a, b
gc.collect()
with open(OUT, "w") as f:
    f.write(f"job {k}: total degree {degree}\n")
""",
)

case(
    "leak_hunt_debug_saveall_left_on",
    "A leak hunt, as the gc documentation suggests it: gc.collect(), gc.set_debug(gc.DEBUG_SAVEALL), run the pipeline step, gc.collect(), and report the types of the objects that landed in gc.garbage. Like many such scripts it leaves the debug flag on and gc.garbage full. A fresh job reports exactly its step's cyclic objects. Fork mode should match. In direct mode, unless the check sees gc.get_debug() and the gc.garbage list (changed in place), the next job starts with DEBUG_SAVEALL on and the previous job's objects in gc.garbage (plus whatever the worker's reset collection saved), so its report counts them too.",
    r"""
import gc
from collections import Counter

gc.collect()
gc.set_debug(gc.DEBUG_SAVEALL)


class Feature:
    def __init__(self, name, parent=None):
        self.name = name
        self.parent = parent
        self.subfeatures = []
        if parent is not None:
            parent.subfeatures.append(self)


def parse_gene(i):
    gene = Feature(f"gene{i}")
    for j in range(3):
        tx = Feature(f"gene{i}.t{j}", gene)
        Feature(f"gene{i}.t{j}.cds", tx)
    return len(gene.subfeatures)


n_tx = sum(parse_gene(i) for i in range(5 * k))
gc.collect()
leaked = Counter(type(o).__name__ for o in gc.garbage)
with open(OUT, "w") as f:
    f.write(f"transcripts parsed: {n_tx}\n")
    f.write(f"objects in gc.garbage: {len(gc.garbage)}\n")
    for name, count in sorted(leaked.items()):
        f.write(f"  {name}: {count}\n")
""",
)

case(
    "tracemalloc_step_profile",
    "A memory profile of one step with tracemalloc: the script starts tracing unless a profiler already does (tracemalloc.is_tracing()), snapshots before and after building a k-mer count table, and writes the size and block-count differences of its own source lines (traces whose frame is the running script, __real_file__). In a fresh interpreter these are deterministic. Direct mode: the script never calls tracemalloc.stop(), so unless the check sees tracing left on, the next job finds tracing already running and says so. Fork mode: block counts depend on the free lists and allocator pools the job starts with (a forked worker's, not a fresh interpreter's), which may change the counts for small objects.",
    r"""
import tracemalloc

already = tracemalloc.is_tracing()
if not already:
    tracemalloc.start()
before = tracemalloc.take_snapshot()
seq = ("ACGTTGCAAGGCTTAC" * 30)[k:]
counts = {}
for i in range(len(seq) - 5):
    kmer = seq[i:i + 6]
    counts[kmer] = counts.get(kmer, 0) + 1
pairs = [(kmer, n) for kmer, n in counts.items() if n > 1]
after = tracemalloc.take_snapshot()
mine = [s for s in after.compare_to(before, "lineno") if s.traceback[0].filename == __real_file__ and s.size_diff]
with open(OUT, "w") as f:
    f.write(f"tracing already on at start: {already}\n")
    f.write(f"distinct 6-mers: {len(counts)}, repeated: {len(pairs)}\n")
    for s in sorted(mine, key=lambda s: s.traceback[0].lineno):
        f.write(f"line {s.traceback[0].lineno}: {s.size_diff:+d} B in {s.count_diff:+d} blocks\n")
""",
)

case(
    "tracemalloc_traceback_depth",
    "A profiler run with tracemalloc.start(25) groups the allocations of a loading function by full traceback and writes, for the biggest group, how many frames its traceback has and the script's own line numbers in it. In a fresh interpreter the script's module frame is the outermost frame, so the traceback is the list comprehension's frame, the loader's and the module's: 3 frames, deterministic. In a sticky job the worker's frames sit above the script's (a documented fact for inspect.stack and friends, not listed for tracemalloc), so the traceback is longer and the frame count differs. Expected to differ in both modes.",
    r"""
import tracemalloc


def load_reads(n):
    return [bytearray(64) for _ in range(n)]


tracemalloc.start(25)
reads = load_reads(200 * k)
snap = tracemalloc.take_snapshot()
tracemalloc.stop()
mine = [s for s in snap.statistics("traceback") if s.traceback[0].filename == __real_file__]
top = max(mine, key=lambda s: s.size)
own = [fr.lineno for fr in top.traceback if fr.filename == __real_file__]
with open(OUT, "w") as f:
    f.write(f"reads: {len(reads)}\n")
    f.write(f"largest allocation site: {top.count} blocks, {len(top.traceback)} frames\n")
    f.write(f"script lines in it: {own}\n")
""",
)

case(
    "open_file_leak_audit",
    "A file-handle leak audit, as test harnesses and long pipelines run it: list every open file object the collector knows (io.IOBase instances in gc.get_objects() that are not closed), with their names, after the step closed its own files. The template keeps the genome's .fai index open for random access. A fresh job's audit lists the template's open index beside the interpreter's standard streams, deterministically; in a sticky job the template's file object (and whatever standard streams the worker made before freezing) is frozen and invisible to gc.get_objects(), so the listed files differ. Expected to differ in both modes.",
    r"""
import gc
import io
import os

fai = st["fai"]
fai.seek(0)
contigs = [line.split("\t")[0] for line in fai]
with open(OUT, "w") as f:
    f.write(" ".join(contigs) + f" job={k}\n")
open_files = []
for obj in gc.get_objects():
    if isinstance(obj, io.IOBase) and not obj.closed:
        name = getattr(obj, "name", "?")
        open_files.append(f"{type(obj).__name__}:{os.path.basename(name) if isinstance(name, str) else name}")
with open(OUT, "a") as f:
    f.write(f"open file objects: {sorted(open_files)}\n")
""",
    build="""    fai = open("ref/genome.fa.fai")
    fai.readline()
    return {"fai": fai}""",
    files={
        "ref/genome.fa.fai": "chr1\t248956422\t6\t60\t61\nchr2\t242193529\t253105708\t60\t61\nchrM\t16569\t499474860\t60\t61\n"
    },
)

case(
    "weak_peak_index_without_collect",
    "A peak-calling step links each block's intervals into a doubly linked list (prev/next: cycles), indexes every interval by name in a weakref.WeakValueDictionary for later look-ups, merges each block to one span and drops the intervals. It never calls gc.collect(), so what the index still resolves at the end depends on when the collector last ran, which depends on where its counters stood when the script began: a fixed point in a fresh interpreter (start-up, Snakemake's preamble and the build always leave them the same), zero in a sticky job. The documented root cause (the counters), with a symptom the docs do not list: a weak index answering differently (OUT's last two lines).",
    r"""
import weakref


class Interval:
    def __init__(self, name, start, end, prev=None):
        self.name = name
        self.start = start
        self.end = end
        self.prev = prev
        self.next = None
        if prev is not None:
            prev.next = self


index = weakref.WeakValueDictionary()
merged = []
for block in range(60):
    head = prev = None
    for i in range(12):
        iv = Interval(f"peak{block}_{i}", block * 1000 + i * 50, block * 1000 + i * 50 + 80, prev)
        index[iv.name] = iv
        head = head or iv
        prev = iv
    merged.append((head.start, prev.end))
    del head, prev, iv
resolvable = sum(1 for b in range(60) if f"peak{b}_0" in index)
with open(OUT, "w") as f:
    f.write(f"merged spans: {len(merged)} first={merged[0]} last={merged[-1]} job={k}\n")
    f.write(f"index entries still alive: {len(index)}\n")
    f.write(f"blocks whose first peak still resolves: {resolvable}\n")
""",
)

case(
    "freeze_before_fork_pool_logged",
    "Following the gc documentation's advice for fork-based pools, a script calls gc.collect() and gc.freeze() before starting a multiprocessing 'fork' pool over its chromosome table, logs how many objects the freeze moved (the difference of gc.get_freeze_count() around it) and unfreezes afterwards. In a fresh interpreter nothing was frozen before, so the freeze moves every tracked object of the process (Snakemake's, the template's, the job's): a large, deterministic number. In a sticky job the template's objects are already frozen, so the freeze moves only the job's own objects and the logged count is far smaller (the docs say get_freeze_count() counts the template's objects; this is what that does to the usual before/after log line).",
    r"""
import gc
import multiprocessing as mp

table = {f"chr{i}": list(range(i * 10, i * 10 + 10)) for i in range(1, 23)}
before = gc.get_freeze_count()
gc.collect()
gc.freeze()
moved = gc.get_freeze_count() - before
with mp.get_context("fork").Pool(2) as pool:
    sums = pool.map(sum, list(table.values()))
gc.unfreeze()
with open(OUT, "w") as f:
    f.write(f"job {k}: chromosome sums {sums[:3]}...{sums[-1]}\n")
    f.write(f"objects frozen before the pool: {moved}\n")
    f.write(f"frozen after unfreeze: {gc.get_freeze_count()}\n")
""",
)

case(
    "lazy_import_in_del_at_exit",
    "A summary writer computes its statistics lazily: its __del__ imports statistics (not imported anywhere else) and appends the median and mean of what it collected to the log with pathlib. The writer holds its own bound flush method as a callback (a cycle), and the script starts from gc.collect() and drops the writer at its end, so only the interpreter's exit collects it. In a fresh interpreter that is the collection in Py_FinalizeEx before finalize_modules: sys.path and sys.meta_path are still intact, the import works and the log gets the summary. Sticky's teardown must run its collection before it sets sys.path and sys.meta_path to None (the docs' order); a collection of its own after that, or a restored-builtins step first, makes the import fail quietly and the log lacks the line (unless the worker already loaded statistics).",
    r"""
import gc
from pathlib import Path

gc.collect()


class SummaryWriter:
    def __init__(self, path):
        self.path = path
        self.values = []
        self.callbacks = [self.flush]

    def add(self, v):
        self.values.append(v)

    def flush(self):
        pass

    def __del__(self):
        import statistics

        with Path(self.path).open("a") as f:
            f.write(f"median={statistics.median(self.values)} mean={statistics.mean(self.values):.3f} n={len(self.values)}\n")


w = SummaryWriter(LOG)
for i in range(1, 10):
    w.add((i * 37 * k) % 23)
with open(OUT, "w") as f:
    f.write(" ".join(str(v) for v in w.values) + "\n")
del w
""",
)
