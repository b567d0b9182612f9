import distea.autotrace  # noqa: F401

# isort: split
import glob
import json
import multiprocessing
import os

from etl import stats


def main():
    paths = sorted(glob.glob(os.path.join(snakemake.input[0], "*.csv")))
    scale = snakemake.config["agg"]["scale"]
    with multiprocessing.get_context("forkserver").Pool(2) as pool:
        parts = dict(pool.map(stats.summarise_part, [(p, scale) for p in paths]))
    with open(snakemake.output[0], "w") as f:
        json.dump({"group": snakemake.wildcards.g, "parts": parts}, f, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
