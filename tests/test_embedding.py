"""The embedding backends: ONNX Runtime gives torch's vectors for real texts, batches keep their order, the
export is cached and checked, and a backend that cannot run says why."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from amem_graph import InvalidInput
from amem_graph.bench.texts import sentences
from amem_graph.embedding import Embedder, onnx, resolve_model
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
    folder = Path(resolve_model(DEFAULT_MODEL))
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
    folder = Path(resolve_model(DEFAULT_MODEL))
    assert onnx.supported(folder)
    (tmp_path / "1_Pooling").mkdir()
    (tmp_path / "modules.json").write_text((folder / "modules.json").read_text())
    (tmp_path / "1_Pooling" / "config.json").write_text('{"pooling_mode_cls_token": true}')
    assert not onnx.supported(tmp_path)
    assert not onnx.supported(tmp_path / "missing")


def test_a_damaged_graph_is_not_used(tmp_path: Path) -> None:
    (tmp_path / "tokenizer.json").write_text((Path(resolve_model(DEFAULT_MODEL)) / "tokenizer.json").read_text())
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
    """A fresh machine (an empty AMEM_HOME): the export and int8 quantisation print one line on stderr (what,
    where, how long) and no library's warning or progress bar; the second run prints nothing."""
    import os
    import subprocess
    import sys

    code = "from amem_graph.embedding import Embedder; print(Embedder().embed_one('hello').shape[0])"
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
