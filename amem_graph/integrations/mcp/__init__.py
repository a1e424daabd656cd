"""amem-graph as a Model Context Protocol server (`pip install 'amem-graph[mcp]'`; `amem-graph mcp`):

- `memory_server`: the memory's tools and resources on the SDK's `MCPServer`, for one tenant;
- `serve_http`: that server over streamable HTTP on loopback, behind a bearer token, with Prometheus
  metrics at `/metrics`.
"""

from __future__ import annotations

try:
    import mcp  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the install
    raise ImportError("the MCP server needs its extra: pip install 'amem-graph[mcp]'") from err

from .tools import memory_server

__all__ = ["memory_server"]
