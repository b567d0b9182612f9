"""``_shell_prefix``: what a ``shell.prefix()`` does to a script, as a difference of what the
script's interpreter sees (pure), and given to an invocation (running the prefix: in
tests/integration/snakemake_executor_plugin_sticky/test_shell_prefix.py)."""

import os

from snakemake_executor_plugin_sticky._shell_prefix import PrefixEffects, apply, effects


def seen(env, cwd="/w", umask=0o022):
    return {"env": env, "cwd": cwd, "umask": umask}


def test_the_difference_is_what_was_set_changed_and_unset():
    base = seen({"A": "1", "B": "2", "_": "/bin/python"})
    after = seen({"A": "1", "B": "3", "C": "new", "_": "/usr/bin/python"}, "/tmp", 0o027)
    found = effects(base, after)
    assert found == PrefixEffects({"B": "3", "C": "new"}, "/tmp", 0o027)
    assert effects(base, seen({"A": "1", "_": "x"})).environ == {"B": None}
    assert not effects(base, base)


def test_apply_sets_unsets_and_moves(tmp_path, monkeypatch):
    monkeypatch.setenv("STICKY_GONE", "1")
    monkeypatch.chdir(os.getcwd())
    mask = os.umask(0o022)
    try:
        apply(PrefixEffects({"STICKY_SET": "v", "STICKY_GONE": None}, str(tmp_path), 0o077))
        assert os.environ["STICKY_SET"] == "v" and "STICKY_GONE" not in os.environ
        assert os.getcwd() == str(tmp_path)
        assert os.umask(0o022) == 0o077
    finally:
        os.umask(mask)
        os.environ.pop("STICKY_SET", None)
