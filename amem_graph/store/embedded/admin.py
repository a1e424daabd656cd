"""Whole-tenant and whole-database work in the embedded store: export and import (the same records as
the Neo4j store's, so a tenant moves between the two unchanged), and re-embedding after a model change."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from datetime import datetime
from itertools import islice
from typing import Any

import numpy as np

from ...errors import InvalidInput
from ...ingest import transfer
from ..base import StoreStats
from .attached import owner_then
from .graph import ConstraintViolation, Node, PropertyGraph

# What consolidation re-embeds, per kind: the label and the fields its vectors come from (as
# cypher/consolidate/*.cypher read them).
_EMBEDDED = {
    "notes": ("Note", ("content", "context", "keywords", "tags")),
    "passages": ("Passage", ("start", "end")),
    "pages": ("Page", ("user_text", "assistant_text")),
    "facts": ("Fact", ("text",)),
    "segments": ("Segment", ()),
}


def _plain(value: Any) -> Any:
    return value.astype(float).tolist() if isinstance(value, np.ndarray) else value


class EmbeddedAdmin:
    graph: PropertyGraph
    _read: Callable[[Callable[[], Any]], Any]
    _write: Callable[[Callable[[], Any]], Any]
    stats: Callable[..., StoreStats]

    def export_records(self, tenant: str, page: int = 2_000) -> Iterator[dict[str, Any]]:
        """Every node, then every relationship, of one tenant, as JSON-ready records (see ingest/transfer.py)."""
        def work() -> list[dict[str, Any]]:
            nodes = sorted((n for n in self.graph.nodes.values() if n.props.get("tenant") == tenant), key=lambda n: n.key)
            records = [
                {"kind": "node", "key": str(n.key), "labels": sorted(n.labels),
                 "props": {k: transfer.to_json(_plain(v)) for k, v in n.props.items()}}
                for n in nodes
            ]
            for node in nodes:
                for rel in sorted(self.graph.relationships(node), key=lambda r: r.key):
                    records.append({"kind": "relationship", "start": str(rel.start), "type": rel.type, "end": str(rel.end),
                                    "props": {k: transfer.to_json(_plain(v)) for k, v in rel.props.items()}})
            return records

        yield from self._read(work)

    def tenants(self, *, keyed: bool = False, prefix: str = "", as_of: datetime | None = None,
                of_notes: Sequence[str] | None = None) -> list[str]:
        if of_notes is not None:
            return self._read(lambda: [n.props["tenant"] if (n := self.graph.unique("Note", id=i)) is not None else ""
                                       for i in of_notes])
        if keyed:
            return self._read(lambda: sorted({n.props["tenant"] for n in self.graph.labelled("Note")
                                              if n.props.get("store_key") is not None
                                              and n.props["tenant"].startswith(prefix)
                                              and owner_then(n.props, as_of) == "item"}))
        return self._read(lambda: sorted({t for n in self.graph.nodes.values() if (t := n.props.get("tenant")) is not None}))

    def import_records(
        self, tenant: str, rows: Sequence[dict[str, Any]], relationships: Sequence[dict[str, Any]], batch: int = 1_000
    ) -> tuple[int, int]:
        """Create an exported tenant in one transaction (all or nothing)."""

        def work() -> tuple[int, int]:
            keys = {}
            for row in rows:
                props = dict(row["props"])
                if row["embedding"] is not None:
                    props["embedding"] = np.asarray(row["embedding"], dtype=np.float32)
                keys[row["key"]] = self.graph.create_node(row["labels"], props)
            if any(r["start"] not in keys or r["end"] not in keys for r in relationships):
                raise InvalidInput("the export has relationships to nodes it does not hold")
            for r in relationships:
                props = {k: transfer.from_json(v) for k, v in r["props"].items()}
                self.graph.create_rel(r["type"], keys[r["start"]], keys[r["end"]], props)
            return len(keys), len(relationships)

        try:
            return self._write(work)
        except ConstraintViolation as err:
            raise InvalidInput(f"the export clashes with what this store holds: {err}") from None

    # -- consolidation (a new embedding model) ----------------------------------------------------

    def embedding_texts(self, kind: str, after: str, limit: int) -> list[dict[str, Any]]:
        label, fields = _EMBEDDED[kind]

        def work() -> list[dict[str, Any]]:
            found = sorted((n for n in self.graph.labelled(label) if n.props["id"] > after), key=lambda n: n.props["id"])
            if kind == "segments":  # only those with a page vector, as segments.cypher MATCHes
                rows = ({"id": n.props["id"], "pages": p} for n in found if (p := self._page_vectors(n)))
            elif kind == "passages":  # with their note's content, as passages.cypher returns it
                rows = ({"id": n.props["id"], "start": n.props["start"], "end": n.props["end"],
                         "content": self.graph.nodes[rel.start].props["content"]}
                        for n in found for rel in self.graph.relationships(n, ["HAS_PASSAGE"], "in"))
            else:
                rows = ({"id": n.props["id"], **{f: n.props.get(f) for f in fields}} for n in found)
            return list(islice(rows, limit))

        return self._read(work)

    def write_embeddings(self, kind: str, rows: Sequence[tuple[str, list[float]]], reached: str | None) -> None:
        label, _ = _EMBEDDED[kind]
        vectors = [(i, np.asarray(v, dtype=np.float32)) for i, v in rows]

        def work() -> None:
            for item_id, vector in vectors:
                if (node := self.graph.unique(label, id=item_id)) is not None:
                    self.graph.set(node, embedding=vector)
            if (marker := self.graph.unique("AmemSchema", name="amem-graph")) is not None:
                self.graph.set(marker, consolidating=reached)

        self._write(work)

    def _page_vectors(self, segment: Node) -> list[np.ndarray]:
        pages = (self.graph.nodes[r.end].props.get("embedding") for r in self.graph.relationships(segment, ["HAS_PAGE"]))
        return [p for p in pages if p is not None]
