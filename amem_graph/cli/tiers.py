"""`amem-graph turn add|flush`, `tiers show|context|promote` and `persona`: the MemoryOS tiers (short-term
pages, mid-term segments scored by heat, long-term persona facts) from the command line."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..models import FACT_KINDS, Fact, Page, Segment
from ..tiers.memory import Promotion
from .common import (
    choices,
    console,
    flat,
    plain,
    print_json,
    short_id,
    text_column,
    user_errors,
    value_column,
)
from .notes import AsOfOption, JsonOption, TenantOption, memory

FactKind = choices("FactKind", FACT_KINDS)
SessionOption = Annotated[str | None, typer.Option("--session", "-s", help="The session (default: the tenant's most recent)")]


def register(app: typer.Typer) -> None:
    # The sub-apps are made here, not at import, so that registering twice cannot list a command twice.
    turn_app = typer.Typer(help="Dialogue turns: the short-term memory of a session.", no_args_is_help=True)
    turn_app.command(name="add")(user_errors(add_turn))
    turn_app.command()(user_errors(flush))
    tiers_app = typer.Typer(help="The MemoryOS tiers: short-term pages, mid-term segments, persona.", no_args_is_help=True)
    for command in (show, context, promote):
        tiers_app.command()(user_errors(command))
    app.add_typer(turn_app, name="turn")
    app.add_typer(tiers_app, name="tiers")
    app.command()(user_errors(persona))


def add_turn(
    user_text: Annotated[str, typer.Argument(help="What the user said (may be empty if the assistant side is not).")],
    assistant_text: Annotated[str, typer.Argument(help="What the assistant answered.")] = "",
    session: Annotated[str, typer.Option("--session", "-s", help="The session the turn belongs to")] = "default",
    at: Annotated[str | None, typer.Option(help="When it was said, ISO-8601 (default: now)")] = None,
    tenant: TenantOption = None,
    as_json: JsonOption = False,
) -> None:
    """Store a dialogue turn as a short-term page; pages past the capacity move to mid-term segments."""
    with memory(tenant) as mem:
        page = mem.add_turn(user_text, assistant_text, tenant=tenant, session_id=session, at=at)
    if as_json:
        print_json(page.to_dict())
        return
    console.print(Text(f"Stored turn {page.seq} of session {page.session_id} (tier {page.tier})"))
    console.print(Text(f"  page: {page.id}"))
    if page.chain_summary:
        console.print(Text(f"  chain: {flat(page.chain_summary)}"))


def flush(tenant: TenantOption = None, session: Annotated[str | None, typer.Option(
        "--session", "-s", help="Only this session (default: every session)")] = None) -> None:
    """End a session (or all): its short-term pages move to mid-term segments now."""
    with memory(tenant) as mem:
        moved = mem.tiers.flush(tenant=tenant, session_id=session)
    console.print(f"Moved {len(moved)} page{'' if len(moved) == 1 else 's'} to mid-term segments.")


def show(
    tenant: TenantOption = None,
    session: SessionOption = None,
    archived: Annotated[bool, typer.Option("--archived", help="Include archived segments")] = False,
    limit: Annotated[int, typer.Option(min=1, max=100_000, help="Segments to list, hottest first")] = 50,
    as_json: JsonOption = False,
) -> None:
    """The three tiers: the session's short-term pages, the segments by heat and the persona facts."""
    with memory(tenant) as mem:
        pages = mem.tiers.stm(tenant=tenant, session_id=session)
        segments = mem.tiers.segments(tenant=tenant, include_archived=archived, limit=limit)
        facts = mem.tiers.persona(tenant=tenant)
    if as_json:
        print_json({"stm": [p.to_dict() for p in pages], "segments": [s.to_dict() for s in segments],
                    "persona": [f.to_dict() for f in facts]})
        return
    console.print(_pages_table(pages, session))
    console.print(_segments_table(segments, archived))
    console.print(_facts_table(facts))


def persona(
    tenant: TenantOption = None,
    kind: Annotated[list[FactKind] | None, typer.Option(help="Only this kind (repeatable)")] = None,  # type: ignore[valid-type]
    as_json: JsonOption = False,
) -> None:
    """The persona: long-term facts about the user and the assistant's knowledge."""
    with memory(tenant) as mem:
        facts = mem.tiers.persona(tenant=tenant, kinds=[k.value for k in kind] if kind else None)
    if as_json:
        print_json([f.to_dict() for f in facts])
        return
    console.print(_facts_table(facts))


def context(query: str, tenant: TenantOption = None, session: SessionOption = None, as_of: AsOfOption = None,
            as_json: JsonOption = False) -> None:
    """What the tiers know about QUERY, as the prompt block an agent would get (counts as visits and uses;
    with --as-of, the tiers as they stood then, counting nothing)."""
    with memory(tenant) as mem:
        found = mem.context_for(query, tenant=tenant, session_id=session, as_of=as_of)
    if as_json:
        print_json(found.to_dict())
        return
    # soft_wrap: the block is meant to be pasted into a prompt, so the terminal width must not break its lines.
    console.print(Text(found.prompt()), soft_wrap=True)


def promote(tenant: TenantOption = None) -> None:
    """Promote every segment hot enough: its new pages become notes and persona facts."""
    with memory(tenant) as mem:
        promotions = mem.tiers.promote(tenant=tenant)
        threshold = mem.settings.tiers.promote_heat
    if not promotions:
        console.print(f"No segment has reached the promotion heat ({threshold:g}).")
    for promotion in promotions:
        _print_promotion(promotion)


def _print_promotion(promotion: Promotion) -> None:
    console.print(Text(f"Segment {short_id(promotion.segment_id)} (heat {promotion.heat:.2f}): {len(promotion.note_ids)} notes, "
                       f"{len(promotion.facts_added)} facts added, {len(promotion.facts_reinforced)} reinforced, "
                       f"{len(promotion.facts_superseded)} superseded, {len(promotion.facts_archived)} archived"))
    for note_id in promotion.note_ids:
        console.print(Text(f"  note {note_id}"))
    for text in promotion.facts_added:
        console.print(Text(f"  fact {flat(text)}"))


def _pages_table(pages: Sequence[Page], session: str | None) -> Table:
    name = pages[0].session_id if pages else session or "latest"
    table = Table(value_column("seq"), text_column("time"), text_column("text"),
                  title=f"Short-term memory (session {name})")
    for page in pages:
        table.add_row(*plain(page.seq, f"{page.at:%Y-%m-%d %H:%M}" if page.at else "", flat(page.text)))
    return table


def _segments_table(segments: Sequence[Segment], archived: bool) -> Table:
    # Only the summary wraps, so that the numbers stay readable in a narrow terminal.
    numbers = ("id", "heat", "visits", "len", "pages", "promos", *(("archived",) if archived else ()))
    table = Table(text_column("summary"), *map(value_column, numbers), title="Mid-term segments (hottest first)",
                  caption="len: pages joined since the last promotion")
    for s in segments:
        when = (f"{s.archived_at:%Y-%m-%d}" if s.archived_at else "",) if archived else ()
        table.add_row(*plain(flat(s.summary), short_id(s.id), f"{s.heat:.2f}", s.visits, s.interaction_len, s.pages,
                             s.promotions, *when))
    return table


def _facts_table(facts: Sequence[Fact]) -> Table:
    table = Table(text_column("text"), *map(value_column, ("kind", "mentions", "uses")), title="Persona (long-term)")
    for fact in facts:
        table.add_row(*plain(flat(fact.text), fact.kind, fact.mentions, fact.uses))
    return table
