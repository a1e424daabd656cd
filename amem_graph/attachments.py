"""What the LangChain / LangGraph adapters keep on notes beside the engine's fields (reach it as
`memory.attachments`): their original objects, LangGraph store keys and their own embedding vectors. One
adapter never overwrites another's attachment: a chat message, a document and a store item never share a
note."""

from __future__ import annotations

from collections.abc import Sequence

from . import validation
from .errors import InvalidInput
from .models import Attached, Attachment, AttachmentKind, Note, SearchFilter
from .store.base import EVERY, MemoryStore, Tx


class Attachments:
    """Adapters' attachments, tenant by tenant (each call names its tenant: an adapter is bound to one)."""

    def __init__(self, store: MemoryStore, dimension: int) -> None:
        self._store = store
        self._dimension = dimension

    def attach(self, tenant: str, kind: AttachmentKind, attachments: Sequence[Attachment]) -> None:
        """Set each note's attachment, replacing `kind`'s last one; raises InvalidInput, writing nothing,
        when a note is missing or another adapter owns it."""
        tenant = validation.tenant(tenant)
        if attachments:
            self._store.write(tenant, lambda tx: _attach(tx, kind, attachments))

    def attached(self, tenant: str, note_ids: Sequence[str]) -> list[Attached]:
        """The notes among `note_ids` that carry an attachment (of any adapter), in the order asked."""
        return self._store.read(validation.tenant(tenant), lambda tx: tx.attached(ids=note_ids))

    def in_session(self, tenant: str, kind: AttachmentKind, session: str) -> list[Attached]:
        """A session's notes with `kind` attachments, in session order."""
        found = self._store.read(validation.tenant(tenant), lambda tx: tx.attached(session=session))
        return [a for a in found if a.kind == kind]

    def session_notes(self, tenant: str, session: str, source_prefix: str) -> list[str]:
        """Ids of a session's notes whose source starts with `source_prefix`, attached or not."""
        found = self._store.read(validation.tenant(tenant), lambda tx: tx.attached(session=session))
        return [a.note.id for a in found if (a.note.source or "").startswith(source_prefix)]

    def keyed(self, tenant: str, *, limit: int | None, offset: int = 0, superseded: bool = True) -> list[Attached]:
        """LangGraph store items, the most recently put first (all of them when `limit` is None; those a later
        note contradicted only with `superseded`)."""
        every = EVERY if limit is None else limit
        return self._store.read(validation.tenant(tenant), lambda tx: tx.attached(
            keyed=True, limit=every, offset=offset, superseded=superseded,
        ))

    def keyed_tenants(self) -> list[str]:
        """Every tenant with a LangGraph store item."""
        return self._store.keyed_tenants()

    def search(
        self, tenant: str, kind: AttachmentKind, vector: Sequence[float], k: int, *, external: bool, plain: bool = False,
        superseded: bool = False,
    ) -> list[Attached]:
        """Exact cosine: the k nearest `kind` notes by their external vectors (`external`, same dimension)
        or by the engine's (then with `plain`, notes no adapter owns too); current ones only unless
        `superseded`."""
        return self._store.read(validation.tenant(tenant), lambda tx: tx.attached_search(
            kind, vector, k, external=external, plain=plain, superseded=superseded,
        ))

    def notes_near(self, tenant: str, vector: Sequence[float], k: int, filters: SearchFilter) -> list[tuple[Note, float]]:
        """The k notes nearest `vector` by the engine's embeddings (the shared index), any adapter's or none."""
        query = validation.vector(vector, self._dimension, "query vector")
        return self._store.read(validation.tenant(tenant), lambda tx: tx.vector_search(query, k, filters=filters))

    def taken_elsewhere(self, tenant: str, note_ids: Sequence[str]) -> list[str]:
        """Which of `note_ids` another tenant holds."""
        tenant = validation.tenant(tenant)
        return [i for i, holder in self._store.note_tenants(note_ids).items() if holder != tenant]


def _attach(tx: Tx, kind: AttachmentKind, attachments: Sequence[Attachment]) -> None:
    """All or nothing: another adapter's note refuses the write; a missing note, found as the attachments are
    set, fails the transaction, which then writes nothing."""
    ids = [a.note_id for a in attachments]
    owner = {a.note.id: a.kind for a in tx.attached(ids=ids)}
    if not (refused := [i for i in ids if owner.get(i) not in (None, kind)]):
        held = set(tx.attach(kind, attachments, validation.now()))
        refused = [i for i in ids if i not in held]
    if refused:
        raise InvalidInput(
            f"cannot attach a {kind} to note(s) {', '.join(refused)} of {tx.tenant!r}: missing, or another "
            "adapter's (a chat message, a document and a store item never share a note)"
        )
