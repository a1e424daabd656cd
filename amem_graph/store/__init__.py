"""Persistence backends behind one protocol (`NoteStore`), and the choice between them."""

from __future__ import annotations

from ..errors import StoreUnavailable
from ..settings import Settings
from .base import SCHEMA_VERSION, MemoryStore, NoteStore, StoreStats


def open_store(settings: Settings) -> MemoryStore:
    """The store the settings name (AMEM_STORE): Neo4j when NEO4J_URI is set, else the embedded store in
    its folder (AMEM_DATA_DIR); with AMEM_STORE=neo4j and no NEO4J_URI, the local server that
    `amem-graph neo4j start` runs."""
    if settings.store_kind == "embedded":
        from .embedded.store import EmbeddedStore

        return EmbeddedStore(settings.embedded_dir, read_only=settings.read_only)
    from ..server import LocalNeo4j
    from .neo4j import Neo4jStore

    if settings.neo4j_uri:
        if settings.neo4j_password is None:
            raise StoreUnavailable(f"NEO4J_URI is {settings.neo4j_uri} but NEO4J_PASSWORD is not set")
        return Neo4jStore(settings.neo4j_uri, settings.neo4j_user, settings.neo4j_password, settings.neo4j_database,
                          timeout_s=settings.neo4j_timeout_s)
    local = LocalNeo4j.for_settings(settings).connection()
    if local is None:
        raise StoreUnavailable(
            "AMEM_STORE=neo4j but no database configured: set NEO4J_URI, NEO4J_USER and NEO4J_PASSWORD, "
            f"or start a local server with `amem-graph neo4j start` (folder {settings.local_server_dir})"
        )
    return Neo4jStore(local.uri, local.user, local.password, settings.neo4j_database, timeout_s=settings.neo4j_timeout_s)


__all__ = ["SCHEMA_VERSION", "MemoryStore", "NoteStore", "StoreStats", "open_store"]
