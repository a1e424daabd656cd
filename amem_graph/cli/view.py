"""`amem-graph view`: the viewer, a local web page on one tenant's memory."""

from __future__ import annotations

import errno
import html
import shutil
import signal
import tempfile
import webbrowser
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from ..errors import InvalidInput
from ..viewer import Viewer
from ..viewer.server import DEFAULT_PORT
from .common import console, error_console
from .notes import TenantOption, memory, unknown_tenant

if TYPE_CHECKING:
    from ..api import AgenticMemory


def view(
    tenant: TenantOption = None,
    port: Annotated[int | None, typer.Option(
        min=0, max=65535, help=f"The port on 127.0.0.1 (by default {DEFAULT_PORT}, else any free one; 0: any free one)",
    )] = None,
    no_browser: Annotated[bool, typer.Option("--no-browser", help="Print the URL; open no browser")] = False,
) -> None:
    """See what the memory holds, in your browser: the network of notes and links, why each search hit was found,
    each note's versions and evolutions, the memory as of any moment, entities and the dialogue tiers. Served on
    127.0.0.1 only, read-only, for one tenant; the URL carries a token (as Jupyter's does): share it with no one.
    Ctrl-C stops it. Beside an agent that writes the embedded store, it reads what the agent writes as it writes it."""
    with memory(tenant, reads=True) as mem:
        if mem.tenant not in (known := mem.admin.tenants(near=mem.tenant)):  # served all the same: its agent may not have written yet
            error_console.print(Text.assemble(("warning: ", "bold yellow"), unknown_tenant(mem.tenant, known)),
                                highlight=False, soft_wrap=True)
        viewer = _viewer(mem, port)
        console.print(f"The viewer of tenant {mem.tenant!r} ({mem.admin.kind} store) is at", highlight=False)
        console.print(viewer.url, highlight=False, soft_wrap=True)
        console.print("Ctrl-C stops it.", highlight=False)
        opener = None if no_browser else _open(viewer.url)
        signal.signal(signal.SIGTERM, _interrupt)  # a service manager's stop ends it as Ctrl-C does
        try:
            viewer.serve()
        except KeyboardInterrupt:
            pass
        finally:
            viewer.close()
            if opener is not None:
                shutil.rmtree(opener, ignore_errors=True)


def _open(url: str) -> Path:
    """Opens the URL in the user's browser through a page that only this user can read (in a private temporary
    folder), as Jupyter does: a browser started with the URL itself would show the token to every user of the
    machine in its command line. Returns the folder, to remove when the viewer stops."""
    folder = Path(tempfile.mkdtemp(prefix="amem-view-"))
    page = folder / "open.html"
    target = html.escape(url, quote=True)
    page.write_text(f'<!doctype html><meta charset="utf-8"><meta http-equiv="refresh" content="0;url={target}">'
                    f'<a href="{target}">Open the amem-graph viewer</a>\n', encoding="utf-8")
    page.chmod(0o600)
    webbrowser.open(page.as_uri())
    return folder


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def _viewer(mem: AgenticMemory, port: int | None) -> Viewer:
    """On `port`, or with none the usual one, else any free one (another viewer may hold it)."""
    try:
        return Viewer(mem, port=DEFAULT_PORT if port is None else port)
    except OSError as err:
        if err.errno != errno.EADDRINUSE:
            raise
        if port is not None:
            raise InvalidInput(f"port {port} is in use: choose another, or --port 0 for any free one") from None
        return Viewer(mem, port=0)
