"""Accessible to everyone (issue 14 §1): every built page is axe-clean for WCAG 2.0/2.1 A and AA and
axe's best practices, in both forms, light and dark; the theme follows the system, a switch in the
top bar remembers the reader's choice, charts follow the theme and print is light; the form switch,
a figure, a popover and a calculator work from the keyboard alone, with focus always visible."""
from __future__ import annotations

import pytest
from playwright.sync_api import expect

import build
from calc.calculators import CAPACITY
from conftest import ROOT, Calculator, Watched, booted_page
from runbook import vendor
from runbook.catalogue import read_catalogue

# axe runs inside the page as an inline script: the pages' CSP allows 'unsafe-inline' scripts and
# axe needs no eval, so the test checks the pages under their own CSP (no bypass).
AXE = vendor.read_bytes("axe-core", "axe.min.js").decode("utf-8")
RULES = {"runOnly": {"type": "tag", "values": ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa", "best-practice"]}}
PAGES = [entry.output_name for entry in read_catalogue(ROOT / "content").entries if entry.written] + [
    "index.html", build.EDITION]
FORMS = ("quick", "deep")

# Settled: charts drawn by Plotly, and in the edition every document unpacked.
SETTLED = """() => [...document.querySelectorAll('[data-chart]')].every(n => n.classList.contains('js-plotly-plot'))
    && !(document.getElementById('edition-documents') || {}).textContent"""

DOC = "06-kv-cache.html"
CAPACITY_PAGE = Calculator("capacity")


def violations(page) -> list[str]:
    """axe's findings on the page as it is shown, one line per failing element."""
    if not page.evaluate("() => 'axe' in window"):
        page.add_script_tag(content=AXE)
    found = page.evaluate("rules => axe.run(document, rules).then(r => r.violations.map(v => v.nodes.map(n => "
                          "v.id + ': ' + n.target.join(' ') + ' — ' + n.failureSummary.replace(/\\s+/g, ' '))).flat())",
                          RULES)
    return found


def open_settled(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(SETTLED, timeout=60_000)


@pytest.fixture(scope="module")
def themed_pages(browser, site):
    """A page for each way a theme is reached: light, dark from the system, dark from the switch."""
    contexts = {theme: browser.new_context(viewport={"width": 1200, "height": 900},
                                           color_scheme="dark" if theme == "dark-system" else "light")
                for theme in ("light", "dark-system", "dark-switch")}
    watched = {theme: Watched(context, site) for theme, context in contexts.items()}
    yield watched
    for theme, page in watched.items():
        assert page.network() == [], theme
        assert page.problems == [], theme
    for context in contexts.values():
        context.close()


# Every page light and dark; the switch reaches the same dark rules, so it is checked on one page.
CASES = [(name, theme) for name in PAGES for theme in ("light", "dark-system")] + [(DOC, "dark-switch")]


@pytest.mark.parametrize("name, theme", CASES)
def test_every_page_is_axe_clean_in_both_forms_and_both_themes(themed_pages, name, theme):
    watched = themed_pages[theme]
    page = watched.page
    open_settled(page, watched.url_of(name, "#quick"))
    if theme == "dark-switch":
        page.focus(".theme-toggle")
        page.keyboard.press("Enter")
        page.evaluate("() => { try { localStorage.removeItem('runbook-theme'); } catch (e) {} }")
        # Rows that fade their background (0.3 s) pass through colours between the themes: let them land.
        page.evaluate("() => Promise.all(document.getAnimations().filter(a => a instanceof CSSTransition).map(a => a.finished))")
    assert page.get_attribute("html", "data-theme") == ("light" if theme == "light" else "dark")
    found = {}
    for form in FORMS if page.locator("[data-form-link]").count() else FORMS[:1]:
        if form == "deep":
            page.locator(".switch [data-form-link=deep]").press("Enter")
            expect(page.locator("body")).to_have_attribute("data-form", "deep")
            page.wait_for_function(SETTLED)
        found[form] = violations(page)
    assert found == {form: [] for form in found}


def test_the_theme_follows_the_system_and_the_switch_remembers_the_choice(browser, site):
    context = browser.new_context(color_scheme="dark")
    page = Watched(context, site).page
    page.goto((site / DOC).as_uri())
    toggle = page.locator(".theme-toggle")
    assert page.get_attribute("html", "data-theme") == "dark"
    expect(toggle).to_be_visible()
    assert toggle.get_attribute("aria-pressed") == "true"
    toggle.focus()
    page.keyboard.press("Space")
    assert page.get_attribute("html", "data-theme") == "light"
    assert toggle.get_attribute("aria-pressed") == "false"
    assert page.evaluate("() => localStorage.getItem('runbook-theme')") == "light"
    page.goto((site / "index.html").as_uri())
    assert page.get_attribute("html", "data-theme") == "light", "the choice outlives the page"
    assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") == "rgb(250, 250, 249)"
    context.close()


def test_a_browser_that_refuses_storage_still_switches_silently(browser, site):
    context = browser.new_context(color_scheme="light")
    context.add_init_script("Object.defineProperty(window, 'localStorage', "
                            "{ get() { throw new DOMException('refused', 'SecurityError'); } });")
    watched = Watched(context, site)
    page = watched.page
    page.goto((site / DOC).as_uri())
    assert page.get_attribute("html", "data-theme") == "light"
    page.click(".theme-toggle")
    assert page.get_attribute("html", "data-theme") == "dark"
    assert watched.problems == []
    context.close()


def test_charts_follow_the_theme_and_print_is_light(browser, site):
    context = browser.new_context(color_scheme="dark", viewport={"width": 1200, "height": 900})
    page = Watched(context, site).page
    open_settled(page, (site / DOC).as_uri() + "#deep")
    chart = "document.querySelector('.form-deep [data-chart]')"
    ink = page.evaluate("() => getComputedStyle(document.documentElement).getPropertyValue('--ink').trim()")
    assert ink != "#1c1917"
    assert page.evaluate(f"() => {chart}.layout.font.color") == ink
    page.click(".theme-toggle")
    assert page.evaluate(f"() => {chart}.layout.font.color") == "#1c1917"
    page.click(".theme-toggle")
    assert page.evaluate(f"() => {chart}.layout.font.color") == ink
    page.emulate_media(media="print")
    page.evaluate("() => window.dispatchEvent(new Event('beforeprint'))")
    assert page.evaluate("() => getComputedStyle(document.body).backgroundColor") == "rgb(255, 255, 255)"
    assert page.evaluate("() => getComputedStyle(document.body).color") == "rgb(28, 25, 23)"
    assert page.evaluate(f"() => {chart}.layout.font.color") == "#1c1917"
    context.close()


def tab_to(page, selector: str, limit: int = 2000, key: str = "Tab") -> None:
    """Press Tab until `selector` has focus, checking that every element on the way shows a focus
    ring at least two pixels wide (the page itself, focused after a link to a section, has none)."""
    for _ in range(limit):
        page.keyboard.press(key)
        focused = page.evaluate("""sel => { const a = document.activeElement, s = getComputedStyle(a);
            return { hit: a.matches(sel), ring: a === document.body || s.outlineStyle !== 'none' && parseFloat(s.outlineWidth) >= 2,
                     what: a.outerHTML.slice(0, 120) }; }""", selector)
        assert focused["ring"], f"no visible focus on {focused['what']}"
        if focused["hit"]:
            return
    raise AssertionError(f"{selector} never took focus")


def test_the_form_switch_and_a_figure_work_from_the_keyboard(browser, site):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    watched = Watched(context, site)
    page = watched.page
    page.goto(watched.url_of(DOC))
    tab_to(page, ".switch [data-form-link=deep]")
    page.keyboard.press("Enter")
    expect(page.locator("body")).to_have_attribute("data-form", "deep")
    figure = page.locator("figure.anim").first
    tab_to(page, "figure.anim .anim-toggle")
    page.keyboard.press("Enter")
    assert "playing" not in figure.get_attribute("class")
    assert figure.locator(".anim-toggle").text_content() == "Play"
    page.keyboard.press("Tab")
    page.keyboard.press("Space")
    page.keyboard.press("Space")
    assert "playing" in figure.get_attribute("class")
    steps = figure.locator("ol > li")
    assert steps.nth(1).get_attribute("aria-current") == "step"
    assert figure.locator("[data-step].current").count() > 0
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Shift+Tab")
    page.keyboard.press("Enter")
    assert steps.nth(0).get_attribute("aria-current") == "step"
    assert steps.nth(1).get_attribute("aria-current") is None
    assert watched.problems == []
    context.close()


@pytest.fixture(scope="module")
def capacity_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "06", "capacity")


def test_a_popover_works_from_the_keyboard(capacity_page):
    page = capacity_page.page
    page.goto(capacity_page.url_of(DOC, "#quick"))
    tab_to(page, ".ref[data-ref='ladder.users_worst']")
    popover = page.locator("#number-popover")
    expect(popover).to_be_visible()
    page.keyboard.press("Enter")
    assert page.evaluate("document.getElementById('number-popover').contains(document.activeElement)")
    assert "users" in popover.text_content()
    page.keyboard.press("Escape")
    expect(popover).to_be_hidden()
    assert page.evaluate("document.activeElement.dataset.ref") == "ladder.users_worst"


def test_a_calculator_works_from_the_keyboard(capacity_page):
    page = capacity_page.page
    page.goto(capacity_page.url_of(DOC, "#deep"))
    page.evaluate("() => window.runbookCalculator.start()")
    calculator = "[data-calculator=capacity]"
    tab_to(page, f"{calculator} select[name=model]")
    page.keyboard.press("ArrowDown")
    chosen = page.input_value(f"{calculator} select[name=model]")
    assert chosen != CAPACITY.defaults["model"]
    assert CAPACITY_PAGE.settle(page) == "computed"
    expected = CAPACITY.run({**CAPACITY.defaults, "model": chosen}, None, ["ladder.users_worst"], [], False)
    assert CAPACITY_PAGE.live(page)["ladder.users_worst"] == expected["refs"]["ladder.users_worst"][0]

    tab_to(page, f"{calculator} input[name=context_limit]")
    page.keyboard.press("Control+A")
    page.keyboard.type("lots")
    assert CAPACITY_PAGE.settle(page) == "invalid"
    field = page.locator(f"{calculator} input[name=context_limit]")
    assert field.get_attribute("aria-invalid") == "true"
    message = page.locator(f"{calculator} [data-error-for=context_limit]")
    assert message.text_content()
    assert message.get_attribute("id") in field.get_attribute("aria-describedby").split()
    page.keyboard.press("Control+A")
    page.keyboard.type(CAPACITY.defaults["context_limit"])
    assert CAPACITY_PAGE.settle(page) == "computed"
    assert field.get_attribute("aria-invalid") != "true"
