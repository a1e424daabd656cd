"""The CLI's help read at 80 columns, as a person opens it: every command's, nothing cut off, prose not broken
where the docstring's lines happened to end, values named by what they hold."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from amem_graph.cli import app
from amem_graph.cli.common import plain_help

runner = CliRunner()
WIDTH = "80"


def commands(command: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    yield path, command
    for name, sub in sorted(getattr(command, "commands", {}).items()):
        yield from commands(sub, (*path, name))


def built() -> Any:
    """The command tree as `amem-graph` runs it (its group tidies the help before it parses the command line)."""
    command = typer.main.get_command(app)
    plain_help(command)
    return command


TREE = list(commands(built()))


def rendered(path: tuple[str, ...]) -> str:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": WIDTH, "TERM": "dumb", "NO_COLOR": "1"})
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.parametrize("path", [path for path, _ in TREE], ids=lambda path: " ".join(path) or "amem-graph")
def test_help_at_80_columns_cuts_nothing_and_names_values_plainly(path: tuple[str, ...]) -> None:
    text = rendered(path)
    assert all(len(line) <= 80 for line in text.splitlines())
    assert "…" not in text, "a cell was cut off"
    assert not re.search(r"<(bool|str|int|float|int range|list\[str\])>|\{[a-z_]+\}|\{[A-Z_]+\}", text), text
    command = dict(TREE)[path]
    flat = " ".join(text.split())
    for param in command.params:
        for name in [*param.opts, *getattr(param, "secondary_opts", [])]:
            if name.startswith("--"):
                assert name in flat, f"{name} is not shown whole"
    # The description's first sentence reads as one line of prose: no break left where the docstring's line ended.
    if command.help:
        first = command.help.split("\n\n")[0]
        assert "\n" not in first
        assert " ".join(first.split()[:12]) in flat


def test_the_top_level_help_names_both_stores() -> None:
    text = " ".join(rendered(()).split())
    assert "embedded store or Neo4j" in text and "Exit codes:" in text
