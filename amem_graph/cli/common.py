"""What every command shares: one-line errors with documented exit codes, JSON or rich output."""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, ParamSpec, TypeVar

import typer
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Column
from rich.text import Text

from ..errors import AmemError
from ..maintenance.warmup import WARM_UP_S

if TYPE_CHECKING:
    from ..api import AgenticMemory

P = ParamSpec("P")
R = TypeVar("R")

console = Console()
error_console = Console(stderr=True)


SHORT_ID = 8  # characters of an id that tables show; commands that take a note id accept them
TABLE_TEXT_LIMIT = 400  # characters of a text that a table cell shows; `get` and --json show all of it


def plain(*cells: object) -> list[Text]:
    """Table cells shown as written: text from users or an LLM is never read as rich markup."""
    return [Text(str(cell)) for cell in cells]


def text_column(header: str, *, min_width: int | None = None, max_width: int | None = None) -> Column:
    """Free text (content, reasons, summaries): it takes the width the other columns leave, wraps between
    words and folds a word too long for it, so that a narrow terminal never cuts it. Rich narrows the widest
    column first, so the text keeps the most room; a `min_width` it cannot meet widens the table past the
    terminal, which then crops it."""
    return Column(header, min_width=min_width, max_width=max_width, overflow="fold")


def value_column(header: str) -> Column:
    """A short value (a number, a time, a short id) on one line, so that the text columns give way first."""
    return Column(header, no_wrap=True, overflow="fold")


def short_id(value: str) -> str:
    return value[:SHORT_ID]


def flat(text: str, limit: int = TABLE_TEXT_LIMIT) -> str:
    """Text on one line for a table cell; past `limit` it says how much is left out, at a word boundary."""
    words = " ".join(text.split())
    if len(words) <= limit:
        return words
    kept = words[:limit].rsplit(" ", 1)[0] or words[:limit]
    return f"{kept} [+{len(words) - len(kept)} characters]"

EXIT_CODES = (
    "Exit codes: 0 ok; 1 unexpected error; 2 bad command line; 3 invalid input, unknown note or a tenant that holds nothing; "
    "4 schema mismatch; 5 database unreachable or failing; 6 local server could not be installed, started or stopped; "
    "7 a doctor check failed; 8 the LLM endpoint failed or is not configured; "
    "9 the note kept changing under concurrent writers (try again); 10 `check` found broken rules."
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


def choices(name: str, values: Sequence[str]) -> type[StrEnum]:
    """An option's closed set of values, made from the engine's own list: typer refuses any other value as a
    bad command line (exit 2) and lists the valid ones in --help."""
    return StrEnum(name, {value: value for value in values})


def print_json(data: Any, also_to: Path | None = None) -> None:
    """`data` as JSON on standard output; with `also_to` (a benchmark's --json PATH), in that file too."""
    if also_to:
        also_to.write_text(json.dumps(data, indent=2) + "\n")
    sys.stdout.write(json.dumps(data, indent=2, default=str, ensure_ascii=False) + "\n")


WarmUpOption = Annotated[float, typer.Option(
    "--warm-up", min=0, help="Seconds of the engine's hot path on a scratch tenant, so that the first real calls "
                             "run at steady-state speed (0: none)")]


def warm(memory: AgenticMemory, seconds: float = WARM_UP_S) -> None:
    """`memory.warm_up(seconds)`, said on the console (nothing for 0 seconds)."""
    if seconds > 0:
        done = memory.warm_up(seconds)
        console.print(f"Warmed up: {done.rounds} rounds of the engine's calls in {done.seconds:.1f} s.")


class RateColumn(ProgressColumn):
    def render(self, task: Task) -> Text:
        return Text(f"{task.speed:.1f}/s" if task.speed else "–/s")


@contextmanager
def progress(total: int, what: str) -> Iterator[Callable[..., None]]:
    """A progress bar on standard error (standard output stays for the report); yields its `advance(n=1)`."""
    columns = (TextColumn(what), BarColumn(), MofNCompleteColumn(), RateColumn(), TimeRemainingColumn())
    with Progress(*columns, console=Console(stderr=True), transient=False) as bar:
        yield functools.partial(bar.advance, bar.add_task("", total=total))


class HelpGroup(typer.core.TyperGroup):
    """The top-level group: once typer has built the command tree (its completion options included), its help is
    made to read as prose at any width (`plain_help`)."""

    def main(self, *args: Any, **kwargs: Any) -> Any:
        plain_help(self)
        return super().main(*args, **kwargs)


def plain_help(command: Any) -> None:
    """A command's help and its options' as a person reads them: each paragraph one line (the terminal wraps it, not
    the docstring's line breaks), flags without a type, values named by what they hold (TEXT, INTEGER, the choices),
    arguments by their name in capitals. Every subcommand's too."""
    command.help = _unwrapped(command.help)
    if command.short_help is None and command.help:
        command.short_help = command.help.split("\n\n")[0]
    ctx = typer.Context(command)
    help_option = command.get_help_option(ctx)
    for param in [*command.params, *([help_option] if help_option is not None else [])]:
        if isinstance(param, typer.core.TyperArgument):
            name = param.metavar = param.metavar or param.name.upper()
            # typer marks a required argument `{NAME}` in the usage line, and shows its type beside it; the usage
            # line's convention is NAME (required) and [NAME] (optional), and the help says what it holds.
            usage = (name if param.required else f"[{name}]") + ("..." if param.nargs != 1 else "")
            param._usage_display_name = lambda usage=usage: usage
            param.display_type_rich = lambda ctx: None
        elif getattr(param, "is_flag", False) or getattr(param, "count", False):
            param.metavar = ""
        elif param.metavar is None:
            param.metavar = _value_name(param, ctx)
        param.help = _unwrapped(param.help)
        ranged = getattr(param, "_get_number_range_help_str", None)
        if ranged is not None and (limits := ranged()):
            # The range goes with the help, where there is room, not in the narrow column of the value's name.
            param.help = f"{param.help or ''} [{limits}]".strip()
            param._get_number_range_help_str = lambda: None
    for sub in getattr(command, "commands", {}).values():
        plain_help(sub)


def _unwrapped(text: str | None) -> str | None:
    if not text:
        return text
    paragraphs = [" ".join(line.strip() for line in block.strip().splitlines()) for block in text.strip().split("\n\n")]
    return "\n\n".join(paragraphs)


def _value_name(param: Any, ctx: typer.Context) -> str:
    """The value's name from the type typer shows as `<str>`, `<int range>`, `<list[str]>` or `<a|b|c>`."""
    shown = str(param.display_type(ctx) or "").strip("<>")
    if shown.startswith("list[") and shown.endswith("]"):
        shown = shown[5:-1]
    if "|" in shown:
        return shown
    base = shown.split()[0] if shown else "str"
    return {"int": "INTEGER", "float": "NUMBER", "Path": "PATH", "bool": "BOOLEAN", "datetime": "TIME"}.get(base, "TEXT")
