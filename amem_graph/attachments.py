"""What the LangChain / LangGraph adapters keep on notes beside the engine's fields (reach it as
`memory.attachments`): their original objects, LangGraph store keys and their own embedding vectors."""

from __future__ import annotations

from collections.abc import Sequence

from . import validation
from .models import Attached, Attachment, AttachmentKind, Note, SearchFilter
from .store.base import MemoryStore


class Attachments:
    """Adapters' attachments, tenant by tenant (each call names its tenant: an adapter is bound to one)."""

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def attach(self, tenant: str, kind: AttachmentKind, attachments: Sequence[Attachment]) -> None:
        """Set each note's attachment, replacing `kind`'s last one; raises InvalidInput, writing nothing,
        when a note is missing or another adapter owns it."""
        self._store.attach(validation.tenant(tenant), kind, attachments)

    def attached(self, tenant: str, note_ids: Sequence[str]) -> list[Attached]:
        """The notes among `note_ids` that carry an attachment (of any adapter), in the order asked."""
        return self._store.attached(validation.tenant(tenant), note_ids)

    def in_session(self, tenant: str, kind: AttachmentKind, session: str) -> list[Attached]:
        """A session's notes with `kind` attachments, in session order."""
        return self._store.attached_in_session(validation.tenant(tenant), kind, session)

    def session_notes(self, tenant: str, session: str, source_prefix: str) -> list[str]:
        """Ids of a session's notes whose source starts with `source_prefix`, attached or not."""
        return self._store.session_notes(validation.tenant(tenant), session, source_prefix)

    def keyed(self, tenant: str, *, limit: int | None, offset: int = 0) -> list[Attached]:
        """LangGraph store items, the most recently put first (all of them when `limit` is None)."""
        return self._store.keyed(validation.tenant(tenant), limit=limit, offset=offset)

    def keyed_tenants(self) -> list[str]:
        """Every tenant with a LangGraph store item."""
        return self._store.keyed_tenants()

    def search(
        self, tenant: str, kind: AttachmentKind, vector: Sequence[float], k: int, *, external: bool, plain: bool = False
    ) -> list[Attached]:
        """Exact cosine: the k nearest `kind` notes by their external vectors (`external`, same dimension)
        or by the engine's (then with `plain`, notes no adapter owns too)."""
        return self._store.attached_search(validation.tenant(tenant), kind, vector, k, external=external, plain=plain)

    def notes_near(self, tenant: str, vector: Sequence[float], k: int, filters: SearchFilter) -> list[tuple[Note, float]]:
        """The k notes nearest `vector` by the engine's embeddings (the shared index), any adapter's or none."""
        query = validation.vector(vector, self._store.dimension or len(vector), "query vector")
        return self._store.read(validation.tenant(tenant), lambda tx: tx.vector_search(query, k, filters=filters))

    def taken_elsewhere(self, tenant: str, note_ids: Sequence[str]) -> list[str]:
        """Which of `note_ids` another tenant holds."""
        return self._store.ids_of_other_tenants(validation.tenant(tenant), note_ids)
