"""What the LangChain / LangGraph adapters keep on notes beside the engine's own fields, as named statements.

A mixin of Neo4jStore. An attachment is the caller's original object as JSON (a document's metadata, a
chat message, a store item's value), optionally a store key and a vector from the caller's own
embedding model; the note itself goes through the engine's write path like any other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from neo4j import Record

from ..models import Note
from .base import Attached, Attachment


class Neo4jAttached:
    _run: Callable[..., list[Record]]
    _note_from: Callable[[dict[str, Any]], Note]

    def attach(self, tenant: str, attachments: Sequence[Attachment]) -> list[str]:
        rows = [
            {"id": a.note_id, "attached": a.attached, "store_key": a.store_key,
             "external_vector": None if a.external_vector is None else [float(v) for v in a.external_vector]}
            for a in attachments
        ]
        if not rows:
            return []
        return [r["id"] for r in self._run("attached/set", write=True, tenant=tenant, rows=rows)]

    def attached(self, tenant: str, note_ids: Sequence[str]) -> list[Attached]:
        return self._attached(self._run("attached/get", tenant=tenant, ids=list(note_ids)))

    def attached_in_session(self, tenant: str, session: str) -> list[Attached]:
        return self._attached(self._run("attached/session", tenant=tenant, session=session))

    def keyed(self, tenant: str, *, limit: int, offset: int = 0) -> list[Attached]:
        return self._attached(self._run("attached/keyed", tenant=tenant, limit=limit, offset=offset))

    def keyed_tenants(self) -> list[str]:
        return [r["tenant"] for r in self._run("attached/keyed_tenants")]

    def attached_search(self, tenant: str, vector: Sequence[float], k: int) -> list[Attached]:
        rows = self._run("attached/vector_search", tenant=tenant, vector=[float(v) for v in vector], k=k)
        return self._attached(rows)

    def _attached(self, rows: list[Record]) -> list[Attached]:
        return [
            Attached(
                note=self._note_from(r["note"]), attached=r["attached"], store_key=r["store_key"], score=r.get("score")
            )
            for r in rows
        ]
