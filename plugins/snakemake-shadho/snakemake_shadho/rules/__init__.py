"""Reusable Snakemake rules shipped with ``snakemake_shadho`` as package data.

In a Snakefile, for ``include:`` (or as the ``snakefile:`` of a ``module``)::

    from snakemake_shadho.rules import smk

    include: smk("hpo")
"""

from importlib.resources import files


def smk(name: str) -> str:
    """The absolute path of the packaged rule module NAME (``"hpo"`` or ``"hpo.smk"``)."""
    return str(files(__name__).joinpath(name.removesuffix(".smk") + ".smk"))
