"""The edition: every document in one self-contained file on one runtime, and its printed PDF."""
from __future__ import annotations

import io
import re
import unicodedata

import pytest
from playwright.sync_api import expect
from pypdf import PdfReader

import build
from conftest import ROOT, Calculator, Watched
from runbook.catalogue import read_catalogue
from runbook.pdf import _wait_until_drawn

EDITION = build.EDITION
WRITTEN = [e for e in read_catalogue(ROOT / "content").entries if e.written]
MiB = 2 ** 20


@pytest.fixture(scope="module")
def edition(browser, site):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    watched = Watched(context, site)
    watched.page.goto(watched.url_of(EDITION))
    expect(watched.page.locator("article.document")).to_have_count(len(WRITTEN))
    yield watched
    assert watched.network() == []
    assert watched.problems == []
    context.close()


def test_it_fits_the_budget(site):
    assert (site / EDITION).stat().st_size <= 8 * MiB


def test_every_document_in_reading_order_with_both_forms(edition):
    page = edition.page
    assert page.eval_on_selector_all("article.document", "nodes => nodes.map(n => n.id)") == \
        [f"d{e.number}" for e in WRITTEN]
    for entry in WRITTEN:
        article = page.locator(f"#d{entry.number}")
        assert article.locator(".form-quick").count() and article.locator(".form-deep").count(), entry.number
        assert article.locator("h1").count() == 1


def test_nothing_leaves_the_file(edition):
    assert [u for u in edition.requests if u.startswith("file://")] == [edition.url_of(EDITION)]
    assert edition.network() == []


def test_ids_are_unique_and_every_link_inside_the_file_lands(edition):
    ids = edition.page.eval_on_selector_all("[id]", "nodes => nodes.map(n => n.id)")
    assert len(ids) == len(set(ids))
    hrefs = set(edition.page.eval_on_selector_all("a[href]", "nodes => nodes.map(n => n.getAttribute('href'))"))
    assert hrefs, "the edition links within itself"
    for href in hrefs:
        assert href.startswith("#") or href.startswith(("https://", "http://", "mailto:")), href
        target = href[1:]
        form = re.fullmatch(r"(d\d\d)-(quick|deep)", target)
        assert target in ("quick", "deep") or (form and form.group(1) in ids) or target in ids, href


def test_a_link_to_another_documents_section_opens_it_in_its_form(edition):
    page = edition.page
    link = page.locator("article.document .form-deep a[href^='#d']").first
    href = link.get_attribute("href")
    page.goto(edition.url_of(EDITION, href))
    target = page.locator(href)
    expect(target).to_be_visible()
    bar = page.locator(".topbar").evaluate("node => node.getBoundingClientRect().bottom")
    assert 0 <= target.evaluate("node => node.getBoundingClientRect().top") - bar < 80


def test_the_switch_changes_every_document_and_keeps_the_reader_in_place(edition):
    page = edition.page
    page.goto(edition.url_of(EDITION, "#d06-quick"))
    expect(page.locator("body")).to_have_attribute("data-form", "quick")
    page.click(".switch >> text=Deep read")
    expect(page.locator("body")).to_have_attribute("data-form", "deep")
    assert page.locator("#d06 .form-deep").first.is_visible() and page.locator("#d01 .form-deep").first.is_visible()
    top = page.locator("#d06").evaluate("node => node.getBoundingClientRect().top")
    bar = page.locator(".topbar").evaluate("node => node.getBoundingClientRect().bottom")
    assert 0 <= top - bar < 80, "the reader stays in document 06, just under the bar"


def test_every_calculator_runs_on_one_python_started_once(edition):
    page = edition.page
    assert page.locator("script[data-runtime-file]").count() == 4
    assert page.locator("#plotly-js").count() == 1
    names = page.eval_on_selector_all("[data-calculator]", "nodes => nodes.map(n => n.dataset.calculator)")
    assert len(names) == len(set(names)) >= len(WRITTEN)
    expect(page.locator("[data-calculator]").first).to_be_attached()
    page.evaluate("() => window.runbookCalculator.start()")
    for name, field, value in (("capacity", "card", "H200 SXM 141 GB"), ("phases", "prompt", "4000")):
        calculator = Calculator(name)
        page.locator(calculator.selector).scroll_into_view_if_needed()
        assert calculator.set(page, **{field: value}) == "computed"
    assert page.evaluate("performance.getEntriesByName('calc-boot-start').length") == 1


@pytest.fixture(scope="module")
def printed(edition):
    page = edition.page
    page.goto(edition.url_of(EDITION, "#deep"))
    _wait_until_drawn(page)
    return PdfReader(io.BytesIO(page.pdf(format="A4", print_background=True, outline=True, tagged=True,
                                         prefer_css_page_size=True)))


def _flat(text: str) -> str:
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def test_the_pdf_has_an_outline_of_the_documents_and_numbered_pages(printed):
    pages = len(printed.pages)
    assert pages > 4 * len(WRITTEN)
    titles = [item.title for item in printed.outline if not isinstance(item, list)]
    assert len(titles) == len(WRITTEN) + 1, titles
    first_text = [_flat(p.extract_text()) for p in printed.pages]
    for entry in WRITTEN:
        starts = [i for i, text in enumerate(first_text) if f"DOCUMENT{entry.number}·DEEPREAD" in text.upper()]
        assert starts, entry.number
        header = _flat(f"{entry.number} · {entry.title}")
        assert header in first_text[starts[0]] and f"{starts[0] + 1}/{pages}" in first_text[starts[0]]


def test_print_keeps_every_card_whole(edition, printed):
    """Each card's first and last lines of text print on the same page."""
    page = edition.page
    cards = page.eval_on_selector_all(
        "article.document .form-deep .card, article.document .card:not(.form-quick .card)",
        """nodes => nodes.filter(n => n.offsetParent !== null).map(n => {
             const lines = n.innerText.split('\\n').map(s => s.trim()).filter(s => s.length >= 24);
             return lines.length >= 2 ? [lines[0], lines[lines.length - 1]] : null;
           }).filter(Boolean)""")
    texts = [_flat(p.extract_text()) for p in printed.pages]
    checked = 0
    for first, last in cards:
        head, tail = _flat(first)[:40], _flat(last)[-40:]
        where = [i for i, text in enumerate(texts) if head in text]
        if len(where) != 1:
            continue
        checked += 1
        assert tail in texts[where[0]], f"card split across pages: {first[:60]!r} … {last[-60:]!r}"
    assert checked >= 40, checked


def test_pdf_without_chromium_says_so(tmp_path, monkeypatch):
    from runbook import pdf
    monkeypatch.setenv("RUNBOOK_CHROMIUM", str(tmp_path / "no-chromium-here"))
    with pytest.raises(pdf.PrintError, match="--pdf prints with Chromium, and none was found"):
        pdf.chromium()
