"""A local Neo4j Community server run from Maven Central's jars, for machines without Docker."""

from .local import ConnectionInfo, LocalNeo4j, free_port, private_server

__all__ = ["ConnectionInfo", "LocalNeo4j", "free_port", "private_server"]
