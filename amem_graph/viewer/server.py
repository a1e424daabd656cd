"""The viewer's web server: the page and its JSON on loopback, for one tenant, read-only.

Guards, as a notebook server's: a random token in the URL the command prints (kept afterwards in a cookie for that
port, HttpOnly and SameSite=Strict), so another local user or a web page cannot read the memory; a Host check
against DNS rebinding; GET only; a strict content security policy (scripts and styles from this server only, no
inline code, no request elsewhere) and no referrer, so the token never leaves the page. Python's own threaded HTTP
server serves it: a page and a few JSON reads for one person need nothing more, and the core install stays as it
is."""

from __future__ import annotations

import hmac
import json
import logging
import mimetypes
import secrets
import threading
from collections.abc import Callable
from http import HTTPStatus
from http.cookies import CookieError, SimpleCookie
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

from ..api import AgenticMemory
from ..core.log import event
from ..errors import AmemError, EntityNotFound, InvalidInput, NoteNotFound, StoreUnavailable
from .views import Params, Views

LOOPBACK = "127.0.0.1"
DEFAULT_PORT = 8766
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
       "base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
SECURITY_HEADERS = {
    "Content-Security-Policy": CSP, "X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
    "X-Frame-Options": "DENY", "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin", "Cache-Control": "no-store",
}
STATIC = resources.files(__package__) / "static"
_STATUS = {InvalidInput: HTTPStatus.BAD_REQUEST, NoteNotFound: HTTPStatus.NOT_FOUND,
           EntityNotFound: HTTPStatus.NOT_FOUND, StoreUnavailable: HTTPStatus.SERVICE_UNAVAILABLE}
log = logging.getLogger(__name__)


class Viewer:
    """The viewer of one memory's tenant, served on loopback: `start()` in a thread (or `serve()` in this one),
    `url` to open, `close()` to stop. The memory stays the caller's."""

    def __init__(self, memory: AgenticMemory, *, port: int = 0, token: str | None = None) -> None:
        """`port` 0 takes any free port. `token` (else a random one) is what the URL carries."""
        self.token = token or secrets.token_urlsafe(32)
        self._views = Views(memory)
        self._routes: dict[str, Callable[[str, Params], Any]] = {
            "summary": lambda _, __: self._views.summary(),
            "timeline": lambda _, params: self._views.timeline(params),
            "suggest": lambda _, __: self._views.suggest(),
            "network": lambda _, params: self._views.network(params),
            "note": self._views.note,
            "search": lambda _, params: self._views.search(params),
            "entities": lambda _, params: self._views.entities(params),
            "entity": self._views.entity,
            "tiers": lambda _, __: self._views.tiers(),
        }
        self._server = ThreadingHTTPServer((LOOPBACK, port), self._handler())
        self._server.daemon_threads = True
        self.port = int(self._server.server_address[1])
        self.cookie = f"amem-view-{self.port}"  # a cookie is the host's, not the port's: one name per viewer
        self._thread: threading.Thread | None = None
        self._serving = False  # shutdown() waits for a serving loop: only once one has started

    @property
    def url(self) -> str:
        return f"http://{LOOPBACK}:{self.port}/?token={self.token}"

    def start(self) -> Viewer:
        self._serving = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="amem-viewer", daemon=True)
        self._thread.start()
        return self

    def serve(self) -> None:
        """Serve in this thread until interrupted (Ctrl-C) or closed from another."""
        self._serving = True
        self._server.serve_forever()

    def close(self) -> None:
        if self._serving:
            self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join()

    def __enter__(self) -> Viewer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- requests ---------------------------------------------------------------------------------

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        viewer = self

        class Handler(BaseHTTPRequestHandler):
            server_version = "amem-graph-viewer"
            sys_version = ""

            def do_GET(self) -> None:
                viewer._get(self)

            def do_HEAD(self) -> None:
                viewer._get(self, body=False)

            def _refuse(self) -> None:
                viewer._send(self, HTTPStatus.METHOD_NOT_ALLOWED, b"read-only: GET only\n", "text/plain",
                             {"Allow": "GET, HEAD"})

            do_POST = do_PUT = do_DELETE = do_PATCH = do_OPTIONS = _refuse

            def log_message(self, format: str, *args: Any) -> None:  # the URL holds the token: never logged
                pass

        return Handler

    def _get(self, request: BaseHTTPRequestHandler, body: bool = True) -> None:
        url = urlsplit(request.path)
        params = parse_qs(url.query, keep_blank_values=True)
        if not self._host_ok(request.headers.get("Host", "")):
            return self._send(request, HTTPStatus.FORBIDDEN, b"403: not a loopback address of this viewer\n",
                              "text/plain", body=body)
        given = params.pop("token", [""])[0]
        if not (self._token_ok(given) or self._token_ok(self._cookie_token(request))):
            return self._send(request, HTTPStatus.FORBIDDEN,
                              b"403: open the URL that `amem-graph view` printed, with its token\n", "text/plain",
                              body=body)
        set_cookie = {"Set-Cookie": f"{self.cookie}={self.token}; HttpOnly; SameSite=Strict; Path=/"} if given else {}
        path = url.path
        if path in ("/", "/index.html"):
            return self._static(request, "index.html", set_cookie, body)
        if path.startswith("/static/"):
            return self._static(request, path.removeprefix("/static/"), set_cookie, body)
        if path.startswith("/api/"):
            return self._api(request, path.removeprefix("/api/"), params, body)
        return self._json(request, HTTPStatus.NOT_FOUND, {"error": "no such page"}, body)

    def _host_ok(self, host: str) -> bool:
        return host in (f"{LOOPBACK}:{self.port}", f"localhost:{self.port}")

    def _token_ok(self, given: str | None) -> bool:
        return bool(given) and hmac.compare_digest(given.encode(), self.token.encode())

    def _cookie_token(self, request: BaseHTTPRequestHandler) -> str | None:
        try:
            cookie = SimpleCookie(request.headers.get("Cookie", ""))
        except CookieError:
            return None
        morsel = cookie.get(self.cookie)
        return morsel.value if morsel else None

    def _static(self, request: BaseHTTPRequestHandler, name: str, headers: dict[str, str], body: bool) -> None:
        parts = [p for p in name.split("/") if p]
        if not parts or any(p in (".", "..") or p.startswith(".") for p in parts):
            return self._json(request, HTTPStatus.NOT_FOUND, {"error": "no such file"}, body)
        target = STATIC.joinpath(*parts)
        if not target.is_file():
            return self._json(request, HTTPStatus.NOT_FOUND, {"error": "no such file"}, body)
        kind = mimetypes.guess_type(parts[-1])[0] or "application/octet-stream"
        if kind.startswith("text/") or kind in ("application/javascript", "text/javascript"):
            kind += "; charset=utf-8"
        self._send(request, HTTPStatus.OK, target.read_bytes(), kind, headers, body=body)

    def _api(self, request: BaseHTTPRequestHandler, path: str, params: Params, body: bool) -> None:
        name, _, rest = path.partition("/")
        route = self._routes.get(name)
        if route is None or (bool(rest) != (name in ("note", "entity"))):
            return self._json(request, HTTPStatus.NOT_FOUND, {"error": f"no such view: {path!r}"}, body)
        try:
            data = route(unquote(rest), params)
        except AmemError as err:
            status = next((code for kind, code in _STATUS.items() if isinstance(err, kind)),
                          HTTPStatus.INTERNAL_SERVER_ERROR)
            return self._json(request, status, {"error": str(err), "kind": type(err).__name__}, body)
        except Exception as err:  # a bug: said to the page without its details, logged here with them
            event("viewer_failed", logging.ERROR, view=name, error=f"{type(err).__name__}: {err}")
            log.exception("viewer view %s failed", name)
            return self._json(request, HTTPStatus.INTERNAL_SERVER_ERROR, {"error": "internal error"}, body)
        self._json(request, HTTPStatus.OK, data, body)

    def _json(self, request: BaseHTTPRequestHandler, status: HTTPStatus, data: Any, body: bool) -> None:
        payload = json.dumps(data, ensure_ascii=False, default=str).encode()
        self._send(request, status, payload, "application/json; charset=utf-8", body=body)

    @staticmethod
    def _send(
        request: BaseHTTPRequestHandler, status: HTTPStatus, payload: bytes, kind: str,
        headers: dict[str, str] | None = None, body: bool = True,
    ) -> None:
        try:
            request.send_response(status)
            for name, value in {**SECURITY_HEADERS, **(headers or {})}.items():
                request.send_header(name, value)
            request.send_header("Content-Type", kind)
            request.send_header("Content-Length", str(len(payload)))
            request.end_headers()
            if body:
                request.wfile.write(payload)
        except ConnectionError:  # the page went away (closed, or moved on) before its answer: nothing to say
            request.close_connection = True
