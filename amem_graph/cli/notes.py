"""`amem-graph init|add|get|list|delete|search|stats`: notes from the command line."""

from __future__ import annotations

import difflib
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Annotated, Any, TypeVar

import typer
from rich.table import Table
from rich.text import Text

from ..api import MAX_K, AgenticMemory
from ..errors import InvalidInput, NoteNotFound, TenantNotFound
from ..maintenance.warmup import WARM_UP_S
from ..models import MAX_HOPS, Note, SearchHit
from ..read import explain
from ..read.retrieval import MODES, format_context
from ..settings import Settings
from .common import (
    WarmUpOption,
    choices,
    console,
    flat,
    plain,
    print_json,
    short_id,
    text_column,
    user_errors,
    value_column,
    warm,
)

T = TypeVar("T")

TenantOption = Annotated[str | None, typer.Option("--tenant", "-t", help="Tenant [default: $AMEM_TENANT or 'default']")]
JsonOption = Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")]
LimitOption = Annotated[int, typer.Option(min=1, max=1000)]
OffsetOption = Annotated[int, typer.Option(min=0)]
SupersededOption = Annotated[bool, typer.Option("--superseded", help="Include notes a newer note contradicted")]
ArchivedOption = Annotated[bool, typer.Option("--archived", help="Include notes a retention policy archived")]
AsOfOption = Annotated[str | None, typer.Option(
    "--as-of", help="Read the memory as it stood at this time (ISO-8601; recorded time)")]
NoteIdArgument = Annotated[str, typer.Argument(help="A note id, or its first characters (as tables show it).")]

SearchMode = choices("SearchMode", MODES)
LINKS_SHOWN = 30  # links `get` and `show` print, each with the other note's text; --json gives every one
LINKED_TEXT_LIMIT = 80  # characters of a linked note's text beside its link
FULL_ID = 36  # a uuid; a shorter id that names no note may be the start of one
MIN_PREFIX = 4  # shorter prefixes would match too many notes to be worth a scan


def memory(tenant: str | None = None, store: str | None = None, *, serves: bool = False, reads: bool = False,
           held: bool = False) -> AgenticMemory:
    """A memory as the environment configures it; `store` (`bench --store`) overrides AMEM_STORE. A command that
    `serves` (the MCP server) analyses the queue from the start, as any long-lived process does; another analyses
    only what it queued itself (AMEM_LLM_WORKER=writes), not claiming queued notes it would hand back as it exits.
    A command that only `reads` opens the embedded store to read only (never its writer, so that an agent
    starting beside it still writes); one that reads a tenant's notes (`held`) is refused a tenant that holds
    nothing, with the tenants that exist named."""
    settings = Settings.from_env()
    if settings.llm.worker == "thread" and not serves:
        settings = replace(settings, llm=replace(settings.llm, worker="writes"))
    if reads or held:
        settings = replace(settings, read_only=True)
    opened = AgenticMemory(settings if store is None else replace(settings, store=store), tenant=tenant)
    if held:
        try:
            if opened.tenant not in (known := opened.admin.tenants(near=opened.tenant)):
                raise TenantNotFound(unknown_tenant(opened.tenant, known))
        except BaseException:
            opened.close()
            raise
    return opened


def unknown_tenant(tenant: str, known: list[str], shown: int = 20) -> str:
    """What to say of a tenant that holds nothing, given the tenants that do (the closest spellings first)."""
    if not known:
        return f"tenant {tenant!r} holds nothing, and neither does any other: this store is empty"
    more = f" and {len(known) - shown} more" if len(known) > shown else ""
    close = difflib.get_close_matches(tenant, known[:3], n=1, cutoff=0.6)
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return (f"tenant {tenant!r} holds nothing{hint}; the tenants here: {', '.join(known[:shown])}{more} "
            "(choose one with --tenant)")


def register(app: typer.Typer) -> None:
    for command in (init, add, get, list_notes, delete, search, stats):
        app.command(name=command.__name__.replace("list_notes", "list"))(user_errors(command))


def by_id(mem: AgenticMemory, note_id: str, act: Callable[[str], T]) -> T:
    """`act(note_id)`; when no note has that id, `act` on the one note whose id starts with it."""
    try:
        return act(note_id)
    except NoteNotFound as missing:
        only = _only_id_starting_with(mem, note_id, missing)
    return act(only)


def full_id(mem: AgenticMemory, note_id: str) -> str:
    """The id of the note NOTE_ID names (itself, or the one note whose id starts with it)."""
    return by_id(mem, note_id, lambda candidate: mem.get(candidate).id)


def _only_id_starting_with(mem: AgenticMemory, prefix: str, missing: NoteNotFound) -> str:
    if not MIN_PREFIX <= len(prefix) < FULL_ID:
        raise missing
    # A scan of the tenant, but only after the exact lookup failed: a full id never pays for it.
    found: list[str] = []
    offset = 0
    while page := mem.list(limit=MAX_K, offset=offset, include_superseded=True, include_archived=True):
        found += [note.id for note in page if note.id.startswith(prefix)]
        offset += len(page)
    if len(found) == 1:
        return found[0]
    if found:
        raise InvalidInput(f"{len(found)} notes have ids starting with {prefix!r} ({', '.join(found[:5])}): "
                           "give more characters")
    raise missing


def init(warm_up: WarmUpOption = WARM_UP_S) -> None:
    """Create the schema (constraints, range, vector and fulltext indexes) if missing, idempotently; then warm the
    store up, so the first real calls run at steady-state speed."""
    with AgenticMemory(Settings.from_env(), init_schema=False) as mem:
        dimension = mem.embedder.dimension
        mem.admin.init_schema()
        console.print(f"Schema ready in {mem.admin.location}: vector index note_embedding, {dimension} dimensions, cosine.")
        warm(mem, warm_up)


def add(
    content: Annotated[str, typer.Argument(help="The note's text; '-' reads it from standard input.")],
    tenant: TenantOption = None,
    source: Annotated[str | None, typer.Option(help="Where it came from (message id, file...)")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="A tag (repeatable)")] = None,
    keyword: Annotated[list[str] | None, typer.Option(help="A keyword (repeatable)")] = None,
    context: Annotated[str, typer.Option(help="One sentence of context")] = "",
    category: Annotated[str | None, typer.Option()] = None,
    event_time: Annotated[str | None, typer.Option(help="When it happened, ISO-8601")] = None,
    session: Annotated[str | None, typer.Option(help="The conversation or episode it belongs to")] = None,
    speaker: Annotated[str | None, typer.Option(help='Who said it [default: "Name" of a leading "Name: "]')] = None,
    background: Annotated[bool, typer.Option(
        "--background", help="With an LLM, queue its analysis for `amem-graph worker` instead of waiting for it")] = False,
    as_json: JsonOption = False,
) -> None:
    """Add a note (adding the same text from the same source again returns the existing note); a note with
    a session follows the session's last note, and its neighbourhood holds the turns around it."""
    text: str | bytes = sys.stdin.buffer.read() if content == "-" else content  # bytes: decoded strictly
    with memory(tenant) as mem:
        note = mem.add(
            text,  # type: ignore[arg-type]
            source=source, tags=tag or (), keywords=keyword or (), context=context, category=category,
            event_time=event_time, session=session, speaker=speaker, background=background,
        )
    if as_json:
        print_json(note.to_dict())
    else:
        console.print(f"Added note [bold]{note.id}[/]")


def get(note_id: NoteIdArgument, tenant: TenantOption = None, as_of: AsOfOption = None,
        as_json: JsonOption = False) -> None:
    """Show one note with its links (with --as-of, as the memory held it then)."""
    with memory(tenant, held=True) as mem:
        note = by_id(mem, note_id, lambda candidate: mem.get(candidate, as_of=as_of))
        linked = {} if as_json else linked_texts(mem, note, as_of)
    if as_json:
        print_json(note.to_dict())
        return
    show_note(note, linked)


def list_notes(
    tenant: TenantOption = None, limit: LimitOption = 20, offset: OffsetOption = 0,
    superseded: SupersededOption = False, archived: ArchivedOption = False, as_json: JsonOption = False,
) -> None:
    """List the current notes, newest first."""
    with memory(tenant, held=True) as mem:
        notes = mem.list(limit=limit, offset=offset, include_superseded=superseded, include_archived=archived)
    if as_json:
        print_json([n.to_dict() for n in notes])
        return
    table = Table(text_column("content"), value_column("created"), value_column("id"))
    for note in notes:
        created = f"{note.created_at:%Y-%m-%d %H:%M}" if note.created_at else ""
        table.add_row(*plain(flat(note.content), created, short_id(note.id)))
    console.print(table)


def delete(
    note_id: Annotated[str | None, typer.Argument(
        help="The note (its id or the id's first characters); without one, the whole tenant (--tenant)")] = None,
    tenant: TenantOption = None,
    yes: Annotated[bool, typer.Option("--yes", "-y", help="Delete a whole tenant without asking")] = False,
) -> None:
    """Delete a note with its links and versions, or, without NOTE_ID, everything of one tenant (notes,
    pages, segments, persona, history) and nothing of any other."""
    if note_id is None:
        if tenant is None:
            raise InvalidInput("name the tenant to delete with --tenant (or give a NOTE_ID to delete one note)")
        if not yes:
            typer.confirm(f"Delete everything of tenant {tenant!r}?", abort=True)
        with memory(tenant) as mem:
            deleted = mem.admin.delete_tenant()
        console.print(f"Deleted tenant {tenant}: {deleted} nodes")
        return
    with memory(tenant) as mem:
        deleted = full_id(mem, note_id)
        mem.delete(deleted)
    console.print(f"Deleted note {deleted}")


def search(
    query: str,
    tenant: TenantOption = None,
    k: Annotated[int, typer.Option("--k", "-k", min=1, max=1000)] = 10,
    hops: Annotated[int, typer.Option(min=0, max=MAX_HOPS, help="Links or session steps to follow from the seeds")] = 2,
    mode: Annotated[SearchMode, typer.Option(help="Which indexes find the seeds")] = "hybrid",  # type: ignore[valid-type]
    after: Annotated[str | None, typer.Option(help="Event time at or after (ISO-8601)")] = None,
    before: Annotated[str | None, typer.Option(help="Event time before (ISO-8601)")] = None,
    tag: Annotated[list[str] | None, typer.Option(help="Any of these tags (repeatable)")] = None,
    speaker: Annotated[list[str] | None, typer.Option(help="Said by one of these (repeatable)")] = None,
    session: Annotated[list[str] | None, typer.Option(help="In one of these sessions (repeatable)")] = None,
    superseded: SupersededOption = False,
    archived: ArchivedOption = False,
    as_of: AsOfOption = None,
    valid_at: Annotated[str | None, typer.Option(
        help="Only notes whose facts held at this time, superseded since or not (ISO-8601; valid time)")] = None,
    context: Annotated[bool, typer.Option("--context", help="Print the hits as a prompt block")] = False,
    as_json: JsonOption = False,
) -> None:
    """Find notes by meaning (vector index) and words (fulltext), fused, then follow links and session
    order from the best of them; each hit says how it was found."""
    with memory(tenant, held=True) as mem:
        hits = mem.search(
            query, k=k, hops=hops, mode=mode.value, after=after, before=before, tags=tag or (),  # type: ignore[arg-type]
            speakers=speaker or (), sessions=session or (), include_superseded=superseded,
            include_archived=archived, as_of=as_of,
            valid_at=valid_at,
        )
    if as_json:
        print_json([hit.to_dict() for hit in hits])
        return
    if context:
        console.print(Text(format_context(hits)))
        return
    console.print(hits_table(hits, query))


def hits_table(hits: list[SearchHit], query: str, *, ids: bool = True) -> Table:
    """Search hits with their scores and how each was found: the query's words it holds, or those in the turns
    around it, or its meaning alone; a note reached from a seed, by the path from it. A long note shows the part
    that matched."""
    table = Table(text_column("content"), text_column("found", min_width=8, max_width=14),
                  *map(value_column, ("score", "vector", "fulltext", *(("id",) if ids else ()))))
    for hit in hits:
        found = explain.match(query, hit)
        start, end = found.excerpt
        shown = ("…" if start else "") + hit.note.content[start:end] + ("…" if end < len(hit.note.content) else "")
        cells = [flat(shown), explain.label(hit, found), f"{hit.score:.3f}", _score(hit.vector_score),
                 _score(hit.fulltext_score)]
        table.add_row(*plain(*cells, *([short_id(hit.note.id)] if ids else [])))
    return table


def stats(tenant: Annotated[str | None, typer.Option("--tenant", "-t", help="Only this tenant")] = None,
          as_json: JsonOption = False) -> None:
    """Counts per label and link type, index states and the schema marker."""
    with memory() as mem:
        result = mem.stats(tenant=tenant)
    if as_json:
        print_json(vars(result))
        return
    console.print(Text(f"Store: {result.store} at {result.location}; {_schema(result.schema)}"))
    if result.queue.get("pending"):
        console.print(Text(f"Analysis queue: {result.queue['pending']} notes wait for the model's analysis, the oldest "
                           f"for {result.queue['lag_s']:.0f} s"))
    table = Table(text_column("label / relationship"), value_column("count"))
    for name, count in {**result.labels, **result.relationships}.items():
        table.add_row(*plain(name, count))
    console.print(table)
    indexes = Table(text_column("index"), *map(value_column, ("type", "state", "populated %")))
    for index in result.indexes:
        indexes.add_row(*plain(index["name"], index["type"], index["state"], _populated(index)))
    console.print(indexes)
    for analysis, totals in result.evolutions.items():
        console.print(f"Evolutions ({analysis}; adds and reanalyses): {totals['evolutions']}, {totals['prompt_tokens']} prompt + "
                      f"{totals['completion_tokens']} completion tokens")
    for operation, usage in result.llm.items():
        console.print(f"LLM {operation}: {usage['calls']:.0f} calls, {usage['prompt_tokens']:.0f} prompt + "
                      f"{usage['completion_tokens']:.0f} completion tokens (this process)")


def _schema(marker: dict[str, Any]) -> str:
    if not marker:
        return "no schema yet (`amem-graph init`)"
    under_way = ("; a consolidation is under way (`amem-graph consolidate` finishes it)"
                 if marker.get("consolidating") else "")
    return (f"schema version {marker.get('version')}, {marker.get('embedding_model')} "
            f"({marker.get('embedding_dimension')} dimensions){under_way}")


def _populated(index: dict[str, Any]) -> str:
    # Only Neo4j builds indexes in the background; the embedded store's exact index is always complete.
    percent = index.get("populationPercent")
    return "—" if percent is None else f"{percent:.0f}"


def linked_texts(mem: AgenticMemory, note: Note, as_of: str | None = None, shown: int = LINKS_SHOWN) -> dict[str, str]:
    """The text of each note `note` links to (the first `shown` links), as the memory held it `as_of`."""
    texts: dict[str, str] = {}
    for link in note.links[:shown]:
        other = link.other(note.id)
        try:
            texts[other] = mem.get(other, as_of=as_of).content
        except NoteNotFound:  # deleted since, or not yet written as of then
            continue
    return texts


def show_note(note: Note, linked: dict[str, str] | None = None) -> None:
    """A note, its fields and its links; each link with the other note's id, its text (`linked`), confidence and
    reason."""
    console.print(f"[bold]{note.id}[/] (tenant {note.tenant}, version {note.version}, analysis {note.analysis})")
    console.print(note.content, markup=False, highlight=False)
    for label, value in (("keywords", ", ".join(note.keywords)), ("tags", ", ".join(note.tags)),
                         ("context", note.context), ("source", note.source), ("event time", note.event_time),
                         ("created", note.created_at)):
        if value:
            console.print(f"  {label}: {value}", markup=False, highlight=False)
    for index, link in enumerate(note.links):
        arrow = "->" if link.source_id == note.id else "<-"
        other = link.other(note.id)
        text = (linked or {}).get(other)
        about = f" “{flat(text, LINKED_TEXT_LIMIT)}”" if text else ""
        console.print(f"  {arrow} {link.type} {short_id(other)}{about} ({link.confidence:.2f}) {link.reason}",
                      markup=False, highlight=False)
        if index + 1 == LINKS_SHOWN and len(note.links) > LINKS_SHOWN:
            console.print(f"  ... and {len(note.links) - LINKS_SHOWN} more links (--json lists them all)")
            break


def _score(score: float | None) -> str:
    return "" if score is None else f"{score:.3f}"
