"""The core install, as a newcomer gets it with `pip install amem-graph`: no torch, no CUDA library, no LLM
client, within the size the README promises, and the demo runs in it on the embedded store."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CORE_MAX_MB = 400  # what README.md says of the core install
HEAVY = ("torch", "sentence-transformers", "transformers", "openai", "bpe-openai")


def _size_mb(folder: Path) -> float:
    return sum(f.stat().st_size for f in folder.rglob("*") if f.is_file() and not f.is_symlink()) / 2**20


@pytest.mark.slow
def test_the_core_install_has_no_torch_and_runs_the_demo(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "install", "-q", str(ROOT)],
                          capture_output=True, text=True, timeout=1200, check=False)
    assert done.returncode == 0, done.stderr[-3000:]
    listed = subprocess.run([str(venv / "bin" / "python"), "-m", "pip", "list", "--format=freeze"],
                            capture_output=True, text=True, timeout=120, check=True).stdout.lower()
    names = {line.split("==")[0] for line in listed.split()}
    assert not names & set(HEAVY), names & set(HEAVY)
    assert not [n for n in names if n.startswith(("nvidia-", "cuda-"))]
    assert _size_mb(venv) <= CORE_MAX_MB, _size_mb(venv)

    env = {k: v for k, v in os.environ.items() if not k.startswith(("NEO4J_", "AMEM_", "OPENAI_"))}
    env.update(AMEM_HOME=str(tmp_path / "home"), AMEM_STORE="embedded", NEO4J_URI="")
    demo = subprocess.run([str(venv / "bin" / "amem-graph"), "demo", "-t", "demo"], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=600, check=False)
    assert demo.returncode == 0, demo.stderr[-3000:]
    assert "33 notes in tenant 'demo'" in demo.stdout
    assert "embedded store" in demo.stdout
    asked = subprocess.run([str(venv / "bin" / "amem-graph"), "search", "What did Maya's dog eat?", "-t", "demo",
                            "-k", "1"], env={**env, "AMEM_LLM_BASE_URL": "http://127.0.0.1:9/v1"}, cwd=tmp_path,
                           capture_output=True, text=True, timeout=300, check=False)
    assert asked.returncode != 0 and "pip install 'amem-graph[llm]'" in asked.stdout + asked.stderr
    # The viewer's page ships with the package (a copy, not the checkout's files).
    shipped = subprocess.run(
        [str(venv / "bin" / "python"), "-c",
         "from amem_graph.viewer.server import STATIC; import amem_graph.viewer as v; print(v.__file__); "
         "print(all(STATIC.joinpath(*p.split('/')).is_file() for p in ('index.html', 'viewer.js', 'viewer.css', "
         "'favicon.svg', 'vendor/cytoscape.min.js', 'vendor/cytoscape.LICENSE.txt')))"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False)
    where, complete = shipped.stdout.split()
    assert str(venv) in where and complete == "True", shipped.stdout + shipped.stderr
