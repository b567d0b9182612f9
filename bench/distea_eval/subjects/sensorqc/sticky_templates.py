"""The sticky template of sensorqc: a detector built once per worker."""

from qclib import model

from stickyinvoc import template


@template("detector")
def build():
    return model.Detector(model.reference_limits(), scale=1.0)
