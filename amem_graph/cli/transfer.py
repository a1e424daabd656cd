"""`amem-graph export|import`: a tenant as JSON Lines and back (ids, links with reasons, versions,
evolutions, pages, segments, persona facts, embeddings); `consolidate`: every vector again, for a new model."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ..embedding import Embedder
from ..errors import InvalidInput, SchemaMismatch
from ..ingest import transfer
from ..maintenance import admin
from ..settings import Settings
from .common import console, progress, user_errors
from .notes import TenantOption, memory

EMBEDDED_LABELS = ("Note", "Passage", "Page", "Fact", "Segment")  # what a consolidation embeds again


def register(app: typer.Typer) -> None:
    app.command(name="export")(user_errors(export))
    app.command(name="import")(user_errors(import_))
    app.command()(user_errors(consolidate))


def export(
    out: Annotated[str, typer.Option("--out", "-o", help="The JSONL file to write; '-' for standard output")],
    tenant: TenantOption = None,
) -> None:
    """Write every node and relationship of one tenant as JSON Lines (a header line first)."""
    with memory(tenant) as mem:
        header, records = mem.admin.export()
        if out == "-":
            count = transfer.write(sys.stdout, header, records)
        else:
            with Path(out).open("w", encoding="utf-8") as handle:
                count = transfer.write(handle, header, records)
    if out != "-":
        console.print(f"Exported {count} records of tenant {header['tenant']} to {out}")


def import_(
    path: Annotated[Path, typer.Argument(help="A file written by `amem-graph export`")],
    tenant: TenantOption = None,
) -> None:
    """Recreate an exported tenant in this database, in one transaction; the tenant must be empty here, and the
    database's embedding model the export's."""
    try:
        lines = path.read_text(encoding="utf-8").splitlines()
    except OSError as err:
        raise InvalidInput(f"cannot read {path}: {err.strerror}") from None
    header, nodes, relationships = transfer.read(lines)
    if tenant is not None and tenant != header.get("tenant"):
        raise InvalidInput(f"{path} holds tenant {header.get('tenant')!r}, not {tenant!r} (ids are kept, so is the tenant)")
    with memory(header.get("tenant")) as mem:
        if header.get("dimension") not in (None, mem.embedder.dimension):
            raise SchemaMismatch(
                f"{path} holds {header['dimension']}-dimension embeddings ({header.get('model')}); this engine's "
                f"model gives {mem.embedder.dimension}"
            )
        created, linked = mem.admin.import_(nodes, relationships)
    console.print(f"Imported tenant {header['tenant']}: {created} nodes, {linked} relationships")


def consolidate(yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask")] = False) -> None:
    """After changing AMEM_EMBEDDING_MODEL: embed every note, page and fact of the database again with it, and
    rebuild the vector index for its dimension. Interrupted, it resumes where it stopped when run again (the
    database refuses to open until it ends)."""
    settings = Settings.from_env()
    embedder = Embedder.of(settings)
    if not yes:
        typer.confirm(f"Re-embed the whole database with {embedder.model_name} ({embedder.dimension} dimensions)?", abort=True)
    held = admin.database_stats(settings).labels
    with progress(sum(held.get(label, 0) for label in EMBEDDED_LABELS), "Re-embedding") as advance:
        counts = admin.consolidate(settings, embedder, on_batch=lambda _, n: advance(n))
    console.print("Re-embedded " + ", ".join(f"{n} {kind}" for kind, n in counts.items())
                  + f"; vector index note_embedding rebuilt with {embedder.dimension} dimensions.")
