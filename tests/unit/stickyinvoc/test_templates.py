"""Declaring, discovering, building and tearing down sticky templates."""

import textwrap
from pathlib import Path

import pytest

from stickyinvoc import TemplateBuildError, TemplateError, declared_templates, find_templates_file
from stickyinvoc._templates import build_state, load_templates

TEMPLATES = textwrap.dedent(
    """
    import stickyinvoc
    from stickyinvoc import template

    EVENTS = []

    @template("model")
    def build_model():
        EVENTS.append("build")
        yield {"weights": [1, 2, 3]}
        EVENTS.append("teardown")

    @template
    def tokenizer():
        return "tok"

    @stickyinvoc.template(name="named")
    def f():
        return 1

    @template("broken")
    def broken():
        raise OSError("model file missing")

    def helper():
        return None
    """
)


@pytest.fixture
def templates_file(tmp_path: Path) -> Path:
    path = tmp_path / "sticky_templates.py"
    path.write_text(TEMPLATES)
    return path


def test_declared_templates_reads_names_without_running_the_file(templates_file):
    templates_file.write_text("import no_such_module_anywhere\n" + TEMPLATES)
    assert declared_templates(templates_file) == {
        "model": 9,
        "tokenizer": 15,
        "named": 19,
        "broken": 23,  # the def lines
    }


def test_load_templates_registers_every_form(templates_file):
    assert sorted(load_templates(templates_file)) == ["broken", "model", "named", "tokenizer"]


def test_generator_template_builds_once_and_tears_down_after_yield(templates_file):
    fn = load_templates(templates_file)["model"]
    built = build_state("model", fn)
    assert built.value == {"weights": [1, 2, 3]}
    assert built.build_seconds >= 0
    events = fn.__globals__["EVENTS"]
    assert events == ["build"]
    assert built.teardown() is None
    assert events == ["build", "teardown"]
    assert built.teardown() is None  # a second teardown does nothing
    assert events == ["build", "teardown"]


def test_plain_function_template_returns_its_state(templates_file):
    built = build_state("tokenizer", load_templates(templates_file)["tokenizer"])
    assert built.value == "tok" and built.teardown() is None


def test_build_error_carries_the_templates_own_traceback(templates_file):
    with pytest.raises(TemplateBuildError) as info:
        build_state("broken", load_templates(templates_file)["broken"])
    tb = info.value.formatted_traceback
    assert "OSError: model file missing" in tb
    assert str(templates_file) in tb
    assert "build_state" not in tb  # our frames are stripped
    assert "'broken' failed to build" in str(info.value)


def test_template_yielding_twice_reports_it_at_teardown(tmp_path):
    path = tmp_path / "t.py"
    path.write_text(
        "from stickyinvoc import template\n@template('x')\ndef x():\n    yield 1\n    yield 2\n"
    )
    built = build_state("x", load_templates(path)["x"])
    assert "yielded more than once" in built.teardown()


def test_template_name_must_be_a_string():
    from stickyinvoc import template

    with pytest.raises(TypeError, match="non-empty string"):
        template("")


def test_find_templates_file_searches_upwards(tmp_path, monkeypatch):
    monkeypatch.delenv("STICKY_TEMPLATES", raising=False)
    (tmp_path / "sticky_templates.py").write_text("")
    scripts = tmp_path / "workflow" / "scripts"
    scripts.mkdir(parents=True)
    assert find_templates_file(scripts) == tmp_path / "sticky_templates.py"


def test_find_templates_file_prefers_the_environment(tmp_path, monkeypatch):
    other = tmp_path / "elsewhere.py"
    monkeypatch.setenv("STICKY_TEMPLATES", str(other))
    assert find_templates_file(tmp_path) == other


def test_missing_templates_file_is_a_clear_error(tmp_path):
    with pytest.raises(TemplateError, match="does not exist"):
        load_templates(tmp_path / "nope.py")


def test_pilot_resources_are_read_from_literal_dicts(tmp_path):
    from stickyinvoc._templates import declared_resources

    path = tmp_path / "t.py"
    path.write_text(
        "from stickyinvoc import template\n"
        "@template('gpu', resources={'slurm_partition': 'gpu', 'gpu': 1})\ndef g(): ...\n"
        "@template('plain')\ndef p(): ...\n"
    )
    assert declared_resources(path) == {"gpu": {"slurm_partition": "gpu", "gpu": 1}}
    assert sorted(load_templates(path)) == ["gpu", "plain"]  # resources= is accepted at runtime


def test_non_literal_pilot_resources_are_an_error(tmp_path):
    from stickyinvoc._templates import declared_resources

    path = tmp_path / "t.py"
    path.write_text(
        "from stickyinvoc import template\nPART = 'gpu'\n"
        "@template('g', resources={'slurm_partition': PART})\ndef g(): ...\n"
    )
    with pytest.raises(TemplateError, match="line 3: resources= of template 'g' must be a literal"):
        declared_resources(path)


def test_isolation_mode_is_read_from_the_declaration(tmp_path):
    from stickyinvoc._templates import read_declarations

    path = tmp_path / "sticky_templates.py"
    path.write_text(
        "from stickyinvoc import template\n"
        "@template('a')\ndef a(): ...\n"
        "@template('b', isolation='fork')\ndef b(): ...\n"
        "@template('c', isolation='direct')\ndef c(): ...\n"
    )
    modes = {name: d.isolation for name, d in read_declarations(path).items()}
    assert modes == {"a": "fork", "b": "fork", "c": "direct"}  # fork: the default
    assert load_templates(path).keys() == {"a", "b", "c"}


def test_unknown_isolation_mode_is_one_clear_error(tmp_path):
    from stickyinvoc import template
    from stickyinvoc._templates import read_declarations

    path = tmp_path / "sticky_templates.py"
    path.write_text(
        "from stickyinvoc import template\n@template('x', isolation='thread')\ndef x(): ...\n"
    )
    with pytest.raises(TemplateError, match=r"line 2: isolation= of template 'x' is 'thread'; use"):
        read_declarations(path)
    with pytest.raises(TypeError, match="isolation must be one of 'fork', 'direct'"):
        template("x", isolation="spawn")
