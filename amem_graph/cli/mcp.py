"""`amem-graph mcp`: the memory as a Model Context Protocol server, over stdio or streamable HTTP."""

from __future__ import annotations

import logging
import os
import sys
from typing import Annotated

import typer

from ..errors import InvalidInput
from ..settings import Settings
from .common import choices, error_console
from .notes import TenantOption, memory

Transport = choices("Transport", ("stdio", "http"))
LOOPBACK = ("127.0.0.1", "localhost", "::1")


def mcp(
    transport: Annotated[Transport, typer.Option(help="stdio: a client starts this process; http: streamable "  # type: ignore[valid-type]
                                                       "HTTP at /mcp, for clients that connect")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP: the address to bind (loopback unless you mean otherwise)")]
    = "127.0.0.1",
    port: Annotated[int, typer.Option(min=1, max=65535, help="HTTP: the port")] = 8765,
    tenant: TenantOption = None,
    allow_tenant_argument: Annotated[bool, typer.Option(
        "--allow-tenant-argument", help="Let the client name a tenant per call (only for a client you trust "
                                        "with every tenant's memory)")] = False,
) -> None:
    """Serve the memory to any MCP client (coding agents, desktop assistants, agent frameworks): tools to add,
    search, read, revert and delete notes, dialogue turns and their context, the persona and entities.
    Over HTTP every request needs `Authorization: Bearer <token>`: $AMEM_MCP_TOKEN, else the token in
    AMEM_HOME/mcp-token (made, mode 0600, on first start). One JSON log line per operation on stderr
    ($AMEM_LOG_LEVEL, default INFO; never the content)."""
    try:
        from ..integrations.mcp import memory_server
        from ..integrations.mcp.http import bearer_token, serve_http
        from ..integrations.mcp.metrics import MemoryMetrics
    except ImportError as err:  # the extra is not installed: say which, without a traceback
        error_console.print(f"error: {err}", highlight=False)
        raise typer.Exit(1) from None

    _log_to_stderr()
    settings = Settings.from_env()
    if transport.value == "http" and host not in LOOPBACK:
        error_console.print(f"warning: serving on {host}, beyond this machine; the token is all that guards it",
                            highlight=False)
    with memory(tenant, serves=True) as mem:
        server = memory_server(mem, allow_tenant_argument=allow_tenant_argument)
        if transport.value == "stdio":
            server.run("stdio")
            return
        token, where = bearer_token(settings)
        metrics = MemoryMetrics(mem)
        error_console.print(f"MCP at http://{host}:{port}/mcp for tenant {mem.tenant!r}; the bearer token is in "
                            f"{where}; metrics at /metrics", highlight=False)
        try:
            serve_http(server, metrics, token, host=host, port=port)
        finally:
            metrics.close()


def _log_to_stderr() -> None:
    """stdout is the protocol's over stdio: every log line goes to stderr, the engine's at AMEM_LOG_LEVEL."""
    level = os.environ.get("AMEM_LOG_LEVEL", "INFO").upper()
    if level not in ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"):
        raise InvalidInput(f"AMEM_LOG_LEVEL={level!r} is not a log level (DEBUG, INFO, WARNING, ERROR)")
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(message)s", force=True)
    logging.getLogger("amem_graph").setLevel(level)
