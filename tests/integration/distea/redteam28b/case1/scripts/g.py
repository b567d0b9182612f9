import distea.autotrace  # noqa: F401

# isort: split
import sqlite3

con = sqlite3.connect(snakemake.config["db"])
rows = con.execute("select k, v from t order by k").fetchall()
open(snakemake.output[0], "w").write(repr(rows) + "\n")
