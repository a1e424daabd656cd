"""`amem-graph bench view`: the viewer on a large tenant, over real HTTP on loopback.

A tenant of `notes` chat turns in sessions (bulk-imported, so each session's notes follow each other), with links
made by hand between random notes and some notes changed, is served by the viewer. Timed, each as the page asks:
- the first view: the page, its script and style, the tenant's summary and the overview graph, one after another
  (the server's side of what a browser waits for), the first time and then as the median of repeats;
- with Chromium and Playwright present, the page itself in a headless browser: from the URL to the graph drawn
  and interactive (`#graph[data-ready="1"]`);
- the time slider's steps (read after the first view), a step of the overview opened to its notes, a search with
  its explanation, a note's neighbourhood, a note opened, and the overview as of a past moment.
The payload of the overview says what the page receives of the tenant: its steps and hubs, never its notes."""

from __future__ import annotations

import json
import random
import shutil
import time
import urllib.request
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlencode

from ..api import AgenticMemory
from ..core import validation
from ..models import NoteInput
from ..viewer import Viewer
from .texts import sentences
from .timing import ms, percentiles

SESSION_TURNS = 200
FIRST_VIEW = ("/", "/static/viewer.js", "/static/viewer.css", "/static/vendor/cytoscape.min.js", "/api/summary",
              "/api/network")
QUERIES = ("Who went hiking near the lake?", "Which of them adopted a puppy?", "pottery classes at the community center",
           "Who ran a half marathon last summer?", "a jazz concert downtown", "baked sourdough bread for the family")


def tenant() -> str:
    return f"bench-view-{int(time.time())}"


def run(mem: AgenticMemory, notes: int = 10_000, *, links: int = 2_000, changes: int = 100, repeats: int = 20,
        browser: bool = True, keep: bool = False) -> dict[str, Any]:
    """On the memory's own tenant (`tenant()`: a new one), deleted afterwards unless `keep`."""
    try:
        built = _build(mem, notes, links, changes)
        with Viewer(mem) as viewer:
            timed = _timed(viewer, built.pop("sample_ids"), built["middle"], repeats)
            result = {"store": mem.admin.kind, "notes": notes, **built, **timed}
            if browser:
                result["page"] = _page(viewer, repeats=min(repeats, 5))
        return result
    finally:
        if not keep:
            mem.admin.delete_tenant()


def _build(mem: AgenticMemory, notes: int, links: int, changes: int) -> dict[str, Any]:
    rng = random.Random(11)
    texts = sentences(notes, seed=23)
    began = time.perf_counter()
    ids = mem.add_many([NoteInput(content=text, source=f"view:{i}", session=f"session-{i // SESSION_TURNS}")
                        for i, text in enumerate(texts)])
    ingest_s = time.perf_counter() - began
    middle = validation.now()
    time.sleep(0.01)
    began = time.perf_counter()
    for _ in range(links):
        source, target = rng.sample(ids, 2)
        mem.link(source, target, rng.choice(("RELATES_TO", "ELABORATES", "SUPPORTS")), reason="bench view link",
                 confidence=round(rng.uniform(0.4, 1.0), 2))
    for note_id in rng.sample(ids, min(changes, len(ids))):
        mem.update(note_id, context="changed for the viewer benchmark", reason="bench view change")
    return {"ingest_s": round(ingest_s, 1), "links": links, "changed": changes,
            "links_and_changes_s": round(time.perf_counter() - began, 1), "middle": middle.isoformat(),
            "sample_ids": rng.sample(ids, 50)}


def _timed(viewer: Viewer, ids: list[str], middle: str, repeats: int) -> dict[str, Any]:
    base = f"http://127.0.0.1:{viewer.port}"
    headers = {"Cookie": f"{viewer.cookie}={viewer.token}"}

    def fetch(path: str) -> bytes:
        with urllib.request.urlopen(urllib.request.Request(base + path, headers=headers), timeout=120) as response:
            return response.read()

    def first_view() -> None:
        for path in FIRST_VIEW:
            fetch(path)

    cold = ms(first_view)
    warm = [ms(first_view) for _ in range(repeats)]
    at = quote(middle)
    overview = fetch("/api/network")
    drawn = json.loads(overview)
    step = quote(drawn["steps"][0]["span"][0] if drawn["kind"] == "map" and drawn["steps"][0]["span"]
                 else drawn["steps"][0]["key"]) if drawn["kind"] == "map" else None
    return {
        "first_view_ms": {"first": round(cold, 1), **percentiles(warm)},
        "overview_bytes": len(overview), "overview_kind": drawn["kind"],
        "overview_steps": len(drawn.get("steps", ())),
        "overview_notes": len(drawn["notes"]) if drawn["kind"] == "notes" else 0,
        "slider_ms": {axis: percentiles([ms(fetch, f"/api/timeline?axis={axis}") for _ in range(max(1, repeats // 4))])
                      for axis in ("recorded", "said")},
        "step_ms": percentiles([ms(fetch, f"/api/network?step={step}") for _ in range(repeats)]) if step else None,
        "search_explained_ms": percentiles([
            ms(fetch, "/api/search?" + urlencode({"q": q})) for _ in range(max(1, repeats // len(QUERIES)))
            for q in QUERIES]),
        "neighbourhood_ms": percentiles([ms(fetch, f"/api/network?around={i}") for i in ids[:repeats]]),
        "note_ms": percentiles([ms(fetch, f"/api/note/{i}") for i in ids[:repeats]]),
        "overview_as_of_ms": percentiles([ms(fetch, f"/api/network?as_of={at}") for _ in range(repeats)]),
    }


def _page(viewer: Viewer, repeats: int) -> dict[str, Any]:
    """The page in headless Chromium, from its URL to the graph drawn: the first load, then the median of repeats
    (each in a fresh page of the same browser)."""
    chromium = shutil.which("chromium") or ("/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None)
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return {"skipped": "playwright is not installed"}
    if chromium is None:
        return {"skipped": "chromium is not installed"}
    times = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, headless=True,
                                             args=["--headless", "--no-sandbox", "--disable-gpu"])
        try:
            for _ in range(repeats + 1):
                page = browser.new_page(viewport={"width": 1400, "height": 900})
                began = time.perf_counter()
                page.goto(viewer.url)
                page.wait_for_selector('#graph[data-ready="1"]', timeout=120_000)
                times.append((time.perf_counter() - began) * 1000)
                nodes = int(page.locator("#graph").get_attribute("data-nodes") or 0)
                page.close()
        finally:
            browser.close()
    return {"interactive_ms": {"first": round(times[0], 1), **percentiles(times[1:])}, "nodes_drawn": nodes}
