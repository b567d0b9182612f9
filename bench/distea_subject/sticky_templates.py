"""The sticky template of the subject: a vocabulary model built once per worker."""

from stickyinvoc import template

from wflib import model


@template("model")
def build():
    return model.Model(model.build_vocab(), dims=int(model.DIMS))
