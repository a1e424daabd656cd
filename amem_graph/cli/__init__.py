"""The `amem-graph` admin CLI (typer + rich). Exit codes are listed in `amem-graph --help`."""

from __future__ import annotations

import typer

from . import (
    bench,
    browser,
    check,
    demo,
    entities,
    history,
    ingest,
    llm,
    mcp,
    model,
    notes,
    retention,
    server,
    tiers,
    transfer,
    view,
    worker,
)
from .common import EXIT_CODES, HelpGroup, user_errors
from .doctor import doctor

app = typer.Typer(
    name="amem-graph",
    help="Memory for LLM agents: notes that link and evolve, on the embedded store or Neo4j.\n\n" + EXIT_CODES,
    cls=HelpGroup,
    no_args_is_help=True,
    pretty_exceptions_show_locals=False,
)
app.add_typer(server.app, name="neo4j")
app.add_typer(llm.app, name="llm")
app.add_typer(model.app, name="model")
app.add_typer(bench.app, name="bench")
notes.register(app)
history.register(app)
tiers.register(app)
entities.register(app)
retention.register(app)
app.command()(user_errors(browser.browser))
transfer.register(app)
app.command()(user_errors(ingest.ingest))
app.command()(user_errors(demo.demo))
app.command()(user_errors(doctor))
app.command()(user_errors(check.check))
app.command()(user_errors(mcp.mcp))
app.command()(user_errors(view.view))
app.command()(user_errors(worker.worker))


def main() -> None:
    app()


__all__ = ["app", "main"]
