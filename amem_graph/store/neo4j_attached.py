"""What the LangChain / LangGraph adapters keep on notes beside the engine's own fields, as named statements
inside the caller's transaction (a mixin of the store's transaction, `Neo4jTx`).

An attachment is the caller's original object as JSON (a document's metadata, a chat message, a store
item's value) owned by one adapter, optionally with a store key and a vector from the caller's own embedding
model; the note itself goes through the engine's write path like any other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime

from neo4j import Record

from ..models import Attached, Attachment, AttachmentKind
from .records import note_from_record, time_of

_ALL = 2**62  # LIMIT for "every row"


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

    def attach(self, kind: AttachmentKind, attachments: Sequence[Attachment], now: datetime) -> None:
        rows = [
            {"id": a.note_id, "attached": a.attached, "store_key": a.store_key,
             "external_vector": None if a.external_vector is None else [float(v) for v in a.external_vector]}
            for a in attachments
        ]
        self._each("attached/set", "rows", rows, kind=kind, now=now)

    def attached(self, note_ids: Sequence[str]) -> list[Attached]:
        return attached_rows(self.run("attached/get", ids=list(note_ids))) if note_ids else []

    def session_attached(self, session: str) -> list[Attached]:
        return attached_rows(self.run("attached/session", session=session))

    def keyed(self, *, limit: int | None, offset: int = 0) -> list[Attached]:
        return attached_rows(self.run("attached/keyed", limit=_ALL if limit is None else limit, offset=offset))

    def attached_search(
        self, kind: AttachmentKind, vector: Sequence[float], k: int, *, external: bool, plain: bool = False
    ) -> list[Attached]:
        name = "attached/vector_search" if external else "attached/similar"
        return attached_rows(self.run(name, kind=kind, vector=[float(v) for v in vector], k=k, plain=plain))
