"""``ckpt://`` queries: what is a valid one, and the store name it stands for.

A query is ``ckpt://`` followed by a relative, normalised path (``ckpt://results/a.txt``).
The path is the query's name in the store and its place under the local storage prefix, so
it must not escape that prefix (no leading ``/``, no ``..``) and must have one spelling only
(no ``.`` or empty parts): ``ckpt://a/./b`` and ``ckpt://a/b`` would otherwise be two names
for one local file.
"""

from typing import Optional

SCHEME = "ckpt://"


def invalid_reason(query: str) -> Optional[str]:
    """Why ``query`` is not a valid ``ckpt://`` query, or None if it is.

    Wildcards (``{sample}``) are plain characters here: Snakemake fills them in later.
    """
    if not query.startswith(SCHEME):
        return f"a ckpt query starts with {SCHEME!r}, e.g. 'ckpt://results/model.bin'"
    path = query[len(SCHEME) :]
    if not path:
        return "the path after 'ckpt://' is empty; name a file, e.g. 'ckpt://results/a.txt'"
    if path.startswith("/"):
        return (
            "the path is absolute; store paths are relative to the store "
            "(write 'ckpt://results/a.txt', or with --default-storage-prefix use relative "
            "output paths)"
        )
    if "\0" in path:
        return "the path contains a NUL character"
    parts = path.split("/")
    if ".." in parts:
        return "the path contains '..'; a store path cannot point outside the store"
    if "" in parts or "." in parts:
        return "the path has an empty or '.' component; write it normalised (e.g. 'a/b.txt')"
    return None


def name_of(query: str) -> str:
    """The store name (and local suffix) of a query: its path without the scheme."""
    return query.removeprefix(SCHEME)
