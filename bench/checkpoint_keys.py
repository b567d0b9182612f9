"""The cost of keys that describe the job as Snakemake executes it (issue 26).

A generated workflow of N jobs, a quarter of each kind the key follows differently: shell
jobs (formatted command with Snakefile globals, a param function, threads), script jobs
(a workflow-local module and package they import), ``run:`` blocks (Snakefile functions, a
class, a local module's state, followed through their code), and shell jobs consuming the
others (input content and modes). Site A runs it with ``--sticky-checkpoints`` (stores
everything); then, interleaved, a fresh copy restores everything through the store (site B)
and Snakemake's own dry run runs at a fresh copy (site C).

Figures: the key's cost per job (the run's own "provenance key(s) in ..." line at site B:
every job is keyed once before scheduling), and the restored repeat over the dry run.
Goals (issue 26): key < 1 ms per job at 2,000 jobs; restored repeat <= 1.3x the dry run.

    python bench/checkpoint_keys.py            # 2,000 jobs, 3 interleaved pairs
    python bench/checkpoint_keys.py --quick    # 200 jobs, 1 pair, under a minute
"""

import argparse
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).parent))
from _common import WORK, write_result  # noqa: E402

SNAKEFILE = """\
import helpers

GREETING = "hi"
N = {n}


def fmt(x, suffix="!"):
    return f"{{GREETING}}-{{x}}{{suffix}}"


class Style:
    SEP = "-"

    def join(self, items):
        return self.SEP.join(items)


rule all:
    input:
        expand("out/down/{{i}}.txt", i=range(N)),
        expand("out/py/{{i}}.txt", i=range(N)),


rule sh:
    output: "out/sh/{{i}}.txt"
    params: double=lambda wc: int(wc.i) * 2
    shell: "echo {{GREETING}} {{params.double}} {{threads}} > {{output}}"


rule py:
    output: "out/py/{{i}}.txt"
    params: scale=3
    script: "scripts/py.py"


rule run_block:
    output: "out/run/{{i}}.txt"
    run:
        with open(output[0], "w") as f:
            f.write(fmt(wildcards.i) + Style().join(["a", "b"]) + helpers.label() + "\\n")


rule down:
    input: "out/sh/{{i}}.txt", "out/run/{{i}}.txt"
    output: "out/down/{{i}}.txt"
    shell: "cat {{input}} > {{output}}"
"""

FILES = {
    "helpers.py": "UNIT = 'cm'\n\ndef label():\n    return UNIT\n",
    "scripts/py.py": (
        "import mypkg\nfrom helpers import label\n"
        "open(snakemake.output[0], 'w').write(f'{mypkg.VALUE * snakemake.params.scale}"
        "{label()}\\n')\n"
    ),
    "mypkg/__init__.py": "from .sub import VALUE\n",
    "mypkg/sub.py": "VALUE = 7\n",
}


def build(site: Path, n: int) -> None:
    site.mkdir(parents=True)
    (site / "Snakefile").write_text(SNAKEFILE.format(n=n))
    for rel, text in FILES.items():
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text(text)


def fresh(source: Path, to: Path) -> Path:
    shutil.rmtree(to, ignore_errors=True)
    shutil.copytree(source, to, ignore=shutil.ignore_patterns(".snakemake", "out"))
    return to


def snakemake(site: Path, *args: str) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "snakemake", "--executor", "sticky", "-j", "2", "--nocolor"]
    started = time.perf_counter()
    done = subprocess.run([*cmd, *args], cwd=site, capture_output=True, text=True)
    seconds = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"failed in {site}:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}")
    return seconds, done.stdout + done.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--jobs", type=int, default=None, help="total jobs (default 2000)")
    parser.add_argument("--pairs", type=int, default=None)
    args = parser.parse_args()
    jobs = args.jobs or (200 if args.quick else 2000)
    pairs = args.pairs or (1 if args.quick else 3)
    n = jobs // 4
    root = WORK / "checkpoint_keys"
    shutil.rmtree(root, ignore_errors=True)
    source = root / "source"
    build(source, n)
    store = str(root / "store")
    site_a = fresh(source, root / "site-a")
    full_s, out = snakemake(site_a, "--sticky-checkpoints", store)
    stored = re.search(r"checkpoints: (\d+) job\(s\) restored, (\d+) stored", out)
    print(f"site A: {full_s:.1f} s, stored {stored.group(2) if stored else '?'} jobs")
    restored_s, dry_s, per_job_ms, restored_counts = [], [], [], []
    for i in range(pairs):
        seconds, out = snakemake(fresh(source, root / f"site-b{i}"), "--sticky-checkpoints", store)
        restored_s.append(seconds)
        m = re.search(r"checkpoints: (\d+) provenance key\(s\) in [\d.]+ s \(([\d.]+) ms", out)
        if m:
            per_job_ms.append(float(m.group(2)))
        counts = re.search(r"checkpoints: (\d+) job\(s\) restored", out)
        restored_counts.append(int(counts.group(1)) if counts else -1)
        seconds, _ = snakemake(fresh(source, root / f"site-c{i}"), "--dry-run", "--quiet")
        dry_s.append(seconds)
        print(
            f"pair {i + 1}: restored {restored_s[-1]:.2f} s ({restored_counts[-1]} jobs, key "
            f"{per_job_ms[-1] if per_job_ms else '?'} ms/job), dry run {dry_s[-1]:.2f} s"
        )
    ratio = median(restored_s) / median(dry_s)
    key_ms = median(per_job_ms) if per_job_ms else None
    print(f"key per job: {key_ms} ms (goal < 1); restored / dry run: {ratio:.2f} (goal <= 1.3)")
    write_result(
        "checkpoint_keys",
        {
            "jobs": 4 * n,
            "quick": args.quick,
            "pairs": pairs,
            "site_a_full_s": round(full_s, 2),
            "restored_s": [round(x, 3) for x in restored_s],
            "dry_run_s": [round(x, 3) for x in dry_s],
            "restored_counts": restored_counts,
            "key_ms_per_job": per_job_ms,
            "key_ms_per_job_median": key_ms,
            "target_key_ms_below": 1.0,
            "restored_over_dry_run": round(ratio, 3),
            "target_restored_over_dry_run_at_most": 1.3,
        },
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
