"""`amem-graph entity list|show|merges|merge|unmerge|suggest|backfill`: the people, places and things a
tenant's notes mention, and the merges of two names for one thing; the reads as of a moment too (`--as-of`)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table

from .common import console, flat, plain, print_json, short_id, text_column, user_errors, value_column
from .notes import AsOfOption, JsonOption, LimitOption, OffsetOption, TenantOption, memory

NameArgument = Annotated[str, typer.Argument(help="The entity's name, as a note says it (case and plurals do not matter).")]


def register(app: typer.Typer) -> None:
    entity_app = typer.Typer(help="Entities: who and what the notes mention, across sessions.", no_args_is_help=True)
    entity_app.command(name="list")(user_errors(list_entities))
    entity_app.command()(user_errors(show))
    entity_app.command()(user_errors(merges))
    entity_app.command()(user_errors(merge))
    entity_app.command()(user_errors(unmerge))
    entity_app.command()(user_errors(suggest))
    entity_app.command()(user_errors(backfill))
    app.add_typer(entity_app, name="entity")


def list_entities(
    tenant: TenantOption = None, limit: LimitOption = 20, offset: OffsetOption = 0, as_of: AsOfOption = None,
    as_json: JsonOption = False,
) -> None:
    """List entities, the most mentioned first."""
    with memory(tenant) as mem:
        found = mem.entities.list(limit=limit, offset=offset, as_of=as_of)
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
    as_of: AsOfOption = None,
    as_json: JsonOption = False,
) -> None:
    """An entity: the notes that mention it, oldest first, and the entities mentioned beside it."""
    with memory(tenant) as mem:
        profile = mem.entities.profile(name, limit=limit, as_of=as_of)
    if as_json:
        print_json(profile.to_dict())
        return
    entity = profile.entity
    also = f" (also: {', '.join(entity.aliases)})" if entity.aliases else ""
    merged = f" · merged into it: {', '.join(entity.merged)}" if entity.merged else ""
    console.print(f"[bold]{entity.name}[/bold] · {entity.kind} · {entity.mentions} notes{also}{merged}")
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


def merges(name: NameArgument, tenant: TenantOption = None, as_of: AsOfOption = None, as_json: JsonOption = False) -> None:
    """The merges into an entity, oldest first: when, why and by whom (with --as-of, those that held then)."""
    with memory(tenant) as mem:
        found = mem.entities.merges(name, as_of=as_of)
    if as_json:
        print_json([m.to_dict() for m in found])
        return
    table = Table(text_column("merged"), value_column("at"), value_column("by"), text_column("reason"))
    for made in found:
        table.add_row(*plain(made.alias, f"{made.at:%Y-%m-%d %H:%M}" if made.at else "", made.by, made.reason))
    console.print(table)


def merge(
    alias: Annotated[str, typer.Argument(help="The entity that is another name for INTO")],
    into: Annotated[str, typer.Argument(help="The entity it is merged into")],
    reason: Annotated[str, typer.Option(help="Why: recorded with the merge")] = "merged by hand",
    tenant: TenantOption = None,
    as_json: JsonOption = False,
) -> None:
    """Merge two entities that are one thing: ALIAS's notes become INTO's. Recorded; `unmerge` undoes it."""
    with memory(tenant) as mem:
        made = mem.entities.merge(alias, into, reason=reason)
    if as_json:
        print_json(made.to_dict())
    else:
        console.print(f"merged {made.alias!r} into {made.into!r} (undo: amem-graph entity unmerge {made.alias!r})")


def unmerge(
    alias: Annotated[str, typer.Argument(help="An entity merged into another")],
    tenant: TenantOption = None,
    as_json: JsonOption = False,
) -> None:
    """Undo a merge: the entity stands on its own again, with the notes that name it."""
    with memory(tenant) as mem:
        entity = mem.entities.unmerge(alias)
    if as_json:
        print_json(entity.to_dict())
    else:
        console.print(f"{entity.name!r} is an entity of its own again ({entity.mentions} notes)")


def suggest(
    apply: Annotated[bool, typer.Option("--apply", help="Merge them (each recorded with its evidence)")] = False,
    tenant: TenantOption = None,
    as_json: JsonOption = False,
) -> None:
    """Pairs of entities that the evidence says are one thing (with an LLM configured, those it confirms)."""
    with memory(tenant) as mem:
        if apply:
            made = mem.entities.merge_suggested()
            rows = [(m.alias, m.into, m.reason) for m in made]
            payload: list[dict[str, object]] = [m.to_dict() for m in made]
        else:
            found = mem.entities.suggest()
            rows = [(s.alias.name, s.into.name, s.evidence) for s in found]
            payload = [s.to_dict() for s in found]
    if as_json:
        print_json(payload)
        return
    table = Table(text_column("merged" if apply else "alias"), text_column("into"), text_column("evidence"))
    for row in rows:
        table.add_row(*plain(*row))
    console.print(table)


def backfill(tenant: TenantOption = None, as_json: JsonOption = False) -> None:
    """Find the entities of a tenant's notes again with today's extractor: notes written before entities, or read
    by an older extractor (before schema 10: every common noun was an entity). Merges stay; a killed run goes on
    where it stopped, and a run after a whole one reads nothing."""
    with memory(tenant) as mem:
        read = mem.entities.backfill()
        entities = len(mem.entities.list(limit=1_000_000))
    if as_json:
        print_json({"notes": read, "entities": entities})
    else:
        console.print(f"{read} notes read; the tenant has {entities} entities")
