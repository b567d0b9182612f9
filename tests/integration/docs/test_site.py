"""The docs site builds with ``mkdocs build --strict``: every nav entry, link and anchor
resolves, and the API reference renders from the docstrings."""

import os
import subprocess
import sys

import pytest

from tests.conftest import REPO

pytestmark = pytest.mark.integration


def test_site_builds_strict(tmp_path):
    site = tmp_path / "site"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mkdocs",
            "build",
            "--strict",
            "-f",
            REPO / "mkdocs.yml",
            "-d",
            site,
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-5000:]
    settings = (site / "settings" / "index.html").read_text()
    assert "--sticky-max-workers" in settings and "--storage-ckpt-root" in settings
    api = (site / "api" / "stickyinvoc" / "index.html").read_text()
    assert "Return the warm state of this job" in api
    assert (site / "troubleshooting" / "index.html").is_file()
