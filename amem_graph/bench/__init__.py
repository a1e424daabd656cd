"""Benchmarks that print JSON: `amem-graph bench ...`. Never timed assertions in tests."""
