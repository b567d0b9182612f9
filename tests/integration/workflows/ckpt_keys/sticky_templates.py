"""The test workflow's template: its value comes from a workflow-local helper module."""

import modelhelper

from stickyinvoc import template


@template("model")
def model():
    return {"value": modelhelper.VALUE}
