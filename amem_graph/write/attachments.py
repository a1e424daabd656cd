"""What the LangChain / LangGraph adapters keep on notes beside the engine's fields (reach it as
`memory.attachments`): their original objects, LangGraph store keys and their own embedding vectors. One
adapter never overwrites another's attachment: a chat message, a document and a store item never share a
note.

An attachment set again keeps the object it replaces, with when that was set, so that the readers here
answer `as_of` a recorded time too: each note as it was then (timeline.note_as_of) with the object its
attachment held then (timeline.attached_at_time), superseded and archived as of then. Deleting a note erases
them with it. Vectors keep no history: searches as of a time rank by today's."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime

from ..core import timeline, validation
from ..errors import InvalidInput
from ..models import Attached, Attachment, AttachmentKind, Note, SearchFilter
from ..read.retrieval import scored
from ..store.base import EVERY, History, MemoryStore, Near, Tx, refuse_stale_vectors


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

    def attached(self, tenant: str, note_ids: Sequence[str], *, as_of: datetime | None = None) -> list[Attached]:
        """The notes among `note_ids` that carry an attachment (of any adapter), in the order asked; with
        `as_of`, those that carried one then, as they were then."""
        if as_of is None:
            return self._store.read(validation.tenant(tenant), lambda tx: tx.attached(ids=note_ids))
        return self._store.read(validation.tenant(tenant), lambda tx: _then(tx, tx.attached(ids=note_ids), as_of))

    def in_session(self, tenant: str, kind: AttachmentKind, session: str, *, as_of: datetime | None = None) -> list[Attached]:
        """A session's notes with `kind` attachments, in session order; with `as_of`, those that carried one
        then, as they were then."""
        def read(tx: Tx) -> list[Attached]:
            found = tx.attached(session=session)
            return found if as_of is None else _then(tx, found, as_of)

        return [a for a in self._store.read(validation.tenant(tenant), read) if a.kind == kind]

    def session_notes(self, tenant: str, session: str, source_prefix: str) -> list[str]:
        """Ids of a session's notes whose source starts with `source_prefix`, attached or not."""
        found = self._store.read(validation.tenant(tenant), lambda tx: tx.attached(session=session))
        return [a.note.id for a in found if (a.note.source or "").startswith(source_prefix)]

    def keyed(
        self, tenant: str, *, limit: int | None, offset: int = 0, superseded: bool = True, as_of: datetime | None = None,
    ) -> list[Attached]:
        """LangGraph store items, the most recently put first (all of them when `limit` is None; those a later
        note contradicted only with `superseded`); with `as_of`, the items held then, as they were then, the
        most recently put by then first."""
        every = EVERY if limit is None else limit
        if as_of is None:
            return self._store.read(validation.tenant(tenant), lambda tx: tx.attached(
                keyed=True, limit=every, offset=offset, superseded=superseded,
            ))

        def then(tx: Tx) -> list[Attached]:
            # The order is by the puts of then, which the store does not index: every item, ordered here.
            items = _then(tx, tx.attached(keyed=True, superseded=superseded, as_of=as_of), as_of)
            items.sort(key=lambda a: a.store_key or "")
            items.sort(key=lambda a: a.attached_at or a.note.created_at or as_of, reverse=True)
            return items[offset : offset + every]

        return self._store.read(validation.tenant(tenant), then)

    def keyed_tenants(self, as_of: datetime | None = None, prefix: str = "") -> list[str]:
        """Every tenant whose name starts with `prefix` and holds a LangGraph store item (with `as_of`, that
        held one then)."""
        return self._store.tenants(keyed=True, prefix=prefix, as_of=as_of)

    def search(
        self, tenant: str, kind: AttachmentKind, vector: Sequence[float], k: int, *, external: bool, plain: bool = False,
        superseded: bool = False, as_of: datetime | None = None,
    ) -> list[Attached]:
        """Exact cosine: the k nearest `kind` notes by their external vectors (`external`, same dimension)
        or by the engine's (then with `plain`, notes no adapter owns too); current ones only unless
        `superseded`. With `as_of`, among the notes held then, as they were then (ranked by today's vectors)."""
        def work(tx: Tx) -> list[Attached]:
            if not external:
                self._comparable(tx)
            found = tx.attached(near=Near(kind, vector, external, plain), limit=k, superseded=superseded, as_of=as_of)
            return found if as_of is None else _then(tx, found, as_of, owned=not plain)

        return self._store.read(validation.tenant(tenant), work)

    def notes_near(self, tenant: str, vector: Sequence[float], k: int, filters: SearchFilter) -> list[tuple[Note, float]]:
        """The k notes nearest `vector` by the engine's embeddings (the shared index), any adapter's or none;
        with `filters.as_of`, as they were then (ranked by today's vectors)."""
        query = validation.vector(vector, self._dimension, "query vector")
        at = filters.as_of

        def work(tx: Tx) -> list[tuple[Note, float]]:
            self._comparable(tx)
            hits = scored(tx.search(k, vector=query, filters=filters))
            if at is None or not hits:
                return hits
            versions = tx.history([note.id for note, _ in hits]).versions
            then = ((timeline.note_as_of(note, versions.get(note.id, ()), at), score) for note, score in hits)
            return [(note, score) for note, score in then if note is not None]

        return self._store.read(validation.tenant(tenant), work)

    def _comparable(self, tx: Tx) -> None:
        """A search by the engine's vectors while a consolidation moves them to another model (or after it, in a
        memory opened before) would rank vectors of two models against each other: refused, typed. The engine's
        own search ranks by keyword meanwhile; an adapter promises similarity, which there is none of."""
        refuse_stale_vectors(tx.schema_marker(), self._store.model, self._store.location,
                             "a search by vector waits until it is done (AgenticMemory.search ranks by keyword "
                             "meanwhile)", "search by vector with a memory opened with")

    def taken_elsewhere(self, tenant: str, note_ids: Sequence[str]) -> list[str]:
        """Which of `note_ids` another tenant holds."""
        tenant = validation.tenant(tenant)
        return [i for i, holder in zip(note_ids, self._store.tenants(of_notes=note_ids), strict=True)
                if holder not in ("", tenant)]


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


def _then(tx: Tx, found: Sequence[Attached], at: datetime, *, owned: bool = True) -> list[Attached]:
    """`found`, as the store holds it now, as it stood at `at`: each note as it was then, with the object its
    attachment held then and when that was set. A note recorded later is left out; one that held no adapter's
    object yet (an adapter writes its note a moment before the attachment) too if `owned`, else as a plain note."""
    ids = [a.note.id for a in found]
    held = tx.history(ids, attachments=True) if ids else History({})
    versions, earlier = held.versions, held.attached
    then = []
    for a in found:
        note = timeline.note_as_of(a.note, versions.get(a.note.id, ()), at)
        if note is None:
            continue
        held = None if a.attached is None or a.attached_at is None else timeline.attached_at_time(
            (a.attached, a.attached_at), earlier.get(a.note.id, ()), at)
        if held is not None:
            then.append(replace(a, note=note, attached=held[0], attached_at=held[1]))
        elif not owned:
            then.append(replace(a, note=note, attached=None, kind=None, store_key=None, attached_at=None))
    return then
