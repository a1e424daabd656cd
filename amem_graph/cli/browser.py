"""`amem-graph browser`: where Neo4j Browser is, how to load the project's style and its saved queries."""

from __future__ import annotations

from typing import Annotated
from urllib.parse import urlsplit

import typer
from rich.text import Text

from ..server import LocalNeo4j
from ..settings import Settings
from ..viewer import browser as neo4j_browser
from .common import console, print_json
from .notes import JsonOption, TenantOption

BROWSER_PORT = 7474  # Neo4j's default HTTP port, for a server this CLI did not start


def browser(
    tenant: TenantOption = None,
    style: Annotated[bool, typer.Option("--style", help="Print the GraSS style (to paste after :style)")] = False,
    queries: Annotated[bool, typer.Option("--queries", help="Print the saved exploration queries")] = False,
    as_json: JsonOption = False,
) -> None:
    """Where Neo4j Browser is, and how to load the style and the saved exploration queries."""
    settings = Settings.from_env()
    url, bolt, user = _where(settings)
    tenant = tenant or settings.tenant
    saved = neo4j_browser.saved_queries()
    if as_json:
        print_json({"browser": url, "bolt": bolt, "user": user, "style_file": str(neo4j_browser.browser_style()),
                    "tenant": tenant, "queries": [{"name": n, "cypher": q} for n, q in saved]})
        return
    if style:
        typer.echo(neo4j_browser.browser_style().read_text(encoding="utf-8"))
        return
    if queries:
        typer.echo(f":param tenant => '{tenant}'\n// and, for the queries about one note: :param note_id => '<id from amem-graph list>'\n")
        typer.echo("\n\n".join(f"// {name}\n{query};" for name, query in saved))
        return
    for line in (
        f"Neo4j Browser: {url}",
        f"Connect to {bolt} as {user} (password: `amem-graph neo4j env` for the local server, else NEO4J_PASSWORD).",
        f"Style: type `:style` in Browser and drop {neo4j_browser.browser_style()} on the panel that opens,",
        "       or paste the text of `amem-graph browser --style`.",
        f"Then `:param tenant => '{tenant}'` and paste a saved query (`amem-graph browser --queries`):",
        *(f"  - {name}" for name, _ in saved),
    ):
        console.print(Text(line))


def _where(settings: Settings) -> tuple[str, str, str]:
    """(Browser URL, bolt URI, user): the local server's, or guessed from NEO4J_URI's host."""
    if settings.neo4j_uri is None:
        info = LocalNeo4j.for_settings(settings).connection()
        if info is not None:
            return info.browser_url, info.uri, info.user
        return f"http://127.0.0.1:{settings.local_http_port}/browser/", f"bolt://127.0.0.1:{settings.local_bolt_port}", "neo4j"
    host = urlsplit(settings.neo4j_uri).hostname or "127.0.0.1"
    return f"http://{host}:{BROWSER_PORT}/browser/", settings.neo4j_uri, settings.neo4j_user
