"""`amem-graph neo4j ...`: the local Neo4j Community server."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from ..api import AgenticMemory
from ..errors import ServerError
from ..maintenance.warmup import WARM_UP_S
from ..server import LocalNeo4j
from ..settings import Settings
from .common import WarmUpOption, console, print_json, user_errors, warm

app = typer.Typer(help="Run a local Neo4j Community server, 5.26 LTS or AMEM_NEO4J_VERSION (jars from Maven Central, bound to 127.0.0.1).")

DirOption = Annotated[
    Path | None, typer.Option("--dir", help="Server folder (conf, data, logs, password). Default: $AMEM_HOME/neo4j.")
]


def _server(directory: Path | None, heap: str = "1g") -> LocalNeo4j:
    return LocalNeo4j.for_settings(Settings.from_env(), directory, heap)


@app.command()
@user_errors
def install() -> None:
    """Fetch the Neo4j and Browser jars with Maven (once; later starts reuse them)."""
    server = _server(None)
    server.java()
    console.print(f"Neo4j {server.version} jars in {server.install()}")


@app.command()
@user_errors
def start(
    directory: DirOption = None,
    bolt_port: Annotated[int | None, typer.Option(help="Bolt port [default: $AMEM_NEO4J_BOLT_PORT or 7687]")] = None,
    http_port: Annotated[int | None, typer.Option(help="HTTP/Browser port [default: $AMEM_NEO4J_HTTP_PORT or 7474]")] = None,
    heap: Annotated[str, typer.Option(help="JVM heap size")] = "1g",
    timeout: Annotated[float, typer.Option(help="Seconds to wait for Bolt")] = 180.0,
    warm_up: WarmUpOption = WARM_UP_S,
) -> None:
    """Install the jars if needed, start the server, wait until it accepts connections and warm it up."""
    settings = Settings.from_env()
    server = _server(directory, heap)
    was_running = server.pid() is not None
    info = server.start(
        bolt_port=bolt_port or settings.local_bolt_port, http_port=http_port or settings.local_http_port,
        timeout=timeout,
    )
    state = "already running" if was_running else "started"
    console.print(f"Neo4j {server.version} {state} at [bold]{info.uri}[/] (user {info.user}, password in {server.password_file})")
    if not was_running and warm_up > 0:  # a running server is as warm as its use made it
        with AgenticMemory(replace(settings, store="neo4j", neo4j_uri=info.uri, neo4j_user=info.user,
                                   neo4j_password=info.password, neo4j_database=None)) as memory:
            warm(memory, warm_up)
    console.print(f"Browser: {info.browser_url}   Logs: {server.log_file}")
    console.print('Point the engine at it: eval "$(amem-graph neo4j env)"')


@app.command()
@user_errors
def stop(directory: DirOption = None) -> None:
    """Stop the server cleanly (SIGTERM, then SIGKILL after 60 s)."""
    server = _server(directory)
    console.print("Neo4j stopped." if server.stop() else f"No Neo4j was running in {server.dir}.")


@app.command()
@user_errors
def status(directory: DirOption = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Whether the server runs, where, and where its logs and password are (exit 0 either way)."""
    state = _server(directory).status()
    if as_json:
        print_json(state)
        return
    for key, value in state.items():
        console.print(f"{key:>13}: {value}", markup=False, highlight=False)


@app.command()
@user_errors
def env(directory: DirOption = None) -> None:
    """Print NEO4J_URI / NEO4J_USER / NEO4J_PASSWORD exports: eval "$(amem-graph neo4j env)"."""
    server = _server(directory)
    info = server.connection()
    if info is None or server.pid() is None:
        raise ServerError(f"no local Neo4j is running in {server.dir}: start it with `amem-graph neo4j start`")
    typer.echo(info.exports())
