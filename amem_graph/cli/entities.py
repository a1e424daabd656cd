"""`amem-graph entity list|show`: the people, places and things a tenant's notes mention."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .common import console, flat, plain, print_json, short_id, text_column, user_errors, value_column
from .notes import JsonOption, LimitOption, OffsetOption, TenantOption, memory

NameArgument = Annotated[str, typer.Argument(help="The entity's name, as a note says it (case and plurals do not matter).")]


def register(app: typer.Typer) -> None:
    entity_app = typer.Typer(help="Entities: who and what the notes mention, across sessions.", no_args_is_help=True)
    entity_app.command(name="list")(user_errors(list_entities))
    entity_app.command()(user_errors(show))
    entity_app.command()(user_errors(backfill))
    app.add_typer(entity_app, name="entity")


def list_entities(
    tenant: TenantOption = None, limit: LimitOption = 20, offset: OffsetOption = 0, as_json: JsonOption = False
) -> None:
    """List entities, the most mentioned first."""
    with memory(tenant) as mem:
        found = mem.entities.list(limit=limit, offset=offset)
    if as_json:
        print_json([e.to_dict() for e in found])
        return
    table = Table(text_column("name"), value_column("kind"), value_column("notes"), value_column("last seen"))
    for entity in found:
        seen = f"{entity.last_seen:%Y-%m-%d}" if entity.last_seen else ""
        table.add_row(*plain(entity.name, entity.kind, entity.mentions, seen))
    console.print(table)


def show(
    name: NameArgument,
    tenant: TenantOption = None,
    limit: Annotated[int, typer.Option(min=1, max=1000, help="The newest notes that mention it")] = 50,
    as_json: JsonOption = False,
) -> None:
    """An entity: the notes that mention it, oldest first, and the entities mentioned beside it."""
    with memory(tenant) as mem:
        profile = mem.entities.profile(name, limit=limit)
    if as_json:
        print_json(profile.to_dict())
        return
    entity = profile.entity
    also = f" (also: {', '.join(entity.aliases)})" if entity.aliases else ""
    console.print(f"[bold]{entity.name}[/bold] · {entity.kind} · {entity.mentions} notes{also}")
    notes = Table(value_column("when"), text_column("content"), value_column("id"))
    for note in profile.notes:
        when = note.event_time or note.created_at
        notes.add_row(*plain(f"{when:%Y-%m-%d}" if when else "", flat(note.content), short_id(note.id)))
    console.print(notes)
    if profile.related:
        related = Table(text_column("mentioned with"), value_column("kind"), value_column("notes together"))
        for other, together in profile.related:
            related.add_row(*plain(other.name, other.kind, together))
        console.print(related)


def backfill(tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """Find the entities of every note of a tenant: for notes written before there were entities (schema 6);
    running it again writes no mention twice."""
    with memory(tenant) as mem:
        read = mem.entities.backfill()
        entities = len(mem.entities.list(limit=1_000_000))
    if as_json:
        print_json({"notes": read, "entities": entities})
    else:
        console.print(f"{read} notes read; the tenant has {entities} entities")
