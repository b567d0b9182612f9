"""The seventh sticky red team's cases (issue 25, 2026-12-06): written from docs/sticky.md and
README.md only, aimed at what a template's build leaves on disk or open (files it creates,
reads, lists or keeps open; SQLite, shelve, tar, gzip, mmap, logging handlers, locks) and the
worker retired when a job changes them. 32 cases; on the first pass (against the watch of
files the build created only) 20 differed in fork mode and 18 in direct mode."""

# ruff: noqa: E501
import functools

from redteam_cases import HEADER, add_case  # noqa: F401

CASES = {}
case = functools.partial(add_case, CASES)


# ---------------------------------------------------------------------------
# 1. State loaded from a file the build did NOT create, which the job changes
# ---------------------------------------------------------------------------

case(
    "online_learning_checkpoint",
    "Online learning: the template loads the current model checkpoint (a JSON file shipped with the workflow); each job predicts with it, takes one SGD step and saves the new checkpoint atomically (write current.json.tmp, os.replace). Under local job k's build loads job k-1's checkpoint; a worker keeps the weights it loaded, and the checkpoint is not a file its build created, so nothing retires it.",
    r"""
import json, os
x = [float(k), 1.0]
pred = sum(a * b for a, b in zip(st["w"], x))
err = pred - 2.0 * k
w = [a - 0.01 * err * b for a, b in zip(st["w"], x)]
path = st["path"]
tmp = path + ".tmp"
with open(tmp, "w") as f:
    json.dump({"w": w, "step": st["step"] + 1}, f)
os.replace(tmp, path)
with open(OUT, "w") as f:
    f.write(f"step={st['step']} pred={pred:.6f} new_w={[round(a, 6) for a in w]}\n")
""",
    build="""    import json
    path = "online_learning_checkpoint/current.json"
    with open(path) as f:
        ckpt = json.load(f)
    return {"w": list(ckpt["w"]), "step": ckpt["step"], "path": path}""",
    n=3,
    files={"online_learning_checkpoint/current.json": '{"w": [0.5, -0.25], "step": 0}\n'},
)

case(
    "memo_json_created_if_missing",
    "A memoisation cache: the build creates cache/memo.json if it is missing (open 'w', a file the build created: watched) and loads it; each job looks up its keys, computes the misses and writes the cache back. Job 1 rewrites it: worker retired. The second worker's build finds the file (job 1 left it) so for that worker it is not 'created by the build': job 2's rewrite goes unseen and job 3 reads the memo as worker 2 loaded it. Under local every job's build loads the latest file.",
    r"""
import json
memo = dict(st["memo"])
keys = [f"item{i}" for i in range(1, k + 1)]
hits = [x for x in keys if x in memo]
for x in keys:
    memo.setdefault(x, len(x) * 7 + k)
with open(st["path"], "w") as f:
    json.dump(memo, f, sort_keys=True)
with open(OUT, "w") as f:
    f.write(f"hits={hits}\n")
""",
    build="""    import json, os
    p = "memo_json_created_if_missing/memo.json"
    if not os.path.exists(p):
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            json.dump({}, f)
    with open(p) as f:
        return {"path": p, "memo": json.load(f)}""",
    n=4,
)

case(
    "scratch_parts_cleaned_at_build",
    "The template clears leftover *.part chunk files from a pre-existing scratch folder (shipped with a .keep) when it loads, as many tools clean partial files of an interrupted run at start-up; each job writes its chunks there and concatenates all chunks it finds. Under local each job's build cleans out the previous job's chunks; a worker cleaned once, and the folder is not one its build created, so the next job merges the previous job's chunks too.",
    r"""
import glob, os
for i in range(2):
    with open(os.path.join(st["scratch"], f"job{k}-{i}.part"), "w") as f:
        f.write(f"chunk {k}.{i}\n")
parts = sorted(glob.glob(os.path.join(st["scratch"], "*.part")))
with open(OUT, "w") as f:
    for p in parts:
        with open(p) as g:
            f.write(g.read())
""",
    build="""    import glob, os
    d = "scratch_parts_cleaned_at_build/scratch"
    os.makedirs(d, exist_ok=True)
    for p in glob.glob(os.path.join(d, "*.part")):
        os.remove(p)
    return {"scratch": d}""",
    n=3,
    files={"scratch_parts_cleaned_at_build/scratch/.keep": ""},
)

case(
    "status_file_truncated_by_build",
    "The template opens a status file with mode 'w' (truncating it; the file ships as a placeholder, so the build did not create it) and keeps it; each job writes a one-line status of decreasing length, flushes, and reads the file back. Under local every build truncates it so a job sees exactly its line; in fork mode the position is put back to 0 but nothing truncates, so the shorter line leaves the tail of the previous one.",
    r"""
st["status"].write(f"job {k}: " + "x" * (12 - 3 * k) + "\n")
st["status"].flush()
with open("status_file_truncated_by_build/status.txt") as g:
    seen = g.read()
with open(OUT, "w") as f:
    f.write(seen)
""",
    build="""    f = open("status_file_truncated_by_build/status.txt", "w")
    return {"status": f}""",
    n=3,
    files={"status_file_truncated_by_build/status.txt": "placeholder status line that is long\n"},
)

# ---------------------------------------------------------------------------
# 2. Files without a path, and files the build keeps open
# ---------------------------------------------------------------------------

case(
    "temporaryfile_capture_buffer",
    "The template keeps an anonymous tempfile.TemporaryFile as a capture buffer for a command-line tool's large stdout; each job runs the tool with stdout=buffer, seeks to 0 and reads what was captured. Under local the buffer is new and empty in every job; in a worker it is one file shared by all jobs (it has no path, so nothing snapshots it), and a job whose output is shorter also reads the tail of the previous job's.",
    r"""
import subprocess
buf = st["buf"]
subprocess.run(["seq", "1", str(6 - k)], stdout=buf, check=True)
buf.seek(0)
captured = buf.read()
with open(OUT, "w") as f:
    f.write(captured)
""",
    build="""    import tempfile
    return {"buf": tempfile.TemporaryFile("w+")}""",
    n=3,
)

case(
    "tar_reproducible_patch_same_mtime",
    "The template unpacks a base model (a reproducible tar: fixed mtime 0, fixed modes) into a mkdtemp folder; each job applies its adapter, another reproducible tar holding one same-size file, over that folder with tarfile.extractall, then reads the weights. tarfile rewrites the file in place (same inode, same size, same mode) and sets its mtime back to the archive's 0, so the snapshot (kind/inode/size/mode/mtime) sees no change: the next job starts from the previous job's patched weights. Under local every job unpacks a clean base.",
    r"""
import io, os, tarfile
name = "a.txt" if k % 2 else "b.txt"
data = f"patch{k}-{name[0]}-01\n".encode()
buf = io.BytesIO()
with tarfile.open(fileobj=buf, mode="w") as tf:
    ti = tarfile.TarInfo(name)
    ti.size = len(data); ti.mtime = 0; ti.mode = 0o644
    tf.addfile(ti, io.BytesIO(data))
buf.seek(0)
with tarfile.open(fileobj=buf) as tf:
    tf.extractall(st["dir"])
with open(OUT, "w") as f:
    for n in ("a.txt", "b.txt"):
        with open(os.path.join(st["dir"], n)) as g:
            f.write(g.read())
""",
    build="""    import io, tarfile, tempfile
    d = tempfile.mkdtemp(prefix="rt25g-model-")
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tf:
        for name, val in (("a.txt", "base-a-0001\\n"), ("b.txt", "base-b-0001\\n")):
            data = val.encode()
            ti = tarfile.TarInfo(name)
            ti.size = len(data); ti.mtime = 0; ti.mode = 0o644
            tf.addfile(ti, io.BytesIO(data))
    buf.seek(0)
    with tarfile.open(fileobj=buf) as tf:
        tf.extractall(d)
    return {"dir": d}""",
    n=3,
)

case(
    "trace_file_buffered_write_seen",
    "The template opens a trace file (mode 'w') in its own mkdtemp folder and keeps it; each job writes one record to it without flushing (its own end flushes it) and, before that, reads what the trace file holds on disk. Under local the file is new and empty at every job's start. In a worker, job 1's record is flushed at its end: if the after-job snapshot is taken before that flush (or the flush is not compared), job 2 reads job 1's record.",
    r"""
import os
with open(st["path"]) as g:
    before = g.read()
st["trace"].write(f'{{"job": {k}, "score": {k * 0.25}}}\n')
with open(OUT, "w") as f:
    f.write(f"on disk at start: {before!r}\n")
""",
    build="""    import os, tempfile
    d = tempfile.mkdtemp(prefix="rt25g-trace-")
    path = os.path.join(d, "trace.jsonl")
    return {"path": path, "trace": open(path, "w")}""",
    n=3,
)

case(
    "csv_header_buffered_by_build",
    "A results CSV kept open by the template: the build opens results.csv in append mode and writes the header row if the file is empty (buffered, not flushed); each job first reads the rows already on disk (to skip done samples), then appends its row. Under local job 1's header is still in its process's buffer when it reads (the file is empty) and later builds see a non-empty file; a worker flushes the build's buffered header before the job, so job 1 already reads it.",
    r"""
import csv
with open(st["path"], newline="") as g:
    rows = list(csv.reader(g))
w = csv.writer(st["fh"])
w.writerow([k, f"label{k}"])
with open(OUT, "w") as f:
    f.write(f"rows on disk at start: {rows}\n")
""",
    build="""    import csv, os
    os.makedirs("csv_header_buffered_by_build", exist_ok=True)
    path = "csv_header_buffered_by_build/results.csv"
    fh = open(path, "a", newline="")
    if fh.tell() == 0:
        csv.writer(fh).writerow(["sample", "label"])
    return {"path": path, "fh": fh}""",
    n=3,
)

case(
    "gzip_trace_kept_open",
    "A gzip-compressed JSONL prediction log kept open by the template (gzip.open(path, 'at')); each job first counts the records already logged (resume logic), then logs its own. Under local each job's build appends a new gzip member that its exit closes (header, data, trailer), so the next job decompresses cleanly. In a worker the GzipFile's compressor lives in the template: its header is flushed before job 1 and a forked job's data is flushed without a trailer, so reading the log fails or differs.",
    r"""
import gzip, json
try:
    with gzip.open(st["path"], "rt") as g:
        n_before = sum(1 for _ in g)
    status = f"records before: {n_before}"
except Exception as e:
    status = f"cannot read log: {type(e).__name__}"
st["log"].write(json.dumps({"job": k, "p": round(0.1 * k, 3)}) + "\n")
with open(OUT, "w") as f:
    f.write(status + "\n")
""",
    build="""    import gzip, os
    os.makedirs("gzip_trace_kept_open", exist_ok=True)
    path = "gzip_trace_kept_open/predictions.jsonl.gz"
    return {"path": path, "log": gzip.open(path, "at")}""",
    n=3,
)

case(
    "direct_readline_buffer_scan",
    "The template opens a small reference TSV, reads its header and keeps the file object; each job scans it with `for line in ref:` until it finds its sample's id and breaks. The whole file is already in Python's read buffer (the OS position is at EOF since the build), so a job consumes lines without moving the file descriptor's position. Under local each job scans from the first data row; in direct mode, unless the check compares the Python object's tell(), the next job scans on from where the previous stopped and misses ids before it.",
    r"""
key = f"s{k}"
label = None
for line in st["ref"]:
    sid, lab = line.rstrip("\n").split("\t")
    if sid == key:
        label = lab
        break
with open(OUT, "w") as f:
    f.write(f"{key}: {label}\n")
""",
    build="""    ref = open("direct_readline_buffer_scan/ref.tsv")
    header = ref.readline()
    return {"ref": ref, "header": header}""",
    n=3,
    files={"direct_readline_buffer_scan/ref.tsv": "id\tlabel\ns2\tbeta\ns3\tgamma\ns1\talpha\n"},
)

case(
    "direct_gzip_reference_scan",
    "Like direct_readline_buffer_scan with a gzip-compressed reference table (gzip.open(..., 'rt'), the build compresses the shipped TSV once if the .gz is missing): decompressed lines sit in the GzipFile's and TextIOWrapper's buffers, so a job's scan does not move the descriptor. Under local each job scans from the top.",
    r"""
key = f"s{k}"
label = None
for line in st["ref"]:
    sid, lab = line.rstrip("\n").split("\t")
    if sid == key:
        label = lab
        break
with open(OUT, "w") as f:
    f.write(f"{key}: {label}\n")
""",
    build="""    import gzip, os, shutil
    src = "direct_gzip_reference_scan/ref.tsv"
    gz = src + ".gz"
    if not os.path.exists(gz):
        with open(src, "rb") as a, gzip.GzipFile(gz, "wb", mtime=0) as b:
            shutil.copyfileobj(a, b)
    ref = gzip.open(gz, "rt")
    header = ref.readline()
    return {"ref": ref, "header": header}""",
    n=3,
    files={"direct_gzip_reference_scan/ref.tsv": "id\tlabel\ns2\tbeta\ns3\tgamma\ns1\talpha\n"},
)

case(
    "direct_mmap_find_position",
    "The template memory-maps a read-only index file (mmap.mmap, ACCESS_READ) and keeps the map; each job finds its key with mm.find(key), seeks there and reads the line. mmap.find starts at the map's own position, which the job's seek/readline moves; that position is not the file descriptor's. Under local every job starts at 0; in direct mode the next job searches from where the previous one stopped and misses keys before it.",
    r"""
key = f"s{k}\t".encode()
pos = st["mm"].find(key)
if pos < 0:
    line = "not found"
else:
    st["mm"].seek(pos)
    line = st["mm"].readline().decode().rstrip("\n")
with open(OUT, "w") as f:
    f.write(line + "\n")
""",
    build="""    import mmap
    f = open("direct_mmap_find_position/index.tsv", "rb")
    mm = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    return {"mm": mm, "f": f}""",
    n=3,
    files={"direct_mmap_find_position/index.tsv": "s2\tbeta\ns3\tgamma\ns1\talpha\n"},
)

case(
    "direct_with_block_closes_template_file",
    "The template opens a small labels file and reads its header; each job reads the labels with `with st['labels'] as f: rows = f.read().splitlines()`, which closes the file at the end of the with-block (fine under local: the file is the job's own). The data was already buffered by the build, so the descriptor's position does not move; in direct mode the template's file is now closed and the next job fails with 'I/O operation on closed file' unless closing counts as a change.",
    r"""
with st["labels"] as fh:
    rows = fh.read().splitlines()
with open(OUT, "w") as f:
    f.write(f"{len(rows)} labels, first {rows[0] if rows else None}\n")
""",
    build="""    fh = open("direct_with_block_closes_template_file/labels.txt")
    header = fh.readline()
    return {"labels": fh, "header": header}""",
    n=3,
    files={"direct_with_block_closes_template_file/labels.txt": "# labels v1\ncat\ndog\nbird\n"},
)

# ---------------------------------------------------------------------------
# 3. Creation the worker may not record: C libraries, sqlite, subprocesses, rename
# ---------------------------------------------------------------------------

case(
    "safetensors_cache_written_by_rust",
    "The template converts shipped JSON weights to a safetensors cache next to them if the cache is missing (safetensors' Rust writer creates the file: no Python open) and loads the weights from the cache; each job fine-tunes (adds its delta) and writes the cache back with save_file. Under local job k's build loads job k-1's weights. 2.txt differs if a file a C/Rust library created is not recorded; 3.txt if it is, but the second worker's build (which found the file) does not watch it.",
    r"""
import numpy as np
from safetensors.numpy import save_file
w = st["w"] + np.float32(k)
save_file({"w": w}, st["cache"])
with open(OUT, "w") as f:
    f.write(f"loaded={st['w'].tolist()} saved={w.tolist()}\n")
""",
    build="""    import json, os
    import numpy as np
    from safetensors.numpy import save_file, load_file
    src = "safetensors_cache_written_by_rust/weights.json"
    cache = "safetensors_cache_written_by_rust/weights.safetensors"
    if not os.path.exists(cache):
        with open(src) as f:
            save_file({"w": np.array(json.load(f), dtype=np.float32)}, cache)
    return {"w": load_file(cache)["w"], "cache": cache}""",
    n=3,
    files={"safetensors_cache_written_by_rust/weights.json": "[1.0, 2.0, 3.0]\n"},
)

case(
    "sqlite_done_ids_loaded_at_build",
    "Resumable processing: the template opens (sqlite3.connect creates it in C) a results database in a shipped folder, creates the table if needed and loads the set of sample ids already done; each job processes ids 1..k+1 not in that set, inserts them and commits, and reports what it processed. Under local job k's build sees every earlier commit. 2.txt differs if the database sqlite created is not recorded as created by the build; 3.txt if only the second worker's build misses it.",
    r"""
todo = [i for i in range(1, k + 2) if i not in st["done"]]
for i in todo:
    st["db"].execute("INSERT OR IGNORE INTO results VALUES (?, ?)", (i, f"v{i}"))
st["db"].commit()
with open(OUT, "w") as f:
    f.write(f"processed={todo}\n")
""",
    build="""    import sqlite3
    db = sqlite3.connect("sqlite_done_ids_loaded_at_build/results.db")
    db.execute("CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY, value TEXT)")
    db.commit()
    done = {r[0] for r in db.execute("SELECT id FROM results")}
    return {"db": db, "done": done}""",
    n=3,
    files={"sqlite_done_ids_loaded_at_build/.keep": ""},
)

case(
    "subprocess_cli_builds_vocab_cache",
    "The template builds a sorted vocabulary cache with the `sort -u` command-line tool if it is missing (a subprocess creates the file, which Python's audit hooks do not see) and loads it; each job adds the new words of its sample to the cache file. Under local job k's build loads a vocabulary that includes earlier jobs' words.",
    r"""
words = [f"w{k}a", f"w{k}b", "common"]
new = [w for w in words if w not in st["vocab"]]
with open(st["cache"], "a") as f:
    for w in new:
        f.write(w + "\n")
with open(OUT, "w") as f:
    f.write(f"vocab size {len(st['vocab'])}, new {new}\n")
""",
    build="""    import os, subprocess
    src = "subprocess_cli_builds_vocab_cache/words.txt"
    cache = "subprocess_cli_builds_vocab_cache/vocab.sorted"
    if not os.path.exists(cache):
        subprocess.run(["sort", "-u", src, "-o", cache], check=True, env={**os.environ, "LC_ALL": "C"})
    with open(cache) as f:
        vocab = set(f.read().split())
    return {"vocab": vocab, "cache": cache}""",
    n=3,
    files={"subprocess_cli_builds_vocab_cache/words.txt": "the\nmodel\ncommon\nthe\n"},
)

case(
    "atomic_rename_cache_in_workdir",
    "The template writes its label map with the usual atomic-write idiom if it is missing (NamedTemporaryFile(delete=False) in the target folder, then os.replace onto the final name), and loads it; each job adds a label it discovered and saves the map the same atomic way. The final path comes into being by a rename, not by an open. 2.txt differs if a rename's target is not recorded as created; 3.txt if only the second worker misses it. Under local job k's build loads every earlier label.",
    r"""
import json, os, tempfile
labels = dict(st["labels"])
labels.setdefault(f"label{k}", len(labels))
with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(st["path"]), delete=False, suffix=".tmp") as t:
    json.dump(labels, t, sort_keys=True)
os.replace(t.name, st["path"])
with open(OUT, "w") as f:
    f.write(f"known at start: {sorted(st['labels'])}\n")
""",
    build="""    import json, os, tempfile
    path = "atomic_rename_cache_in_workdir/labels.json"
    if not os.path.exists(path):
        with tempfile.NamedTemporaryFile("w", dir=os.path.dirname(path), delete=False, suffix=".tmp") as t:
            json.dump({"O": 0}, t)
        os.replace(t.name, path)
    with open(path) as f:
        return {"labels": json.load(f), "path": path}""",
    n=3,
    files={"atomic_rename_cache_in_workdir/.keep": ""},
)

case(
    "dumb_dbm_shelve_cache",
    "A shelve cache (dbm.dumb: the only dbm here) opened by the template in its folder, created on the first build; each job stores its result under a new key and reports the keys it found. Under local job k's build opens the shelf with every earlier key; a worker's in-memory index of the shelf is what its build read, and the second worker's build found the files already there.",
    r"""
found = sorted(st["shelf"].keys())
st["shelf"][f"sample{k}"] = {"score": k * 3}
st["shelf"].sync()
with open(OUT, "w") as f:
    f.write(f"keys at start: {found}\n")
""",
    build="""    import os, shelve
    os.makedirs("dumb_dbm_shelve_cache", exist_ok=True)
    return {"shelf": shelve.open("dumb_dbm_shelve_cache/cache")}""",
    n=4,
)

# ---------------------------------------------------------------------------
# 4. Teardown, locks, and the retired worker
# ---------------------------------------------------------------------------

case(
    "teardown_persists_memo",
    "A yield template whose teardown persists its memo dict (pickle) back to disk, as many embedding caches do at shutdown; each job adds its results to the memo and reports which keys were already cached. Under local every job's teardown (at its exit) saves the memo and the next build loads it; in fork mode a job's additions die with its child and the teardown runs only when the worker stops.",
    r"""
keys = [f"doc{i}" for i in range(1, k + 1)]
hits = [x for x in keys if x in st]
for x in keys:
    st.setdefault(x, [len(x), k])
with open(OUT, "w") as f:
    f.write(f"cached={hits}\n")
""",
    build="""    import os, pickle
    p = "teardown_persists_memo/memo.pkl"
    memo = {}
    if os.path.exists(p):
        with open(p, "rb") as f:
            memo = pickle.load(f)
    yield memo
    os.makedirs(os.path.dirname(p), exist_ok=True)
    with open(p, "wb") as f:
        pickle.dump(memo, f)""",
    n=3,
)

case(
    "exclusive_flock_then_retire",
    "The template takes an exclusive non-blocking flock on the model folder's lock file (refusing to load a model another process is using, as LevelDB/RocksDB-style stores do) and makes a mkdtemp scratch folder; the teardown removes the scratch and releases the lock. Each job writes an intermediate file into the scratch folder (fine under local: it is the job's own), which retires the worker. Under local jobs run one after another, each process gone before the next; if the retired worker still holds the lock while the replacement builds, job 2's build fails.",
    r"""
import os
with open(os.path.join(st["scratch"], f"tmp{k}.txt"), "w") as f:
    f.write("intermediate\n")
with open(OUT, "w") as f:
    f.write(f"scratch holds {sorted(os.listdir(st['scratch']))}\n")
""",
    build="""    import fcntl, os, shutil, tempfile
    os.makedirs("exclusive_flock_then_retire", exist_ok=True)
    lock = open("exclusive_flock_then_retire/model.lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RuntimeError("model directory is in use by another process")
    scratch = tempfile.mkdtemp(prefix="rt25g-flock-")
    yield {"scratch": scratch, "lock": lock}
    shutil.rmtree(scratch, ignore_errors=True)
    lock.close()""",
    n=3,
)

case(
    "teardown_removes_fixed_scratch",
    "The template makes a fixed-path scratch folder in the working directory (makedirs exist_ok) with the model's unpacked file, and its teardown removes the folder; each job adds its intermediate file and lists the folder. Under local each job sees [model.bin, its file]. In a worker the folder is created by the build (watched), job 1's file retires it; whether the replacement's build sees job 1's file (old worker not yet torn down) or loses its folder to the old worker's late teardown depends on the order.",
    r"""
import os
with open(os.path.join(st["dir"], f"job{k}.tmp"), "w") as f:
    f.write("x\n")
with open(OUT, "w") as f:
    f.write(f"{sorted(os.listdir(st['dir']))}\n")
""",
    build="""    import os, shutil
    d = "teardown_removes_fixed_scratch/scratch"
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "model.bin"), "w") as f:
        f.write("weights\\n")
    yield {"dir": d}
    shutil.rmtree(d, ignore_errors=True)""",
    n=3,
)

case(
    "lockf_reacquired_in_job",
    "The template opens an index file and takes a POSIX lockf lock on it (single writer); each job appends its record through a helper that takes lockf(LOCK_EX|LOCK_NB) around the append. POSIX record locks belong to the process: under local (and direct mode) re-locking in the same process succeeds; a forked child does not own its parent's lock, so its lockf fails and the record is not written.",
    r"""
import fcntl
idx = st["index"]
def append_record(line):
    try:
        fcntl.lockf(idx, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return "index busy"
    idx.write(line)
    idx.flush()
    return "appended"
status = append_record(f"{k}\tdone\n")
with open(OUT, "w") as f:
    f.write(status + "\n")
""",
    build="""    import fcntl, os
    os.makedirs("lockf_reacquired_in_job", exist_ok=True)
    idx = open("lockf_reacquired_in_job/index.tsv", "a")
    fcntl.lockf(idx, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return {"index": idx}""",
    n=3,
)

case(
    "sqlite_uncommitted_insert",
    "A script that forgets to commit: the template opens a sqlite results database (in a folder the build creates); each job inserts its row without commit() and reports the row count its connection sees. Under local the uncommitted row is rolled back when the process exits, so every job counts 1. In direct mode the open transaction stays in the worker's connection; the -journal file it leaves may retire the worker, and a retired worker that still holds the write lock makes the next job fail with 'database is locked'.",
    r"""
st["db"].execute("INSERT INTO results (sample) VALUES (?)", (f"s{k}",))
n = st["db"].execute("SELECT COUNT(*) FROM results").fetchone()[0]
with open(OUT, "w") as f:
    f.write(f"rows visible: {n}\n")
""",
    build="""    import os, sqlite3
    os.makedirs("sqlite_uncommitted_insert", exist_ok=True)
    db = sqlite3.connect("sqlite_uncommitted_insert/results.db", timeout=2)
    db.execute("CREATE TABLE IF NOT EXISTS results (id INTEGER PRIMARY KEY, sample TEXT)")
    db.commit()
    return {"db": db}""",
    n=3,
)

case(
    "logging_filehandler_second_worker",
    "The template sets up a FileHandler on its 'model' logger (mode 'a') and logs 'model loaded'; each job logs its progress through that logger and copies the log into its output. Under local the log reads loaded/job1/loaded/job2/... In fork mode job 1's write retires the first worker (its build created the log); the second worker's build opens the existing log, so job 2's write is not a change to a file that build created and job 3 runs without a build: one 'model loaded' short.",
    r"""
import logging
logging.getLogger("model").info(f"job {k}: scored sample")
with open(st["path"]) as g:
    text = g.read()
with open(OUT, "w") as f:
    f.write(text)
""",
    build="""    import logging, os
    os.makedirs("logging_filehandler_second_worker", exist_ok=True)
    path = "logging_filehandler_second_worker/model.log"
    log = logging.getLogger("model")
    h = logging.FileHandler(path)
    h.setFormatter(logging.Formatter("%(levelname)s %(message)s"))
    log.addHandler(h)
    log.setLevel(logging.INFO)
    log.propagate = False
    log.info("model loaded")
    return {"path": path}""",
    n=4,
)

case(
    "build_provenance_log",
    "The template appends a provenance line (which weights it loaded) to logs/<case>/provenance.log each time it loads, as an MLflow-style run record; jobs do not touch it. Under local there is one line per job; a worker loads once.",
    r"""
with open(OUT, "w") as f:
    f.write(f"{k} {st['weights']}\n")
""",
    build="""    import os
    os.makedirs("logs/build_provenance_log", exist_ok=True)
    with open("logs/build_provenance_log/provenance.log", "a") as f:
        f.write("loaded weights v3 (sha 1f2e)\\n")
    return {"weights": "v3"}""",
    n=3,
)

# ---------------------------------------------------------------------------
# 5. Build-created trees that jobs change (expected to be caught)
# ---------------------------------------------------------------------------

case(
    "memmap_job_opens_own_mapping",
    "The template allocates an embeddings buffer as a numpy memmap in its mkdtemp folder (row 0 = the prototype) and closes it; each job opens the file with its own np.memmap(mode='r+'), writes its row and sums the buffer. Writes through a mapping change no size or inode; under local each job's buffer is fresh.",
    r"""
import numpy as np
mm = np.memmap(st["path"], dtype=np.float32, mode="r+", shape=(5, 3))
mm[k] = float(k)
mm.flush()
tot = [float(x) for x in mm.sum(axis=1)]
del mm
with open(OUT, "w") as f:
    f.write(f"{tot}\n")
""",
    build="""    import os, tempfile
    import numpy as np
    d = tempfile.mkdtemp(prefix="rt25g-mm-")
    path = os.path.join(d, "emb.f32")
    mm = np.memmap(path, dtype=np.float32, mode="w+", shape=(5, 3))
    mm[0] = 1.0
    mm.flush()
    del mm
    return {"path": path}""",
    n=3,
)

case(
    "joblib_memory_in_mkdtemp",
    "The template wraps its embedding function in joblib.Memory with a mkdtemp cache folder and warms it with one call; each job asks which of its inputs are cached, then computes them through the cache. joblib stores new results in new subfolders of a folder the build created. Under local each job's cache holds only the warm-up call.",
    r"""
xs = list(range(0, k + 1))
cached = [x for x in xs if st["embed"].check_call_in_cache(x)]
vals = [st["embed"](x) for x in xs]
with open(OUT, "w") as f:
    f.write(f"cached={cached} vals={vals}\n")
""",
    build="""    import tempfile
    import joblib
    def embed(x):
        return [x, x * x]
    mem = joblib.Memory(tempfile.mkdtemp(prefix="rt25g-joblib-"), verbose=0)
    cached = mem.cache(embed)
    cached(0)
    return {"embed": cached, "mem": mem}""",
    n=3,
)

case(
    "nested_build_tree_edit_deep_file",
    "The template lays out a tokenizer folder in mkdtemp (tok/sub/vocab/ with merges.txt) like save_pretrained does; each job appends a merge rule to the deep merges.txt (its own copy under local) and reports the rules it found. The change is three folders down in a tree the build created.",
    r"""
import os
p = os.path.join(st["dir"], "tok", "sub", "vocab", "merges.txt")
with open(p) as g:
    rules = g.read().split()
with open(p, "a") as g:
    g.write(f"r{k}\n")
with open(OUT, "w") as f:
    f.write(f"{rules}\n")
""",
    build="""    import os, tempfile
    d = tempfile.mkdtemp(prefix="rt25g-tok-")
    os.makedirs(os.path.join(d, "tok", "sub", "vocab"))
    with open(os.path.join(d, "tok", "sub", "vocab", "merges.txt"), "w") as f:
        f.write("a b\\n")
    return {"dir": d}""",
    n=3,
)

case(
    "hf_snapshot_symlink_write_through",
    "An HF-hub-style cache the template lays out in mkdtemp: blobs/<sha> holds the config, snapshots/main/config.json is a relative symlink to it; each job edits the config through the snapshot path (the symlink) and reads it. The symlink itself (lstat) is unchanged; the blob it points to changes. Under local each job's cache is fresh.",
    r"""
import json, os
p = os.path.join(st["dir"], "snapshots", "main", "config.json")
with open(p) as g:
    cfg = json.load(g)
seen = dict(cfg)
cfg[f"job{k}"] = True
with open(p, "w") as g:
    json.dump(cfg, g, sort_keys=True)
with open(OUT, "w") as f:
    f.write(f"{sorted(seen)}\n")
""",
    build="""    import json, os, tempfile
    d = tempfile.mkdtemp(prefix="rt25g-hub-")
    os.makedirs(os.path.join(d, "blobs"))
    os.makedirs(os.path.join(d, "snapshots", "main"))
    with open(os.path.join(d, "blobs", "9f1c"), "w") as f:
        json.dump({"hidden": 8}, f)
    os.symlink(os.path.join("..", "..", "blobs", "9f1c"), os.path.join(d, "snapshots", "main", "config.json"))
    return {"dir": d}""",
    n=3,
)

# ---------------------------------------------------------------------------
# 6. More creation/teardown/handler variants
# ---------------------------------------------------------------------------

case(
    "sqlite_wal_scratch_db_recreated",
    "The template keeps a scratch sqlite database for joins: it makes its folder, deletes any old database files, creates a fresh one in WAL mode and a table. Each job inserts its rows and commits (appending WAL frames: no file added to or removed from the folder) and reports every row. Under local each build starts an empty database; a worker's jobs share one, the files being made by sqlite's C code (not recorded) and WAL commits adding no directory entries.",
    r"""
rows = [(k, f"feat{k}-{i}") for i in range(2)]
st["db"].executemany("INSERT INTO feats VALUES (?, ?)", rows)
st["db"].commit()
allrows = st["db"].execute("SELECT job, name FROM feats ORDER BY job, name").fetchall()
with open(OUT, "w") as f:
    f.write(f"{allrows}\n")
""",
    build="""    import glob, os, sqlite3
    d = "sqlite_wal_scratch_db_recreated/scratch"
    os.makedirs(d, exist_ok=True)
    for p in glob.glob(os.path.join(d, "join.db*")):
        os.remove(p)
    db = sqlite3.connect(os.path.join(d, "join.db"))
    db.execute("PRAGMA journal_mode=WAL")
    db.execute("CREATE TABLE feats (job INTEGER, name TEXT)")
    db.commit()
    return {"db": db}""",
    n=3,
)

case(
    "rotating_log_rollover_in_job",
    "The template attaches a RotatingFileHandler (small maxBytes, backupCount=1) to its logger, on a log file that already exists, and logs 'model loaded'; each job logs a few progress lines through it, and the log rolls over during a job (model.log renamed to model.log.1, a new model.log opened). Each job copies both files into its output. Under local every job's build opens the current model.log; in fork mode the rollover happened in a child, the template's handler still writes to the renamed file, and nothing retires the worker (the log was not created by its build).",
    r"""
import logging, os
log = logging.getLogger("rotmodel")
for i in range(3):
    log.info(f"job {k} step {i} loss {0.5 / (i + 1):.3f}")
with open(OUT, "w") as f:
    for name in ("model.log", "model.log.1"):
        p = os.path.join("rotating_log_rollover_in_job", name)
        f.write(f"== {name}\n")
        if os.path.exists(p):
            with open(p) as g:
                f.write(g.read())
""",
    build="""    import logging
    from logging.handlers import RotatingFileHandler
    h = RotatingFileHandler("rotating_log_rollover_in_job/model.log", maxBytes=160, backupCount=1)
    h.setFormatter(logging.Formatter("%(message)s"))
    log = logging.getLogger("rotmodel")
    log.addHandler(h)
    log.setLevel(logging.INFO)
    log.propagate = False
    log.info("model loaded")
    return {"handler": h}""",
    n=3,
    files={"rotating_log_rollover_in_job/model.log": "previous run\n"},
)

case(
    "slow_teardown_holds_lock",
    "Like exclusive_flock_then_retire, but the teardown first saves the model's cache (about a second) and only then releases the folder's flock, as a real save does. Each job writes into the template's mkdtemp scratch, which retires the worker. Under local the job's process has released the lock before the next job starts; in a worker, if the replacement builds while the retired worker is still in its teardown, the build fails.",
    r"""
import os
with open(os.path.join(st["scratch"], f"tmp{k}.txt"), "w") as f:
    f.write("intermediate\n")
with open(OUT, "w") as f:
    f.write(f"scratch holds {sorted(os.listdir(st['scratch']))}\n")
""",
    build="""    import fcntl, os, shutil, tempfile, time
    os.makedirs("slow_teardown_holds_lock", exist_ok=True)
    lock = open("slow_teardown_holds_lock/model.lock", "a")
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise RuntimeError("model directory is in use by another process")
    scratch = tempfile.mkdtemp(prefix="rt25g-slowlock-")
    yield {"scratch": scratch}
    time.sleep(1.2)
    with open("slow_teardown_holds_lock/cache.bin", "w") as f:
        f.write("cache\\n")
    shutil.rmtree(scratch, ignore_errors=True)
    fcntl.flock(lock, fcntl.LOCK_UN)
    lock.close()""",
    n=3,
)
