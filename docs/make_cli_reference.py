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
        "The command line keeps a cache in `$PERFMODEL_CACHE_DIR` (else "
        "`$XDG_CACHE_HOME/perfmodel`, else `~/.cache/perfmodel`): JAX's compiled functions "
        "(`jax/`), the draws behind each fit's intervals (`ensembles/`), the fit files whose "
        "bytes passed the schema (`checked/`), and a record of each `fit` and `demo` call "
        "(`answers/`). A repeat of the same call (the same arguments, folder, input bytes, "
        "perfmodel and JAX) prints and writes what the first did, in about 0.1 s, without "
        "fitting again; the fit file's `created` time is the repeat's own. "
        "`PERFMODEL_NO_CACHE=1` turns all of it off; deleting the folder is always safe.",
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
