"""The store contract: what every backend (Neo4j now, embedded later) must do, in domain terms."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from ..models import Link, Note, NoteInput

SCHEMA_VERSION = 1


@dataclass(frozen=True)
class StoreStats:
    store: str
    location: str
    labels: dict[str, int]
    relationships: dict[str, int]
    indexes: list[dict[str, Any]] = field(default_factory=list)
    schema: dict[str, Any] = field(default_factory=dict)


class NoteStore(Protocol):
    """Tenant-scoped persistence of notes and links. Vectors come in computed; the store never embeds."""

    kind: str
    location: str
    dimension: int | None

    def ensure_schema(self, model: str, dimension: int, *, force: bool = False) -> None:
        """Refuse a schema that does not fit this model; create what is missing (idempotent).
        Without `force`, a database whose marker says the schema is current is left as it is."""

    def check_schema(self, model: str, dimension: int) -> None:
        """Refuse to run against a database built for another model, dimension or schema version."""

    def vector_index(self) -> dict[str, Any] | None:
        """The note vector index: state, dimension, similarity; None if it does not exist."""

    def indexes(self) -> list[dict[str, Any]]:
        """Every index with its name, type and state."""

    def existing(self, tenant: str, notes: Sequence[NoteInput]) -> dict[int, str]:
        """Positions in `notes` that the tenant already holds (same source and content), with their ids."""

    def add_notes(
        self, tenant: str, notes: Sequence[NoteInput], embeddings: np.ndarray, *, analysis: str, model: str | None
    ) -> list[str]:
        """Add validated notes in one transaction; returns each note's id (an existing one if it was a repeat)."""

    def get_note(self, tenant: str, note_id: str, *, with_embedding: bool = False) -> Note: ...

    def update_note(
        self, tenant: str, note_id: str, changes: dict[str, Any], *, reason: str, embedding: np.ndarray | None
    ) -> None:
        """Apply changes, keeping the old values as a NoteVersion, in one transaction."""

    def delete_note(self, tenant: str, note_id: str) -> None:
        """Delete a note with its links and versions."""

    def list_notes(self, tenant: str, *, limit: int, offset: int = 0) -> list[Note]: ...

    def add_link(self, tenant: str, link: Link) -> Link: ...

    def vector_search(
        self, tenant: str, vector: np.ndarray, k: int, *, include_invalid: bool = False
    ) -> list[tuple[Note, float]]: ...

    def fulltext_search(
        self, tenant: str, query: str, k: int, *, include_invalid: bool = False
    ) -> list[tuple[Note, float]]: ...

    def delete_tenant(self, tenant: str) -> int:
        """Delete every node of one tenant; returns how many."""

    def stats(self, tenant: str | None = None) -> StoreStats: ...

    def close(self) -> None: ...
