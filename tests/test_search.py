"""Search: every page carries an index of every document and answers as the reader types, offline."""
from __future__ import annotations

import json
import re

import pytest
from playwright.sync_api import expect

import build

DOC = "06-kv-cache.html"


def _index(site, name: str) -> dict:
    html = (site / name).read_text(encoding="utf-8")
    return json.loads(re.search(r'<script type="application/json" id="search-index">(.*?)</script>', html, re.S)
                      .group(1).replace("<\\/", "</"))


def test_every_page_carries_the_same_small_index(site):
    pages = sorted(p.name for p in site.glob("*.html"))
    first = _index(site, pages[0])
    assert all(_index(site, name) == first for name in pages)
    raw = len(json.dumps(first, ensure_ascii=False, separators=(",", ":")).encode())
    assert raw < 120_000, raw
    kinds = {kind for kind, *_ in first["entries"]}
    assert {"section", "answer", "question"} <= kinds
    written = {p.name[:2] for p in site.glob("[0-9][0-9]-*.html")}
    assert {number for *_, number in first["entries"]} == written


@pytest.fixture
def page(watched):
    page = watched.page
    page.url_of = watched.url_of
    return page


def _results(page) -> list[tuple[str, str]]:
    return page.eval_on_selector_all("#search-results a", "nodes => nodes.map(n => [n.querySelector('.search-text').textContent, n.getAttribute('href')])")


def test_results_come_as_the_reader_types_and_lead_to_the_place(page):
    page.goto(page.url_of("01-tokens.html"))
    page.fill("#search-box", "swap recomp")
    expect(page.locator("#search-results")).to_be_visible()
    results = _results(page)
    assert results and all("swap" in text.lower() or "recomp" in text.lower() or "10-cache-ops" in href
                            for text, href in results)
    assert any(href.startswith("10-cache-ops.html#") for _, href in results)
    page.fill("#search-box", "what is a block table")
    text, href = _results(page)[0]
    assert text == "What is a block table?" and href == "10-cache-ops.html#what-is-a-block-table"
    page.press("#search-box", "Enter")
    page.wait_for_url("**/10-cache-ops.html#what-is-a-block-table")
    expect(page.locator("#what-is-a-block-table")).to_be_visible()


def test_the_keyboard_walks_the_results(page):
    page.goto(page.url_of(DOC))
    page.focus("#search-box")
    page.keyboard.type("ladder")
    page.keyboard.press("ArrowDown")
    first = page.evaluate("document.activeElement.getAttribute('href')")
    page.keyboard.press("ArrowDown")
    assert page.evaluate("document.activeElement.getAttribute('href')") != first
    page.keyboard.press("Escape")
    expect(page.locator("#search-results")).to_be_hidden()


def test_nothing_found_says_so_and_typed_markup_stays_text(page):
    page.goto(page.url_of(DOC))
    page.fill("#search-box", "<img src=x onerror=alert(1)> zzzqqq")
    expect(page.locator(".search-none")).to_have_text("Nothing found for that: try fewer or shorter words.")
    assert page.locator("#search-results img").count() == 0
    assert page.text_content(".search-status") == "0 results"


def test_in_the_edition_results_stay_inside_the_file(page):
    page.goto(page.url_of(build.EDITION))
    expect(page.locator("article.document").first).to_be_attached()
    page.fill("#search-box", "block table")
    hrefs = [href for _, href in _results(page)]
    assert hrefs and all(re.fullmatch(r"#d\d\d(-[a-z0-9-]+)?", h) for h in hrefs)
    page.press("#search-box", "Enter")
    target = hrefs[0][1:]
    expect(page.locator(f"#{target}")).to_be_visible()
