"""The lifecycle test workflow's only template: an empty state."""

from stickyinvoc import template


@template("plain", isolation="direct")  # the worker process's own lifecycle
def plain():
    return {}
