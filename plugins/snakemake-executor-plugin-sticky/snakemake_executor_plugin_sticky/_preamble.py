"""What Snakemake's ``script:`` puts in front of a Python script, and the script compiled
behind it (used by the worker to run it, and by the executor to find a syntax error before
any template is built)."""

from typing import Any

PREAMBLE = (
    "######## snakemake preamble start (automatically inserted, do not edit) ########\n"
    "pass  # (a sticky invocation: the worker gives the script its globals directly)\n"
    "######## snakemake preamble end #########\n"
)
"""The three lines Snakemake's ``script:`` puts before a Python script's source. Its middle
line is a statement, as Snakemake's (the code that loads the ``snakemake`` object): so a
``from __future__`` import in the script is a syntax error, and a docstring is not the
module's ``__doc__``, as under ``--executor local``."""


def compile_script(source: str, script_path: str) -> Any:
    """The script's code with the line numbers it has in Snakemake's temporary script (after
    the preamble's three lines); :meth:`._isolation.ProcessSnapshot.enter_script` gives it the
    temporary file's name. A syntax error names the line of the script itself."""
    offset = PREAMBLE.count("\n")
    try:
        return compile(PREAMBLE + source, script_path, "exec")
    except SyntaxError as e:
        for attr in ("lineno", "end_lineno"):
            line = getattr(e, attr, None)
            if isinstance(line, int) and line > offset:
                setattr(e, attr, line - offset)
        raise
