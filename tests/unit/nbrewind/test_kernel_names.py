"""Which namespace names the kernel tracks: the user's, not IPython's history."""

import pytest

from nbrewind._observe import is_ipython_name


@pytest.mark.parametrize(
    "name",
    [
        "_",
        "__",
        "___",
        "_i",
        "_ii",
        "_iii",
        "_i7",
        "_12",
        "_oh",
        "_ih",
        "_dh",
        "__name__",
        "__builtins__",
    ],
)
def test_ipython_history_and_dunders_are_not_tracked(name):
    assert is_ipython_name(name)


@pytest.mark.parametrize("name", ["_tmp", "_cache", "_x1", "data", "i1", "_model_"])
def test_user_names_with_underscores_are_tracked(name):
    assert not is_ipython_name(name)
