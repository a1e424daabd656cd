"""Memory tools an agent can call: save a memory, search memories (langchain-core's tool API)."""

from __future__ import annotations

from typing import Any

from langchain_core.tools import BaseTool, ToolException
from pydantic import BaseModel, ConfigDict, Field

from ...api import AgenticMemory
from ...errors import InvalidInput
from ...read.retrieval import format_context
from .retriever import hit_document


class SaveMemoryInput(BaseModel):
    content: str = Field(description="What to remember, as one self-contained statement (who, what, when).")


class SearchMemoriesInput(BaseModel):
    query: str = Field(description="What to recall, as a question or a few words.")
    k: int = Field(default=5, ge=1, le=50, description="How many memories to return.")
    as_of: str | None = Field(default=None, description=(
        "Recall the memory as it stood at this ISO-8601 time (what was known then); omit for now."))


class SaveMemoryTool(BaseTool):
    """Stores a note: analysed, linked to related memories, and updating them."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "save_memory"
    description: str = (
        "Save something worth remembering about the user or the task for later conversations. "
        "Returns the id of the stored memory."
    )
    args_schema: type[BaseModel] = SaveMemoryInput
    handle_tool_error: bool = True  # a refused memory is told to the agent, not raised through it
    memory: AgenticMemory
    tenant: str | None = None
    source: str = "agent"

    def _run(self, content: str, **_: Any) -> str:
        try:
            note = self.memory.add(content, tenant=self.tenant, source=self.source)
        except InvalidInput as err:
            raise ToolException(str(err)) from None
        return f"Saved memory {note.id} ({len(note.links)} links to related memories)."


class SearchMemoriesTool(BaseTool):
    """Finds the memories that answer a query; the text lists them, the artifact holds each hit's ids,
    scores and provenance."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    name: str = "search_memories"
    description: str = (
        "Search long-term memory for facts, preferences and past events relevant to a question. "
        "Returns the memories, best first, with how each was found."
    )
    args_schema: type[BaseModel] = SearchMemoriesInput
    response_format: str = "content_and_artifact"
    handle_tool_error: bool = True
    memory: AgenticMemory
    tenant: str | None = None

    def _run(self, query: str, k: int = 5, as_of: str | None = None, **_: Any) -> tuple[str, list[dict[str, Any]]]:
        try:
            hits = self.memory.search(query, k=k, as_of=as_of, tenant=self.tenant)
        except InvalidInput as err:
            raise ToolException(str(err)) from None
        return format_context(hits), [{"content": d.page_content, **d.metadata} for d in map(hit_document, hits)]


def memory_tools(memory: AgenticMemory, *, tenant: str | None = None) -> list[BaseTool]:
    """The tools to give an agent (e.g. `model.bind_tools(memory_tools(memory))`)."""
    return [SaveMemoryTool(memory=memory, tenant=tenant), SearchMemoriesTool(memory=memory, tenant=tenant)]
