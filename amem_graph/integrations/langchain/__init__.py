"""amem-graph for LangChain and LangGraph (`pip install amem-graph[langchain]`):

- `AmemChatMessageHistory`: a session's messages as notes (and, with `turns=True`, MemoryOS pages);
- `AmemRetriever`: `AgenticMemory.search` (hybrid seeds, then links and session order) as Documents;
- `AmemVectorStore`: notes as a vector store, with any LangChain `Embeddings`;
- `AmemStore`: LangGraph's long-term store, a namespace per tenant;
- `memory_tools`: `save_memory` and `search_memories` for an agent.
"""

from __future__ import annotations

try:
    import langchain_core  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the install
    raise ImportError("the LangChain adapter needs its extra: pip install 'amem-graph[langchain]'") from err

from .history import AmemChatMessageHistory
from .retriever import AmemRetriever, hit_document
from .store import AmemStore
from .tools import SaveMemoryTool, SearchMemoriesTool, memory_tools
from .vectorstore import AmemEmbeddings, AmemVectorStore

__all__ = [
    "AmemChatMessageHistory",
    "AmemEmbeddings",
    "AmemRetriever",
    "AmemStore",
    "AmemVectorStore",
    "SaveMemoryTool",
    "SearchMemoriesTool",
    "hit_document",
    "memory_tools",
]
