"""The model table (embedding/catalog.py): each downloaded model is fetched once, from its Maven artifact or from a
model hub (here one on loopback, over real HTTP), checked against its pinned hashes, and runs on ONNX Runtime as
its own export computes it; queries and documents take the model's forms; each model's cosines are put on the
reference scale; where no source works, the error names every way and the packaged model."""

from __future__ import annotations

import functools
import http.server
import shutil
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest

from amem_graph.embedding import Embedder, catalog, download, onnx
from amem_graph.errors import AmemError

pytestmark = pytest.mark.embedded

TEXTS = [
    "When did Caroline go to the LGBTQ support group?",
    "Melanie painted a sunrise over the lake last summer.",
    "ok",
    "Melanie’s kids loved the dinosaur exhibit 🦕 — «magnifique», she said.",
    " ".join(["The longest note keeps going past the model's token limit"] * 60),
]
DOWNLOADED = [spec for spec in catalog.MODELS if spec.download is not None]
ModelFiles = Callable[[catalog.ModelSpec, Path], None]  # conftest's model_files: model to hand, or a skip


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("home")


def _reference(spec: catalog.ModelSpec, folder: Path, texts: list[str]) -> np.ndarray:
    """The export itself on ONNX Runtime (its last hidden state), pooled as the table says and normalised."""
    import onnxruntime
    from tokenizers import Tokenizer

    session = onnxruntime.InferenceSession(str(folder / "model.onnx"), providers=["CPUExecutionProvider"])
    tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
    tokenizer.enable_truncation(spec.tokens)
    out = []
    for text in texts:
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        hidden = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids),
                                    "token_type_ids": np.zeros_like(ids)})[0][0]
        vector = hidden.mean(axis=0) if spec.pooling == "mean" else hidden[0]
        out.append(vector / np.linalg.norm(vector))
    return np.stack(out)


@pytest.mark.parametrize("spec", DOWNLOADED, ids=lambda spec: spec.name)
def test_a_downloaded_model_embeds_as_its_export_does_in_its_query_and_document_forms(
    spec: catalog.ModelSpec, home: Path, model_files: ModelFiles,
) -> None:
    model_files(spec, home)
    full = Embedder(spec.name, backend="onnx", home=home)
    documents, queries = full.embed(TEXTS), np.stack([full.embed_query(t) for t in TEXTS])
    folder = download.folder(spec, home)  # fetched by the first embedding above
    assert documents.shape == (len(TEXTS), spec.dimension) == (len(TEXTS), full.dimension)
    expected_documents = _reference(spec, folder, [spec.document_prefix + t for t in TEXTS])
    expected_queries = _reference(spec, folder, [spec.query_prefix + t for t in TEXTS])
    assert (documents * expected_documents).sum(axis=1).min() >= onnx.MIN_COSINE
    assert (queries * expected_queries).sum(axis=1).min() >= onnx.MIN_COSINE
    assert (documents * queries).sum(axis=1).min() < 0.999  # the two forms differ
    int8 = Embedder(spec.name, home=home)
    assert int8.backend == "onnx-int8"
    assert (int8.embed(TEXTS) * expected_documents).sum(axis=1).min() >= onnx.MIN_COSINE_INT8
    # What the model reads of a stored text: its limit less [CLS], [SEP] and the document prefix.
    prefix = len(full._offsets(spec.document_prefix)) if spec.document_prefix else 0
    assert full.window == spec.tokens - 2 - prefix
    assert full.passages([TEXTS[-1]])[0] and not full.passages([TEXTS[1]])[0]


def test_the_models_outside_the_table_and_the_aliases() -> None:
    assert catalog.canonical("e5-small-v2") == "intfloat/e5-small-v2" == catalog.canonical("intfloat/e5-small-v2")
    assert catalog.canonical("all-MiniLM-L6-v2") == catalog.MINILM.name
    assert catalog.spec("someone/some-model") is None and catalog.canonical("someone/some-model") == "someone/some-model"
    assert len({spec.name for spec in catalog.MODELS}) == len(catalog.MODELS)


@pytest.fixture()
def hub(tmp_path: Path, home: Path, model_files: ModelFiles) -> Iterator[tuple[str, Path]]:
    """A model hub on loopback serving e5's two files at the paths the real one does (from the Maven copy)."""
    spec = catalog.E5_SMALL
    assert spec.download is not None
    model_files(spec, home)
    source = download.folder(spec, home)
    root = tmp_path / "hub"
    for name, (path, _, _) in spec.download.files.items():
        target = root / spec.download.hub_repo / "resolve" / "main" / path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(source / name, target)
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
    handler.log_message = lambda *args: None  # type: ignore[attr-defined, assignment]
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", root
    finally:
        server.shutdown()
        server.server_close()


def test_the_hub_is_tried_first_and_a_file_off_its_hash_is_refused(
    hub: tuple[str, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
) -> None:
    url, root = hub
    monkeypatch.setenv("HF_ENDPOINT", url)
    monkeypatch.delenv("HF_HUB_OFFLINE", raising=False)
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))  # no Maven: the hub alone
    fresh = tmp_path / "fresh"
    folder = download.folder(catalog.E5_SMALL, fresh)
    assert "done from the model hub" in capsys.readouterr().err
    assert sorted(p.name for p in folder.iterdir()) == ["model.onnx", "tokenizer.json"]

    tokenizer = root / "Xenova/e5-small-v2/resolve/main/tokenizer.json"
    tokenizer.write_text(tokenizer.read_text().replace('"[UNK]"', '"[unknown]"', 1))
    other = tmp_path / "other"
    with pytest.raises(AmemError) as raised:
        download.folder(catalog.E5_SMALL, other)
    message = str(raised.value)
    assert "from the model hub: tokenizer.json has sha256" in message and "from Maven: `mvn` is not on PATH" in message
    assert "AMEM_EMBEDDING_MODEL=all-MiniLM-L6-v2" in message and catalog.E5_SMALL.download.maven in message  # type: ignore[union-attr]
    assert not list(other.rglob("*.onnx")) and not list(other.rglob(".fetching-*"))  # nothing half-written


def test_no_hub_and_no_maven_is_a_clear_error_and_never_another_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("PATH", str(tmp_path / "no-tools"))
    embedder = Embedder("BAAI/bge-small-en-v1.5", home=tmp_path / "home")
    with pytest.raises(AmemError, match="HF_HUB_OFFLINE is set.*`mvn` is not on PATH"):
        embedder.embed(["hello"])
    assert not [p for p in (tmp_path / "home").rglob("*") if p.is_file()]  # nothing fetched, nothing prepared


def test_langchain_embeddings_follow_the_query_and_document_split(
    home: Path, model_files: ModelFiles,
) -> None:
    pytest.importorskip("langchain_core")
    model_files(catalog.E5_SMALL, home)
    from amem_graph.integrations.langchain import AmemEmbeddings

    embedder = Embedder("e5-small-v2", home=home)
    adapter = AmemEmbeddings(embedder)
    assert np.allclose(adapter.embed_query(TEXTS[0]), embedder.embed_query(TEXTS[0]), atol=1e-6)
    assert np.allclose(adapter.embed_documents(TEXTS[:2]), embedder.embed(TEXTS[:2]), atol=1e-6)
    assert not np.allclose(adapter.embed_query(TEXTS[0]), adapter.embed_documents([TEXTS[0]])[0], atol=1e-3)


@pytest.mark.parametrize("spec", catalog.MODELS, ids=lambda spec: spec.name)
def test_the_table_says_where_each_models_cosines_start(
    spec: catalog.ModelSpec, home: Path, model_files: ModelFiles,
) -> None:
    """`unrelated` is what its comment says it is, measured again; it puts the model's cosines on the reference
    scale, where unrelated texts meet the reference's cosine and the same text stays at 1."""
    model_files(spec, home)
    from amem_graph.bench.texts import sentences

    texts = sentences(150)
    vectors = Embedder(spec.name, home=home).embed(texts)
    pairs = (vectors @ vectors.T)[np.triu_indices(len(texts), 1)]
    assert abs(float(pairs.mean()) - spec.unrelated) < 0.005, float(pairs.mean())
    embedder = Embedder(spec.name, home=home)
    assert embedder.similarity(spec.unrelated) == pytest.approx(catalog.REFERENCE.unrelated)
    assert embedder.similarity(1.0) == pytest.approx(1.0)
    assert embedder.cosine_unit == pytest.approx((1 - spec.unrelated) / (1 - catalog.REFERENCE.unrelated))
    assert catalog.on_reference_scale(None, 0.3) == 0.3 and catalog.cosine_unit(None) == 1.0
