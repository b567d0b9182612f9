"""Reusable Snakemake rules shipped with ``nbrewind`` as package data.

In a Snakefile, for ``include:`` (or as the ``snakefile:`` of a ``module``)::

    from nbrewind.rules import smk

    include: smk("notebook")
"""

from importlib.resources import files


def smk(name: str) -> str:
    """The absolute path of the packaged rule module NAME (``"notebook"`` or ``"notebook.smk"``)."""
    return str(files(__name__).joinpath(name.removesuffix(".smk") + ".smk"))
