"""The embedded store: the engine's graph in this process (no server, no Java), kept in a folder.

It holds the same nodes, relationships and properties as the Neo4j store, so that export and import move a
tenant between them unchanged, and each primitive does what its statement in cypher/ does there; a behaviour
that differs between the two is a bug in one of them. Every write is one all-or-nothing transaction of the
graph, journaled to disk before it returns (see persist.py). One lock serialises the process's callers.
Notes: notes.py; the MemoryOS tiers: tiers.py; adapters' attachments: attached.py; export, import and
re-embedding: admin.py; BM25: fulltext.py."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ...core import validation
from ...core.log import event
from ...embedding import canonical_model
from ...errors import StoreUnavailable
from ...models import LINK_TYPES, Note
from ..base import SCHEMA_VERSION, SchemaState, SchemaWrite, StoreStats, Tx, refuse_stale_writer
from ..bm25 import Statistics
from ..folded import Folded
from ..lucene import PAGE_FIELDS, TEXT_FIELDS
from ..records import note_from_record
from ..upgrade import folding
from .admin import EmbeddedAdmin
from .attached import EmbeddedAttached
from .entities import EmbeddedEntities
from .fulltext import FulltextIndex
from .graph import Node, PropertyGraph, Rel
from .notes import EmbeddedNotes
from .persist import Folder
from .tiers import EmbeddedTiers

T = TypeVar("T")


class EmbeddedTx(Folded, EmbeddedNotes, EmbeddedTiers, EmbeddedAttached, EmbeddedEntities):
    """The primitives of one transaction of one tenant."""


class EmbeddedStore(EmbeddedAdmin):
    """Notes, links, evolutions and the MemoryOS tiers in this process, persisted to `path`."""

    kind = "embedded"

    def __init__(self, path: Path | str, *, readers: bool = True, read_only: bool = False) -> None:
        """The store in `path`: this process writes it, or, when another process does and `readers` allows it,
        reads it, following that process's commits (`read_only`); with `read_only`, it reads it whether or not
        another process writes it (a viewer, a search from a terminal: never the writer)."""
        self._folder = Folder(Path(path))
        self.location = str(self._folder.path)
        self.dimension: int | None = None
        self.model: str | None = None
        self._lock = threading.RLock()
        self.graph: PropertyGraph = self._folder.open(readers=readers or read_only, only_read=read_only)
        self._fulltext = FulltextIndex(TEXT_FIELDS)
        self._page_text = FulltextIndex(PAGE_FIELDS)
        self._vectors: dict[tuple[str, str], tuple[int, list[int], np.ndarray]] = {}  # (label, tenant) → (version, keys, unit rows)
        # Claims of the analysis queue live with the process: one process holds the folder, so a claim it made
        # cannot outlive it (on Neo4j they are properties that expire).
        self._claims: dict[str, tuple[str, datetime]] = {}  # note id → (worker, until)

    # -- plumbing ---------------------------------------------------------------------------------

    @property
    def read_only(self) -> bool:
        """Whether another process writes the folder and this one only reads it."""
        return self._folder.reading

    def _follow(self) -> None:
        """A reader's graph brought up to the writer's last commit (under the store's lock)."""
        if not self._folder.reading:
            return
        graph = self._folder.follow(self.graph)
        if graph is not self.graph:  # loaded afresh (the writer compacted): the derived indexes start again
            self.graph = graph
            self._fulltext = FulltextIndex(TEXT_FIELDS)
            self._page_text = FulltextIndex(PAGE_FIELDS)
            self._vectors = {}

    def _read(self, work: Callable[[], T]) -> T:
        with self._lock:
            self._follow()
            return work()

    def _write(self, work: Callable[[], T]) -> T:
        with self._lock:
            if self._folder.reading:
                by = f"is written by process {self._folder.writer}" if self._folder.writer else "was opened to read"
                raise StoreUnavailable(
                    f"the embedded store in {self.location} {by}; this process only reads it (one process writes "
                    "at a time: stop that one to write here, or serve Neo4j to write from several)")
            with self.graph.transaction():
                result = work()
            if self._folder.checkpoint_due():
                try:
                    self._folder.save(self.graph)
                except OSError as err:  # the write is committed (journaled); the snapshot can wait
                    event("embedded_checkpoint_failed", path=self.location, error=str(err))
            return result

    def note_node(self, tenant: str, note_id: str) -> Node | None:
        node = self.graph.unique("Note", id=note_id)
        return node if node is not None and node.props.get("tenant") == tenant else None

    def _lock_tenant(self, tenant: str) -> None:
        """cypher/fragments/tenant_lock.cypher: the node exists here too, so both stores hold the same graph."""
        lock = self.graph.unique("TenantLock", tenant=tenant)
        if lock is None:
            self.graph.create_node(["TenantLock"], {"tenant": tenant, "writes": 1})
        else:
            self.graph.set(lock, writes=lock.props.get("writes", 0) + 1)

    def to_note(self, node: Node, *, links: bool = False, with_embedding: bool = False) -> Note:
        props = {k: v for k, v in node.props.items() if k not in ("embedding", "external_vector", "attached")}
        found = [self._link(rel) for rel in self.graph.relationships(node, LINK_TYPES, "both")] if links else []
        embedding = node.props.get("embedding") if with_embedding else None
        return note_from_record(props, found, embedding)

    def _link(self, rel: Rel) -> dict[str, Any]:
        return {
            "source_id": self.graph.nodes[rel.start].props["id"], "target_id": self.graph.nodes[rel.end].props["id"],
            "type": rel.type, "reason": rel.props.get("reason"), "confidence": rel.props.get("confidence"),
            "created_at": rel.props.get("created_at"), "invalid_at": rel.props.get("invalid_at"),
            "periods": rel.props.get("periods"),
        }

    # -- transactions -----------------------------------------------------------------------------

    def read(self, tenant: str, work: Callable[[Tx], T]) -> T:
        with self._lock:
            self._follow()
            return work(EmbeddedTx(self, tenant, validation.now()))

    def write(self, tenant: str, work: Callable[[Tx], T], *, lock: bool = True) -> T:
        def run() -> T:
            if lock:
                self._lock_tenant(tenant)
                marker = self.graph.unique("AmemSchema", name="amem-graph")
                refuse_stale_writer(marker.props if marker else None, self.model, self.location)
            return work(EmbeddedTx(self, tenant, validation.now()))

        return self._write(run)

    # -- schema -----------------------------------------------------------------------------------

    def schema(self, *, create: SchemaWrite | None = None) -> SchemaState:
        if create is not None and not self.read_only:  # a reader's schema is the writer's to create
            self._create_schema(create.model, create.dimension, create.found)
        return self._schema_state()

    def _schema_state(self) -> SchemaState:
        marker = self._read(lambda: self.graph.unique("AmemSchema", name="amem-graph"))
        props = marker.props if marker is not None else {}
        dimension = props.get("embedding_dimension")
        version = props.get("version")
        return SchemaState(
            version=None if version is None else int(version), model=props.get("embedding_model"),
            dimension=dimension, index_dimension=dimension,  # the exact k-NN is the index: it has the vectors' size
            consolidating=props.get("consolidating"),
        )

    def _create_schema(self, model: str, dimension: int, found: int | None) -> None:
        def work() -> None:
            if found is not None and found < 10:
                self._fold_versions()
            now = validation.now()
            props = {"version": SCHEMA_VERSION, "embedding_model": canonical_model(model),
                     "embedding_dimension": dimension, "updated_at": now}
            current = self.graph.unique("AmemSchema", name="amem-graph")
            if current is None:
                self.graph.create_node(["AmemSchema"], {"name": "amem-graph", "created_at": now, **props})
            else:
                self.graph.set(current, **props)

        self._write(work)
        self.dimension = dimension

    def _fold_versions(self) -> None:
        """cypher/migrate/v10_*.cypher: the versions notes kept of their neighbourhood alone fold away
        (store/upgrade.py), in the upgrade's one transaction (killed, the next open does it all again)."""
        graph = self.graph
        for note in list(graph.labelled("Note")):
            versions = {graph.other(r, note).props["version"]: graph.other(r, note)
                        for r in graph.relationships(note, ["HAS_VERSION"])}
            plan = folding(note.props["id"], note.props, [v.props for v in versions.values()])
            if plan is None:
                continue
            for number in plan.drop:
                graph.delete_node(versions[number])
            for old, new, start in plan.kept:
                graph.set(versions[old], version=new, valid_from=start if start is not None else
                          versions[old].props.get("valid_from"))
            graph.set(note, version=plan.version, updated_at=plan.updated_at or note.props.get("updated_at"),
                      neighbourhood_after=list(plan.neighbourhood_after))

    def indexes(self) -> list[dict[str, Any]]:
        """The exact k-NN, as `stats` lists Neo4j's vector index."""
        exact = {"name": "note_embedding", "type": "EXACT", "state": "ONLINE", "dimension": self.dimension}
        return [exact] if self.dimension is not None else []

    # -- what the primitives share ----------------------------------------------------------------

    def vectors(self, label: str, tenant: str) -> tuple[list[int], np.ndarray]:
        """The keys of the tenant's nodes of `label` (notes or passages; in id order) and their unit vectors,
        rebuilt only after an embedding of the tenant's changed (not on every access count, version or link)."""
        version = self.graph.vector_versions.get((label, tenant), 0)
        cached = self._vectors.get((label, tenant))
        if cached is None or cached[0] != version:
            nodes = sorted((n for n in self.graph.labelled(label, tenant) if n.props.get("embedding") is not None),
                           key=lambda n: n.props["id"])
            matrix = np.vstack([n.props["embedding"] for n in nodes]) if nodes else np.zeros((0, 1), dtype=np.float32)
            if nodes:
                matrix = matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12)
            cached = (version, [n.key for n in nodes], matrix.astype(np.float32))
            self._vectors[(label, tenant)] = cached
        return cached[1], cached[2]

    def note_scores(self, tenant: str, words: Sequence[str], fields: Mapping[str, float] | None) -> dict[int, float]:
        """BM25 of the tenant's notes for `words`, with the tenant's statistics (bm25.py)."""
        self._catch_up()
        return self._fulltext.scores(tenant, words, fields)

    def page_scores(self, tenant: str, words: Sequence[str], fields: Mapping[str, float] | None) -> dict[int, float]:
        """BM25 of the tenant's pages for `words`, with the tenant's statistics."""
        self._catch_up()
        return self._page_text.scores(tenant, words, fields)

    def statistics(self, index: str, tenant: str) -> Statistics:
        """The tenant's statistics of one index as its postings hold them."""
        self._catch_up()
        fulltext = {"note_text": self._fulltext, "page_text": self._page_text}[index]
        text = fulltext.tenants.get(tenant)
        if text is None:
            return Statistics({}, {}, {})
        return Statistics({f: n for f, n in text.docs.items() if n}, {f: n for f, n in text.tokens.items() if n},
                          {(f, t): len(held) for f, terms in text.postings.items() for t, held in terms.items()})

    def _catch_up(self) -> None:
        """Bring the fulltext indexes up to the graph (under the store's lock)."""
        for key in self.graph.touched:
            node = self.graph.nodes.get(key)
            labels = node.labels if node is not None else frozenset()
            self._fulltext.update(key, node.props if "Note" in labels else None)
            self._page_text.update(key, node.props if "Page" in labels else None)
        self.graph.touched.clear()

    # -- the analysis queue -----------------------------------------------------------------------

    def claim_analyses(
        self, worker: str, limit: int, lease_s: float, *, release: Sequence[str] = (),
    ) -> list[tuple[str, str]]:
        """cypher/analysis/release.cypher, lock.cypher and claim.cypher, over the claims this process holds."""

        def work() -> list[tuple[str, str]]:
            for note_id in release:
                if self._claims.get(note_id, ("", None))[0] == worker:
                    del self._claims[note_id]
            now = validation.now()
            busy: Counter[str] = Counter()
            free: dict[str, list[Node]] = {}
            for node in sorted(self.graph.having("Note", "pending"), key=lambda n: (n.props["created_at"], n.props["id"])):
                claim = self._claims.get(node.props["id"])
                if claim is not None and claim[1] > now:
                    busy[node.props["tenant"]] += 1
                else:
                    free.setdefault(node.props["tenant"], []).append(node)
            turns = sorted(((busy[tenant] + place, node.props["created_at"], node.props["id"], tenant)
                            for tenant, nodes in free.items() for place, node in enumerate(nodes[: max(0, limit)])))
            until = now + timedelta(seconds=lease_s)
            claimed = [(tenant, note_id) for _, _, note_id, tenant in turns[: max(0, limit)]]
            self._claims.update((note_id, (worker, until)) for _, note_id in claimed)
            return claimed

        return self._read(work)

    def analysis_queue(self, tenant: str | None = None) -> tuple[int, datetime | None]:
        def work() -> tuple[int, datetime | None]:
            pending = [n for n in self.graph.having("Note", "pending") if tenant is None or n.props["tenant"] == tenant]
            return len(pending), min((n.props["created_at"] for n in pending), default=None)

        return self._read(work)

    # -- admin ------------------------------------------------------------------------------------

    def delete_tenant(self, tenant: str) -> int:
        def work() -> int:
            doomed = {n.key for label in self.graph.labels() for n in self.graph.labelled(label, tenant)}
            for key in doomed:
                self.graph.delete_node(self.graph.nodes[key])
            return len(doomed)

        return self._write(work)

    def stats(self, tenant: str | None = None) -> StoreStats:
        def work() -> StoreStats:
            nodes = [n for n in self.graph.nodes.values() if tenant is None or n.props.get("tenant") == tenant]
            labels: dict[str, int] = {}
            for node in nodes:
                for label in node.labels:
                    labels[label] = labels.get(label, 0) + 1
            relationships: dict[str, int] = {}
            for node in nodes:
                for rel in self.graph.relationships(node):
                    relationships[rel.type] = relationships.get(rel.type, 0) + 1
            evolutions: dict[str, dict[str, int]] = {}
            for e in (n for n in nodes if "Evolution" in n.labels):
                totals = evolutions.setdefault(e.props.get("analysis"), {"evolutions": 0, "prompt_tokens": 0,
                                                                          "completion_tokens": 0})
                totals["evolutions"] += 1
                totals["prompt_tokens"] += int(e.props.get("prompt_tokens") or 0)
                totals["completion_tokens"] += int(e.props.get("completion_tokens") or 0)
            marker = self.graph.unique("AmemSchema", name="amem-graph")
            schema = {k: (marker.props.get(k) if marker else None)
                      for k in ("version", "embedding_model", "embedding_dimension", "consolidating")}
            return StoreStats(self.kind, self.location, dict(sorted(labels.items())), dict(sorted(relationships.items())),
                              self.indexes(), schema, dict(sorted(evolutions.items(), key=lambda kv: str(kv[0]))))

        return self._read(work)

    def close(self) -> None:
        """Write a snapshot if anything was committed since the last one (the journal holds it meanwhile),
        and let the folder go. Closing twice is harmless."""
        with self._lock:
            try:
                if self._folder.is_open and self._folder.unsaved():
                    self._folder.save(self.graph)
            finally:
                self._folder.close()

