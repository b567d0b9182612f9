"""Reusable Snakemake rules shipped with ``distea`` as package data.

In a Snakefile, for ``include:`` (or as the ``snakefile:`` of a ``module``)::

    from distea.rules import smk

    include: smk("impact")
"""

from importlib.resources import files


def smk(name: str) -> str:
    """The absolute path of the packaged rule module NAME (``"impact"`` or ``"impact.smk"``)."""
    return str(files(__name__).joinpath(name.removesuffix(".smk") + ".smk"))
