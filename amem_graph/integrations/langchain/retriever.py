"""A LangChain retriever over `AgenticMemory.search`: hybrid seeds, then the link graph and session order."""

from __future__ import annotations

from typing import Any

from langchain_core.callbacks import AsyncCallbackManagerForRetrieverRun, CallbackManagerForRetrieverRun
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict, PrivateAttr

from ...aio import AsyncAgenticMemory
from ...api import AgenticMemory
from ...models import SearchHit


def hit_document(hit: SearchHit) -> Document:
    """A search hit as a Document: the note's text, and in metadata its id, score and how it was found."""
    note = hit.note
    metadata: dict[str, Any] = {
        "note_id": note.id,
        "tenant": note.tenant,
        "score": hit.score,
        "vector_score": hit.vector_score,
        "fulltext_score": hit.fulltext_score,
        "found": "seed" if not hit.path else "graph",
        "path": [{"from": step.from_id, "type": step.type, "reason": step.reason} for step in hit.path],
        "keywords": list(note.keywords),
        "tags": list(note.tags),
        "context": note.context,
        "source": note.source,
        "session": note.session,
        "speaker": note.speaker,
        "event_time": note.event_time.isoformat() if note.event_time else None,
    }
    return Document(page_content=note.content, id=note.id, metadata=metadata)


class AmemRetriever(BaseRetriever):
    """Notes that answer a query, from one tenant of an `AgenticMemory`.

    >>> retriever = AmemRetriever(memory=memory, tenant="alice", k=5)
    >>> retriever.invoke("Where does Alice live?", k=3)  # k, hops and search filters per call too
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: AgenticMemory
    tenant: str | None = None  # the memory's own tenant when None
    k: int = 4
    hops: int = 2
    mode: str = "hybrid"
    # passed to every search: after, before, tags, speakers, sessions, include_superseded, as_of, valid_at
    search_kwargs: dict[str, Any] = {}
    _async: AsyncAgenticMemory | None = PrivateAttr(default=None)

    def _get_relevant_documents(
        self, query: str, *, run_manager: CallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        options = {"k": self.k, "hops": self.hops, "mode": self.mode, **self.search_kwargs, **kwargs}
        hits = self.memory.search(query, tenant=self.tenant, **options)
        return [hit_document(hit) for hit in hits]

    async def _aget_relevant_documents(
        self, query: str, *, run_manager: AsyncCallbackManagerForRetrieverRun, **kwargs: Any
    ) -> list[Document]:
        # The store's calls are synchronous: search on the memory's bounded pool, so the event loop goes on meanwhile.
        if self._async is None:
            self._async = AsyncAgenticMemory(self.memory)
        return await self._async.call(
            self._get_relevant_documents, query, run_manager=run_manager.get_sync(), **kwargs
        )
