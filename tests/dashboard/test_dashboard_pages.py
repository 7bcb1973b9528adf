"""The dashboard in a real headless Chromium: an empty store, a generated 10k-pattern store, filters, --serve."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from fixlore.knowledge import base
from tests.conftest import fixlore_command

from ._browser import ARTEFACTS, choose, chromium_path, series, shown, with_page
from ._generate import populate

pytestmark = pytest.mark.e2e

CHARTS = {
    "chart-decisions": ["accepted", "rejected", "fixed by hand"],
    "chart-effect": ["learned-fix success %", "choice already first %"],
    "chart-rules": ["learned fixes", "preferences"],
}


def dashboard(home: Path, out: Path, *args: str) -> Path:
    """``fixlore dashboard -o out`` on ``home``; the page's path."""
    env = {**os.environ, "FIXLORE_HOME": str(home)}
    proc = subprocess.run(fixlore_command("dashboard", "-o", str(out), *args), env=env, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return out


def test_empty_store_says_nothing_learned_yet(tmp_path: Path, fixlore_home: Path) -> None:
    chromium_path()
    page_file = dashboard(fixlore_home, tmp_path / "empty.html", "--no-base")

    def check(page: Any) -> dict[str, Any]:
        assert page.locator("#empty").is_visible()
        assert shown(page) == 0
        return {c: series(page, c) for c in CHARTS}

    charts, _ = with_page(page_file, "empty-store", check)
    for chart, labels in CHARTS.items():
        assert charts[chart]["series"] == labels == charts[chart]["chartjs"]
        assert charts[chart]["totals"] == [0] * len(labels)


def test_base_knowledge_alone_is_shown_by_rule(tmp_path: Path, fixlore_home: Path) -> None:
    chromium_path()
    page_file = dashboard(fixlore_home, tmp_path / "base.html")

    def check(page: Any) -> tuple[int, list[int], list[str]]:
        rows = page.locator("#rules-table tbody tr")
        scopes = {rows.nth(i).locator("td").first.inner_text() for i in range(rows.count())}
        return shown(page), series(page, "chart-rules")["totals"], sorted(scopes)

    (n, (learned, preferences), scopes), _ = with_page(page_file, "base-only", check)
    shipped = json.loads((Path(base.__file__).parent / "patterns.json").read_text(encoding="utf-8"))["patterns"]
    assert n == len(shipped)
    # ruff's actions (preferences) and the hand fixes ruff has none for (learned fixes), top 15 rules charted
    assert learned > 0 and preferences > 0 and learned + preferences <= n
    assert scopes == ["base"]


@pytest.fixture(scope="module")
def large_store(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    home = tmp_path_factory.mktemp("dashboard-10k")
    written = populate(home, 10_000)
    return home, written


def test_a_10k_store_loads_with_every_series_and_filters_change_what_is_shown(
    tmp_path: Path, large_store: tuple[Path, dict[str, int]]
) -> None:
    chromium_path()
    home, written = large_store
    started = time.perf_counter()
    page_file = dashboard(home, tmp_path / "10k.html", "--no-base")
    built = time.perf_counter() - started

    def check(page: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"all": shown(page), "charts": {c: series(page, c) for c in CHARTS}}
        out["python"] = choose(page, "#f-language", "python")
        out["python-decisions"] = series(page, "chart-decisions")["totals"]
        rule = page.locator("#f-rule option").nth(1)
        out["rule-label"] = rule.inner_text()
        out["one-rule"] = choose(page, "#f-rule", rule.get_attribute("value"))
        out["one-rule-table"] = page.locator("#rules-table tbody tr").evaluate_all(
            "(rows) => rows.map(r => r.dataset.rule)"
        )
        choose(page, "#f-rule", "")
        assert choose(page, "#f-language", "") == out["all"]
        out["fixes-only"] = choose(page, "#f-kind", "fix")
        out["fix-cards"] = int(page.locator("#fixes").get_attribute("data-count"))
        choose(page, "#f-kind", "")
        out["last-4-weeks"] = choose(page, "#f-time", "4")
        out["last-4-weeks-labels"] = series(page, "chart-decisions")["labels"]
        choose(page, "#f-time", "0")
        out["base-scope"] = choose(page, "#f-scope", "3")
        out["base-note"] = page.locator("#trend-note").inner_text()
        choose(page, "#f-scope", "")
        page.check("#f-archived")
        out["with-archived"] = shown(page)
        page.uncheck("#f-archived")
        before = shown(page)
        page.fill("#f-search", "$1 is none")
        page.wait_for_function("(n) => document.body.dataset.shown !== String(n)", arg=before)
        out["search"] = shown(page)
        out["anti"] = int(page.locator("#anti").get_attribute("data-count"))
        out["prune"] = int(page.locator("#prune-table").get_attribute("data-rows"))
        return out

    got, _ = with_page(page_file, "store-10k", check)
    active = written["patterns"] - written["archived"]
    assert got["all"] == active
    for chart, labels in CHARTS.items():
        c = got["charts"][chart]
        assert c["series"] == labels == c["chartjs"]
        assert all(p > 0 for p in c["points"]), (chart, c)
    assert got["charts"]["chart-decisions"]["labels"] >= 20  # weeks
    # The generated habit wins more often in later weeks: the effect series has a point for every
    # week holding a decided list (18-20 weeks, by where today falls in the calendar week).
    assert got["charts"]["chart-effect"]["points"][1] == written["decided_weeks"] >= 15
    assert 0 < got["python"] < got["all"]
    assert 0 < got["python-decisions"][0] < got["charts"]["chart-decisions"]["totals"][0]
    assert 0 < got["one-rule"] < got["python"]
    assert set(got["one-rule-table"]) == {got["rule-label"].split(": ", 1)[-1]}
    assert 0 < got["fixes-only"] < got["all"] and got["fix-cards"] == got["fixes-only"]
    assert 0 < got["last-4-weeks"] < got["all"] and got["last-4-weeks-labels"] <= 5
    assert got["base-scope"] == 0 and "user store only" in got["base-note"]
    assert got["with-archived"] == written["patterns"]
    assert 0 < got["search"] < got["all"]
    assert got["anti"] > 0 and got["prune"] > 0
    assert built < 30


def test_json_is_the_same_data_and_agrees_with_knowledge_stats(large_store: tuple[Path, dict[str, int]]) -> None:
    home, written = large_store
    env = {**os.environ, "FIXLORE_HOME": str(home)}
    data = json.loads(
        subprocess.run(
            fixlore_command("dashboard", "--json", "--no-base"), env=env, capture_output=True, text=True, check=True
        ).stdout
    )
    stats = json.loads(
        subprocess.run(
            fixlore_command("knowledge", "stats", "--json", "--no-base"),
            env=env,
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    )
    assert data["store"]["patterns"] == stats["patterns"] == written["patterns"] - written["archived"]
    assert data["store"]["archived"] == stats["archived"] and data["store"]["events"] == stats["events"]
    assert len(data["patterns"]["id"]) == written["patterns"]
    accepted = sum(
        data["patterns"]["counts"][1][i] for i in range(written["patterns"]) if data["patterns"]["archived"][i] == -1
    )
    assert accepted == stats["counts"]["accepted"]


def test_serve_refreshes_the_page_when_the_store_changes(tmp_path: Path, fixlore_home: Path) -> None:
    chromium_path()
    populate(fixlore_home, 300, seed=1)
    env = {**os.environ, "FIXLORE_HOME": str(fixlore_home)}
    proc = subprocess.Popen(
        fixlore_command("dashboard", "--serve", "--no-open", "--no-base"),
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        url = re.search(r"http://127\.0\.0\.1:\d+/", line)
        assert url, line

        def check(page: Any) -> tuple[int, int]:
            first = shown(page)
            page.wait_for_selector("body[data-revision]", timeout=20_000)  # the page has seen the store once
            populate(fixlore_home, 600, seed=2, start=300)  # more patterns, written by "another process"
            page.wait_for_function(
                "(n) => document.body.dataset.shown && document.body.dataset.shown !== String(n)",
                arg=first,
                timeout=20_000,
            )
            return first, shown(page)

        (first, after), _ = with_page(url.group(0), "serve-live", check)
        assert first == 300 - 4 and after > first
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_screenshots_are_kept() -> None:
    chromium_path()
    assert ARTEFACTS.is_dir() and any(ARTEFACTS.glob("*.png"))


@pytest.mark.slow
def test_a_100k_store_loads_without_errors_with_every_series(tmp_path_factory: pytest.TempPathFactory) -> None:
    chromium_path()
    home = tmp_path_factory.mktemp("dashboard-100k")
    written = populate(home, 100_000)
    page_file = dashboard(home, tmp_path_factory.mktemp("page") / "100k.html", "--no-base")

    def check(page: Any) -> dict[str, Any]:
        out: dict[str, Any] = {"all": shown(page), "charts": {c: series(page, c) for c in CHARTS}}
        out["rows"] = page.locator("#rules-table tbody tr").count()
        out["python"] = choose(page, "#f-language", "python")
        page.fill("#f-search", "$1 is none")
        page.wait_for_function("(n) => document.body.dataset.shown !== String(n)", arg=out["python"])
        out["search"] = shown(page)
        return out

    got, _ = with_page(page_file, "store-100k", check)  # fails on any console or page error
    assert got["all"] == written["patterns"] - written["archived"]
    for chart, labels in CHARTS.items():
        c = got["charts"][chart]
        assert c["series"] == labels == c["chartjs"]
        assert all(p > 0 for p in c["points"]), (chart, c)
    assert got["rows"] > 0
    assert 0 < got["search"] < got["python"] < got["all"]
