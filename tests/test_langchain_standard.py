"""LangChain's standard suites (langchain-tests) for the retriever, the vector store and the memory tools,
against the real Neo4j and the real embedding model."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from langchain_core.tools import BaseTool
from langchain_tests.integration_tests import (
    RetrieversIntegrationTests,
    ToolsIntegrationTests,
    VectorStoreIntegrationTests,
)

from amem_graph import AgenticMemory, Settings
from amem_graph.integrations.langchain import (
    AmemRetriever,
    AmemVectorStore,
    SaveMemoryTool,
    SearchMemoriesTool,
)

FACTS = [
    "Maya adopted a grey cat named Pixel in March.",
    "Pixel the cat sleeps on Maya's keyboard while she codes.",
    "Maya works as a backend engineer at a bike-sharing startup.",
    "Maya's brother Tom lives in Lisbon and teaches surfing.",
    "Maya is learning Portuguese before visiting Tom in the summer.",
]


@pytest.fixture(scope="module")
def shared_memory(settings: Settings) -> Iterator[AgenticMemory]:
    tenant = f"lc-{uuid.uuid4().hex[:10]}"
    with AgenticMemory(settings, tenant=tenant) as memory:
        for fact in FACTS:
            memory.add(fact, source="test")
        yield memory
        memory.admin.delete_tenant(tenant)


class TestAmemRetrieverStandard(RetrieversIntegrationTests):
    @pytest.fixture(autouse=True)
    def _memory(self, shared_memory: AgenticMemory) -> None:
        self.memory = shared_memory

    @property
    def retriever_constructor(self) -> type[AmemRetriever]:
        return AmemRetriever

    @property
    def retriever_constructor_params(self) -> dict:
        return {"memory": self.memory, "k": 2}

    @property
    def retriever_query_example(self) -> str:
        return "What is the name of Maya's cat?"


class TestAmemVectorStoreStandard(VectorStoreIntegrationTests):
    """With the suite's 6-dimension fake embeddings: any LangChain `Embeddings` ranks the notes."""

    @pytest.fixture
    def vectorstore(self, settings: Settings) -> Iterator[AmemVectorStore]:
        tenant = f"lcvs-{uuid.uuid4().hex[:10]}"
        with AgenticMemory(settings, tenant=tenant) as memory:
            yield AmemVectorStore(memory, embedding=self.get_embeddings())
            memory.admin.delete_tenant(tenant)


class TestSearchMemoriesToolStandard(ToolsIntegrationTests):
    @pytest.fixture(autouse=True)
    def _memory(self, shared_memory: AgenticMemory) -> None:
        self.memory = shared_memory

    @property
    def tool_constructor(self) -> type[BaseTool]:
        return SearchMemoriesTool

    @property
    def tool_constructor_params(self) -> dict:
        return {"memory": self.memory}

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"query": "Where does Tom live?", "k": 2}


class TestSaveMemoryToolStandard(ToolsIntegrationTests):
    @pytest.fixture(autouse=True)
    def _memory(self, settings: Settings) -> Iterator[None]:
        tenant = f"lcsave-{uuid.uuid4().hex[:10]}"
        with AgenticMemory(settings, tenant=tenant) as memory:
            self.memory = memory
            yield
            memory.admin.delete_tenant(tenant)

    @property
    def tool_constructor(self) -> type[BaseTool]:
        return SaveMemoryTool

    @property
    def tool_constructor_params(self) -> dict:
        return {"memory": self.memory}

    @property
    def tool_invoke_params_example(self) -> dict:
        return {"content": "Maya's favourite tea is genmaicha."}
