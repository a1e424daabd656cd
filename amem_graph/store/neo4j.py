"""The Neo4j backend: named Cypher statements over the official driver, every query scoped by tenant."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime, timezone
from typing import Any

import numpy as np
from neo4j import (
    Driver,
    GraphDatabase,
    ManagedTransaction,
    NotificationMinimumSeverity,
    Record,
    RoutingControl,
)
from neo4j.exceptions import (
    AuthError,
    ConfigurationError,
    ConstraintError,
    DriverError,
    Neo4jError,
    ServiceUnavailable,
    SessionExpired,
)

from .. import cypher, transfer, validation
from ..embedding import canonical_model
from ..errors import (
    EvolutionConflict,
    InvalidInput,
    NoteNotFound,
    SchemaMismatch,
    StoreError,
    StoreUnavailable,
)
from ..log import event
from ..models import (
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
from .base import MAX_HOPS, SCHEMA_VERSION, EvolutionOutcome, EvolutionWrite, StoreStats
from .lucene import lucene_query
from .neo4j_attached import Neo4jAttached
from .neo4j_tiers import Neo4jTiers
from .records import (
    evolution_from_record,
    link_from_record,
    note_from_record,
    note_row,
    time_of,
    version_from_record,
)

_UNREACHABLE = (ServiceUnavailable, SessionExpired, OSError)


MAX_FETCH = 20_000  # the most notes one k-NN query asks the shared vector index for
NO_FILTER = SearchFilter()
# What consolidation re-embeds: kind → (statement reading its texts, statement writing its vectors).
_CONSOLIDATED = {
    "notes": ("consolidate/notes", "consolidate/set_note_embeddings"),
    "pages": ("consolidate/pages", "consolidate/set_page_embeddings"),
    "facts": ("consolidate/facts", "consolidate/set_fact_embeddings"),
}


def _note(props: dict[str, Any], brief: bool) -> Note:
    """A note from a full map (@note_map) or a brief one (@note_brief: id, content, speaker, session, event
    time), which ranking uses before it reads the final notes in full."""
    if brief:
        return Note(
            id=props["id"], tenant=props["tenant"], content=props["content"], content_hash="",
            speaker=props.get("speaker"), session=props.get("session"), event_time=time_of(props.get("event_time")),
        )
    return note_from_record(props)


class _Repeat(Exception):  # control flow inside one transaction function; never escapes it
    """The note of an evolution turned out to exist already: the transaction rolls back."""

    def __init__(self, note_id: str) -> None:
        super().__init__(note_id)
        self.note_id = note_id


def _link_row(link: Link) -> dict[str, Any]:
    return {
        "source_id": link.source_id, "target_id": link.target_id, "type": validation.link_type(link.type),
        "reason": link.reason, "confidence": link.confidence,
    }


def _now() -> datetime:
    return validation.to_millis(datetime.now(timezone.utc))


class Neo4jStore(Neo4jTiers, Neo4jAttached):
    """Notes and the MemoryOS tiers in Neo4j 5.26+ (Community or Enterprise, single server, cluster or Aura)."""

    kind = "neo4j"
    _note_from = staticmethod(note_from_record)  # for the mixins, which cannot import this module

    def __init__(self, uri: str, user: str, password: str, database: str | None = None) -> None:
        self.location = uri
        self.database = database
        self.dimension: int | None = None
        self._overfetch: dict[tuple[str, bool], float] = {}  # (tenant, filtered) → k-NN over-fetch multiple
        try:
            self._driver: Driver = GraphDatabase.driver(
                uri,
                auth=(user, password),
                connection_timeout=5.0,
                connection_acquisition_timeout=10.0,
                max_transaction_retry_time=15.0,
                # "property does not exist yet" warnings are expected on a young graph; they are noise.
                notifications_min_severity=NotificationMinimumSeverity.OFF,
            )
        except (ConfigurationError, ValueError) as err:
            raise StoreUnavailable(f"cannot use NEO4J_URI {uri!r}: {err}") from None
        try:
            self._driver.verify_connectivity()
        except AuthError as err:
            self._driver.close()
            raise StoreUnavailable(f"Neo4j at {uri} refused the credentials of user {user!r}: {err.message}") from None
        except (*_UNREACHABLE, DriverError, Neo4jError) as err:
            self._driver.close()
            raise StoreUnavailable(
                f"cannot reach Neo4j at {uri}: {err}. Start it (`amem-graph neo4j start`) or check NEO4J_URI."
            ) from None

    # -- plumbing -------------------------------------------------------------------------------

    def _run(self, name: str, *, write: bool = False, **params: Any) -> list[Record]:
        """Run one named statement in a managed (retried) transaction."""
        with self._translated(name):
            result = self._driver.execute_query(
                cypher.load(name),
                params,
                database_=self.database,
                routing_=RoutingControl.WRITE if write else RoutingControl.READ,
            )
        return result.records

    def _write_transaction(self, name: str, work: Callable[[ManagedTransaction], Any]) -> Any:
        """Run several statements as one write transaction, retried by the driver on transient errors."""
        with self._translated(name), self._driver.session(database=self.database) as session:
            return session.execute_write(work)

    @contextmanager
    def _translated(self, name: str) -> Iterator[None]:
        """Constraint violations pass through for the caller to explain; every other database failure
        becomes a StoreError that names the server and the statement."""
        try:
            yield
        except ConstraintError:
            raise
        except AuthError as err:
            raise StoreUnavailable(f"Neo4j at {self.location} refused the credentials: {err.message}") from None
        except _UNREACHABLE as err:
            raise StoreUnavailable(f"lost Neo4j at {self.location}: {err}") from None
        except Neo4jError as err:
            raise StoreError(f"Neo4j at {self.location} failed {name}: {err.code}: {err.message}") from None
        except DriverError as err:
            raise StoreError(f"Neo4j at {self.location} failed {name}: {err}") from None

    # -- schema ---------------------------------------------------------------------------------

    def ensure_schema(self, model: str, dimension: int, *, force: bool = False) -> None:
        marker = self._check(model, dimension)
        current = marker["version"] == SCHEMA_VERSION and marker["vector_index"] is not None
        if current and not force:  # opening a memory costs two reads, not a round of DDL
            return
        if marker["version"] is not None and int(marker["version"]) < 3:
            self._run("migrate/v3_note_text", write=True)
        for name, _ in cypher.schema_statements():
            self._run(name, write=True, dimension=dimension)
        self._run("admin/await_indexes", write=True, timeout_s=300)
        self._run(
            "admin/schema_marker_set", write=True, version=SCHEMA_VERSION, model=canonical_model(model),
            dimension=dimension, now=_now(),
        )

    def check_schema(self, model: str, dimension: int) -> None:
        self._check(model, dimension)

    def _check(self, model: str, dimension: int) -> dict[str, Any]:
        """Refuse a database built for another dimension, model or a newer schema.
        Returns the schema marker, with the vector index's description under "vector_index"."""
        index = self.vector_index()
        marker = self._run("admin/schema_marker_get")[0].data()
        for found in (index and index["dimension"], marker["embedding_dimension"]):
            if found is not None and int(found) != dimension:
                raise SchemaMismatch(
                    f"the notes in {self.location} have {found}-dimension embeddings (vector index "
                    f"note_embedding), but the embedding model gives {dimension}: use the model the notes "
                    "were embedded with (AMEM_EMBEDDING_MODEL) or re-embed them into a fresh database"
                )
        if marker["version"] is not None and int(marker["version"]) > SCHEMA_VERSION:
            raise SchemaMismatch(
                f"{self.location} holds amem-graph schema version {marker['version']}, newer than this "
                f"amem-graph understands ({SCHEMA_VERSION}): upgrade amem-graph"
            )
        if marker["embedding_model"] and marker["embedding_model"] != canonical_model(model):
            raise SchemaMismatch(
                f"the notes in {self.location} were embedded with {marker['embedding_model']!r}, not "
                f"{canonical_model(model)!r}: set AMEM_EMBEDDING_MODEL={marker['embedding_model']} "
                "(vectors of different models are not comparable)"
            )
        self.dimension = dimension
        return {**marker, "vector_index": index}

    def vector_index(self) -> dict[str, Any] | None:
        rows = self._run("admin/vector_index")
        return rows[0].data() if rows else None

    def indexes(self) -> list[dict[str, Any]]:
        return [r.data() for r in self._run("admin/indexes")]

    def _require_dimension(self) -> int:
        if self.dimension is None:
            raise SchemaMismatch("the store's schema has not been checked yet: call ensure_schema or check_schema")
        return self.dimension

    # -- notes ----------------------------------------------------------------------------------

    def existing(self, tenant: str, notes: Sequence[NoteInput]) -> dict[int, str]:
        keys = [
            {"index": i, "source": n.source or "", "content_hash": validation.content_hash(n.content)}
            for i, n in enumerate(notes)
        ]
        return {r["index"]: r["id"] for r in self._run("note/existing", tenant=tenant, keys=keys)}

    def add_notes(
        self, tenant: str, notes: Sequence[NoteInput], embeddings: np.ndarray, *, analysis: str, model: str | None
    ) -> list[str]:
        dimension = self._require_dimension()
        if len(notes) != len(embeddings):
            raise InvalidInput(f"{len(notes)} notes but {len(embeddings)} embeddings")
        rows = [note_row(n, vector, analysis, model, dimension) for n, vector in zip(notes, embeddings, strict=True)]
        if not rows:
            return []
        try:
            records = self._run("note/create", write=True, tenant=tenant, rows=rows, now=_now())
        except ConstraintError as err:
            raise InvalidInput(f"a note id is already taken: {err.message}") from None
        ids = {r["requested_id"]: r["id"] for r in records}
        return [ids[n.id] for n in notes]

    def get_note(self, tenant: str, note_id: str, *, with_embedding: bool = False) -> Note:
        rows = self._run(
            "note/get", tenant=tenant, id=note_id, link_types=sorted(LINK_TYPES), with_embedding=with_embedding
        )
        if not rows:
            raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
        row = rows[0]
        return note_from_record(row["note"], row["links"], row["embedding"])

    def update_note(
        self, tenant: str, note_id: str, changes: dict[str, Any], *, reason: str, embedding: np.ndarray | None,
        expected_version: int | None = None,
    ) -> None:
        vector = None if embedding is None else validation.vector(embedding, self._require_dimension())
        try:
            rows = self._run(
                "note/update", write=True, tenant=tenant, id=note_id, changes=changes, reason=reason,
                embedding=vector, now=_now(), expected_version=expected_version,
            )
        except ConstraintError:
            raise InvalidInput(
                f"another note in tenant {tenant!r} already has this content from the same source"
            ) from None
        if not rows:
            raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
        if expected_version is not None and rows[0]["found"] != expected_version:
            raise EvolutionConflict([note_id])

    def delete_note(self, tenant: str, note_id: str) -> None:
        rows = self._run("note/delete", write=True, tenant=tenant, id=note_id)
        if not rows:
            raise NoteNotFound(f"no note {note_id!r} in tenant {tenant!r}")
        if restored := rows[0]["restored"]:
            event("facts_restored", logging.INFO, deleted=note_id, restored=restored)

    def list_notes(self, tenant: str, *, limit: int, offset: int = 0) -> list[Note]:
        return [note_from_record(r["note"]) for r in self._run("note/list", tenant=tenant, limit=limit, offset=offset)]

    def add_link(self, tenant: str, link: Link) -> Link:
        rows = self._run("link/create", write=True, tenant=tenant, rows=[_link_row(link)], evolution_id=None, now=_now())
        if not rows:
            raise NoteNotFound(f"cannot link {link.source_id!r} to {link.target_id!r}: both must be notes of {tenant!r}")
        return link_from_record(rows[0].data())

    # -- evolution ------------------------------------------------------------------------------

    def apply_evolution(
        self, tenant: str, write: EvolutionWrite, *, link_budget: int, allow_stale: bool
    ) -> EvolutionOutcome:
        dimension = self._require_dimension()
        new_row = None
        if write.note is not None:
            if write.embedding is None:
                raise InvalidInput("a new note needs its vector")
            new_row = note_row(
                write.note, write.embedding, write.analysis, write.model, dimension, write.neighbourhood
            )
        revisions = [
            {
                "id": r.id, "expected_version": r.expected_version, "reason": r.reason,
                "embedding": None if r.embedding is None else validation.vector(r.embedding, dimension),
                "context": r.context, "neighbourhood": r.neighbourhood,
                "tags": None if r.tags is None else list(r.tags),
                "keywords": None if r.keywords is None else list(r.keywords), "analysis": r.analysis, "model": r.model,
            }
            for r in write.revisions
        ]
        now = _now()

        def run(tx: ManagedTransaction, name: str, **params: Any) -> list[Record]:
            return list(tx.run(cypher.load(name), {"tenant": tenant, "now": now, "evolution_id": write.id, **params}))

        def each(tx: ManagedTransaction, name: str, rows_param: str, rows: list[Any], **params: Any) -> list[Record]:
            """A statement that UNWINDs `rows`: no round trip when there are none."""
            return run(tx, name, **{rows_param: rows}, **params) if rows else []

        def work(tx: ManagedTransaction) -> EvolutionOutcome:
            identity = {"source": None, "content_hash": None}
            if new_row is not None:
                identity = {"source": new_row["source"], "content_hash": new_row["content_hash"]}
            if existing := run(tx, "evolution/begin", **identity)[0]["existing_id"]:
                return EvolutionOutcome(existing, created=False)
            touched = sorted({r["id"] for r in revisions} | {link.target_id for link in write.links})
            current = {r["id"]: r["version"] for r in each(tx, "evolution/note_versions", "ids", touched)}
            stale = [r["id"] for r in revisions if current.get(r["id"]) != r["expected_version"]]
            # A reanalysis whose own note moved on is never applied: its analysis described another version.
            if stale and (not allow_stale or (new_row is None and write.trigger_id in stale)):
                raise EvolutionConflict(stale)
            decision = {**write.decision, "skipped_stale": stale}
            if new_row is not None and not (created := run(tx, "note/create", rows=[new_row])[0])["created"]:
                raise _Repeat(created["id"])  # a writer without the lock got there first: roll back
            fresh = [r for r in revisions if r["id"] not in stale]
            revised = [(r["note_id"], r["version"]) for r in each(tx, "evolution/revise", "revisions", fresh)]
            links = [_link_row(link) for link in write.links if link.target_id in current]
            each(tx, "link/create", "rows", links)
            contradictions = [
                {"old_id": old, "new_id": new, "reason": reason}
                for old, new, reason in write.contradictions if {old, new} <= current.keys() | {write.trigger_id}
            ]
            each(tx, "evolution/supersede", "contradictions", contradictions)
            linked = sorted({write.trigger_id} | {row["target_id"] for row in links}) if links else []
            budget = each(tx, "evolution/link_budget", "ids", linked, budget=link_budget, link_types=sorted(LINK_TYPES))
            decision["link_budget_invalidated"] = [d for row in budget for d in row["dropped"]]
            run(
                tx, "evolution/record", trigger_id=write.trigger_id, analysis=write.analysis, model=write.model,
                prompt_version=write.prompt_version, decision=json.dumps(decision, sort_keys=True),
                prompt_tokens=write.prompt_tokens, completion_tokens=write.completion_tokens,
                revised=[{"note_id": note_id, "version": version} for note_id, version in revised],
            )
            return EvolutionOutcome(write.trigger_id, created=new_row is not None, revised=tuple(revised), decision=decision)

        try:
            return self._write_transaction("evolution", work)
        except _Repeat as repeat:
            return EvolutionOutcome(repeat.note_id, created=False)
        except ConstraintError as err:
            raise InvalidInput(f"a note id is already taken: {err.message}") from None

    def versions(self, tenant: str, note_id: str) -> list[NoteVersion]:
        return [version_from_record(r["version"]) for r in self._run("history/versions", tenant=tenant, id=note_id)]

    def evolutions(self, tenant: str, note_id: str) -> list[Evolution]:
        return [
            evolution_from_record(r["evolution"], r["revised"])
            for r in self._run("history/evolutions", tenant=tenant, id=note_id)
        ]

    def superseded_by(self, tenant: str, note_id: str) -> list[Supersession]:
        return [
            Supersession(r["id"], r["reason"] or "", time_of(r["at"]))
            for r in self._run("history/superseded_by", tenant=tenant, id=note_id)
        ]

    def session_tail(self, tenant: str, session: str, n: int) -> list[Note]:
        return [note_from_record(r["note"]) for r in self._run("session/tail", tenant=tenant, session=session, n=n)]

    def notes_by_analysis(self, tenant: str, kinds: Sequence[str], limit: int) -> list[str]:
        return [r["id"] for r in self._run("note/by_analysis", tenant=tenant, kinds=list(kinds), limit=limit)]

    # -- search ---------------------------------------------------------------------------------

    def vector_search(
        self, tenant: str, vector: np.ndarray, k: int, *, filters: SearchFilter = NO_FILTER, brief: bool = False
    ) -> list[tuple[Note, float]]:
        query = validation.vector(vector, self._require_dimension(), "query vector")
        params = {"tenant": tenant, "vector": query, "k": k, "brief": brief, **filters.params()}
        # The index is shared by all tenants and cannot filter while it searches: over-fetch by a multiple
        # sized from the share of this tenant's (and filter's) notes the last query saw, widen once by
        # the share this one saw, then scan the tenant exactly (also the path for tenants under k notes).
        key = (tenant, filters != NO_FILTER)
        fetch = min(MAX_FETCH, max(round(self._overfetch.get(key, 2.0) * k), 20))
        rows: list[Record] = []
        for _ in range(2):
            rows = self._run("note/vector_search", fetch=fetch, **params)
            matched = rows[0]["matched"] if rows else 0
            self._overfetch[key] = max(2.0, 1.5 * fetch / matched if matched else 10.0 * fetch / k)
            if len(rows) >= k or fetch >= MAX_FETCH:
                break
            fetch = min(MAX_FETCH, round(self._overfetch[key] * k))
        if len(rows) < k:
            rows = self._run("note/vector_search_exact", **params)
        return [(_note(r["note"], brief), float(r["score"])) for r in rows]

    def fulltext_search(
        self, tenant: str, query: str, k: int, *, filters: SearchFilter = NO_FILTER,
        fields: Mapping[str, float] | None = None, brief: bool = False,
    ) -> list[tuple[Note, float]]:
        terms = lucene_query(query, fields)
        if not terms:  # nothing Lucene could match (punctuation only)
            return []
        rows = self._run("note/fulltext_search", tenant=tenant, query=terms, k=k, brief=brief, **filters.params())
        return [(_note(r["note"], brief), float(r["score"])) for r in rows]

    def expand(
        self, tenant: str, candidates: Mapping[str, float], seeds: Sequence[str], *, hops: int, decay: float,
        weights: Mapping[str, float], limit: int, names: Sequence[str] = (), speaker_prior: float = 0.0,
        deep_seeds: int = 5, filters: SearchFilter = NO_FILTER,
    ) -> list[tuple[Note, float, list[Step]]]:
        if not 0 <= hops <= MAX_HOPS:
            raise InvalidInput(f"hops must be 0-{MAX_HOPS}, got {hops}")
        rows = self._run(
            "search/expand", tenant=tenant, candidates=[{"id": i, "score": s} for i, s in candidates.items()],
            seeds=[{"id": i, "score": candidates[i]} for i in seeds], seed_ids=list(seeds), hops=hops, decay=decay,
            weights={t: float(w) for t, w in weights.items() if w > 0}, limit=limit, names=list(names),
            speaker_prior=speaker_prior, deep_seeds=deep_seeds, **filters.params(),
        )
        return [
            (note_from_record(r["note"]), float(r["score"]), [Step(**step) for step in r["path"]]) for r in rows
        ]

    def speakers(self, tenant: str) -> list[str]:
        return [r["speaker"] for r in self._run("search/speakers", tenant=tenant)]

    def record_access(self, tenant: str, note_ids: Sequence[str]) -> None:
        if note_ids:
            self._run("search/record_access", write=True, tenant=tenant, ids=list(note_ids), now=_now())

    # -- consolidation (a new embedding model) --------------------------------------------------

    def begin_consolidation(self, model: str, dimension: int) -> None:
        """Drop the vector index (it has the old dimension) and mark the database as the new model's."""
        self._run("consolidate/drop_vector_index", write=True)
        marker = self._run("admin/schema_marker_get")[0].data()
        self._run(
            "admin/schema_marker_set", write=True, version=marker["version"] or SCHEMA_VERSION,
            model=canonical_model(model), dimension=dimension, now=_now(),
        )
        self.dimension = dimension

    def embedding_texts(self, kind: str, after: str, limit: int) -> list[dict[str, Any]]:
        """A page of notes, pages or facts (every tenant), by id, with the fields their vectors come from."""
        return [r.data() for r in self._run(_CONSOLIDATED[kind][0], after=after, limit=limit)]

    def write_embeddings(self, kind: str, rows: Sequence[tuple[str, np.ndarray]]) -> None:
        dimension = self._require_dimension()
        self._run(
            _CONSOLIDATED[kind][1], write=True,
            rows=[{"id": i, "embedding": validation.vector(v, dimension)} for i, v in rows],
        )

    def segment_centroids(self) -> int:
        """Each segment's vector again, as the mean of its pages' new ones."""
        return int(self._run("consolidate/segment_centroids", write=True)[0]["segments"])

    def export_records(self, tenant: str, page: int = 2_000) -> Iterator[dict[str, Any]]:
        """Every node, then every relationship, of one tenant, as JSON-ready records (see transfer.py)."""
        for name, kind in (("admin/export_nodes", "node"), ("admin/export_relationships", "relationship")):
            offset = 0
            while rows := self._run(name, tenant=tenant, offset=offset, limit=page):
                for row in rows:
                    record = {"kind": kind, **row.data()}
                    record["props"] = {k: transfer.to_json(v) for k, v in record["props"].items()}
                    yield record
                offset += len(rows)

    def import_records(
        self, tenant: str, nodes: Sequence[dict[str, Any]], relationships: Sequence[dict[str, Any]], batch: int = 1_000
    ) -> tuple[int, int]:
        """Create an exported tenant in one transaction (all or nothing); the tenant must hold nothing yet."""
        if self.stats(tenant).labels:
            raise InvalidInput(f"tenant {tenant!r} already holds data here: import only into an empty tenant")
        rows = list(transfer.node_rows(nodes, tenant))

        def work(tx: ManagedTransaction) -> tuple[int, int]:
            ids: dict[str, str] = {}
            for start in range(0, len(rows), batch):
                result = tx.run(cypher.load("admin/import_nodes"), {"rows": rows[start : start + batch]})
                ids.update({r["key"]: r["id"] for r in result})
            created = 0
            links = [
                {"start": ids[r["start"]], "end": ids[r["end"]], "type": r["type"],
                 "props": {k: transfer.from_json(v) for k, v in r["props"].items()}}
                for r in relationships if r["start"] in ids and r["end"] in ids
            ]
            if len(links) != len(relationships):
                raise InvalidInput("the export has relationships to nodes it does not hold")
            for start in range(0, len(links), batch):
                result = tx.run(cypher.load("admin/import_relationships"), {"rows": links[start : start + batch], "tenant": tenant})
                created += result.single()["created"]
            return len(ids), created

        return self._write_transaction("import", work)

    def delete_tenant(self, tenant: str) -> int:
        total = 0
        while deleted := self._run("admin/delete_tenant_batch", write=True, tenant=tenant, batch=5000)[0]["deleted"]:
            total += deleted
        return total

    def stats(self, tenant: str | None = None) -> StoreStats:
        marker = self._run("admin/schema_marker_get")[0].data()
        return StoreStats(
            store=self.kind,
            location=self.location,
            labels={r["label"]: r["count"] for r in self._run("admin/label_counts", tenant=tenant)},
            relationships={r["type"]: r["count"] for r in self._run("admin/relationship_counts", tenant=tenant)},
            indexes=self.indexes(),
            schema=marker,
            evolutions={
                r["analysis"]: {k: r[k] for k in ("evolutions", "prompt_tokens", "completion_tokens")}
                for r in self._run("admin/evolution_totals", tenant=tenant)
            },
        )

    def close(self) -> None:
        self._driver.close()


__all__ = ["Neo4jStore", "lucene_query", "note_from_record"]
