"""Neo4j Browser, driven by headless Chromium, works with what the project ships: it connects to the test
server, takes the GraSS style (`:style`), and draws the graph of a saved exploration query (a note's
neighbourhood) for a real tenant, with no error anywhere on the page. A screenshot of the result is left in
out/browser-screenshot.png for a person to look at (out/browser-failure.png when the test fails)."""

from __future__ import annotations

import re
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import pytest

from amem_graph import AgenticMemory
from amem_graph.server import ConnectionInfo
from amem_graph.viewer import browser as neo4j_browser

from .chromium import TIMEOUT_MS, unavailable

OUT = Path(__file__).resolve().parents[1] / "out"
# Where Neo4j Browser puts an error, besides a frame's status bar: a Cypher error frame, the app's banner.
ERRORS = '[data-testid="cypherFrameErrorMessage"], [data-testid="errorBanner"]'
GRAPH_NODES = "svg .layer.nodes .node"

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page


@pytest.fixture
def browser_url(neo4j_server: ConnectionInfo) -> str:
    if not neo4j_server.http_url:
        unavailable(f"the HTTP port of {neo4j_server.uri} is unknown: it is not AMEM_HOME's local server")
    return neo4j_server.browser_url


def _errors(page: Page) -> list[str]:
    texts = [text.strip() for text in page.locator(ERRORS).all_inner_texts()]
    bars = page.get_by_test_id("frameStatusbar").filter(has_text=re.compile(r"Error")).all_inner_texts()
    return [text for text in texts + [bar.strip() for bar in bars] if text]


def _connect(page: Page, url: str, server: ConnectionInfo) -> None:
    response = page.goto(url, timeout=TIMEOUT_MS)
    assert response is not None and response.ok, f"{url} answered {response and response.status}"
    bolt = urlsplit(server.uri)
    page.get_by_test_id("bolt-scheme-select").select_option("bolt://")  # one server, no routing
    page.get_by_test_id("boltaddress").fill(f"{bolt.hostname}:{bolt.port}")
    page.get_by_test_id("username").fill(server.user)
    page.get_by_test_id("password").fill(server.password)
    page.get_by_test_id("connect").click()
    # A refused login shows up in the connect frame's status bar, not as a new frame.
    failed = page.get_by_test_id("frameStatusbar").filter(has_text=re.compile(r"Error"))
    page.get_by_text("You are connected as user").or_(failed).first.wait_for()
    assert not _errors(page), f"could not connect to {server.uri}: {_errors(page)}"


def _run(page: Page, command: str) -> None:
    """Types a command into the editor and runs it. insert_text, not typing key by key: the editor's
    autocompletion and bracket closing would change what was typed."""
    page.get_by_test_id("activeEditor").click()
    page.keyboard.insert_text(command)
    page.get_by_test_id("editor-Run").click()


def _set_param(page: Page, name: str, value: str) -> None:
    _run(page, f":param {name} => '{value}'")
    page.get_by_test_id("rawParamData").filter(has_text=value).first.wait_for()


def _settled(nodes: Locator, deadline_s: float = 60.0) -> None:
    """Waits until the force layout stops moving the nodes, so the screenshot shows the graph at rest."""
    positions: list[str | None] = []
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        now = [nodes.nth(i).get_attribute("transform") for i in range(nodes.count())]
        if now == positions:
            return
        positions = now
        nodes.page.wait_for_timeout(500)


def _note_color() -> str:
    """The fill colour that style.grass gives Note nodes: seen on the page, it proves `:style` took."""
    grass = neo4j_browser.browser_style().read_text(encoding="utf-8")
    match = re.search(r"node\.Note\s*\{[^}]*?\bcolor:\s*(#[0-9A-Fa-f]{6})", grass)
    assert match, "style.grass gives node.Note no color"
    return match.group(1)


def _screenshot(page: Page, path: Path, name: str) -> None:
    page.screenshot(path=path)
    OUT.mkdir(exist_ok=True)
    for earlier in OUT.glob("browser-*.png"):  # a person sees this run's outcome, not an older one's
        earlier.unlink()
    shutil.copyfile(path, OUT / name)


def _explore(page: Page, url: str, server: ConnectionInfo, tenant: str, note_id: str) -> Locator:
    """Connects, loads the style, sets the parameters and runs the first saved query; returns its nodes."""
    _connect(page, url, server)
    _run(page, ":style " + " ".join(neo4j_browser.browser_style().read_text(encoding="utf-8").split()))
    _set_param(page, "tenant", tenant)
    _set_param(page, "note_id", note_id)
    name, query = neo4j_browser.saved_queries()[0]
    assert "$note_id" in query, f"the first saved query is no longer about one note: {name!r}"
    _run(page, query)
    command = page.get_by_test_id("frameCommand").filter(has_text=query.splitlines()[0][:40])
    frame = page.get_by_test_id("frame").filter(has=command)
    nodes = frame.locator(GRAPH_NODES)
    # Whichever comes first: the graph, an error, or Browser's note that the query found nothing.
    nodes.first.or_(frame.get_by_text("no records")).or_(page.locator(ERRORS)).first.wait_for()
    return nodes


@pytest.mark.slow
def test_browser_draws_a_saved_query_for_a_tenant(
    page: Page, browser_url: str, neo4j_server: ConnectionInfo, browse_memory: AgenticMemory,
    make_browse_tenant: Callable[[], str], tmp_path: Path,
) -> None:
    tenant = make_browse_tenant()
    note_id = browse_memory.list(tenant=tenant, limit=50)[-1].id  # the first note: the linked one
    try:
        nodes = _explore(page, browser_url, neo4j_server, tenant, note_id)
        assert not _errors(page), f"Neo4j Browser shows errors: {_errors(page)}"
        _settled(nodes)
        assert nodes.count() > 1, "the note's neighbourhood drew no linked note"
        fills = nodes.locator("circle.b-outline").evaluate_all("cs => cs.map(c => c.getAttribute('fill'))")
        assert {f.upper() for f in fills} == {_note_color().upper()}, f"the style was not applied: {fills}"
    except Exception:
        _screenshot(page, tmp_path / "browser-failure.png", "browser-failure.png")
        raise
    _screenshot(page, tmp_path / "browser-screenshot.png", "browser-screenshot.png")
