"""What every command shares: one-line errors with documented exit codes, JSON or rich output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from typing import Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.text import Text

from ..errors import AmemError

P = ParamSpec("P")
R = TypeVar("R")

console = Console()
error_console = Console(stderr=True)


def plain(*cells: object) -> list[Text]:
    """Table cells shown as written: text from users or an LLM is never read as rich markup."""
    return [Text(str(cell)) for cell in cells]

EXIT_CODES = (
    "Exit codes: 0 ok; 1 unexpected error; 2 bad command line; 3 invalid input or unknown note; "
    "4 schema mismatch; 5 database unreachable or failing; 6 local server could not be installed, started or stopped; "
    "7 a doctor check failed; 8 the LLM endpoint failed or is not configured; "
    "9 the note kept changing under concurrent writers (try again)."
)


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """An AmemError becomes one line on stderr and its exit code, never a traceback."""

    @functools.wraps(command)
    def run(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except AmemError as err:
            # The message may hold user text such as "[/]": it is printed as plain text, never as markup.
            error_console.print(Text.assemble(("error: ", "bold red"), str(err)), highlight=False, soft_wrap=True)
            raise typer.Exit(err.exit_code) from None

    return run


def print_json(data: Any) -> None:
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")
