"""Package of the tabletl subject: tables and the sample sheet (``schema``), cleaning steps
registered by ``__init_subclass__`` (``steps``), numeric helpers (``stats``) and a command line
run in child processes (``cli``)."""
