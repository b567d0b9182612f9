"""``stickyinvoc.state()`` outside a worker: the create-destroy baseline path."""

import types
from pathlib import Path

import pytest

import stickyinvoc
import stickyinvoc._access as access
from stickyinvoc import TemplateError, TemplateNotFoundError


class Resources(dict):
    """Stands in for Snakemake's ResourceList: a namedlist with ``get``."""


def fake_job(scriptdir: Path, **resources: str) -> types.SimpleNamespace:
    return types.SimpleNamespace(rule="r", resources=Resources(resources), scriptdir=str(scriptdir))


@pytest.fixture(autouse=True)
def fresh_states(monkeypatch):
    monkeypatch.setattr(access, "_local_states", {})
    monkeypatch.setattr(access, "_worker_lookup", None)
    monkeypatch.delenv("STICKY_TEMPLATES", raising=False)


@pytest.fixture
def workflow_dir(tmp_path: Path) -> Path:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "sticky_templates.py").write_text(
        "from stickyinvoc import template\nBUILDS = []\n"
        "@template('m')\ndef m():\n    BUILDS.append(1)\n    return {'n': len(BUILDS)}\n"
    )
    return tmp_path


def test_state_is_built_in_process_once(workflow_dir):
    job = fake_job(workflow_dir / "scripts", sticky="m")
    first = stickyinvoc.state(job)
    assert first == {"n": 1}
    assert stickyinvoc.state(job) is first


def test_explicit_template_name_overrides_the_resource(workflow_dir):
    assert stickyinvoc.state(fake_job(workflow_dir / "scripts"), template="m") == {"n": 1}


def test_job_without_template_gets_an_actionable_error(workflow_dir):
    with pytest.raises(TemplateError, match='add resources: sticky="NAME"'):
        stickyinvoc.state(fake_job(workflow_dir / "scripts"))


def test_unknown_template_names_the_file_and_what_it_declares(workflow_dir):
    with pytest.raises(TemplateNotFoundError, match="declared templates: m"):
        stickyinvoc.state(fake_job(workflow_dir / "scripts", sticky="nope"))


def test_no_templates_file_says_where_it_looked(tmp_path):
    with pytest.raises(TemplateError, match="no sticky_templates.py found"):
        stickyinvoc.state(fake_job(tmp_path, sticky="m"))


def test_inside_a_worker_the_warm_state_is_returned(monkeypatch, tmp_path):
    monkeypatch.setattr(access, "_worker_lookup", lambda name: f"warm {name}")
    assert stickyinvoc.in_worker()
    assert stickyinvoc.state(fake_job(tmp_path, sticky="m")) == "warm m"
