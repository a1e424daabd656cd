"""`amem-graph show|history|revert|reanalyze`: how notes evolved, and undoing or redoing that."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from ..models import NoteHistory
from .common import console, plain, print_json, user_errors
from .notes import JsonOption, TenantOption, memory, show_note


def register(app: typer.Typer) -> None:
    for command in (show, history, revert, reanalyze):
        app.command()(user_errors(command))


def _history(note_id: str, tenant: str | None, as_json: bool) -> NoteHistory | None:
    """The note's history, or None once printed as JSON."""
    with memory(tenant) as mem:
        found = mem.history(note_id)
    if as_json:
        print_json(found.to_dict())
        return None
    return found


def show(note_id: str, tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """A note with its links (and their reasons) and its versions."""
    if (found := _history(note_id, tenant, as_json)) is None:
        return
    show_note(found.note)
    _versions(found)


def history(note_id: str, tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """A note's versions and the evolutions that triggered from it or revised it."""
    if (found := _history(note_id, tenant, as_json)) is None:
        return
    _versions(found)
    table = Table("at", "trigger", "analysis", "model", "tokens", "revised")
    table.add_column("evolution", no_wrap=True)
    for evolution in found.evolutions:
        table.add_row(
            *plain(
                f"{evolution.at:%Y-%m-%d %H:%M:%S}" if evolution.at else "", evolution.trigger_note_id,
                evolution.analysis, evolution.model or "", evolution.prompt_tokens + evolution.completion_tokens,
                ", ".join(f"{note_id[:8]} v{version}" for note_id, version in evolution.revised), evolution.id,
            )
        )
    console.print(table)


def revert(
    note_id: str,
    version: Annotated[int, typer.Argument(min=1, help="The version to restore (see `history`).")],
    tenant: TenantOption = None,
    as_json: JsonOption = False,
) -> None:
    """Restore a note's fields as they were at VERSION; what it holds now is kept as a version too."""
    with memory(tenant) as mem:
        note = mem.revert(note_id, version)
    if as_json:
        print_json(note.to_dict())
    else:
        console.print(f"Note {note.id} restored to version {version}; it is now at version {note.version}.")


def reanalyze(
    note_id: Annotated[list[str] | None, typer.Argument(help="Notes to analyse again [default: heuristic and degraded ones]")] = None,
    tenant: TenantOption = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="At most this many notes when none are named.")] = 100,
    unanalysed: Annotated[bool, typer.Option("--unanalysed", help="Also bulk-imported notes (analysis 'none').")] = False,
    as_json: JsonOption = False,
) -> None:
    """Analyse notes again with the configured LLM (AMEM_LLM_BASE_URL / AMEM_LLM_API_KEY)."""
    with memory(tenant) as mem:
        upgraded = mem.reanalyze(note_id or None, limit=limit, include_unanalysed=unanalysed)
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
    table = Table("version", "until", "reason", "context", "tags")
    for version in found.versions:
        table.add_row(
            *plain(
                version.version, f"{version.valid_to:%Y-%m-%d %H:%M:%S}" if version.valid_to else "", version.reason,
                version.context, ", ".join(version.tags),
            )
        )
    console.print(f"Version {found.note.version} is current; earlier versions:")
    console.print(table)
