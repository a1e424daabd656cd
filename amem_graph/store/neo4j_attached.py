"""What the LangChain / LangGraph adapters keep on notes beside the engine's own fields, as named statements
inside the caller's transaction (a mixin of the store's transaction, `Neo4jTx`).

An attachment is the caller's original object as JSON (a document's metadata, a chat message, a store
item's value) owned by one adapter, optionally with a store key and a vector from the caller's own embedding
model; the note itself goes through the engine's write path like any other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime
from typing import Any

from neo4j import Record

from ..models import Attached, Attachment, AttachmentKind, SearchFilter
from .base import EVERY, Near
from .records import note_from_record, time_of


def attached_rows(rows: list[Record]) -> list[Attached]:
    return [
        Attached(
            note=note_from_record(r["note"]), attached=r["attached"], kind=r["kind"], store_key=r["store_key"],
            attached_at=time_of(r["attached_at"]), score=r.get("score"),
        )
        for r in rows
    ]


class Neo4jAttached:
    """Attachment primitives over `run` (one named statement in the transaction, scoped by the tenant)."""

    run: Callable[..., list[Record]]
    _each: Callable[..., list[Record]]

    def attach(self, kind: AttachmentKind, attachments: Sequence[Attachment], now: datetime) -> list[str]:
        rows = [
            {"id": a.note_id, "attached": a.attached, "store_key": a.store_key,
             "external_vector": None if a.external_vector is None else [float(v) for v in a.external_vector]}
            for a in attachments
        ]
        return [r["id"] for r in self._each("attached/set", "rows", rows, kind=kind, now=now)]

    def attached(
        self, *, ids: Sequence[str] | None = None, session: str | None = None, keyed: bool = False,
        near: Near | None = None, limit: int = EVERY, offset: int = 0, superseded: bool = True,
        as_of: datetime | None = None,
    ) -> list[Attached]:
        if near is not None:
            name = "attached/vector_search" if near.external else "attached/similar"
            found = attached_rows(self.run(name, kind=near.kind, vector=[float(v) for v in near.vector],
                                           k=offset + limit, plain=near.plain, **_scope(superseded, as_of)))
            return found[offset:]
        page = {"limit": limit, "offset": offset}
        if ids is not None:
            return attached_rows(self._each("attached/get", "ids", list(ids), **page))
        if session is not None:
            return attached_rows(self.run("attached/session", session=session, **page))
        if not keyed:
            return []
        return attached_rows(self.run("attached/keyed", **_scope(superseded, as_of), **page))

    def _earlier_attachments(self, note_ids: Sequence[str]) -> dict[str, list[tuple[str, datetime]]]:
        return {
            r["id"]: [(value, at) for value, at in zip(r["attached"], (time_of(t) for t in r["at"]), strict=True) if at is not None]
            for r in self._each("attached/history", "ids", list(note_ids))
        }


def _scope(superseded: bool, as_of: datetime | None) -> dict[str, Any]:
    """The parameters of cypher/fragments/note_filter.cypher (archived notes never) and attached_by_then."""
    return SearchFilter(include_superseded=superseded, as_of=as_of).params()
