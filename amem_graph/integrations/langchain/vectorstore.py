"""A LangChain vector store over notes: documents go through the engine's write path (analysed, linked,
evolving their neighbours) and keep their ids and metadata; any LangChain `Embeddings` can rank them."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.embeddings import Embeddings
from langchain_core.vectorstores import VectorStore

from ... import validation
from ...api import AgenticMemory
from ...embedding import Embedder
from ...errors import InvalidInput, NoteNotFound
from ...models import Note
from ...store.base import Attachment


class AmemEmbeddings(Embeddings):
    """The engine's own embedding model as a LangChain `Embeddings`."""

    def __init__(self, embedder: Embedder) -> None:
        self.embedder = embedder

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.embedder.embed(texts).tolist() if texts else []

    def embed_query(self, text: str) -> list[float]:
        return self.embedder.embed_one(text).tolist()


def to_json(value: Any, what: str) -> str:
    """`value` as JSON, or a clear error naming what it was (nothing is written before every item passes)."""
    try:
        return json.dumps(value, ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as err:
        raise InvalidInput(f"{what} must be JSON-serialisable: {err}") from None


def note_document(note: Note, attached: str | None) -> Document:
    """A note as the Document that was added (its metadata as given), or, for a note the engine wrote
    itself, with its derived fields as metadata."""
    if attached is not None:
        metadata = json.loads(attached)
    else:
        metadata = {"keywords": list(note.keywords), "tags": list(note.tags), "context": note.context,
                    "source": note.source}
    return Document(page_content=note.content, metadata=metadata, id=note.id)


class AmemVectorStore(VectorStore):
    """Notes of one tenant as a LangChain vector store.

    Without `embedding`, documents are ranked by the engine's vectors over the note index; with one (any
    LangChain `Embeddings`), its vectors are kept beside the note's and ranked exactly within the tenant.
    Adding a document whose id exists in the tenant replaces its text (kept as a version) and metadata.
    """

    def __init__(self, memory: AgenticMemory, *, tenant: str | None = None, embedding: Embeddings | None = None):
        self.memory = memory
        self.tenant = validation.tenant(memory.tenant if tenant is None else tenant)
        self.embedding = embedding

    @property
    def embeddings(self) -> Embeddings:
        return self.embedding or AmemEmbeddings(self.memory.embedder)

    # -- writing ----------------------------------------------------------------------------------

    def add_documents(self, documents: list[Document], **kwargs: Any) -> list[str]:
        ids = list(kwargs.pop("ids", None) or [doc.id for doc in documents])
        if len(ids) != len(documents):
            raise InvalidInput(f"{len(documents)} documents but {len(ids)} ids")
        ids = [validation.note_id(i) if i is not None else str(uuid.uuid4()) for i in ids]
        texts = [validation.text(d.page_content, "page_content", self.memory.settings.max_content_chars) for d in documents]
        metadata = [to_json(d.metadata, f"the metadata of document {i}") for i, d in zip(ids, documents, strict=True)]
        vectors: Sequence[Sequence[float] | None] = (
            self.embedding.embed_documents(texts) if self.embedding is not None else [None] * len(texts)
        )
        for note_id, text, meta, vector in zip(ids, texts, metadata, vectors, strict=True):
            self._upsert(note_id, text, meta, vector)
        return ids

    def add_texts(
        self, texts: Iterable[str], metadatas: list[dict[str, Any]] | None = None, *,
        ids: list[str] | None = None, **kwargs: Any,
    ) -> list[str]:
        texts = list(texts)
        if metadatas is not None and len(metadatas) != len(texts):
            raise InvalidInput(f"{len(texts)} texts but {len(metadatas)} metadatas")
        docs = [Document(page_content=t, metadata=(metadatas or [{}] * len(texts))[i]) for i, t in enumerate(texts)]
        return self.add_documents(docs, ids=ids or [None] * len(texts))

    def _upsert(self, note_id: str, text: str, metadata: str, vector: Sequence[float] | None) -> None:
        try:
            current: Note | None = self.memory.get(note_id, tenant=self.tenant)
        except NoteNotFound:
            current = None
        if current is None:
            self.memory.add(text, tenant=self.tenant, id=note_id, source=f"langchain:{note_id}")
        elif current.content != text:
            self.memory.update(note_id, tenant=self.tenant, content=text, reason="document replaced")
        self.memory.store.attach(self.tenant, [Attachment(note_id, metadata, external_vector=vector)])

    def delete(self, ids: list[str] | None = None, **kwargs: Any) -> bool:
        if ids is None:
            raise InvalidInput("name the ids to delete (a whole tenant goes with `amem-graph delete -t TENANT`)")
        for note_id in ids:
            try:
                self.memory.delete(note_id, tenant=self.tenant)
            except NoteNotFound:
                pass  # already gone: deleting is idempotent
        return True

    # -- reading ----------------------------------------------------------------------------------

    def get_by_ids(self, ids: Sequence[str], /) -> list[Document]:
        wanted = [i for i in ids if validation.NOTE_ID_PATTERN.fullmatch(i)]
        attached = {a.note.id: a for a in self.memory.store.attached(self.tenant, wanted)}
        documents = []
        for note_id in wanted:
            if note_id in attached:
                documents.append(note_document(attached[note_id].note, attached[note_id].attached))
                continue
            try:
                documents.append(note_document(self.memory.get(note_id, tenant=self.tenant), None))
            except NoteNotFound:
                pass
        return documents

    def similarity_search(self, query: str, k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self.similarity_search_with_score(query, k, **kwargs)]

    def similarity_search_with_score(self, query: str, k: int = 4, **kwargs: Any) -> list[tuple[Document, float]]:
        query = validation.text(query, "query", validation.MAX_QUERY_CHARS)
        return self._by_vector(self.embeddings.embed_query(query), k)

    def similarity_search_by_vector(self, embedding: list[float], k: int = 4, **kwargs: Any) -> list[Document]:
        return [doc for doc, _ in self._by_vector(embedding, k)]

    def _by_vector(self, vector: Sequence[float], k: int) -> list[tuple[Document, float]]:
        if isinstance(k, bool) or not isinstance(k, int) or k < 1:
            raise InvalidInput(f"k must be a positive integer, got {k!r}")
        if self.embedding is not None:
            found = self.memory.store.attached_search(self.tenant, vector, k)
            return [(note_document(a.note, a.attached), (float(a.score or 0.0) + 1) / 2) for a in found]
        hits = self.memory.store.vector_search(self.tenant, np.asarray(vector, dtype=np.float32), k)
        attached = {a.note.id: a.attached for a in self.memory.store.attached(self.tenant, [n.id for n, _ in hits])}
        return [(note_document(note, attached.get(note.id)), score) for note, score in hits]

    def _select_relevance_score_fn(self) -> Callable[[float], float]:
        return lambda score: score  # both paths already give (1 + cosine) / 2

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


