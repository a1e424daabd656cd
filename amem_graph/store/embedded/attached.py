"""What the LangChain / LangGraph adapters keep on notes, in the embedded store (cypher/attached/ in Neo4j):
a mixin of the store's transaction, `EmbeddedTx`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

import numpy as np

from ...embedding import cosine
from ...models import Attached, Attachment, AttachmentKind, SearchFilter
from ..base import EVERY, Near
from .graph import Node, PropertyGraph
from .view import StoreView


def owner_then(props: Mapping[str, Any], as_of: datetime | None) -> str | None:
    """cypher/fragments/attached_by_then.cypher: the adapter that owned a note at `as_of` (now when None)."""
    first = (props.get("attached_before_at") or [props.get("attached_at")])[0]
    return props.get("attached_by") if as_of is None or (first is not None and first <= as_of) else None


class EmbeddedAttached:
    """Attachment primitives over the store's graph for one tenant."""

    graph: PropertyGraph
    tenant: str
    _store: StoreView

    def _item(self, node: Node, score: float | None = None) -> Attached:
        """cypher/fragments/attached_map.cypher."""
        return Attached(note=self._store.to_note(node), attached=node.props.get("attached"),
                        kind=node.props.get("attached_by"), store_key=node.props.get("store_key"),
                        attached_at=node.props.get("attached_at"), score=score)

    def attach(self, kind: AttachmentKind, attachments: Sequence[Attachment], now: datetime) -> list[str]:
        """cypher/attached/set.cypher."""
        done = []
        for a in attachments:
            node = self._store.note_node(self.tenant, a.note_id)
            if node is not None:
                vector = None if a.external_vector is None else [float(v) for v in a.external_vector]
                was = node.props.get("attached")
                kept = {} if was is None else {
                    "attached_before": [*(node.props.get("attached_before") or ()), "" if was == a.attached else was],
                    "attached_before_at": [*(node.props.get("attached_before_at") or ()), node.props.get("attached_at")],
                }
                self.graph.set(node, **kept, attached=a.attached, attached_by=kind, store_key=a.store_key,
                               external_vector=vector, attached_at=now)
                done.append(a.note_id)
        return done

    def attached(
        self, *, ids: Sequence[str] | None = None, session: str | None = None, keyed: bool = False,
        near: Near | None = None, limit: int = EVERY, offset: int = 0, superseded: bool = True,
        as_of: datetime | None = None,
    ) -> list[Attached]:
        """cypher/attached/get.cypher (`ids`), session.cypher, keyed.cypher; vector_search.cypher and similar.cypher
        (`near`)."""
        if near is not None:
            return self._near(near, offset + limit, superseded, as_of)[offset:]
        if ids is not None:
            nodes = [n for n in (self._store.note_node(self.tenant, i) for i in ids)
                     if n is not None and n.props.get("attached") is not None]
        elif session is not None:
            nodes = list(self.graph.in_session("Note", self.tenant, session))
            # ORDER BY seq: notes without one (none, in practice) last, as Cypher sorts nulls
            nodes.sort(key=lambda n: (n.props.get("seq") is None, n.props.get("seq") or 0))
        elif keyed:
            scope = SearchFilter(include_superseded=superseded, as_of=as_of)
            nodes = [n for n in self.graph.labelled("Note", self.tenant)
                     if n.props.get("store_key") is not None and owner_then(n.props, as_of) == "item"
                     and scope.admits(n.props)]
            nodes.sort(key=lambda n: n.props["store_key"])
            nodes.sort(key=lambda n: n.props["attached_at"], reverse=True)
        else:
            nodes = []
        return [self._item(n) for n in nodes[offset : offset + limit]]

    def _earlier_attachments(self, note_ids: Sequence[str]) -> dict[str, list[tuple[str, datetime]]]:
        """cypher/attached/history.cypher."""
        nodes = {i: self._store.note_node(self.tenant, i) for i in note_ids}
        return {i: list(zip(n.props["attached_before"], n.props["attached_before_at"], strict=True))
                for i, n in nodes.items() if n is not None and n.props.get("attached_before") is not None}

    def _near(self, near: Near, k: int, superseded: bool, as_of: datetime | None) -> list[Attached]:
        kind, external, plain = near.kind, near.external, near.plain
        query = np.asarray(near.vector, dtype=np.float32)
        scope = SearchFilter(include_superseded=superseded, as_of=as_of)
        scored = []
        for node in self.graph.labelled("Note", self.tenant):
            owner = owner_then(node.props, as_of)
            if not (owner == kind or (plain and not external and owner is None)) or not scope.admits(node.props):
                continue
            stored = node.props.get("external_vector" if external else "embedding")
            if stored is None or len(stored) != len(query):
                continue
            scored.append((node, (1.0 + cosine(stored, query)) / 2.0))
        scored.sort(key=lambda pair: (-pair[1], pair[0].props["id"]))
        return [self._item(n, score) for n, score in scored[:k]]
