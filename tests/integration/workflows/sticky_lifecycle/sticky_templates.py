"""The lifecycle test workflow's only template: an empty state."""

from stickyinvoc import template


@template("plain")
def plain():
    return {}
