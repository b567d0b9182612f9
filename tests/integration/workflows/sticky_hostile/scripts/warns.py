import warnings

import probe

with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
with open(snakemake.log[0], "w") as log:
    warnings.showwarning = lambda message, category, *rest: log.write(
        f"{category.__name__}: {message}\n"
    )
    for _ in range(2):
        warnings.warn(f"shown once per location, job {snakemake.params.value}")  # noqa: B028
    warnings.warn("library-style", DeprecationWarning)  # noqa: B028
warnings.simplefilter("ignore")
warnings.filterwarnings("error", message="hostile.*")
