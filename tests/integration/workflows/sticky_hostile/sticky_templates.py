"""Templates of the hostile workflow: the same state, run in the two isolation modes."""

import json  # noqa: F401 - loaded by the template: a module scripts may monkeypatch
import logging  # noqa: F401

from stickyinvoc import template


@template("warm", isolation="direct")
def warm():
    return {"built": True}


@template("forked")  # fork: the default
def forked():
    return {"built": True}
