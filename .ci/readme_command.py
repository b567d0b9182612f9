"""The README's test command: the one fenced ``bash`` block between the two markers below.

``.ci/run`` runs what this prints, verbatim; tests/unit/test_gates.py checks that the README
holds exactly one such block and that ``.ci/run`` runs nothing else. Standard library only:
it runs before anything is installed.
"""

import re
import sys
from pathlib import Path

BEGIN = "<!-- test-command: .ci/run runs the block below verbatim -->"
END = "<!-- /test-command -->"
_FENCE = re.compile(r"\A\s*```bash\n(?P<body>.*?)\n```\s*\Z", re.S)


class CommandError(ValueError):
    """The README does not hold exactly one marked test command."""


def extract_command(readme: str) -> str:
    """The shell command between the markers (lines joined by ``\\`` kept as written)."""
    if readme.count(BEGIN) != 1 or readme.count(END) != 1:
        raise CommandError(
            f"README.md must hold the line {BEGIN!r} once and {END!r} once "
            f"(found {readme.count(BEGIN)} and {readme.count(END)}): put them around the "
            "fenced bash block of the test command"
        )
    inner = readme.split(BEGIN, 1)[1].split(END, 1)[0]
    fence = _FENCE.match(inner)
    if fence is None or not fence["body"].strip() or "```" in fence["body"]:
        raise CommandError(
            "between the test-command markers of README.md there must be exactly one "
            "non-empty ```bash fenced block and nothing else"
        )
    return fence["body"].strip()


def main(argv: list[str]) -> int:
    path = Path(argv[1] if len(argv) > 1 else "README.md")
    try:
        print(extract_command(path.read_text()))
    except (OSError, CommandError) as e:
        print(f".ci/readme_command.py: {path}: {e}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
