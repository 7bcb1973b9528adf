"""Headless Chromium for the dashboard tests: Debian's ``/usr/bin/chromium`` driven by Playwright.

Never downloads a browser (no ``playwright install``). Without a Chromium the
tests skip, except under CI (``CI=true``), where a missing browser fails them.
Every page load collects console errors, page errors and requests (the page
must load nothing but itself) and leaves a screenshot in the artefact dir.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import pytest

T = TypeVar("T")
FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--no-first-run",
]
ARTEFACTS = Path(os.environ.get("FIXLORE_TEST_ARTEFACTS") or Path(tempfile.gettempdir()) / "fixlore-test-artefacts")
"""Where screenshots go (kept after the run)."""


def chromium_path() -> str:
    """The Chromium to drive; skips the test (fails it under CI) when there is none."""
    path = os.environ.get("FIXLORE_CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
    missing = None
    if not Path(path).exists():
        missing = f"no Chromium at {path} (apt-get install -y chromium)"
    else:
        try:
            import playwright.sync_api  # noqa: F401
        except ImportError:
            missing = "the playwright package is not installed (pip install -e '.[test]')"
    if missing:
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"dashboard browser tests need Chromium under CI: {missing}")
        pytest.skip(missing)
    return path


@dataclass
class Seen:
    """What the page did while it was open."""

    errors: list[str] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


def with_page(html: Path | str, name: str, check: Callable[[Any], T], *, viewport_height: int = 900) -> tuple[T, Seen]:
    """Open ``html`` in headless Chromium, wait until the page is ready, run ``check(page)``.

    Fails on any console error or page error, or a request for anything but the
    file itself; a full-page screenshot goes to ``ARTEFACTS/<name>.png``.
    """
    from playwright.sync_api import sync_playwright

    seen = Seen()
    url = html if isinstance(html, str) else html.resolve().as_uri()
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium_path(), args=FLAGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": viewport_height})
            page.on(
                "console", lambda m: seen.errors.append(f"console {m.type}: {m.text}") if m.type == "error" else None
            )
            page.on("pageerror", lambda e: seen.errors.append(f"page error: {e}"))
            page.on("request", lambda r: seen.requests.append(r.url))
            page.goto(url)
            page.wait_for_selector("body[data-ready='1']", timeout=60_000)
            result = check(page)
            ARTEFACTS.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(ARTEFACTS / f"{name}.png"), full_page=True)
        finally:
            browser.close()
    assert seen.errors == [], seen.errors
    foreign = [u for u in seen.requests if not u.startswith(url.split("?")[0]) and not u.startswith("data:")]
    if "://127.0.0.1" not in url:
        assert foreign == [], f"the page loaded something from elsewhere: {foreign}"
    return result, seen


def series(page: Any, chart: str) -> dict[str, Any]:
    """A chart's dataset labels, non-empty points and totals, as the page published them on its canvas."""
    import json

    c = page.locator(f"#{chart}")
    return {
        "series": json.loads(c.get_attribute("data-series")),
        "points": json.loads(c.get_attribute("data-points")),
        "totals": json.loads(c.get_attribute("data-totals")),
        "labels": int(c.get_attribute("data-labels")),
        # Chart.js's own view of the chart, to be sure the attributes are not the only thing there
        "chartjs": page.evaluate(
            "(id) => Chart.getChart(document.getElementById(id)).data.datasets.map(d => d.label)", chart
        ),
    }


def shown(page: Any) -> int:
    """How many patterns pass the filters."""
    return int(page.locator("body").get_attribute("data-shown"))


def choose(page: Any, select: str, value: str) -> int:
    """Set a filter and return the number of patterns shown after it."""
    page.select_option(select, value)
    return shown(page)
