"""notebooks/explore.ipynb runs top to bottom against the test server, offline, and shows what it says it
shows: tables with rows, two figures, an evolution whose before and after differ, search provenance."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
from collections.abc import Callable
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOK = ROOT / "notebooks" / "explore.ipynb"
FIGURES = ROOT / "out" / "notebook"  # git-ignored: the drawings, to look at after a run
KERNEL = "amem-graph-venv"

pytestmark = pytest.mark.slow


class _Tables(HTMLParser):
    """The body rows of every <table> in an HTML output, as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: list[list[list[str]]] = []
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self.tables.append([])
        elif tag == "tr":
            self._row = []
        elif tag == "td":
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "td" and self._row is not None and self._cell is not None:
            self._row.append("".join(self._cell))
            self._cell = None
        elif tag == "tr" and self._row:  # header rows hold <th> only, so they stay empty
            self.tables[-1].append(self._row)
            self._row = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def _kernelspec(folder: Path) -> None:
    """A kernelspec naming this interpreter, so the notebook runs in the project's venv whatever other
    `python3` kernels the machine has registered."""
    spec = folder / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "amem-graph (venv)", "language": "python",
    }))


def _kernel_env(cli_env: dict[str, str], tenant: str) -> dict[str, str]:
    # The developer's own database, LLM and plotting settings stay out; the test server's come in.
    base = {k: v for k, v in os.environ.items()
            if not k.startswith(("NEO4J_", "AMEM_LLM_", "OPENAI_")) and k != "MPLBACKEND"}
    return {**base, **cli_env, "AMEM_NOTEBOOK_TENANT": tenant, "AMEM_NOTEBOOK_CLEANUP": "1"}


def _cell(nb: nbformat.NotebookNode, tag: str) -> nbformat.NotebookNode:
    return next(cell for cell in nb.cells if tag in cell.get("metadata", {}).get("tags", []))


def _outputs(nb: nbformat.NotebookNode, tag: str, mime: str) -> list[Any]:
    return [out["data"][mime] for out in _cell(nb, tag).outputs if mime in out.get("data", {})]


def _tables(nb: nbformat.NotebookNode, tag: str) -> list[list[list[str]]]:
    parser = _Tables()
    for html in _outputs(nb, tag, "text/html"):
        parser.feed(html)
    return parser.tables


def _text(nb: nbformat.NotebookNode, tag: str) -> str:
    return "".join(out.get("text", "") for out in _cell(nb, tag).outputs if out.get("output_type") == "stream")


def test_explore_notebook_runs_offline_and_shows_its_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cli_env: dict[str, str], tenant: str,
    count_nodes: Callable[[str], int],
) -> None:
    _kernelspec(tmp_path / "jupyter")
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))  # searched before the user's kernels
    nb = nbformat.read(NOTEBOOK, as_version=4)
    assert all(not cell.get("outputs") for cell in nb.cells if cell.cell_type == "code"), "commit it cleared"

    # cwd is the notebook's folder, as in Jupyter: the sample is read from next to the notebook
    client = NotebookClient(nb, kernel_name=KERNEL, timeout=600, resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    try:
        client.execute(env=_kernel_env(cli_env, tenant))  # any cell error raises CellExecutionError
    finally:
        FIGURES.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, FIGURES / "explore.executed.ipynb")  # to read what it showed, or where it failed

    assert "analyser: heuristic" in _text(nb, "connect")
    assert "33 notes in 3 sessions" in _text(nb, "ingest")
    notes, links = _tables(nb, "tables")
    assert len(notes) == 33
    assert links and all(row[1] == "RELATES_TO" for row in links)

    for tag in ("graph", "link-types", "entities"):
        (png,) = _outputs(nb, tag, "image/png")
        (FIGURES / f"{tag}.png").write_bytes(base64.b64decode(png))

    (evolution, versions) = _tables(nb, "evolution")
    changed = [row for row in evolution if row[3] == "yes"]
    assert changed and all(before != after for _, before, after, _ in changed)
    assert {row[0] for row in evolution} == {"context", "keywords", "tags"}
    assert "revised by n" in _text(nb, "evolution") and len(versions) >= 2

    hybrid, fulltext = _tables(nb, "search")
    assert "Bristol now" in hybrid[0][2]  # the newer fact answers first
    paths = [row[3] for row in fulltext if not row[3].startswith("seed")]
    assert paths and all("->" in path for path in paths)  # reached over links, each step shown

    (top,) = _tables(nb, "entities")
    assert {"Biscuit", "Tom", "Maya"} <= {row[0] for row in top}
    assert re.search(r"Biscuit is mentioned in \d+ notes across 3 sessions", _text(nb, "entities"))

    assert "deleted tenant" in _text(nb, "cleanup")
    assert count_nodes(tenant) == 0  # the memory fixture's teardown deletes it too, should a cell fail
