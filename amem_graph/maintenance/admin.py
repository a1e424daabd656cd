"""Whole-tenant and whole-database work (reach it as `memory.admin`): which store, the schema, counts,
export and import (the same records from either store, so a tenant moves between them unchanged), deleting a
tenant, and re-embedding everything after a change of model."""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from ..core import validation
from ..embedding import Embedder
from ..errors import InvalidInput
from ..ingest import transfer
from ..settings import Settings
from ..store import MemoryStore, StoreStats, open_store
from . import consolidate as consolidation
from . import invariants, schema


class Admin:
    """Administration of the store one AgenticMemory runs on; `tenant` None means the memory's own."""

    def __init__(self, store: MemoryStore, embedder: Embedder, tenant: str) -> None:
        self._store = store
        self._embedder = embedder
        self._tenant = tenant

    @property
    def kind(self) -> str:
        """neo4j or embedded."""
        return self._store.kind

    @property
    def read_only(self) -> bool:
        """Whether this process only reads the store: another process writes its embedded folder (docs/stores.md)."""
        return bool(getattr(self._store, "read_only", False))

    @property
    def location(self) -> str:
        """The Neo4j URI or the embedded store's folder."""
        return self._store.location

    def init_schema(self) -> None:
        """Create the schema (constraints, range, vector and fulltext indexes) if missing; idempotent."""
        schema.ensure(self._store, self._embedder.model_name, self._embedder.dimension, force=True)

    def delete_tenant(self, tenant: str | None = None) -> int:
        """Delete every node of one tenant (notes, pages, segments, persona, history) and nothing of any other;
        returns how many."""
        return self._store.delete_tenant(self._of(tenant))

    def export(self, tenant: str | None = None) -> tuple[dict[str, Any], Iterator[dict[str, Any]]]:
        """A header (tenant, schema version, model, dimension) and every node, then every relationship, of one
        tenant as JSON-ready records (see ingest/transfer.py)."""
        tenant = self._of(tenant)
        return _header(self._store, tenant), self._store.export_records(tenant)

    def check(self, tenant: str | None = None) -> invariants.TenantCheck:
        """The invariants (`invariants.RULES`) over one tenant's graph as it stands; run it while nothing
        writes to the tenant, since it reads the tenant in pages."""
        header, records = self.export(tenant)
        kept = self._store.read(header["tenant"], lambda tx: {i: tx.statistics(i) for i in invariants.INDEXED})
        return invariants.check(header["tenant"], header["dimension"], records, kept)

    def tenants(self, *, near: str | None = None) -> list[str]:
        """Every tenant in the database (sorted); with `near`, the spellings closest to it first (what to offer for a
        tenant that holds nothing, often a typo)."""
        every = sorted(self._store.tenants())
        if near is None:
            return every
        close = difflib.get_close_matches(near, every, n=3, cutoff=0.6)
        return [*close, *(t for t in every if t not in close)]

    def import_(
        self, nodes: Sequence[dict[str, Any]], relationships: Sequence[dict[str, Any]], tenant: str | None = None
    ) -> tuple[int, int]:
        """Create an exported tenant all or nothing; the tenant must hold nothing here yet. Returns the nodes and
        relationships created."""
        tenant = self._of(tenant)
        if self._store.stats(tenant).labels:
            raise InvalidInput(f"tenant {tenant!r} already holds data here: import only into an empty tenant")
        rows = list(transfer.node_rows(nodes, tenant, self._embedder.dimension))
        return self._store.import_records(tenant, rows, relationships)

    def _of(self, tenant: str | None) -> str:
        return self._tenant if tenant is None else validation.tenant(tenant)


def consolidate(
    settings: Settings, embedder: Embedder, *, on_batch: Callable[[str, int], None] | None = None
) -> dict[str, int]:
    """After a change of AMEM_EMBEDDING_MODEL: the vector index rebuilt for `embedder`'s dimension, and every
    note, page, fact and segment of the settings' database embedded again with it (meanwhile search finds only
    what is done). Returns how many of each kind."""
    store = open_store(settings)
    try:
        return consolidation.consolidate(store, embedder, on_batch=on_batch)
    finally:
        store.close()


def _header(store: MemoryStore, tenant: str) -> dict[str, Any]:
    marker = store.stats(tenant).schema
    return {"tenant": tenant, "schema": marker.get("version"), "model": marker.get("embedding_model"),
            "dimension": marker.get("embedding_dimension")}


def export_unchecked(settings: Settings, tenant: str) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """One tenant's export (as `Admin.export`) read without loading a model or checking the schema: a database
    that a killed consolidation left unfinished included, which no memory opens."""
    store = open_store(settings)
    try:
        tenant = validation.tenant(tenant)
        return _header(store, tenant), list(store.export_records(tenant))
    finally:
        store.close()


def database_stats(settings: Settings) -> StoreStats:
    """Counts, indexes and the schema marker of the settings' whole database, read without loading a model or
    checking the schema (what `doctor` reports)."""
    store = open_store(settings)
    try:
        return store.stats()
    finally:
        store.close()
