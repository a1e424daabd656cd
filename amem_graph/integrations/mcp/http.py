"""The memory server over streamable HTTP: on loopback unless told otherwise, every request (the MCP
endpoint and `/metrics` alike) behind a bearer token, compared in constant time; a request without it gets
401 before it reaches the server, so it touches nothing."""

from __future__ import annotations

import hmac
import json
import os
from typing import Any

import uvicorn
from mcp.server.mcpserver import MCPServer
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from ...core.secret import secret_file
from ...settings import Settings
from .metrics import MemoryMetrics

MCP_PATH = "/mcp"
METRICS_PATH = "/metrics"
TOKEN_ENV = "AMEM_MCP_TOKEN"


def bearer_token(settings: Settings, env: dict[str, str] | None = None) -> tuple[str, str]:
    """(token, where it comes from): AMEM_MCP_TOKEN, else the 0600 file under AMEM_HOME, made on first use."""
    env = dict(os.environ) if env is None else env
    if value := env.get(TOKEN_ENV, "").strip():
        return value, TOKEN_ENV
    path = settings.home / "mcp-token"
    return secret_file(path), str(path)


class BearerAuth:
    """ASGI middleware: only requests with `Authorization: Bearer <token>` get through."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = json.dumps({"error": "unauthorized", "error_description": "a bearer token is required"})
                await Response(body, status_code=401, media_type="application/json",
                               headers={"WWW-Authenticate": 'Bearer realm="amem-graph"'})(scope, receive, send)
                return
        await self.app(scope, receive, send)


def http_app(server: MCPServer, metrics: MemoryMetrics, token: str, *, host: str = "127.0.0.1") -> ASGIApp:
    """The streamable HTTP app at /mcp, with /metrics beside it, behind the token."""

    @server.custom_route(METRICS_PATH, methods=["GET"])
    async def scrape(request: Request) -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    return BearerAuth(server.streamable_http_app(streamable_http_path=MCP_PATH, host=host), token)


def serve_http(server: MCPServer, metrics: MemoryMetrics, token: str, *, host: str, port: int,
               log_level: str = "warning", **uvicorn_options: Any) -> None:
    """Serve until interrupted (SIGINT or SIGTERM)."""
    uvicorn.run(http_app(server, metrics, token, host=host), host=host, port=port, log_level=log_level,
                access_log=False, **uvicorn_options)
