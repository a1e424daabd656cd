"""A LangChain vector store over notes: documents go through the engine's write path (analysed, linked,
evolving their neighbours) and keep their ids and metadata; any LangChain `Embeddings` can rank them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from contextlib import suppress
from datetime import datetime
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from ...api import AgenticMemory
from ...core import validation
from ...core.log import event
from ...embedding import Embedder
from ...errors import InvalidInput, NoteNotFound
from ...models import Attachment, Note, SearchFilter
from .notes import upsert
from .values import check_filter, matches, to_json

KIND = "document"
EVERY = 2**31 - 1  # as k: every candidate, for a filter to choose from


class AmemEmbeddings(Embeddings):
    """The engine's own embedding model as a LangChain `Embeddings`."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed(texts).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_query(text).tolist()


def note_document(note: Note, attached: str | None) -> Document:
    """A note as the Document that was added (its metadata as given), or, for a note the engine wrote
    itself, with its derived fields as metadata."""
    if attached is not None:
        metadata = json.loads(attached)
    else:
        metadata = {"keywords": list(note.keywords), "tags": list(note.tags), "context": note.context,
                    "source": note.source}
    return Document(page_content=note.content, metadata=metadata, id=note.id)


def _skipped(position: int, err: InvalidInput) -> None:
    event("document_skipped", position=position, error=str(err))


class AmemVectorStore(VectorStore):
    """Notes of one tenant as a LangChain vector store: the documents added here and the notes no adapter
    owns (chat messages and LangGraph items are left out).

    Without `embedding`, documents are ranked by the engine's vectors (the note index first, an exact scan
    of the tenant when it returns too few); with one (any LangChain `Embeddings`), its vectors are kept
    beside the note's and ranked exactly within the tenant. Adding a document whose id exists in the tenant
    replaces its text (the old one kept as a version) and metadata. `similarity_search(..., filter={...})`
    keeps documents whose metadata match (equality, nested keys, $eq $ne $gt $gte $lt $lte). A document a
    later note contradicted is left out of searches, as the engine's search leaves it out, unless
    `include_superseded`.

    `as_of` (a recorded time: a datetime or an ISO-8601 string) reads the documents as they stood then: those
    added by then, each with its text and metadata of then, superseded and archived as of then, ranked by
    today's vectors. Searches take it per call (`similarity_search(..., as_of=...)`, so also
    `as_retriever(search_kwargs={"as_of": ...})`, as AmemRetriever takes it); given to the constructor, it makes
    the store a read-only view of then, `get_by_ids` included (LangChain passes that method no options), whose
    searches may ask about an earlier time but not a later one. A deleted document is erased from every time.
    """

    def __init__(
        self, memory: AgenticMemory, *, tenant: str | None = None, embedding: Embeddings | None = None,
        include_superseded: bool = False, as_of: datetime | str | None = None,
    ):
        self.memory = memory
        self.tenant = validation.tenant(memory.tenant if tenant is None else tenant)
        self.embedding = embedding
        self.include_superseded = include_superseded
        self.as_of = validation.event_time(as_of, "as_of")

    @property
    def embeddings(self) -> Embeddings:
        return self.embedding or AmemEmbeddings(self.memory.embedder)

    # -- writing ----------------------------------------------------------------------------------

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        """Every document is checked (text, metadata, id free in this tenant and of no other adapter)
        before any is written; then each goes through the write path in turn. An invalid document stops the
        call before anything is written; with `skip_invalid=True`, it is left out (logged as
        `document_skipped` with its position and why) and the others are added. Returns the ids added."""
        self._writable()
        skip = bool(kwargs.pop("skip_invalid", False))
        ids = list(kwargs.pop("ids", None) or [doc.id for doc in documents])
        if len(ids) != len(documents):
            raise InvalidInput(f"{len(documents)} documents but {len(ids)} ids")
        checked = validation.each(list(zip(ids, documents, strict=True)), self._checked, _skipped if skip else None)
        if not checked:
            return []
        ids, texts, metadata = (list(column) for column in zip(*checked, strict=True))
        if len(set(ids)) != len(ids):
            raise InvalidInput("the same id twice in one call")
        self._check_ids(ids)
        vectors: Sequence[Sequence[float] | None] = (
            self.embedding.embed_documents(texts) if self.embedding is not None else [None] * len(texts)
        )
        for note_id, text, meta, vector in zip(ids, texts, metadata, vectors, strict=True):
            upsert(self.memory, self.tenant, note_id, text, source=f"langchain:{note_id}", reason="document replaced")
            self.memory.attachments.attach(self.tenant, KIND, [Attachment(note_id, meta, external_vector=vector)])
        return ids

    def _writable(self) -> None:
        if self.as_of is not None:
            raise InvalidInput(f"this vector store is a read-only view as of {self.as_of.isoformat()}: add and "
                               "delete on an AmemVectorStore without as_of")

    def _checked(self, pair: tuple[str | None, Document], position: int) -> tuple[str, str, str]:
        """A document's id (a new one when it has none), text and metadata as JSON, or InvalidInput naming it."""
        note_id, document = pair
        try:
            return (
                validation.note_id(note_id) if note_id is not None else str(uuid.uuid4()),
                validation.text(document.page_content, "page_content", self.memory.settings.max_content_chars),
                to_json(document.metadata, "its metadata"),
            )
        except InvalidInput as err:
            raise InvalidInput(f"document {position}: {err}") from None

    def _check_ids(self, ids: list[str]) -> None:
        if taken := self.memory.attachments.taken_elsewhere(self.tenant, ids):
            raise InvalidInput(f"note id(s) {', '.join(taken)} are taken by another tenant (ids are unique database-wide)")
        owned = [a.note.id for a in self.memory.attachments.attached(self.tenant, ids) if a.kind != KIND]
        if owned:
            raise InvalidInput(f"note id(s) {', '.join(owned)} hold a chat message or a store item, not a document")

    def add_texts(
        self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None, *,
        ids: list[str] | None = None, **kwargs: Any,
    ) -> list[str]:
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise InvalidInput(f"{len(texts)} texts but {len(metadatas)} metadatas")
        docs = [Document(page_content=t, metadata=(metadatas or [{}] * len(texts))[i]) for i, t in enumerate(texts)]
        return self.add_documents(docs, ids=ids or [None] * len(texts))

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        self._writable()
        if ids is None:
            raise InvalidInput("name the ids to delete (a whole tenant goes with `amem-graph delete -t TENANT`)")
        for doc in self.get_by_ids(ids):  # only what this store shows: never a chat message or a store item
            with suppress(NoteNotFound):  # already gone: deleting is idempotent
                self.memory.delete(doc.id or "", tenant=self.tenant)
        return True

    # -- reading ----------------------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        if bad := [i for i in ids if not isinstance(i, str)]:
            raise InvalidInput(f"document ids are strings, got {bad[0]!r}")
        wanted = [i for i in ids if validation.NOTE_ID_PATTERN.fullmatch(i)]
        attached = {a.note.id: a for a in self.memory.attachments.attached(self.tenant, wanted, as_of=self.as_of)}
        documents = []
        for note_id in wanted:
            if note_id in attached:
                if attached[note_id].kind == KIND:
                    documents.append(note_document(attached[note_id].note, attached[note_id].attached))
                continue
            with suppress(NoteNotFound):
                documents.append(note_document(self.memory.get(note_id, tenant=self.tenant, as_of=self.as_of), None))
        return documents

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_with_score(
        self, query: str, k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[tuple[Document, float]]:
        query = validation.text(query, "query", validation.MAX_QUERY_CHARS)
        return self._by_vector(self.embeddings.embed_query(query), k, filter, kwargs)

    def similarity_search_by_vector(
        self, embedding: list[float], k: int = 4, filter: dict[str, Any] | None = None, **kwargs: Any
    ) -> list[Document]:
        return [doc for doc, _ in self._by_vector(embedding, k, filter, kwargs)]

    def _by_vector(
        self, vector: Sequence[float], k: int, filter: dict[str, Any] | None, unknown: dict[str, Any]
    ) -> list[tuple[Document, float]]:
        options = dict(unknown)
        at = self._time(options.pop("as_of", None))
        if options:
            raise InvalidInput(f"unknown search option(s): {', '.join(options)} (this store takes k, filter and as_of)")
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInput(f"k must be a positive integer, got {k!r}")
        check_filter(filter)
        found = self._nearest(vector, EVERY if filter else k, at)
        return [(doc, score) for doc, score in found if not filter or matches(doc.metadata, filter)][:k]

    def _time(self, asked: datetime | str | None) -> datetime | None:
        """A search's time: the one asked, else the view's; a view of then cannot read later."""
        at = validation.event_time(asked, "as_of")
        if at is None:
            return self.as_of
        if self.as_of is not None and at > self.as_of:
            raise InvalidInput(f"as_of {at.isoformat()} is later than this view's ({self.as_of.isoformat()})")
        return at

    def _nearest(self, vector: Sequence[float], k: int, at: datetime | None) -> list[tuple[Document, float]]:
        store = self.memory.attachments
        external = self.embedding is not None
        # The shared note index first; it cannot tell documents from chat notes while it searches.
        if not external and k < EVERY:
            hits = store.notes_near(self.tenant, np.asarray(vector, dtype=np.float32), 3 * k + 10,
                                    SearchFilter(include_superseded=self.include_superseded, as_of=at))
            kinds = {a.note.id: a for a in store.attached(self.tenant, [note.id for note, _ in hits], as_of=at)}
            shown = [
                (note_document(note, kinds[note.id].attached if note.id in kinds else None), score)
                for note, score in hits if note.id not in kinds or kinds[note.id].kind == KIND
            ]
            if len(shown) >= k or len(hits) < 3 * k + 10:
                return shown[:k]
        found = store.search(self.tenant, KIND, vector, k, external=external, plain=not external,
                             superseded=self.include_superseded, as_of=at)
        return [(note_document(a.note, a.attached), float(a.score or 0.0)) for a in found]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return lambda score: score  # every path gives cosine normalised to [0, 1] already

    @classmethod
    def from_texts(
        cls, texts: list[str], embedding: Embeddings | None = None, metadatas: list[dict[str, Any]] | None = None,
        *, ids: list[str] | None = None, memory: AgenticMemory | None = None, tenant: str | None = None,
        **kwargs: Any,
    ) -> AmemVectorStore:
        """A store over `memory` (else one opened from the environment) with `texts` added."""
        store = cls(memory or AgenticMemory(tenant=tenant), tenant=tenant, embedding=embedding)
        store.add_texts(texts, metadatas, ids=ids)
        return store
