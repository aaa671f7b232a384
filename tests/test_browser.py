"""The built page in a real Chromium, opened from file:// with every network request watched."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

DOC = "06-kv-cache.html"


@pytest.fixture
def page(watched):
    """The watched page, with the network blocked; `page.watched` keeps what it recorded."""
    page = watched.page
    page.watched = watched
    page.url_of = watched.url_of
    return page


def not_local(page) -> list[str]:
    return page.watched.network()


def test_opens_from_file_with_zero_network_requests(page):
    page.goto(page.url_of(DOC))
    page.wait_for_selector(".plot .main-svg", state="attached")
    page.click("text=Deep read")
    page.wait_for_timeout(300)
    assert not_local(page) == []
    assert [url for url in page.watched.requests if url.startswith("file://")] == [page.url_of(DOC)]
    assert page.watched.problems == []


def test_the_contents_page_links_the_written_document(page):
    page.goto(page.url_of("index.html"))
    page.click(f"main a[href='{DOC}']")
    page.wait_for_load_state()
    assert page.url == page.url_of(DOC)
    assert not_local(page) == []


def test_quick_learn_is_the_default_form(page):
    page.goto(page.url_of(DOC))
    assert page.is_visible(".form-quick")
    assert not page.is_visible(".form-deep")
    assert page.text_content(".hero .form-name") == "Quick learn"


def test_switching_to_deep_read_updates_the_url_and_the_page(page):
    page.goto(page.url_of(DOC))
    page.click(".switch >> text=Deep read")
    expect(page.locator("body")).to_have_attribute("data-form", "deep")
    assert page.url.endswith("#deep")
    assert page.is_visible(".form-deep")
    assert not page.is_visible(".form-quick")
    assert page.text_content(".hero .form-name") == "Deep read"
    assert page.get_attribute(".switch a[data-form-link=deep]", "aria-current") == "true"
    page.click(".switch >> text=Quick learn")
    expect(page.locator("body")).to_have_attribute("data-form", "quick")
    assert page.url.endswith("#quick") and page.is_visible(".form-quick")


def test_a_link_can_open_the_deep_read_directly(page):
    page.goto(page.url_of(DOC, "#deep"))
    assert page.is_visible(".form-deep") and not page.is_visible(".form-quick")
    assert page.text_content(".prevnext .other-form") == "Back to the quick learn"


def test_a_link_to_a_section_of_the_deep_read_opens_it_there(page):
    page.goto(page.url_of(DOC))
    section = page.evaluate("document.querySelector('.form-deep h2[id]').id")
    page.goto(page.url_of(DOC, f"#{section}"))
    expect(page.locator("body")).to_have_attribute("data-form", "deep")
    assert page.locator(f"#{section}").is_visible()
    assert page.evaluate("window.scrollY") > 0


def test_the_chart_is_drawn_once_the_deep_read_shows(page):
    page.goto(page.url_of(DOC, "#deep"))
    page.wait_for_selector(".plot .main-svg")
    traces = page.eval_on_selector(".plot", "node => node.data.map(t => t.name)")
    assert traces == ["2,048 tokens", "8,192 tokens", "32,768 tokens"]
    width = page.eval_on_selector(".plot .main-svg", "svg => svg.getBoundingClientRect().width")
    assert width > 500


def test_hovering_a_number_shows_its_arithmetic(page):
    page.goto(page.url_of(DOC))
    title = page.get_attribute(".hero .tile [data-ref='ladder.kv_budget']", "title")
    # vLLM 0.33.0's ladder: pool − weights − activation peak − non-torch − runner state − CUDA graphs
    assert title == "71.27 GiB − 14.99 GiB − 1.89 GiB − 0.25 GiB − 0.50 GiB − 0.84 GiB = 52.80 GiB"


def test_the_figure_animates_step_by_step(page):
    page.goto(page.url_of(DOC))
    figure = page.locator("figure.anim")
    assert "playing" in figure.get_attribute("class")
    page.wait_for_timeout(200)
    assert figure.locator(".grid-row.hidden").count() > 0
    figure.locator(".anim-toggle").click()
    assert "playing" not in figure.get_attribute("class")
    assert figure.locator(".anim-toggle").text_content() == "Play"


def test_reduced_motion_shows_the_whole_figure(browser, site):
    context = browser.new_context(reduced_motion="reduce")
    page = context.new_page()
    page.goto((site / DOC).as_uri())
    figure = page.locator("figure.anim")
    assert "playing" not in figure.get_attribute("class")
    assert figure.locator(".grid-row.hidden").count() == 0
    context.close()


def test_print_flattens_the_figure_to_the_picture_and_numbered_steps(page):
    page.goto(page.url_of(DOC))
    page.wait_for_timeout(200)
    page.emulate_media(media="print")
    page.evaluate("window.dispatchEvent(new Event('beforeprint'))")
    figure = page.locator("figure.anim")
    rows = figure.locator(".grid-row")
    assert rows.count() == 12
    opacities = rows.evaluate_all("rows => rows.map(r => getComputedStyle(r).opacity)")
    assert set(opacities) == {"1"}
    steps = figure.locator("ol > li")
    assert steps.count() == 6
    assert figure.locator("ol").evaluate("ol => getComputedStyle(ol).listStyleType") == "decimal"
    assert steps.first.is_visible()
    assert not page.is_visible(".anim-toggle")
    assert not page.is_visible(".docnav") and not page.is_visible(".topbar")


def test_pdf_of_the_document(page):
    page.goto(page.url_of(DOC))
    page.wait_for_selector(".plot .main-svg", state="attached")
    pdf = page.pdf(format="A4", print_background=True)
    assert pdf.startswith(b"%PDF")
    pages = len(re.findall(rb"/Type\s*/Page\b(?!s)", pdf))
    assert pages >= 5, pages
    assert not_local(page) == []


@pytest.mark.parametrize("form", ["#quick", "#deep"])
def test_fits_a_phone_screen(browser, site, form):
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    page.goto((site / DOC).as_uri() + form)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    context.close()


@pytest.mark.parametrize("name", sorted(p.name for p in (Path(__file__).resolve().parent.parent / "content").glob("[0-9][0-9]-*.md")))
def test_every_page_fits_a_narrow_phone_screen(browser, site, name):
    """Nothing pushes the page wider than 360 px: wide tables and figures scroll in their own boxes."""
    context = browser.new_context(viewport={"width": 360, "height": 800})
    page = context.new_page()
    page.goto((site / name.replace(".md", ".html")).as_uri())
    page.wait_for_timeout(800)  # charts are drawn just after the first paint
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 360
    context.close()
