"""Write docs/cli.md from the command line's own help: `python docs/make_cli_reference.py`.

`tests/test_docs.py` checks that the page is current.
"""

import argparse
import os
from pathlib import Path

from perfmodel._cli.app import build_parser

PAGE = Path(__file__).resolve().parent / "cli.md"


def reference() -> str:
    os.environ["COLUMNS"] = "100"  # argparse wraps help text to the terminal width
    parser = build_parser()
    actions = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
    lines = [
        "# Command-line reference",
        "",
        "Every command prints a table by default and takes `--json` where it answers "
        "with numbers. Errors in what you give it exit with status 2 and one line; a fit "
        "the optimiser cannot make exits with status 1.",
        "",
        "<!-- no-test -->",
        "```text",
        parser.format_help().rstrip(),
        "```",
    ]
    for name, sub in actions[0].choices.items():
        lines += ["", f"## perfmodel {name}", "", "<!-- no-test -->", "```text"]
        lines += [sub.format_help().rstrip(), "```"]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    PAGE.write_text(reference())
    print(f"wrote {PAGE}")
