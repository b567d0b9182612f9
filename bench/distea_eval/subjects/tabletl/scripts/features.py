import distea.autotrace  # noqa: F401

# isort: split
import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor

from etl import stats
from etl.schema import Table
from etl.steps import VALUE_COLUMNS


def main():
    table = Table.from_csv(snakemake.input[0])
    window = snakemake.config["agg"]["window"]
    jobs = [(name, table.column(name), window) for name in VALUE_COLUMNS]
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        features = dict(pool.map(stats.column_features, jobs))
    with open(snakemake.output[0], "w") as f:
        json.dump({"rows": len(table.rows), "columns": features}, f, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
