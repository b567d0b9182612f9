"""Every command in the README and the docs runs as written (issue 31): each fenced shell block
of a tracked Markdown file is marked runnable, and run here in a fresh copy of the repository
with a fresh HOME, or marked as an illustration with its reason (tests/docblocks.py has the
markers and their options). Blocks run in the environment the README's first command makes,
itself run as written in a new virtual environment; install blocks in a new one of their own.
"""

import pytest

from tests.docblocks import blocks, chains, every_block, failure, problems, shell_languages

pytestmark = pytest.mark.integration


def test_every_block_is_tagged_and_every_shell_block_is_classified():
    shells = shell_languages()
    found = every_block()
    assert len(found) > 50 and {b.file for b in found} >= {"README.md", "docs/quickstart.md"}
    errors = [p for b in found for p in problems(b, shells)]
    assert not errors, "\n".join(errors)


def test_exactly_one_block_sets_up_the_environment_and_it_is_the_readmes_first():
    setup = [c for c in chains() if c.has("sets up")]
    assert [c.id for c in setup] == [blocks("README.md")[0].id]


def test_every_file_marker_feeds_a_runnable_block():
    found = every_block()
    files = {(b.file, b.arg) for b in found if b.marker == "file"}
    fed = {(c.blocks[0].file, name) for c in chains(found) for name in c.files}
    assert files == fed, files - fed


def _params():
    for chain in chains():
        marks = [pytest.mark.slow] + ([pytest.mark.slurm] if chain.has("slurm") else [])
        yield pytest.param(chain, id=chain.id, marks=marks)


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("chain", _params())
def test_documented_block_runs_as_written(chain, docs_sandbox):
    result = docs_sandbox.run(chain)
    assert result.returncode == 0, failure(result)
    for path in chain.option("creates "):
        assert (result.start / path).exists(), f"{chain.id} did not leave {path} behind"
    for text in chain.option("prints "):
        assert text in result.output, f"{chain.id} did not print {text!r}:\n{result.output[-3000:]}"


FAILING = """\
<!-- file: data.txt -->
```text
42
```

<!-- runnable: new venv; in a new directory -->
```bash
test "$(cat data.txt)" = 42 && test -n "$VIRTUAL_ENV" && test "$HOME" != /root
cd sub 2>/dev/null || mkdir sub
```

<!-- runnable: continues -->
```bash
false
echo never
```
"""


def test_a_failing_block_fails_its_test_and_is_named(docs_sandbox):
    """The runner's own check: a block that exits non-zero fails, named, in a shell where the
    earlier block's files, directory and environment hold."""
    (chain,) = chains(blocks("x.md", FAILING))
    result = docs_sandbox.run(chain, timeout=120)
    assert result.returncode == 1, result.output
    assert "never" not in result.output and (result.start / "sub").is_dir()
    assert "the documented block at x.md:13 failed (exit 1)" in failure(result)
