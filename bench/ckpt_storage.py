"""What the ``ckpt`` storage plugin costs per file, against plain copies, side by side.

In one process, interleaved, on the same disk:
- store: ``StorageObject.store_object()`` (hash, rename the object, write the name record;
  no fsync, the store's default) against a plain atomic copy (copy to a temporary name,
  rename), with and without fsync;
- retrieve: ``retrieve_object()`` (re-hash while copying to a staging name, rename) against a
  plain copy;
- exists + mtime: one name-record read against one ``os.stat``;
- deduplication: the same files stored under a second set of names.

Small files (64 KiB) show the per-file overhead; large ones (32 MiB) the throughput. Each
figure is the median of ``--repeats`` rounds, as a ratio to the baseline of the same round.

    python bench/ckpt_storage.py           # 200 small + 6 large files, 5 rounds
    python bench/ckpt_storage.py --quick   # 50 small + 2 large files, 3 rounds
"""

import argparse
import logging
import os
import shutil
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from _common import PLUGIN_ROOTS, WORK, write_result  # noqa: E402

sys.path[:0] = PLUGIN_ROOTS  # this checkout's code first

from snakemake_storage_plugin_ckpt import StorageProvider, StorageProviderSettings  # noqa: E402


def provider(root: Path, local: Path) -> StorageProvider:
    return StorageProvider(
        local_prefix=local,
        logger=logging.getLogger("bench"),
        settings=StorageProviderSettings(root=root),
    )


def timed(action: Callable[[], None]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


def plain_copy(src: Path, dst: Path, fsync: bool) -> None:
    tmp = dst.with_name(f".{dst.name}.tmp")
    with open(src, "rb") as f, open(tmp, "wb") as g:
        shutil.copyfileobj(f, g, 1 << 20)
        if fsync:
            g.flush()
            os.fsync(g.fileno())
    os.replace(tmp, dst)


def one_round(base: Path, sizes: list[int]) -> dict[str, float]:
    shutil.rmtree(base, ignore_errors=True)
    source = base / "source"
    source.mkdir(parents=True)
    files = []
    for i, size in enumerate(sizes):
        path = source / f"f{i}.bin"
        path.write_bytes(os.urandom(size))
        files.append(path)
    site_a = provider(base / "store", base / "site-a")
    site_b = provider(base / "store", base / "site-b")
    objs = [site_a.object(f"ckpt://data/f{i}.bin") for i in range(len(files))]
    for obj, src in zip(objs, files, strict=True):
        obj.local_path().parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, obj.local_path())
    plain = base / "plain"
    plain.mkdir()
    fetched = base / "fetched"
    fetched.mkdir()
    t = {
        "copy": timed(lambda: [plain_copy(f, plain / f.name, False) for f in files]),
        "copy_fsync": timed(lambda: [plain_copy(f, plain / f.name, True) for f in files]),
        "store": timed(lambda: [o.store_object() for o in objs]),
    }
    readers = [site_b.object(f"ckpt://data/f{i}.bin") for i in range(len(files))]
    t["retrieve"] = timed(lambda: [r.retrieve_object() for r in readers])
    t["copy_back"] = timed(
        lambda: [plain_copy(plain / f.name, fetched / f.name, False) for f in files]
    )
    t["exists_mtime"] = timed(lambda: [(r.exists(), r.mtime()) for r in readers])
    t["stat"] = timed(lambda: [os.stat(plain / f.name) for f in files])
    again = [site_a.object(f"ckpt://copy/f{i}.bin") for i in range(len(files))]
    for obj, src in zip(again, files, strict=True):
        obj.local_path().parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, obj.local_path())
    t["store_duplicate"] = timed(lambda: [o.store_object() for o in again])
    objects = sum(p.stat().st_size for p in (base / "store" / "objects").rglob("*") if p.is_file())
    t["dedup_ratio"] = objects / (2 * sum(sizes))
    for r, f in zip(readers, files, strict=True):
        assert r.local_path().read_bytes() == f.read_bytes(), "retrieved content differs"
    return t


def summarise(rounds: list[dict[str, float]], n: int, total_bytes: int) -> dict[str, float]:
    def med(f: Callable[[dict[str, float]], float]) -> float:
        return statistics.median(f(r) for r in rounds)

    return {
        "files": n,
        "bytes": total_bytes,
        "store_ms_per_file": med(lambda r: r["store"]) / n * 1e3,
        "store_vs_copy": med(lambda r: r["store"] / r["copy"]),
        "store_vs_copy_fsync": med(lambda r: r["store"] / r["copy_fsync"]),
        "retrieve_ms_per_file": med(lambda r: r["retrieve"]) / n * 1e3,
        "retrieve_vs_copy": med(lambda r: r["retrieve"] / r["copy_back"]),
        "exists_mtime_us_per_file": med(lambda r: r["exists_mtime"]) / n * 1e6,
        "exists_mtime_vs_stat": med(lambda r: r["exists_mtime"] / r["stat"]),
        "store_duplicate_vs_store": med(lambda r: r["store_duplicate"] / r["store"]),
        "objects_bytes_per_logical_byte": med(lambda r: r["dedup_ratio"]),
        "store_mb_per_s": total_bytes / med(lambda r: r["store"]) / 1e6,
        "retrieve_mb_per_s": total_bytes / med(lambda r: r["retrieve"]) / 1e6,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer files and rounds")
    parser.add_argument("--repeats", type=int, default=None)
    args = parser.parse_args()
    n_small, n_large = (50, 2) if args.quick else (200, 6)
    repeats = args.repeats or (3 if args.quick else 5)
    base = WORK / "ckpt_storage"
    result: dict[str, object] = {"quick": args.quick, "repeats": repeats}
    for label, sizes in [
        ("small_64KiB", [64 << 10] * n_small),
        ("large_32MiB", [32 << 20] * n_large),
    ]:
        rounds = [one_round(base / label, sizes) for _ in range(repeats)]
        summary = summarise(rounds, len(sizes), sum(sizes))
        result[label] = summary
        print(f"{label}: {len(sizes)} files")
        for key, value in summary.items():
            print(f"  {key:32s} {value:10.3f}")
    shutil.rmtree(base, ignore_errors=True)
    print(f"wrote {write_result('ckpt_storage', result)}")


if __name__ == "__main__":
    main()
