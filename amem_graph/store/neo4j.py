"""The Neo4j backend: named Cypher statements over the official driver, every query scoped by tenant."""

from __future__ import annotations

import itertools
import logging
import random
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime, timedelta
from typing import Any, TypeVar

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
    TransientError,
)

from ..core import validation
from ..core.log import event
from ..embedding import canonical_model
from ..errors import InvalidInput, StoreError, StoreUnavailable
from ..ingest import transfer
from . import cypher
from .base import SCHEMA_VERSION, SchemaState, SchemaWrite, StoreStats, Tx, refuse_stale_writer
from .folded import Folded
from .neo4j_attached import Neo4jAttached
from .neo4j_entities import Neo4jEntities
from .neo4j_notes import KnnState, Neo4jNotes, min_candidates
from .neo4j_text import INDEXES, documents
from .neo4j_tiers import Neo4jTiers
from .records import note_from_record, time_of

_UNREACHABLE = (ServiceUnavailable, SessionExpired, OSError)
TRANSIENT_RETRY_S = 30.0  # how long a transaction that keeps deadlocking is retried before its error is raised
# The vector indexes' HNSW settings, chosen with `amem-graph bench scale` and a sweep of them
# (BENCHMARKS-HISTORY.md, "Warm first calls, k-NN recall, long notes"): Neo4j's defaults, stated so that an index
# built otherwise is built again. Quantized vectors alone cap recall@10 near 0.94 however many candidates a query
# asks for, but full-precision ones make every probe of an index grown by inserts twice as slow; the k-NN
# statements score the candidates again exactly instead. A wider graph or construction beam cost inserts and
# gained little.
VECTOR_INDEX = {"hnsw_m": 16, "hnsw_ef_construction": 100, "quantized": True}


def _calendar_year(version: str) -> int:
    """2026 for "2026.08.1"; 0 for "5.26.30" and anything else (Neo4j 5 is not a calendar release)."""
    head = version.split(".", 1)[0]
    return int(head) if head.isdigit() and len(head) == 4 else 0


T = TypeVar("T")
# What consolidation re-embeds: kind → (statement reading its texts, statement writing its vectors).
_CONSOLIDATED = {
    "notes": ("consolidate/notes", "consolidate/set_note_embeddings"),
    "passages": ("consolidate/passages", "consolidate/set_passage_embeddings"),
    "pages": ("consolidate/pages", "consolidate/set_page_embeddings"),
    "facts": ("consolidate/facts", "consolidate/set_fact_embeddings"),
    "segments": ("consolidate/segments", "consolidate/set_segment_embeddings"),
}


class Neo4jTx(Folded, Neo4jNotes, Neo4jTiers, Neo4jAttached, Neo4jEntities):
    """The primitives of one managed transaction of one tenant."""


class Neo4jStore:
    """Notes and the MemoryOS tiers in Neo4j 5.26+ (Community or Enterprise, single server, cluster or Aura)."""

    kind = "neo4j"

    def __init__(
        self, uri: str, user: str, password: str, database: str | None = None, *, timeout_s: float = 5.0
    ) -> None:
        self.location = uri
        self.database = database
        self.dimension: int | None = None
        self.model: str | None = None
        self._knn = KnnState()
        try:
            self._driver: Driver = GraphDatabase.driver(
                uri,
                auth=(user, password),
                # An unreachable server fails a call within about timeout_s: the driver's retries of a lost
                # connection stop then. Deadlocks are retried longer, by `_managed` around the driver's.
                connection_timeout=timeout_s,
                connection_acquisition_timeout=2 * timeout_s,
                max_transaction_retry_time=timeout_s,
                # "property does not exist yet" warnings are expected on a young graph; they are noise.
                notifications_min_severity=NotificationMinimumSeverity.OFF,
            )
        except (ConfigurationError, ValueError) as err:
            raise StoreUnavailable(f"cannot use NEO4J_URI {uri!r}: {err}") from None
        # One bookmark manager for every session and statement of this store: on a cluster (or Aura), a read that
        # follows a write waits until the member it runs on has applied that write (read your writes).
        self._bookmarks = self._driver.execute_query_bookmark_manager
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
        try:
            versions = {r["name"]: r["versions"] for r in self._run("admin/components")}
        except BaseException:
            self._driver.close()
            raise
        self.server_version = (versions.get("Neo4j Kernel") or ["unknown"])[0]
        # Filtering inside the vector index (the SEARCH clause, and an index that holds the tenant) came with
        # 2026.01: such servers get the Cypher 25 variants of the statements that have one.
        self.dialect = "25" if _calendar_year(self.server_version) >= 2026 and "25" in versions.get("Cypher", ()) else None

    # -- plumbing -------------------------------------------------------------------------------

    def _run(self, name: str, *, write: bool = False, statement: str | None = None, **params: Any) -> list[Record]:
        """Run one named statement (or its `statement` as loaded already) in a managed (retried) transaction."""
        with self._translated(name):
            result = self._driver.execute_query(
                statement or cypher.load(name),
                params,
                database_=self.database,
                routing_=RoutingControl.WRITE if write else RoutingControl.READ,
                bookmark_manager_=self._bookmarks,
            )
        return result.records

    def _write_transaction(self, name: str, work: Callable[[ManagedTransaction], Any]) -> Any:
        """Run several statements as one write transaction, retried on transient errors."""
        with self._translated(name):
            return self._managed(True, work)

    def read(self, tenant: str, work: Callable[[Tx], T]) -> T:
        with self._translated("read"):
            return self._managed(False, lambda tx: work(Neo4jTx(tx, tenant, validation.now(), self._knn)))

    def write(self, tenant: str, work: Callable[[Tx], T], *, lock: bool = True) -> T:
        def attempt(tx: ManagedTransaction) -> T:
            notes = Neo4jTx(tx, tenant, validation.now(), self._knn)
            if lock:
                refuse_stale_writer(notes.run("tenant/lock")[0].data(), self.model, self.location)
            done = work(notes)
            notes.flush_counts()
            return done

        with self._translated("write"):
            return self._managed(True, attempt)

    def _managed(self, write: bool, work: Callable[[ManagedTransaction], T]) -> T:
        """A managed transaction, retried past the driver's own retries while it fails on transient errors
        (deadlocks between concurrent writers) for up to TRANSIENT_RETRY_S; a lost server is not retried here."""
        began = time.monotonic()
        for attempt in itertools.count():
            try:
                with self._driver.session(database=self.database, bookmark_manager=self._bookmarks) as session:
                    return session.execute_write(work) if write else session.execute_read(work)
            except TransientError as err:
                if time.monotonic() - began > TRANSIENT_RETRY_S:
                    raise
                event("store_retry", logging.INFO, store="neo4j", attempt=attempt + 1, code=err.code)
                time.sleep(random.uniform(0, min(1.0, 0.05 * 2**attempt)))
        raise AssertionError("unreachable")  # for type checkers: the loop returns or raises

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

    def schema(self, *, create: SchemaWrite | None = None) -> SchemaState:
        if create is not None:
            self._create_schema(create.model, create.dimension, create.found)
        return self._schema_state()

    def _schema_state(self) -> SchemaState:
        marker = self._run("admin/schema_marker_get")[0].data()
        index = self.vector_index()
        return SchemaState(
            version=None if marker["version"] is None else int(marker["version"]), model=marker["embedding_model"],
            dimension=marker["embedding_dimension"], index_dimension=index["dimension"] if index else None,
            consolidating=marker["consolidating"],
        )

    def _create_schema(self, model: str, dimension: int, found: int | None) -> None:
        if found is not None and found < 3:
            self._run("migrate/v3_note_text", write=True)
        # An index of another dimension or other HNSW settings goes, and so, on a 2026.01+ server, does one that
        # cannot filter by tenant (made by Neo4j 5 before an upgrade): both are built again from the vectors.
        if (index := self.vector_index()) and (
            index["dimension"] != dimension or (self.dialect and not self._knn.tenant_in_index)
            or any(index[name] != value for name, value in VECTOR_INDEX.items())
        ):
            self._run("admin/drop_vector_index", write=True)
            self._run("admin/drop_passage_index", write=True)
        for name, statement in cypher.schema_statements(self.dialect):
            self._run(name, write=True, statement=statement, dimension=dimension, **VECTOR_INDEX)
        self._run("admin/await_indexes", write=True, timeout_s=300)
        self.vector_index()  # what the index can filter by, for the k-NN statements
        if found is not None and found < 9:
            self.count_tenants()
        if found is not None and found < 10:
            self.fold_versions()
        self._run(
            "admin/schema_marker_set", write=True, version=SCHEMA_VERSION, model=canonical_model(model),
            dimension=dimension, now=validation.now(),
        )

    def count_tenants(self) -> dict[str, float]:
        """Count the BM25 statistics of each tenant written before they were kept (schema 9), a tenant per
        transaction under its lock: killed, the next open counts those it had not reached. Returns the seconds
        each tenant counted took."""
        took = {}
        for tenant in self.tenants():
            began = time.monotonic()
            if self.write(tenant, lambda tx: tx.count_tenant()):
                took[tenant] = time.monotonic() - began
                event("tenant_text_counted", logging.INFO, tenant=tenant, seconds=round(took[tenant], 3))
        return took

    def fold_versions(self, batch: int = 500) -> dict[str, int]:
        """Fold the versions that notes kept of their neighbourhood alone (releases before schema 10,
        store/upgrade.py), `batch` notes per transaction under the tenant's lock: killed, the next open folds
        those it had not reached. Returns the notes folded per tenant."""
        folded = {}
        for tenant in self.tenants():
            ids = [r["id"] for r in self._run("migrate/v10_bookkept_notes", tenant=tenant)]
            for start in range(0, len(ids), batch):
                chunk = ids[start : start + batch]
                folded[tenant] = folded.get(tenant, 0) + self.write(tenant, lambda tx, c=chunk: tx.fold_versions(c))
            if ids:
                event("tenant_versions_folded", logging.INFO, tenant=tenant, notes=folded[tenant])
        return folded

    def vector_index(self) -> dict[str, Any] | None:
        rows = self._run("admin/vector_index")
        index = rows[0].data() if rows else None
        self._knn.tenant_in_index = bool(index and "tenant" in (index.get("properties") or ()))
        return index

    def indexes(self) -> list[dict[str, Any]]:
        return [r.data() for r in self._run("admin/indexes")]

    # -- consolidation (a new embedding model) --------------------------------------------------

    def embedding_texts(self, kind: str, after: str, limit: int) -> list[dict[str, Any]]:
        return [r.data() for r in self._run(_CONSOLIDATED[kind][0], after=after, limit=limit)]

    def write_embeddings(self, kind: str, rows: Sequence[tuple[str, list[float]]], reached: str | None) -> None:
        written = [{"id": i, "embedding": list(v)} for i, v in rows]

        def work(tx: ManagedTransaction) -> None:
            tx.run(cypher.load(_CONSOLIDATED[kind][1]), rows=written).consume()
            tx.run(cypher.load("admin/consolidation_reached"), reached=reached).consume()

        self._write_transaction("consolidate", work)

    def export_records(self, tenant: str, page: int = 2_000) -> Iterator[dict[str, Any]]:
        """Every node, then every relationship, of one tenant, as JSON-ready records (see ingest/transfer.py)."""
        for name, kind in (("admin/export_nodes", "node"), ("admin/export_relationships", "relationship")):
            offset = 0
            while rows := self._run(name, tenant=tenant, offset=offset, limit=page):
                for row in rows:
                    record = {"kind": kind, **row.data()}
                    record["props"] = {k: transfer.to_json(v) for k, v in record["props"].items()}
                    yield record
                offset += len(rows)

    def tenants(self, *, keyed: bool = False, prefix: str = "", as_of: datetime | None = None,
                of_notes: Sequence[str] | None = None) -> list[str]:
        if of_notes is not None:
            held = {r["id"]: r["tenant"] for r in self._run("admin/note_tenants", ids=list(of_notes))} if of_notes else {}
            return [held.get(i, "") for i in of_notes]
        if keyed:
            if prefix:
                return [r["tenant"] for r in self._run("attached/keyed_tenants_under", prefix=prefix, as_of=as_of)]
            return [r["tenant"] for r in self._run("attached/keyed_tenants", as_of=as_of)]
        return [r["tenant"] for r in self._run("admin/tenants")]

    def import_records(
        self, tenant: str, rows: Sequence[dict[str, Any]], relationships: Sequence[dict[str, Any]], batch: int = 1_000
    ) -> tuple[int, int]:
        """Create an exported tenant in one transaction (all or nothing)."""
        def work(tx: ManagedTransaction) -> tuple[int, int]:
            ids: dict[str, str] = {}
            for start in range(0, len(rows), batch):
                result = tx.run(cypher.load("admin/import_nodes"), {"rows": rows[start : start + batch]})
                ids.update({r["key"]: r["id"] for r in result})
            text = Neo4jTx(tx, tenant, validation.now(), self._knn)
            for index, fields in INDEXES.items():
                label = "Note" if index == "note_text" else "Page"
                text.count_texts(index, {}, documents(index, {
                    row["props"]["id"]: [row["props"].get(f) for f in fields] for row in rows if label in row["labels"]
                }))
            text.flush_counts()
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

    def claim_analyses(
        self, worker: str, limit: int, lease_s: float, *, release: Sequence[str] = (),
    ) -> list[tuple[str, str]]:
        def work(tx: ManagedTransaction) -> list[tuple[str, str]]:
            if release:
                tx.run(cypher.load("analysis/release"), ids=list(release), worker=worker).consume()
            if limit < 1:
                return []
            tx.run(cypher.load("analysis/lock")).consume()
            now = validation.now()  # read under the lock: a claim that expired while this one waited is free
            claimed = tx.run(cypher.load("analysis/claim"), worker=worker, limit=limit, now=now,
                             until=now + timedelta(seconds=lease_s))
            return [(r["tenant"], r["id"]) for r in claimed]

        return self._write_transaction("analysis/claim", work)

    def analysis_queue(self, tenant: str | None = None) -> tuple[int, datetime | None]:
        row = self._run("analysis/queue", tenant=tenant)[0]
        return int(row["pending"]), time_of(row["oldest"])

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
            server={"version": self.server_version,
                    "knn": "tenant filtered inside the index" if self._knn.tenant_in_index else "over-fetched",
                    "knn_min_candidates": min_candidates(self._knn),
                    "vector_index": {name: index[name] for name in VECTOR_INDEX} if (index := self.vector_index()) else None},
            schema=marker,
            evolutions={
                r["analysis"]: {k: r[k] for k in ("evolutions", "prompt_tokens", "completion_tokens")}
                for r in self._run("admin/evolution_totals", tenant=tenant)
            },
        )

    def close(self) -> None:
        self._driver.close()


__all__ = ["Neo4jStore", "note_from_record"]
