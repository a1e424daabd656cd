"""What the LangChain / LangGraph adapters keep on notes beside the engine's own fields, as named statements.

A mixin of Neo4jStore. An attachment is the caller's original object as JSON (a document's metadata, a
chat message, a store item's value) owned by one adapter, optionally with a store key and a vector from
the caller's own embedding model; the note itself goes through the engine's write path like any other."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

from neo4j import ManagedTransaction, Record

from .. import cypher
from ..errors import InvalidInput
from ..models import Attached, Attachment, AttachmentKind, Note
from .records import time_of

_ALL = 2**62  # LIMIT for "every row"


class Neo4jAttached:
    _run: Callable[..., list[Record]]
    _note_from: Callable[[dict[str, Any]], Note]
    _write_transaction: Callable[[str, Callable[[ManagedTransaction], Any]], Any]

    def attach(self, tenant: str, kind: AttachmentKind, attachments: Sequence[Attachment]) -> None:
        rows = [
            {"id": a.note_id, "attached": a.attached, "store_key": a.store_key,
             "external_vector": None if a.external_vector is None else [float(v) for v in a.external_vector]}
            for a in attachments
        ]
        if not rows:
            return

        # One transaction: either every attachment is set, or (a note missing or another adapter's) none.
        def work(tx: ManagedTransaction) -> None:
            found = {r["id"] for r in tx.run(cypher.load("attached/set"), tenant=tenant, kind=kind, rows=rows,
                                              now=datetime.now(timezone.utc))}
            if missing := [r["id"] for r in rows if r["id"] not in found]:
                raise InvalidInput(
                    f"cannot attach a {kind} to note(s) {', '.join(missing)} of {tenant!r}: missing, or another "
                    "adapter's (a chat message, a document and a store item never share a note)"
                )

        self._write_transaction("attached/set", work)

    def attached(self, tenant: str, note_ids: Sequence[str]) -> list[Attached]:
        return self._attached(self._run("attached/get", tenant=tenant, ids=list(note_ids)))

    def attached_in_session(self, tenant: str, kind: AttachmentKind, session: str) -> list[Attached]:
        return self._attached(self._run("attached/session", tenant=tenant, kind=kind, session=session))

    def session_notes(self, tenant: str, session: str, source_prefix: str) -> list[str]:
        rows = self._run("attached/session_notes", tenant=tenant, session=session, source_prefix=source_prefix)
        return [r["id"] for r in rows]

    def keyed(self, tenant: str, *, limit: int | None, offset: int = 0) -> list[Attached]:
        rows = self._run("attached/keyed", tenant=tenant, limit=_ALL if limit is None else limit, offset=offset)
        return self._attached(rows)

    def keyed_tenants(self) -> list[str]:
        return [r["tenant"] for r in self._run("attached/keyed_tenants")]

    def attached_search(
        self, tenant: str, kind: AttachmentKind, vector: Sequence[float], k: int, *, external: bool, plain: bool = False
    ) -> list[Attached]:
        name = "attached/vector_search" if external else "attached/similar"
        rows = self._run(name, tenant=tenant, kind=kind, vector=[float(v) for v in vector], k=k, plain=plain)
        return self._attached(rows)

    def ids_of_other_tenants(self, tenant: str, note_ids: Sequence[str]) -> list[str]:
        return [r["id"] for r in self._run("attached/taken", tenant=tenant, ids=list(note_ids))]

    def _attached(self, rows: list[Record]) -> list[Attached]:
        return [
            Attached(
                note=self._note_from(r["note"]), attached=r["attached"], kind=r["kind"], store_key=r["store_key"],
                attached_at=time_of(r["attached_at"]),
                score=r.get("score"),
            )
            for r in rows
        ]
