"""Adapters to other frameworks; each is an optional extra (`pip install amem-graph[langchain]`)."""
