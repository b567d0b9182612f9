"""The gates themselves: CI runs the README's test command and nothing else, and the unit tier
refuses processes and sockets."""

import ast
import importlib.util
import multiprocessing
import os
import re
import socket
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

from tests.conftest import (
    HYPOTHESIS_PROFILES,
    UTF8_INTERVALS,
    examples,
    hypothesis_profile_named,
    hypothesis_utf8_tables,
    scaled_examples,
)

REPO = Path(__file__).resolve().parents[2]


def _readme_command() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "readme_command", REPO / ".ci" / "readme_command.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_ci_runs_the_readme_command_and_adds_no_step_of_its_own():
    """Every line of .ci/run that does something: reading the README's command and running it.
    A step added to .ci/run alone (or a README command that CI skips) fails here."""
    lines = [
        line.strip()
        for line in (REPO / ".ci" / "run").read_text().splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]
    assert lines == [
        "set -euo pipefail",
        'cd "$(dirname "$0")/.."',
        "export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore",
        'command="$(python3 .ci/readme_command.py README.md)"',
        "printf '+ %s\\n' \"$command\"",
        'exec bash -euo pipefail -c "$command"',
    ]
    assert os.access(REPO / ".ci" / "run", os.X_OK)


def test_the_readme_command_installs_everything_and_runs_every_gate():
    command = _readme_command().extract_command((REPO / "README.md").read_text())
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    installed = re.search(r'python3 -m pip install -e "\.\[([a-z,]+)\]"', command)
    assert installed is not None, command
    assert set(installed[1].split(",")) == set(project["optional-dependencies"]), "every extra"
    assert command.startswith("python3 -m pip install torch==")
    steps = [s.strip(" \\\n") for s in command.replace("\\\n", " ").split("&&")]
    for gate in ("nbrewind install-kernels", "ruff check .", "ruff format --check .", "mypy"):
        assert gate in steps, gate
    assert steps.index("mypy") > steps.index("ruff check .")
    # The console script, as a user types it (python3 -m pytest would hide import problems).
    assert steps[-1] == "STICKY_REQUIRE_SLURM=1 pytest"


@pytest.mark.parametrize(
    "readme, problem",
    [
        ("# No markers\n```bash\npytest\n```\n", "must hold the line"),
        (
            "<!-- test-command: .ci/run runs the block below verbatim -->\n"
            "```bash\nruff check .\n```\n```bash\npytest\n```\n<!-- /test-command -->\n",
            "exactly one",
        ),
        (
            "<!-- test-command: .ci/run runs the block below verbatim -->\n"
            "pytest\n<!-- /test-command -->\n",
            "exactly one",
        ),
    ],
)
def test_a_readme_without_one_marked_command_is_refused_with_the_fix(readme, problem):
    module = _readme_command()
    with pytest.raises(module.CommandError, match=problem):
        module.extract_command(readme)


def test_the_unit_tier_refuses_processes_and_sockets(no_processes_or_sockets):
    """The guard of tests/unit/conftest.py is on for every unit test: without it these would
    start a process or bind a socket."""
    with pytest.raises(RuntimeError, match="move this test to tests/integration"):
        subprocess.run(["true"], check=True)
    with pytest.raises(RuntimeError, match="move this test to tests/integration"):
        os.system("true")
    with socket.socket() as s, pytest.raises(RuntimeError, match="socket.bind"):
        s.bind(("127.0.0.1", 0))
    process = multiprocessing.get_context("spawn").Process(target=print)
    with pytest.raises(RuntimeError, match="multiprocessing"):
        process.start()
    assert no_processes_or_sockets == [
        "starts a process (subprocess)",
        "starts a process (os.system)",
        "listens on a socket (socket.bind)",
        "starts a process (multiprocessing)",
    ]
    no_processes_or_sockets.clear()  # seen and expected: the test itself must not fail


def test_socket_pairs_stay_allowed():
    """asyncio's event loop wakes itself through a socket pair: no network, no process."""
    a, b = socket.socketpair()
    with a, b:
        a.sendall(b"x")
        assert b.recv(1) == b"x"


def test_a_module_probing_the_network_when_imported_is_not_the_tests_doing(
    tmp_path, monkeypatch, no_processes_or_sockets
):
    """urllib3 binds ``::1`` when imported, once per session, whichever test imports it first:
    import-time side effects are allowed, the same call from the test itself is not."""
    (tmp_path / "probing_module.py").write_text(
        "import socket\n"
        "with socket.socket() as s:\n"
        "    s.bind(('127.0.0.1', 0))\n"
        "def probe():\n"
        "    with socket.socket() as s:\n"
        "        s.bind(('127.0.0.1', 0))\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    module = importlib.import_module("probing_module")
    monkeypatch.delitem(sys.modules, "probing_module")
    with pytest.raises(RuntimeError, match="socket.bind"):
        module.probe()
    assert no_processes_or_sockets == ["listens on a socket (socket.bind)"]
    no_processes_or_sockets.clear()  # seen and expected: the test itself must not fail


def literal_example_counts(source: str, filename: str) -> list[str]:
    """Where ``source`` sets hypothesis' ``max_examples`` other than through
    ``tests.conftest.examples()``, or loads a profile of its own: ``FILE:LINE: what``."""
    found = []
    for node in ast.walk(ast.parse(source, filename)):
        if not isinstance(node, ast.Call):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else None
        name = node.func.id if isinstance(node.func, ast.Name) else name
        if name in ("register_profile", "load_profile"):
            found.append(
                f"{filename}:{node.lineno}: {name}() (the profiles live in tests/conftest)"
            )
        for kw in node.keywords:
            value = kw.value
            scaled = (
                isinstance(value, ast.Call)
                and isinstance(value.func, ast.Name)
                and value.func.id == "examples"
            )
            if kw.arg == "max_examples" and not scaled:
                found.append(
                    f"{filename}:{node.lineno}: max_examples={ast.unparse(value)} "
                    f"(write max_examples=examples(N), N the full count)"
                )
    return found


def test_every_unit_property_test_follows_the_hypothesis_profile():
    """A literal count would run at its full size in the unit tier, whatever the profile: every
    count goes through examples(), which the profile scales (bench/property_counts.py runs
    the full counts)."""
    offences = []
    for path in sorted((REPO / "tests" / "unit").rglob("*.py")):
        offences += literal_example_counts(path.read_text(), str(path.relative_to(REPO)))
    assert offences == []
    assert len(list((REPO / "tests" / "unit").rglob("*.py"))) > 50  # the scan saw the tier


def test_the_scan_finds_literal_counts_and_profiles_of_a_tests_own():
    source = (
        "from hypothesis import settings\n"
        "@settings(max_examples=500, deadline=None)\n"
        "def a(): ...\n"
        "@hypothesis.settings(max_examples=examples(500))\n"
        "def b(): ...\n"
        "s = settings(parent=settings.default, max_examples=N * 2)\n"
        "settings.load_profile('ci')\n"
    )
    assert literal_example_counts(source, "t.py") == [
        "t.py:2: max_examples=500 (write max_examples=examples(N), N the full count)",
        "t.py:6: max_examples=N * 2 (write max_examples=examples(N), N the full count)",
        "t.py:7: load_profile() (the profiles live in tests/conftest)",
    ]


def test_the_unit_profile_is_loaded_unless_another_is_asked_for(request):
    """What HYPOTHESIS_PROFILE (or --hypothesis-profile) names is loaded; unset, the unit
    profile, whose counts are a tenth of the declared ones."""
    asked = request.config.getoption("hypothesis_profile") or hypothesis_profile_named(os.environ)
    assert settings.default.max_examples == HYPOTHESIS_PROFILES[asked]
    assert hypothesis_profile_named({}) == "unit"
    assert hypothesis_profile_named({"HYPOTHESIS_PROFILE": ""}) == "unit"
    assert hypothesis_profile_named({"HYPOTHESIS_PROFILE": "full"}) == "full"
    # Not hypothesis' own "ci" profile (derandomized: the same few examples on every run).
    assert settings.default.deadline is None and settings.default.derandomize is False
    assert settings.default.print_blob is True


def test_a_profile_that_does_not_exist_is_one_line_naming_the_choices():
    with pytest.raises(pytest.UsageError) as raised:
        hypothesis_profile_named({"HYPOTHESIS_PROFILE": "fast"})
    assert str(raised.value) == (
        "HYPOTHESIS_PROFILE=fast: no such hypothesis profile; use one of unit, full (unset: unit)"
    )


@pytest.mark.parametrize(
    "profile, runs",
    [("unit", [30, 15, 6, 4, 3, 3, 2, 1]), ("full", [300, 150, 60, 40, 8, 5, 2, 1])],
)
def test_declared_counts_scale_with_the_profile(profile, runs):
    declared = [300, 150, 60, 40, 8, 5, 2, 1]
    assert [scaled_examples(n, HYPOTHESIS_PROFILES[profile]) for n in declared] == runs
    assert examples(300) == scaled_examples(300, settings.default.max_examples)


def test_the_utf8_table_given_to_hypothesis_is_what_utf8_encodes():
    """tests/conftest.py hands hypothesis the characters UTF-8 encodes (st.text()'s alphabet)
    instead of letting it encode every code point one by one on a fresh clone: the table must
    be exactly those characters, and hypothesis must draw from exactly it."""
    (first, last_before), (first_after, last) = UTF8_INTERVALS
    assert first == 0 and last == sys.maxunicode
    # Every character of both intervals encodes (one encode of each interval's whole text)...
    for low, high in UTF8_INTERVALS:
        "".join(map(chr, range(low, high + 1))).encode("utf-8")
    # ...and no character between them does.
    for code in range(last_before + 1, first_after):
        with pytest.raises(UnicodeEncodeError):
            chr(code).encode("utf-8")
    from hypothesis.internal.charmap import intervals_from_codec

    drawn = intervals_from_codec("utf-8")
    if isinstance(drawn, tuple):  # hypothesis >= 6.16x: (encodable, not round-tripping)
        drawn, lossy = drawn
        assert lossy.intervals == ()
    assert drawn.intervals == UTF8_INTERVALS
    assert any(path.exists() for path in hypothesis_utf8_tables())


def test_a_unit_test_that_leaks_a_file_fails(request):
    """pyproject's filterwarnings shows ResourceWarnings; tests/unit/conftest.py makes them
    errors for every unit test (a file left to the garbage collector fails its test)."""
    marks = [a for m in request.node.iter_markers("filterwarnings") for a in m.args]
    assert "error::ResourceWarning" in marks
