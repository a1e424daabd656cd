"""Read your writes on a cluster: every session and statement of the Neo4j store shares one bookmark manager, so a
read that follows a write asks the server for that write's bookmark (a cluster member then waits until it has
applied the write)."""

from __future__ import annotations

from collections.abc import Collection

import pytest
from neo4j.api import BookmarkManager

from amem_graph import AgenticMemory


class Recording(BookmarkManager):
    """The store's manager, with what it was told (each commit's bookmarks) and what it gave (each new session's)."""

    def __init__(self, inner: BookmarkManager) -> None:
        self.inner = inner
        self.updates: list[set[str]] = []
        self.given: list[set[str]] = []

    def update_bookmarks(self, previous_bookmarks: Collection[str], new_bookmarks: Collection[str]) -> None:
        self.updates.append(set(new_bookmarks))
        self.inner.update_bookmarks(previous_bookmarks, new_bookmarks)

    def get_bookmarks(self) -> Collection[str]:
        held = self.inner.get_bookmarks()
        self.given.append(set(held))
        return held


def test_a_read_after_a_write_carries_the_writes_bookmark(memory: AgenticMemory) -> None:
    if memory.admin.kind != "neo4j":
        pytest.skip("bookmarks are Neo4j's")
    store = memory._store
    recording = Recording(store._bookmarks)  # type: ignore[attr-defined]
    store._bookmarks = recording  # type: ignore[attr-defined]
    memory.add("Alice adopted a beagle named Max.", background=False)
    assert recording.updates and all(recording.updates[-1])
    written = recording.updates[-1]
    for read in (lambda: store.read(memory.tenant, lambda tx: tx.notes(limit=1)),  # a session's transaction
                 lambda: store._run("admin/components"),  # a statement on its own
                 lambda: memory.search("beagle", k=3)):
        recording.given.clear()
        assert read()
        assert recording.given and all(written <= given for given in recording.given)
