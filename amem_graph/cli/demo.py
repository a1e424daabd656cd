"""`amem-graph demo`: the engine on the sample conversation it ships, on whatever store is configured (the
embedded one when no Neo4j is): ingest, the notes with their links, searches that say how each hit was
found, and where to go next."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from ..api import AgenticMemory
from ..core.shipped import sample_conversation
from ..server import LocalNeo4j
from ..settings import Settings
from .common import console, plain, short_id, text_column, value_column
from .ingest import ingest
from .notes import hits_table

QUERIES = ("Where does Tom live now?", "Who named her dog Pickle?")


def demo(
    tenant: Annotated[str, typer.Option("--tenant", "-t", help="Where the sample goes")] = "demo",
) -> None:
    """Ingest the sample conversation (two friends, three sessions) through the analysed write path, show
    the notes with their links and reasons, and two searches with how each hit was found. Running it again
    adds nothing new."""
    ingest(sample_conversation(), tenant=tenant)
    with AgenticMemory(Settings.from_env(), tenant=tenant) as memory:
        notes = sorted(memory.list(limit=1_000), key=lambda n: (n.session or "", n.seq or 0))
        short = {note.id: f"n{i}" for i, note in enumerate(notes, start=1)}
        table = Table(value_column("note"), text_column("said"), text_column("links (type, to, reason)"),
                      title=f"{len(notes)} notes in tenant {tenant!r}")
        for note in notes:
            links = [link for link in memory.get(note.id).links if link.source_id == note.id and link.invalid_at is None]
            described = "\n".join(
                f"{link.type} → {short.get(link.target_id, short_id(link.target_id))}: {link.reason}" for link in links[:3]
            )
            table.add_row(*plain(short[note.id], note.content, described or "—"))
        console.print(table)
        for query, mode in zip(QUERIES, ("hybrid", "fulltext"), strict=True):
            hits = memory.search(query, k=5, hops=2, mode=mode)
            console.print(f"\n[bold]Search ({mode}; found = the words it holds, or the links that led to it):[/] {query}")
            console.print(hits_table(hits, query, ids=False))
        console.print(Text(_next_steps(memory, tenant)))


def _next_steps(memory: AgenticMemory, tenant: str) -> str:
    if memory.admin.kind == "embedded":
        return (
            f"\nThis ran on the embedded store in {memory.admin.location}: no server, nothing else to start.\n"
            f"See it in your browser: amem-graph view -t {tenant}\n"
            "To use Neo4j and explore the graph in Neo4j Browser:\n"
            f"  amem-graph export -t {tenant} --out {tenant}.jsonl     # while NEO4J_URI is unset\n"
            "  amem-graph neo4j start && eval \"$(amem-graph neo4j env)\"   # Neo4j 5.26 from Maven Central\n"
            f"  amem-graph import {tenant}.jsonl && amem-graph browser -t {tenant}"
        )
    browser = LocalNeo4j.for_settings(memory.settings).connection()
    where = browser.http_url if browser else "your server's Browser"
    return (f"\nThis ran on Neo4j at {memory.admin.location}. See it in your browser: amem-graph view -t {tenant}\n"
            f"Or explore it in Neo4j Browser ({where}): amem-graph browser -t {tenant}")
