"""What the LangChain / LangGraph adapters keep on notes, in the embedded store (cypher/attached/ in Neo4j)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any

import numpy as np

from ... import validation
from ...errors import InvalidInput
from ...models import Attached, Attachment, AttachmentKind, Note
from .graph import Node, PropertyGraph


class EmbeddedAttached:
    graph: PropertyGraph
    _read: Callable[[Callable[[], Any]], Any]
    _write: Callable[[Callable[[], Any]], Any]
    note_node: Callable[[str, str], Node | None]
    to_note: Callable[..., Note]

    def attach(self, tenant: str, kind: AttachmentKind, attachments: Sequence[Attachment]) -> None:
        def work() -> None:
            now = validation.to_millis(datetime.now(timezone.utc))
            missing = []
            for a in attachments:
                node = self.note_node(tenant, a.note_id)
                if node is None or node.props.get("attached_by") not in (None, kind):
                    missing.append(a.note_id)
                    continue
                vector = None if a.external_vector is None else [float(v) for v in a.external_vector]
                self.graph.set(node, attached=a.attached, attached_by=kind, store_key=a.store_key,
                               external_vector=vector, attached_at=now)
            if missing:  # raised inside the transaction: nothing of the batch stays
                raise InvalidInput(
                    f"cannot attach a {kind} to note(s) {', '.join(missing)} of {tenant!r}: missing, or another "
                    "adapter's (a chat message, a document and a store item never share a note)"
                )

        if attachments:
            self._write(work)

    def attached(self, tenant: str, note_ids: Sequence[str]) -> list[Attached]:
        def work() -> list[Attached]:
            nodes = [self.note_node(tenant, i) for i in note_ids]
            return [self._attached(n) for n in nodes if n is not None and n.props.get("attached") is not None]

        return self._read(work)

    def attached_in_session(self, tenant: str, kind: AttachmentKind, session: str) -> list[Attached]:
        def work() -> list[Attached]:
            found = [n for n in self.graph.in_session("Note", tenant, session) if n.props.get("attached_by") == kind]
            # ORDER BY seq: notes without one (none, in practice) last, as Cypher sorts nulls
            return [self._attached(n) for n in sorted(found, key=lambda n: (n.props.get("seq") is None, n.props.get("seq") or 0))]

        return self._read(work)

    def session_notes(self, tenant: str, session: str, source_prefix: str) -> list[str]:
        return self._read(lambda: [n.props["id"] for n in self.graph.in_session("Note", tenant, session)
                                   if str(n.props.get("source", "")).startswith(source_prefix)])

    def keyed(self, tenant: str, *, limit: int | None, offset: int = 0) -> list[Attached]:
        def work() -> list[Attached]:
            items = [n for n in self.graph.labelled("Note", tenant)
                     if n.props.get("store_key") is not None and n.props.get("attached_by") == "item"]
            items.sort(key=lambda n: n.props["store_key"])
            items.sort(key=lambda n: n.props["attached_at"], reverse=True)
            end = None if limit is None else offset + limit
            return [self._attached(n) for n in items[offset:end]]

        return self._read(work)

    def keyed_tenants(self) -> list[str]:
        return self._read(lambda: sorted({n.props["tenant"] for n in self.graph.labelled("Note")
                                          if n.props.get("store_key") is not None and n.props.get("attached_by") == "item"}))

    def attached_search(
        self, tenant: str, kind: AttachmentKind, vector: Sequence[float], k: int, *, external: bool, plain: bool = False
    ) -> list[Attached]:
        query = np.asarray(vector, dtype=np.float32)

        def work() -> list[Attached]:
            scored = []
            for node in self.graph.labelled("Note", tenant):
                owner = node.props.get("attached_by")
                if not (owner == kind or (plain and not external and owner is None)):
                    continue
                stored = node.props.get("external_vector" if external else "embedding")
                if stored is None or len(stored) != len(query):
                    continue
                stored = np.asarray(stored, dtype=np.float32)
                cosine = float(stored @ query / (np.linalg.norm(stored) * np.linalg.norm(query) + 1e-12))
                scored.append((node, (1.0 + cosine) / 2.0))
            scored.sort(key=lambda pair: (-pair[1], pair[0].props["id"]))
            return [self._attached(n, score) for n, score in scored[:k]]

        return self._read(work)

    def ids_of_other_tenants(self, tenant: str, note_ids: Sequence[str]) -> list[str]:
        def work() -> list[str]:
            nodes = [self.graph.unique("Note", id=i) for i in note_ids]
            return [n.props["id"] for n in nodes if n is not None and n.props.get("tenant") != tenant]

        return self._read(work)

    def _attached(self, node: Node, score: float | None = None) -> Attached:
        return Attached(note=self.to_note(node), attached=node.props.get("attached"), kind=node.props.get("attached_by"),
                        store_key=node.props.get("store_key"), attached_at=node.props.get("attached_at"), score=score)
