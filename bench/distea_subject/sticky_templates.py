"""The sticky template of the subject: a vocabulary model built once per worker."""

from wflib import model

from stickyinvoc import template


@template("model")
def build():
    return model.Model(model.build_vocab(), dims=int(model.DIMS))
