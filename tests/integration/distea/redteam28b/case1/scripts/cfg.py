import distea.autotrace  # noqa: F401

# isort: split
op = snakemake.wildcards.op
m = snakemake.config[op]
if op == "values":
    r = sum(m.values())
elif op == "copy":
    d = m.copy()
    r = d["p"] + d["q"]
elif op == "or":
    d = m | {"extra": 0}
    r = d["p"] + d["q"]
elif op == "str":
    r = str(m)
elif op == "keys":
    r = sorted(m.keys())
open(snakemake.output[0], "w").write(f"{r}\n")
