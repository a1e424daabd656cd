"""Headless Chromium for the tests that drive a page (Neo4j Browser, the viewer): Debian's build through
Playwright, with no browser download. CI must have both, so there a missing one fails the test; elsewhere it
skips."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

import pytest

if TYPE_CHECKING:  # at run time playwright is imported by the fixture, after the skip rule
    from playwright.sync_api import Page

CHROMIUM_ARGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-quic",
    "--no-first-run", "--disable-component-update", "--disable-sync",
]
TIMEOUT_MS = 120_000  # two slow cores: an SPA, a Bolt handshake and a graph layout can each take a while


def unavailable(reason: str) -> NoReturn:
    """CI must have Chromium and Playwright, so there a missing one fails; elsewhere the test is skipped."""
    if os.environ.get("CI", "").lower() not in ("", "0", "false"):
        pytest.fail(f"{reason} (CI must install it: scripts/setup.sh does, as root)")
    pytest.skip(reason)


def chromium() -> str:
    path = "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else shutil.which("chromium")
    if path is None:
        unavailable("Chromium is not installed (apt-get install chromium)")
    return path


@pytest.fixture
def page() -> Iterator[Page]:
    executable = chromium()
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed (pip install -e '.[test]')")
    # Playwright gives every launch a fresh temporary profile: no saved connection, style or cookie carries over.
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS, headless=True)
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.set_default_timeout(TIMEOUT_MS)
            yield page
        finally:
            browser.close()
