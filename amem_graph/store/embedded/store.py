"""The embedded store: the engine's graph in this process (no server, no Java), kept in a folder.

It holds the same nodes, relationships and properties as the Neo4j store, so that export and import move a
tenant between them unchanged, and each method does what its statement in cypher/ does there; a behaviour
that differs between the two is a bug in one of them. Every write is one all-or-nothing transaction of the
graph, journaled to disk before it returns (see persist.py). One lock serialises the process's callers.

Done so far: schema, notes, links, evolutions, history, vector k-NN (exact), BM25 (fulltext.py), graph
expansion, the MemoryOS tiers (tiers.py), adapters' attachments (attached.py), export, import and
re-embedding (admin.py), stats."""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ... import validation
from ...embedding import canonical_model
from ...errors import EvolutionConflict, InvalidInput, NoteNotFound, SchemaMismatch
from ...log import event
from ...models import (
    LINK_TYPES,
    Evolution,
    Link,
    Note,
    NoteInput,
    NoteVersion,
    SearchFilter,
    Step,
    Supersession,
)
from ..base import MAX_HOPS, SCHEMA_VERSION, EvolutionOutcome, EvolutionWrite, StoreStats
from ..lucene import PAGE_FIELDS, TEXT_FIELDS, query_words
from ..records import evolution_from_record, note_from_record, note_row, version_from_record
from .admin import EmbeddedAdmin
from .attached import EmbeddedAttached
from .fulltext import FulltextIndex
from .graph import ConstraintViolation, Node, PropertyGraph, Rel
from .persist import Folder
from .tiers import EmbeddedTiers

T = TypeVar("T")
NO_FILTER = SearchFilter()
EXPANDED = ("NEXT", *sorted(LINK_TYPES))  # what expansion may follow (search/expand.cypher)
_VERSION_FIELDS = ("content", "context", "keywords", "tags", "category", "importance", "event_time", "analysis",
                   "model", "neighbourhood")


def _now() -> datetime:
    return validation.to_millis(datetime.now(timezone.utc))


def _passes(props: Mapping[str, Any], filters: SearchFilter) -> bool:
    """cypher/fragments/note_filter.cypher, but for the tenant (the callers scan one tenant)."""
    if not filters.include_superseded and props.get("invalid_at") is not None:
        return False
    event_time = props.get("event_time")
    if filters.after is not None and (event_time is None or event_time < filters.after):
        return False
    if filters.before is not None and (event_time is None or event_time >= filters.before):
        return False
    if filters.tags and not set(props.get("tags") or ()) & set(filters.tags):
        return False
    if filters.speakers and props.get("speaker") not in filters.speakers:
        return False
    return not filters.sessions or props.get("session") in filters.sessions


class EmbeddedStore(EmbeddedTiers, EmbeddedAttached, EmbeddedAdmin):
    """Notes, links, evolutions and the MemoryOS tiers in this process, persisted to `path`."""

    kind = "embedded"

    def __init__(self, path: Path | str) -> None:
        self._folder = Folder(Path(path))
        self.location = str(self._folder.path)
        self.dimension: int | None = None
        self._lock = threading.RLock()
        self.graph: PropertyGraph = self._folder.open()
        self._fulltext = FulltextIndex(TEXT_FIELDS)
        self._page_text = FulltextIndex(PAGE_FIELDS)
        self._vectors: dict[str, tuple[int, list[int], np.ndarray]] = {}  # tenant → (version, keys, unit rows)

    # -- plumbing ---------------------------------------------------------------------------------

    def _read(self, work: Callable[[], T]) -> T:
        with self._lock:
            return work()

    def _write(self, work: Callable[[], T]) -> T:
        with self._lock:
            with self.graph.transaction():
                result = work()
            if self._folder.checkpoint_due():
                try:
                    self._folder.save(self.graph)
                except OSError as err:  # the write is committed (journaled); the snapshot can wait
                    event("embedded_checkpoint_failed", path=self.location, error=str(err))
            return result

    def _note(self, tenant: str, note_id: str) -> Node | None:
        node = self.graph.unique("Note", id=note_id)
        return node if node is not None and node.props.get("tenant") == tenant else None

    def _lock_tenant(self, tenant: str) -> None:
        """cypher/fragments/tenant_lock.cypher: the node exists here too, so both stores hold the same graph."""
        lock = self.graph.unique("TenantLock", tenant=tenant)
        if lock is None:
            self.graph.create_node(["TenantLock"], {"tenant": tenant, "writes": 1})
        else:
            self.graph.set(lock, writes=lock.props.get("writes", 0) + 1)

    def _require_dimension(self) -> int:
        if self.dimension is None:
            raise SchemaMismatch("the store's schema has not been checked yet: call ensure_schema or check_schema")
        return self.dimension

    def _to_note(self, node: Node, *, links: bool = False, with_embedding: bool = False) -> Note:
        props = {k: v for k, v in node.props.items() if k not in ("embedding", "external_vector", "attached")}
        found = [self._link(rel) for rel in self.graph.relationships(node, LINK_TYPES, "both")] if links else []
        embedding = node.props.get("embedding") if with_embedding else None
        return note_from_record(props, found, embedding)

    def _link(self, rel: Rel) -> dict[str, Any]:
        return {
            "source_id": self.graph.nodes[rel.start].props["id"], "target_id": self.graph.nodes[rel.end].props["id"],
            "type": rel.type, "reason": rel.props.get("reason"), "confidence": rel.props.get("confidence"),
            "created_at": rel.props.get("created_at"), "invalid_at": rel.props.get("invalid_at"),
        }

    # -- schema -----------------------------------------------------------------------------------

    def ensure_schema(self, model: str, dimension: int, *, force: bool = False) -> None:
        marker = self._check(model, dimension)
        if marker is not None and marker.props.get("version") == SCHEMA_VERSION and not force:
            return

        def work() -> None:
            now = _now()
            props = {"version": SCHEMA_VERSION, "embedding_model": canonical_model(model),
                     "embedding_dimension": dimension, "updated_at": now}
            current = self.graph.unique("AmemSchema", name="amem-graph")
            if current is None:
                self.graph.create_node(["AmemSchema"], {"name": "amem-graph", "created_at": now, **props})
            else:
                self.graph.set(current, **props)

        self._write(work)

    def check_schema(self, model: str, dimension: int) -> None:
        self._check(model, dimension)

    def _check(self, model: str, dimension: int) -> Node | None:
        marker = self._read(lambda: self.graph.unique("AmemSchema", name="amem-graph"))
        if marker is not None:
            found = marker.props.get("embedding_dimension")
            if found is not None and int(found) != dimension:
                raise SchemaMismatch(
                    f"the notes in {self.location} have {found}-dimension embeddings, but the embedding model gives "
                    f"{dimension}: use the model the notes were embedded with (AMEM_EMBEDDING_MODEL)"
                )
            if int(marker.props.get("version") or 0) > SCHEMA_VERSION:
                raise SchemaMismatch(
                    f"{self.location} holds amem-graph schema version {marker.props['version']}, newer than this "
                    f"amem-graph understands ({SCHEMA_VERSION}): upgrade amem-graph"
                )
            stored = marker.props.get("embedding_model")
            if stored and stored != canonical_model(model):
                raise SchemaMismatch(
                    f"the notes in {self.location} were embedded with {stored!r}, not {canonical_model(model)!r}: "
                    f"set AMEM_EMBEDDING_MODEL={stored} (vectors of different models are not comparable)"
                )
        self.dimension = dimension
        return marker

    def vector_index(self) -> dict[str, Any] | None:
        if self.dimension is None:
            return None
        return {"name": "note_embedding", "type": "EXACT", "state": "ONLINE", "dimension": self.dimension}

    def indexes(self) -> list[dict[str, Any]]:
        vector = self.vector_index()
        return [vector] if vector else []

    # -- notes ------------------------------------------------------------------------------------

    def existing(self, tenant: str, notes: Sequence[NoteInput]) -> dict[int, str]:
        def work() -> dict[int, str]:
            found = {}
            for index, note in enumerate(notes):
                node = self.graph.unique("Note", tenant=tenant, source=note.source or "",
                                         content_hash=validation.content_hash(note.content))
                if node is not None:
                    found[index] = node.props["id"]
            return found

        return self._read(work)

    def add_notes(
        self, tenant: str, notes: Sequence[NoteInput], embeddings: np.ndarray, *, analysis: str, model: str | None
    ) -> list[str]:
        dimension = self._require_dimension()
        if len(notes) != len(embeddings):
            raise InvalidInput(f"{len(notes)} notes but {len(embeddings)} embeddings")
        rows = [note_row(n, v, analysis, model, dimension) for n, v in zip(notes, embeddings, strict=True)]
        if not rows:
            return []

        def work() -> list[str]:
            self._lock_tenant(tenant)
            now = _now()
            return [self._create_note(tenant, row, now)[0] for row in rows]

        try:
            return self._write(work)
        except ConstraintViolation as err:
            raise InvalidInput(f"a note id is already taken: {err}") from None

    def _create_note(self, tenant: str, row: dict[str, Any], now: datetime) -> tuple[str, bool]:
        """cypher/note/create.cypher for one row: (the note's id, whether it was created)."""
        found = self.graph.unique("Note", tenant=tenant, source=row["source"], content_hash=row["content_hash"])
        if found is not None:
            return found.props["id"], False
        props = {
            **{k: row[k] for k in ("id", "content", "content_hash", "source", "keywords", "tags", "context", "category",
                                   "importance", "event_time", "analysis", "model", "speaker", "neighbourhood")},
            "tenant": tenant, "retrieval_count": 0, "created_at": now, "updated_at": now, "version": 1,
            "valid_from": row["event_time"] or now, "embedding": np.asarray(row["embedding"], dtype=np.float32),
        }
        node = self.graph.create_node(["Note"], props)
        if row["session"] is not None:
            chained = [n for n in self.graph.in_session("Note", tenant, row["session"]) if n.props.get("seq") is not None]
            last = max(chained, key=lambda n: n.props["seq"], default=None)
            self.graph.set(node, session=row["session"], seq=(last.props["seq"] if last else 0) + 1)
            if last is not None:
                self.graph.create_rel("NEXT", last, node)
        return props["id"], True

    def get_note(self, tenant: str, note_id: str, *, with_embedding: bool = False) -> Note:
        def work() -> Note:
            node = self._note(tenant, note_id)
            if node is None:
                raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
            return self._to_note(node, links=True, with_embedding=with_embedding)

        return self._read(work)

    def update_note(
        self, tenant: str, note_id: str, changes: dict[str, Any], *, reason: str, embedding: np.ndarray | None,
        expected_version: int | None = None,
    ) -> None:
        vector = None if embedding is None else validation.vector(embedding, self._require_dimension())

        def work() -> None:
            self._lock_tenant(tenant)
            node = self._note(tenant, note_id)
            if node is None:
                raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
            if expected_version is not None and node.props["version"] != expected_version:
                raise EvolutionConflict([note_id])
            now = _now()
            self._keep_version(node, now, reason=reason)
            values = {k: (list(v) if isinstance(v, tuple) else v) for k, v in changes.items()}
            if vector is not None:
                values["embedding"] = np.asarray(vector, dtype=np.float32)
            self.graph.set(node, **values, version=node.props["version"] + 1, updated_at=now)

        try:
            self._write(work)
        except ConstraintViolation:
            raise InvalidInput(f"another note in tenant {tenant!r} already has this content from the same source") from None

    def _keep_version(self, node: Node, now: datetime, **extra: Any) -> Node:
        """cypher/fragments/version_props.cypher: the note as it is before a change."""
        props = {"note_id": node.props["id"], "tenant": node.props["tenant"], "version": node.props["version"],
                 **{k: node.props.get(k) for k in _VERSION_FIELDS},
                 "valid_from": node.props.get("updated_at"), "valid_to": now, **extra}
        version = self.graph.create_node(["NoteVersion"], props)
        self.graph.create_rel("HAS_VERSION", node, version)
        return version

    def delete_note(self, tenant: str, note_id: str) -> None:
        def work() -> None:
            self._lock_tenant(tenant)
            node = self._note(tenant, note_id)
            if node is None:
                raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
            versions = [self.graph.other(r, node) for r in self.graph.relationships(node, ["HAS_VERSION"])]
            evolutions = [
                self.graph.other(r, node) for r in self.graph.relationships(node, ["TRIGGERED_BY"], "in")
                if all(self.graph.other(v, self.graph.other(r, node)).props.get("note_id") == note_id
                       for v in self.graph.relationships(self.graph.other(r, node), ["REVISED"]))
            ]
            restored = [
                older for older in (self.graph.nodes[r.start] for r in self.graph.relationships(node, ["SUPERSEDED_BY"], "in"))
                if all(self.graph.nodes[s.end].key == node.key for s in self.graph.relationships(older, ["SUPERSEDED_BY"]))
            ]
            before = [self.graph.nodes[r.start] for r in self.graph.relationships(node, ["NEXT"], "in")]
            after = [self.graph.nodes[r.end] for r in self.graph.relationships(node, ["NEXT"], "out")]
            for b in before:
                for a in after:
                    self.graph.create_rel("NEXT", b, a)
            self.graph.delete_node(node)
            for doomed in (*versions, *evolutions):
                if doomed.key in self.graph.nodes:
                    self.graph.delete_node(doomed)
            for older in restored:
                self.graph.set(older, invalid_at=None)

        self._write(work)

    def list_notes(self, tenant: str, *, limit: int, offset: int = 0) -> list[Note]:
        def work() -> list[Note]:
            nodes = sorted(self.graph.labelled("Note", tenant), key=lambda n: n.props["id"])
            nodes.sort(key=lambda n: n.props["created_at"], reverse=True)
            return [self._to_note(n) for n in nodes[offset: offset + limit]]

        return self._read(work)

    def add_link(self, tenant: str, link: Link) -> Link:
        def work() -> Link | None:
            rows = self._create_links(tenant, [link], None, _now())
            return rows[0] if rows else None

        made = self._write(work)
        if made is None:
            raise NoteNotFound(f"cannot link {link.source_id!r} to {link.target_id!r}: both must be notes of {tenant!r}")
        return made

    def _create_links(self, tenant: str, links: Sequence[Link], evolution_id: str | None, now: datetime) -> list[Link]:
        """cypher/link/create.cypher: created once, then updated (and valid again)."""
        made = []
        for link in links:
            a, b = self._note(tenant, link.source_id), self._note(tenant, link.target_id)
            if a is None or b is None:
                continue
            kind = validation.link_type(link.type)
            rel = next((r for r in self.graph.relationships(a, [kind]) if r.end == b.key), None)
            if rel is None:
                rel = self.graph.create_rel(kind, a, b, {"created_at": now})
            self.graph.set_rel(rel, reason=link.reason, confidence=link.confidence, evolution_id=evolution_id,
                               invalid_at=None, invalid_reason=None, invalidated_by=None)
            made.append(Link(link.source_id, link.target_id, kind, rel.props.get("reason") or "",
                             float(rel.props.get("confidence", 1.0)), rel.props.get("created_at"), None))
        return made

    # -- evolution --------------------------------------------------------------------------------

    def apply_evolution(
        self, tenant: str, write: EvolutionWrite, *, link_budget: int, allow_stale: bool
    ) -> EvolutionOutcome:
        dimension = self._require_dimension()
        row = None
        if write.note is not None:
            if write.embedding is None:
                raise InvalidInput("a new note needs its vector")
            row = note_row(write.note, write.embedding, write.analysis, write.model, dimension, write.neighbourhood)
        revisions = [(r, None if r.embedding is None else validation.vector(r.embedding, dimension)) for r in write.revisions]

        def work() -> EvolutionOutcome:
            now = _now()
            self._lock_tenant(tenant)
            if row is not None:
                existing = self.graph.unique("Note", tenant=tenant, source=row["source"], content_hash=row["content_hash"])
                if existing is not None:
                    return EvolutionOutcome(existing.props["id"], created=False)
            touched = {r.id for r in write.revisions} | {link.target_id for link in write.links}
            current = {i: n.props["version"] for i in sorted(touched) if (n := self._note(tenant, i)) is not None}
            stale = [r.id for r in write.revisions if current.get(r.id) != r.expected_version]
            if stale and (not allow_stale or (row is None and write.trigger_id in stale)):
                raise EvolutionConflict(stale)
            decision = {**write.decision, "skipped_stale": stale}
            if row is not None:
                self._create_note(tenant, row, now)
            revised = [self._revise(tenant, r, vector, write.id, now) for r, vector in revisions if r.id not in stale]
            links = [link for link in write.links if link.target_id in current]
            self._create_links(tenant, links, write.id, now)
            known = current.keys() | {write.trigger_id}
            for old, new, reason in write.contradictions:
                if {old, new} <= known:
                    self._supersede(tenant, old, new, reason, write.id, now)
            linked = sorted({write.trigger_id} | {link.target_id for link in links}) if links else []
            decision["link_budget_invalidated"] = [d for i in linked for d in self._budget(tenant, i, link_budget, write.id, now)]
            self._record(tenant, write, decision, revised, now)
            return EvolutionOutcome(write.trigger_id, created=row is not None, revised=tuple(revised), decision=decision)

        try:
            return self._write(work)
        except ConstraintViolation as err:
            raise InvalidInput(f"a note id is already taken: {err}") from None

    def _revise(self, tenant: str, revision: Any, vector: list[float] | None, evolution_id: str, now: datetime) -> tuple[str, int]:
        """cypher/evolution/revise.cypher for one note: content is never touched."""
        node = self._note(tenant, revision.id)
        assert node is not None  # checked by the caller, under the same lock
        kept = self._keep_version(node, now, reason=revision.reason, evolution_id=evolution_id)
        values: dict[str, Any] = {"version": node.props["version"] + 1, "updated_at": now}
        for name in ("context", "tags", "keywords", "neighbourhood", "analysis"):
            value = getattr(revision, name)
            if value is not None:
                values[name] = list(value) if isinstance(value, tuple) else value
        if revision.analysis is not None:
            values["model"] = revision.model
        if vector is not None:
            values["embedding"] = np.asarray(vector, dtype=np.float32)
        self.graph.set(node, **values)
        return node.props["id"], int(kept.props["version"])

    def _supersede(self, tenant: str, old_id: str, new_id: str, reason: str, evolution_id: str, now: datetime) -> None:
        old, new = self._note(tenant, old_id), self._note(tenant, new_id)
        if old is None or new is None:
            return
        if old.props.get("invalid_at") is None:
            self.graph.set(old, invalid_at=now)
        if not any(r.end == new.key for r in self.graph.relationships(old, ["SUPERSEDED_BY"])):
            self.graph.create_rel("SUPERSEDED_BY", old, new, {"reason": reason, "at": now, "evolution_id": evolution_id})

    def _budget(self, tenant: str, note_id: str, budget: int, evolution_id: str, now: datetime) -> list[dict[str, str]]:
        """cypher/evolution/link_budget.cypher: the weakest valid links past the budget are invalidated."""
        node = self._note(tenant, note_id)
        if node is None:
            return []
        valid = [r for r in self.graph.relationships(node, LINK_TYPES, "both")
                 if r.props.get("invalid_at") is None and self.graph.other(r, node).labels == {"Note"}]
        valid.sort(key=lambda r: (r.props.get("confidence", 1.0), r.props.get("created_at") or now))
        dropped = valid[: max(0, len(valid) - budget)]
        for rel in dropped:
            self.graph.set_rel(rel, invalid_at=now, invalid_reason="link budget", invalidated_by=evolution_id)
        return [{"source_id": self.graph.nodes[r.start].props["id"], "target_id": self.graph.nodes[r.end].props["id"],
                 "type": r.type} for r in dropped]

    def _record(self, tenant: str, write: EvolutionWrite, decision: dict[str, Any], revised: list[tuple[str, int]],
                now: datetime) -> None:
        trigger = self._note(tenant, write.trigger_id)
        if trigger is None:
            return
        evolution = self.graph.create_node(["Evolution"], {
            "id": write.id, "tenant": tenant, "at": now, "trigger_note_id": write.trigger_id, "analysis": write.analysis,
            "model": write.model, "prompt_version": write.prompt_version, "decision": json.dumps(decision, sort_keys=True),
            "prompt_tokens": write.prompt_tokens, "completion_tokens": write.completion_tokens,
        })
        self.graph.create_rel("TRIGGERED_BY", evolution, trigger)
        for note_id, version in revised:
            note = self._note(tenant, note_id)
            for rel in self.graph.relationships(note, ["HAS_VERSION"]) if note else ():
                kept = self.graph.nodes[rel.end]
                if kept.props.get("version") == version:
                    self.graph.create_rel("REVISED", evolution, kept)

    # -- history ----------------------------------------------------------------------------------

    def versions(self, tenant: str, note_id: str) -> list[NoteVersion]:
        def work() -> list[NoteVersion]:
            node = self._note(tenant, note_id)
            kept = [self.graph.nodes[r.end] for r in self.graph.relationships(node, ["HAS_VERSION"])] if node else []
            return [version_from_record(v.props) for v in sorted(kept, key=lambda v: v.props["version"])]

        return self._read(work)

    def evolutions(self, tenant: str, note_id: str) -> list[Evolution]:
        def work() -> list[Evolution]:
            found = {e.key: e for e in self.graph.labelled("Evolution", tenant) if e.props.get("trigger_note_id") == note_id}
            node = self._note(tenant, note_id)
            for rel in self.graph.relationships(node, ["HAS_VERSION"]) if node else ():
                for revised in self.graph.relationships(self.graph.nodes[rel.end], ["REVISED"], "in"):
                    found[revised.start] = self.graph.nodes[revised.start]
            result = []
            for e in sorted(found.values(), key=lambda e: (e.props["at"], e.props["id"])):
                versions = [self.graph.nodes[r.end].props for r in self.graph.relationships(e, ["REVISED"])]
                result.append(evolution_from_record(e.props, [(v["note_id"], v["version"]) for v in versions]))
            return result

        return self._read(work)

    def superseded_by(self, tenant: str, note_id: str) -> list[Supersession]:
        def work() -> list[Supersession]:
            node = self._note(tenant, note_id)
            rels = sorted(self.graph.relationships(node, ["SUPERSEDED_BY"]), key=lambda r: r.props["at"]) if node else []
            return [Supersession(self.graph.nodes[r.end].props["id"], r.props.get("reason") or "", r.props.get("at"))
                    for r in rels]

        return self._read(work)

    def session_tail(self, tenant: str, session: str, n: int) -> list[Note]:
        def work() -> list[Note]:
            chained = [x for x in self.graph.in_session("Note", tenant, session) if x.props.get("seq") is not None]
            chained.sort(key=lambda x: x.props["seq"])
            return [self._to_note(x) for x in chained[-n:]] if n > 0 else []

        return self._read(work)

    def notes_by_analysis(self, tenant: str, kinds: Sequence[str], limit: int) -> list[str]:
        def work() -> list[str]:
            found = [n for n in self.graph.labelled("Note", tenant)
                     if n.props.get("analysis") in kinds and n.props.get("invalid_at") is None]
            found.sort(key=lambda n: (n.props["created_at"], n.props["id"]))
            return [n.props["id"] for n in found[:limit]]

        return self._read(work)

    # -- search -----------------------------------------------------------------------------------

    def vector_search(
        self, tenant: str, vector: np.ndarray, k: int, *, filters: SearchFilter = NO_FILTER, brief: bool = False
    ) -> list[tuple[Note, float]]:
        query = np.asarray(validation.vector(vector, self._require_dimension(), "query vector"), dtype=np.float32)

        def work() -> list[tuple[Note, float]]:
            keys, matrix = self._note_vectors(tenant)
            if not keys:
                return []
            scores = (1.0 + matrix @ (query / (np.linalg.norm(query) + 1e-12))) / 2.0  # as Neo4j's: in [0, 1]
            found = []
            for i in np.argsort(-scores, kind="stable"):  # ties in id order, as the matrix rows are
                node = self.graph.nodes.get(keys[i])
                if node is not None and _passes(node.props, filters):
                    found.append((self._to_note(node), float(scores[i])))
                    if len(found) == k:
                        break
            return found

        return self._read(work)

    def _note_vectors(self, tenant: str) -> tuple[list[int], np.ndarray]:
        """The tenant's note keys (in id order) and their unit vectors, rebuilt only after an embedding of the
        tenant changed (not on every access count, version or link)."""
        version = self.graph.vector_versions.get(("Note", tenant), 0)
        cached = self._vectors.get(tenant)
        if cached is None or cached[0] != version:
            nodes = sorted((n for n in self.graph.labelled("Note", tenant) if n.props.get("embedding") is not None),
                           key=lambda n: n.props["id"])
            matrix = np.vstack([n.props["embedding"] for n in nodes]) if nodes else np.zeros((0, 1), dtype=np.float32)
            if nodes:
                matrix = matrix / (np.linalg.norm(matrix, axis=1, keepdims=True) + 1e-12)
            cached = (version, [n.key for n in nodes], matrix.astype(np.float32))
            self._vectors[tenant] = cached
        return cached[1], cached[2]

    def fulltext_search(
        self, tenant: str, query: str, k: int, *, filters: SearchFilter = NO_FILTER,
        fields: Mapping[str, float] | None = None, brief: bool = False,
    ) -> list[tuple[Note, float]]:
        if fields is not None and (unknown := set(fields) - set(TEXT_FIELDS)):
            raise InvalidInput(f"unknown text fields {sorted(unknown)}: the index has {', '.join(TEXT_FIELDS)}")
        words = query_words(query)

        def work() -> list[tuple[Note, float]]:
            self._catch_up()
            scores = self._fulltext.scores(words, fields)
            found = [(key, score) for key, score in scores.items()
                     if self.graph.nodes[key].props.get("tenant") == tenant and _passes(self.graph.nodes[key].props, filters)]
            found.sort(key=lambda pair: (-pair[1], pair[0]))  # ties in insertion order, as Lucene's doc ids
            return [(self._to_note(self.graph.nodes[key]), float(score)) for key, score in found[:k]]

        return self._read(work) if words else []

    def _catch_up(self) -> None:
        """Bring the fulltext indexes up to the graph (under the store's lock)."""
        for key in self.graph.touched:
            node = self.graph.nodes.get(key)
            labels = node.labels if node is not None else frozenset()
            self._fulltext.update(key, node.props if "Note" in labels else None)
            self._page_text.update(key, node.props if "Page" in labels else None)
        self.graph.touched.clear()

    def expand(
        self, tenant: str, candidates: Mapping[str, float], seeds: Sequence[str], *, hops: int, decay: float,
        weights: Mapping[str, float], limit: int, names: Sequence[str] = (), speaker_prior: float = 0.0,
        deep_seeds: int = 5, filters: SearchFilter = NO_FILTER,
    ) -> list[tuple[Note, float, list[Step]]]:
        if not 0 <= hops <= MAX_HOPS:
            raise InvalidInput(f"hops must be 0-{MAX_HOPS}, got {hops}")
        followed = {t: float(w) for t, w in weights.items() if w > 0 and t in EXPANDED}

        def work() -> list[tuple[Note, float, list[Step]]]:
            best: dict[int, tuple[float, list[Step]]] = {}
            for note_id, score in candidates.items():
                node = self._note(tenant, note_id)
                if node is not None and (node.key not in best or score > best[node.key][0]):
                    best[node.key] = (score, [])
            seed_ids = set(seeds)
            for rank, seed_id in enumerate(seeds):
                seed = self._note(tenant, seed_id)
                if seed is None:
                    continue
                depth = hops if rank < deep_seeds else min(hops, 1)
                for node, factor, steps in self._paths(seed, depth, decay, followed):
                    if node.props["id"] in seed_ids or not _passes(node.props, filters):
                        continue
                    prior = speaker_prior if node.props.get("speaker") in names else 0.0
                    score = candidates[seed_id] * factor + prior
                    if node.key not in best or score > best[node.key][0]:
                        best[node.key] = (score, steps)
            ranked = sorted(best.items(), key=lambda item: (-item[1][0], self.graph.nodes[item[0]].props["id"]))[:limit]
            return [(self._to_note(self.graph.nodes[key]), score, steps) for key, (score, steps) in ranked]

        return self._read(work)

    def _paths(self, seed: Node, depth: int, decay: float, weights: Mapping[str, float]) -> Iterator[tuple[Node, float, list[Step]]]:
        """Every path of 1..depth valid, followed relationships from `seed` (no relationship twice, as
        Cypher's patterns), with its factor: per step decay × weight × confidence."""
        stack: list[tuple[Node, float, list[Step], frozenset[int]]] = [(seed, 1.0, [], frozenset())]
        while stack:
            node, factor, steps, used = stack.pop()
            if len(steps) == depth:
                continue
            for rel in self.graph.relationships(node, weights, "both"):
                if rel.key in used or rel.props.get("invalid_at") is not None:
                    continue
                nxt = self.graph.other(rel, node)
                if "Note" not in nxt.labels:
                    continue
                kind = "PREVIOUS" if rel.type == "NEXT" and rel.start != node.key else rel.type
                step = Step(from_id=node.props["id"], type=kind, reason=rel.props.get("reason") or "",
                            confidence=float(rel.props.get("confidence", 1.0)))
                gained = factor * decay * weights[rel.type] * float(rel.props.get("confidence", 1.0))
                yield nxt, gained, [*steps, step]
                stack.append((nxt, gained, [*steps, step], used | {rel.key}))

    def speakers(self, tenant: str) -> list[str]:
        return self._read(lambda: sorted({s for n in self.graph.labelled("Note", tenant) if (s := n.props.get("speaker"))}))

    def record_access(self, tenant: str, note_ids: Sequence[str]) -> None:
        def work() -> None:
            now = _now()
            for note_id in note_ids:
                if (node := self._note(tenant, note_id)) is not None:
                    self.graph.set(node, retrieval_count=node.props.get("retrieval_count", 0) + 1, last_accessed=now)

        self._write(work)

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
            schema = {k: (marker.props.get(k) if marker else None) for k in ("version", "embedding_model", "embedding_dimension")}
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

