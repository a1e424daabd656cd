"""The viewer on a real conversation (LoCoMo conv-30, 369 turns), in headless Chromium, on both stores: the overview
is the conversation along its time, its labels readable (10 px or more at the default zoom) and never over each
other, at the top level, in a session and in said time; the slider in said time starts at the first session alone;
a search marks its matched words and draws its paths; a tenant that holds nothing names the one that does; the page
logs no warning. `scripts/screenshots.sh` writes its screenshots into docs/images (viewer-conversation-*.png)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from amem_graph import AgenticMemory
from amem_graph.ingest import locomo
from amem_graph.viewer import Viewer

if TYPE_CHECKING:
    from playwright.sync_api import Page

STORES = ("neo4j", "embedded")
LOCOMO = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
SHOTS = os.environ.get("AMEM_VIEWER_SHOTS")
READY = '#graph[data-ready="1"]'
# Every drawn label's box (model coordinates: what does not overlap there does not on screen) and its size on
# screen; the pairs of boxes that overlap.
LABELS = """() => {
  const cy = window.amemViewer.cy;
  const boxes = cy.nodes().filter((n) => n.data("label")).map((n) => ({ label: n.data("label"),
    box: n.boundingBox({ includeNodes: false, includeEdges: false, includeLabels: true }),
    px: parseFloat(n.style("font-size")) * cy.zoom() }));
  const over = [];
  boxes.forEach((a, i) => boxes.slice(i + 1).forEach((b) => {
    if (a.box.x1 < b.box.x2 && b.box.x1 < a.box.x2 && a.box.y1 < b.box.y2 && b.box.y1 < a.box.y2) over.push([a.label, b.label]);
  }));
  return { labels: boxes.length, smallest: Math.min(...boxes.map((b) => b.px)), over };
}"""


def _readable(page: Page, at_least: int) -> dict[str, Any]:
    page.wait_for_selector(READY)
    found: dict[str, Any] = page.evaluate(LABELS)
    assert found["labels"] >= at_least, found
    assert found["smallest"] >= 10, found
    assert found["over"] == [], found
    return found


def _shot(page: Page, name: str, scratch: Path) -> None:
    folder = Path(SHOTS) if SHOTS else scratch
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=folder / f"viewer-conversation-{name}.png")


def _changed(page: Page, selector: str, value: str) -> None:
    """The slider moved as a person lets go of it."""
    page.locator(selector).fill(value)
    page.locator(selector).dispatch_event("change")


@pytest.mark.slow
@pytest.mark.skipif(not LOCOMO.exists(), reason=f"LoCoMo data not found at {LOCOMO}")
def test_a_conversation_in_the_viewer(
    page: Page, memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory], tmp_path: Path,
) -> None:
    conversation = locomo.pick(locomo.load(LOCOMO), "conv-30")
    turns = locomo.turns(conversation)
    memory.add_many(turns)
    first_said = min(turns, key=lambda t: t.event_time or 0)  # type: ignore[arg-type, return-value]
    first_session = [t for t in turns if t.session == first_said.session]
    sessions = {t.session for t in turns}
    errors: list[str] = []
    page.on("console", lambda message: errors.append(f"{message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        with Viewer(memory) as viewer:
            page.goto(viewer.url)
            page.wait_for_selector('body[data-ready="1"]')

            # The overview: the sessions in the order they were said, the topics between them, all readable.
            _readable(page, at_least=len(sessions))
            steps = page.evaluate("() => window.amemViewer.cy.nodes('[kind = \"step\"]').map((n) => n.data('step'))")
            assert len(steps) == len(sessions)
            assert [s["first"] for s in steps] == sorted(s["first"] for s in steps)
            assert page.evaluate("() => window.amemViewer.cy.nodes('.entity').length") >= 5
            _shot(page, "overview", tmp_path)

            # Down to the notes: a session opens to its turns, in order, readable.
            page.locator("#details .step-row").nth(2).click()
            page.wait_for_function("() => document.querySelector('#crumbs strong')?.textContent.startsWith('session')")
            found = _readable(page, at_least=10)
            assert page.locator("#details .note-row").count() == len(
                [t for t in turns if t.session == steps[2]["label"]]), found
            _shot(page, "session", tmp_path)
            page.locator("#crumbs button.crumb").first.click()
            page.wait_for_function("() => !document.querySelector('#crumbs button')")

            # Said time: the slider's first step is the first session alone, and the counts follow it.
            page.locator("#axis").select_option("said")
            page.wait_for_function("() => window.amemViewer.state.axis === 'said'")
            _changed(page, "#as-of", "0")
            page.wait_for_function(
                "n => window.amemViewer.cy?.nodes('[kind = \"note\"]').length === n && "
                "document.getElementById('graph').dataset.ready === '1'", arg=len(first_session))
            assert page.evaluate("() => window.amemViewer.cy.nodes('[kind = \"header\"]').length") == 1
            assert page.locator("#counts").inner_text().startswith(f"{len(first_session)} of {len(turns)} notes")
            _readable(page, at_least=len(first_session))
            _shot(page, "said", tmp_path)
            page.locator("#axis").select_option("recorded")
            page.wait_for_function("() => document.getElementById('as-of-label').textContent === 'now'")

            # A search: the matched words marked, the paths drawn, the panel at its first hit.
            page.locator("#query").fill("What did Gina say about Rome?")
            page.locator("#search").click()
            page.locator("#details .hit").first.wait_for()
            page.wait_for_selector(READY)
            marks = [m.lower() for m in page.locator("#details .hit mark").all_inner_texts()]
            assert "rome" in marks and "gina" in marks
            assert page.evaluate("() => window.amemViewer.cy.edges('.path').length") >= 1
            assert page.locator("#details").evaluate("box => box.scrollTop") == 0
            _shot(page, "search", tmp_path)
            page.goto("about:blank")  # the page gone before its server: no request of it is cut off

        # A tenant that holds nothing: the page says so and names the tenant that holds the conversation.
        with open_memory(memory.tenant + "-typo") as nobody, Viewer(nobody) as viewer:
            page.goto(viewer.url)
            page.wait_for_selector('#details[data-empty="1"]')
            assert memory.tenant in page.locator("#details .tenants").inner_text()
            _shot(page, "unknown-tenant", tmp_path)
            page.goto("about:blank")

        assert not errors, f"the page logged errors or warnings: {errors}"
    except Exception:
        page.screenshot(path=tmp_path / "viewer-failure.png")
        raise
