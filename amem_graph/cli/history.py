"""`amem-graph show|history|revert|reanalyze`: how notes evolved, and undoing or redoing that."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..models import Evolution, NoteHistory
from .common import console, flat, plain, print_json, short_id, text_column, user_errors, value_column
from .notes import (
    AsOfOption,
    JsonOption,
    NoteIdArgument,
    TenantOption,
    by_id,
    full_id,
    linked_texts,
    memory,
    show_note,
)


def register(app: typer.Typer) -> None:
    for command in (show, history, revert, reanalyze):
        app.command()(user_errors(command))


def _history(note_id: str, tenant: str | None, as_of: str | None, as_json: bool,
             links: bool = False) -> tuple[NoteHistory, dict[str, str]] | None:
    """The note's history (as it was recorded by `as_of`) and, with `links`, its linked notes' texts; None once
    printed as JSON."""
    with memory(tenant, held=True) as mem:
        found = by_id(mem, note_id, lambda candidate: mem.history(candidate, as_of=as_of))
        linked = linked_texts(mem, found.note, as_of) if links and not as_json else {}
    if as_json:
        print_json(found.to_dict())
        return None
    return found, linked


def show(note_id: NoteIdArgument, tenant: TenantOption = None, as_of: AsOfOption = None,
         as_json: JsonOption = False) -> None:
    """A note with its links (and their reasons) and its versions (with --as-of, as they stood then)."""
    if (held := _history(note_id, tenant, as_of, as_json, links=True)) is None:
        return
    found, linked = held
    show_note(found.note, linked)
    _versions(found)


def history(note_id: NoteIdArgument, tenant: TenantOption = None, as_of: AsOfOption = None,
            as_json: JsonOption = False) -> None:
    """A note's versions and the evolutions that triggered from it or revised it (with --as-of, those
    recorded by then)."""
    if (held := _history(note_id, tenant, as_of, as_json)) is None:
        return
    found, _ = held
    _versions(found)
    # The time splits between date and clock, and the analyser names its model only when it has one other
    # than itself, so that seven fields fit 80 columns.
    table = Table(text_column("at"), *map(value_column, ("evolution", "trigger")),
                  text_column("analysis", min_width=9), value_column("tokens"), text_column("revised", min_width=11))
    for evolution in found.evolutions:
        table.add_row(
            *plain(
                f"{evolution.at:%Y-%m-%d %H:%M:%S}" if evolution.at else "", short_id(evolution.id),
                short_id(evolution.trigger_note_id), _analyser(evolution),
                evolution.prompt_tokens + evolution.completion_tokens,
                ", ".join(f"{short_id(note_id)} v{version}" for note_id, version in evolution.revised),
            )
        )
    console.print(table)


def _analyser(evolution: Evolution) -> str:
    model = evolution.model or ""
    return evolution.analysis if model in ("", evolution.analysis) else f"{evolution.analysis} ({model})"


def revert(
    note_id: NoteIdArgument,
    version: Annotated[int, typer.Argument(min=1, help="The version to restore (see `history`).")],
    tenant: TenantOption = None,
    as_json: JsonOption = False,
) -> None:
    """Restore a note's fields as they were at VERSION; what it holds now is kept as a version too."""
    with memory(tenant) as mem:
        note = by_id(mem, note_id, lambda candidate: mem.revert(candidate, version))
    if as_json:
        print_json(note.to_dict())
    else:
        console.print(f"Note {note.id} restored to version {version}; it is now at version {note.version}.")


def reanalyze(
    note_id: Annotated[list[str] | None, typer.Argument(
        help="Notes to analyse again, by id or its first characters [default: heuristic and degraded ones]")] = None,
    tenant: TenantOption = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many notes when none are named.")] = 100,
    unanalysed: Annotated[bool, typer.Option("--unanalysed", help="Also bulk-imported notes (analysis 'none').")] = False,
    as_json: JsonOption = False,
) -> None:
    """Analyse notes again with the configured LLM (AMEM_LLM_BASE_URL / AMEM_LLM_API_KEY)."""
    with memory(tenant) as mem:
        named = [full_id(mem, given) for given in note_id or ()]
        upgraded = mem.reanalyze(named or None, limit=limit, include_unanalysed=unanalysed)
    if as_json:
        print_json({"reanalysed": upgraded})
    else:
        console.print(f"Reanalysed {len(upgraded)} note(s) with the LLM.")


def _versions(found: NoteHistory) -> None:
    for newer in found.superseded_by:
        console.print(f"Superseded by {newer.newer_id}: {newer.reason}", markup=False, highlight=False)
    if not found.versions:
        console.print(f"Version {found.note.version}; no earlier versions.")
        return
    table = Table(value_column("version"), text_column("until"), text_column("reason"), text_column("context"),
                  text_column("tags"))
    for version in found.versions:
        table.add_row(
            *plain(
                version.version, f"{version.valid_to:%Y-%m-%d %H:%M:%S}" if version.valid_to else "",
                flat(version.reason), flat(version.context), ", ".join(version.tags),
            )
        )
    console.print(f"Version {found.note.version} is current; earlier versions:")
    console.print(table)
