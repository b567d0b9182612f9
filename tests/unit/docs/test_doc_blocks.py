"""The parser of documented blocks and their markers (tests/docblocks.py); the repository's own
blocks are checked and run by tests/integration/docs/test_runnable_blocks.py."""

import pytest

from tests.docblocks import Block, blocks, chains, problems, shell_languages


def test_the_shell_languages_come_from_pygments():
    shells = shell_languages()
    assert {"bash", "sh", "console", "shell-session", "zsh", "fish", "tcsh", "powershell"} <= shells
    assert not {"python", "text", "yaml"} & shells


MARKDOWN = """\
Intro.

<!-- illustration: a placeholder path -->
```bash
ls /nowhere
```

<!-- file: a.py -->
```python
print(1)
```

<!-- runnable: in a new directory; creates out.txt -->
```bash
python a.py > out.txt
```

<!-- runnable: continues; prints 1 -->
```console
$ cat out.txt
1
```

```
untagged
```

```zsh
echo unmarked
```

<!-- runnable: sometimes -->
```sh
true
```
"""


def test_the_parser_reads_markers_options_and_chains():
    found = blocks("x.md", MARKDOWN)
    assert [(b.lang, b.marker) for b in found] == [
        ("bash", "illustration"),
        ("python", "file"),
        ("bash", "runnable"),
        ("console", "runnable"),
        ("", None),
        ("zsh", None),
        ("sh", "runnable"),
    ]
    assert found[0].arg == "a placeholder path" and found[0].line == 4
    assert found[2].options() == ["in a new directory", "creates out.txt"]
    assert found[3].commands() == "cat out.txt\n"
    (chain, last) = chains(found)
    assert [b.line for b in chain.blocks] == [14, 19] and chain.files == {"a.py": "print(1)\n"}
    assert chain.option("in ") == ["a new directory"] and chain.option("prints ") == ["1"]
    assert last.id == "x.md:33"
    shells = shell_languages()
    errors = [p for b in found for p in problems(b, shells)]
    assert [e.split(":")[1] for e in errors] == ["24", "28", "33"], errors
    assert "without a language" in errors[0] and "needs <!-- runnable -->" in errors[1]
    assert "unknown runnable option 'sometimes'" in errors[2]


@pytest.mark.parametrize("lang", ["snakemake", "python", "yaml", "text"])
def test_non_shell_blocks_need_no_marker(lang):
    assert problems(Block("x.md", 1, lang, "x\n"), shell_languages()) == []
    assert problems(Block("x.md", 1, "klingon", "x\n"), shell_languages())
