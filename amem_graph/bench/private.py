"""A database of the benchmark's own, for the benchmarks that fill it, kill it or change its model: a private Neo4j
server (never the user's) or an embedded folder in this process."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from ..api import AgenticMemory
from ..embedding import Embedder
from ..server import private_server
from ..settings import Settings


@contextmanager
def private_memory(settings: Settings, store: str, workdir: Path, *, tenant: str | None = None,
                   embedder: Embedder | None = None, heap: str = "1g", pagecache: str = "512m",
                   entities: str | None = None) -> Iterator[tuple[AgenticMemory, int | None]]:
    """A memory on a store of its own in `workdir`, and the pid of its Neo4j server (None: embedded)."""
    own = replace(settings, store=store, data_dir=workdir / "embedded",
                  entities=settings.entities if entities is None else entities)
    if store == "embedded":
        with AgenticMemory(own, tenant=tenant, embedder=embedder) as memory:
            yield memory, None
        return
    with private_server(workdir / "neo4j", home=settings.home, heap=heap, pagecache=pagecache,
                        version=settings.neo4j_version) as (server, info):
        with AgenticMemory(replace(own, neo4j_uri=info.uri, neo4j_user=info.user, neo4j_password=info.password,
                                   neo4j_database=None), tenant=tenant, embedder=embedder) as memory:
            yield memory, server.pid()
