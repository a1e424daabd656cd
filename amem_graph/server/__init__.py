"""Local servers the project runs itself: Neo4j Community from Maven Central's jars (for machines without
Docker), and an OpenAI-compatible LLM server on llama.cpp (the agentic path offline)."""

from .llm import LLMConnection, LocalLLM
from .local import ConnectionInfo, LocalNeo4j, free_port, private_server

__all__ = ["ConnectionInfo", "LLMConnection", "LocalLLM", "LocalNeo4j", "free_port", "private_server"]
