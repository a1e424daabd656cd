"""The viewer in a real headless Chromium, on both stores: the page loads with no console error and asks nothing
of any address but its own; clicking a note on the graph shows its versions; a search shows its hits with their
paths, drawn; the time slider moved to before a change shows the old content and marks what changed since; a note
whose text is markup shows as text and runs nothing; without the token the server answers 403. The screenshots
it takes go to a temporary folder; `scripts/screenshots.sh` runs it with AMEM_VIEWER_SHOTS=docs/images to write the
docs' (docs/images/viewer-*.png)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

from amem_graph import AgenticMemory
from amem_graph.viewer import Viewer

from .viewer_sample import HOSTILE, sample

if TYPE_CHECKING:
    from playwright.sync_api import Page

STORES = ("neo4j", "embedded")
SHOTS = os.environ.get("AMEM_VIEWER_SHOTS")  # where the screenshots go: the docs' images, asked for explicitly
READY = '#graph[data-ready="1"]'


def _click_note(page: Page, note_id: str) -> None:
    """A real click on the note's node where the graph drew it on its canvas."""
    from playwright.sync_api import TimeoutError as PlaywrightTimeout  # the module is there where a page is

    page.wait_for_selector(READY)
    # The graph may still move (the slider's steps load after it is drawn): a click that missed is made again
    # where the node is now.
    for attempt in range(3):
        x, y = page.evaluate(
            "id => { const p = window.amemViewer.cy.getElementById(id).renderedPosition(); return [p.x, p.y]; }",
            note_id,
        )
        box = page.locator("#graph").bounding_box()
        assert box is not None
        page.mouse.click(box["x"] + x, box["y"] + y)
        try:
            page.wait_for_selector(f'#details[data-note-id="{note_id}"]', timeout=30_000 if attempt < 2 else 120_000)
            return
        except PlaywrightTimeout:
            if attempt == 2:
                raise


def _shot(page: Page, name: str, scratch: Path) -> None:
    folder = Path(SHOTS) if SHOTS else scratch
    folder.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=folder / f"viewer-{name}.png")


@pytest.mark.slow
def test_the_viewer_in_a_browser(
    page: Page, memory: AgenticMemory, open_memory: Callable[[str], AgenticMemory], tmp_path: Path,
) -> None:
    data = sample(memory, open_memory)
    for said in ("I just got back from the beach with Max.", "Max loved the waves."):
        memory.add_turn(said, "That sounds lovely.", session_id="chat-1")
    errors: list[str] = []
    requested: list[str] = []
    page.on("console", lambda message: errors.append(f"{message.type}: {message.text}")
            if message.type in ("error", "warning") else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.on("request", lambda request: requested.append(request.url))
    try:
        with Viewer(memory) as viewer:
            origin = f"http://127.0.0.1:{viewer.port}/"
            opened = page.goto(viewer.url)
            assert opened is not None and opened.ok
            page.wait_for_selector(READY)
            page.wait_for_selector("#tenant:not(:empty)")  # the summary comes beside the graph, not before it
            assert page.locator("#tenant").inner_text().startswith(memory.tenant)
            assert int(page.locator("#graph").get_attribute("data-nodes") or 0) >= 5
            _shot(page, "network", tmp_path)

            # A note opens to its versions, the change shown as a word diff.
            _click_note(page, data.dog)
            change = page.locator("#details .change").filter(has_text="the dog's full name")
            assert change.locator("del").first.inner_text() == "Max"
            assert change.locator("ins").first.inner_text() == "Maximus"
            assert page.locator("#details .link").filter(has_text="the dog that chewed them").count() == 1
            _shot(page, "note", tmp_path)

            # The slider before the change: the old content, and the changes since marked on the graph.
            # The slider steps over the moments the memory changed: the last step before the change.
            page.wait_for_selector('body[data-ready="1"]')
            before = page.evaluate(
                "before => window.amemViewer.state.positions.findLastIndex((p) => Date.parse(p.at) <= before)",
                int(data.before.timestamp() * 1000))
            assert 0 < before < int(page.locator("#as-of").get_attribute("max") or 0)
            page.locator("#as-of").fill(str(before))
            page.wait_for_function("() => document.querySelector('#note-content')?.textContent.endsWith('Max in May 2023.')")
            page.wait_for_selector(READY)
            assert page.evaluate(f"() => window.amemViewer.cy.getElementById('{data.new_home}').length") == 0
            page.locator("#now").click()
            page.wait_for_function("() => document.querySelector('#note-content')?.textContent.endsWith('Maximus in May 2023.')")
            page.locator("#compare").check()
            page.locator("#since").fill(str(before))
            page.wait_for_function(f"() => window.amemViewer.cy?.getElementById('{data.dog}').hasClass('ch-changed')")
            assert page.evaluate(f"() => window.amemViewer.cy.getElementById('{data.new_home}').hasClass('ch-added')")
            _shot(page, "time", tmp_path)
            page.locator("#compare").uncheck()

            # Markup in a note is text: shown as written, run never.
            _click_note(page, data.hostile)
            assert page.locator("#note-content").inner_text() == HOSTILE
            assert page.locator("#details img, #details script").count() == 0
            assert page.evaluate("() => window.__pwned") is None

            # A search shows each hit with why it was found, and draws the paths.
            page.locator("#query").fill("chewed running shoes")
            page.locator("#mode").select_option("fulltext")
            page.locator("#search").click()
            hit = page.locator(f'#details .hit[data-note-id="{data.vet}"]')
            hit.wait_for()
            assert "SUPPORTS" in hit.locator(".path").inner_text()
            assert "why it chews things" in hit.locator(".path").inner_text()
            page.wait_for_selector(READY)
            assert page.evaluate("() => window.amemViewer.cy.edges('.path').length") >= 1
            marks = page.locator(f'#details .hit[data-note-id="{data.shoes}"] mark').all_inner_texts()
            assert marks == ["chewed", "running", "shoes"]
            assert page.locator("#details").evaluate("box => box.scrollTop") == 0
            _shot(page, "search", tmp_path)
            page.locator("#query").fill("")
            page.locator("#search").click()
            page.locator("#details").get_by_text("Type a few words to search for").wait_for()

            page.locator('#tabs button[data-tab="entities"]').click()
            page.locator("#details .entity-row").filter(has_text="Denver").first.click()
            page.locator("#details h3").filter(has_text="Mentions over time").wait_for()
            page.locator('#tabs button[data-tab="tiers"]').click()
            page.locator("#details").get_by_text("Max loved the waves.").wait_for()
            _shot(page, "tiers", tmp_path)

            # The slider over said time: a step per session; the only dated note's session is the last step.
            memory.add("Alice: we met in Rome.", session="trip", event_time="2023-05-01T10:00:00+00:00")
            page.locator("#axis").select_option("said")
            page.wait_for_function("() => document.getElementById('as-of-label').textContent.startsWith('session trip')")
            page.locator("#axis").select_option("recorded")
            page.wait_for_function("() => document.getElementById('as-of-label').textContent === 'now'")

            # The page follows the memory as it is written: back on the network, a new note appears unasked.
            page.locator('#tabs button[data-tab="network"]').click()
            page.wait_for_selector(READY)
            memory.add("Alice taught Max to fetch the newspaper.")
            page.locator("#details").get_by_text("Alice taught Max to fetch the newspaper.").wait_for(timeout=15_000)

            assert not errors, f"the page logged errors or warnings: {errors}"
            outside = [url for url in requested if not url.startswith(origin)]
            assert not outside, f"the page asked beyond its server: {outside}"

            page.context.clear_cookies()  # the token's cookie gone, as in a browser that never had the URL
            refused = page.goto(origin)
            assert refused is not None and refused.status == 403
            assert page.evaluate("() => window.amemViewer") is None
    except Exception:
        page.screenshot(path=tmp_path / "viewer-failure.png")
        raise
    finally:
        memory.admin.delete_tenant(data.other_tenant)
