"""Shared fixtures: a site built once per session into a temporary folder, and a real Chromium."""
from __future__ import annotations

import math
import os
import shutil
import sys
import tempfile
from pathlib import Path

import pytest
from hypothesis import settings

# The property tests draw the same examples on every run, so main is green or red for a reason, never
# by the luck of a random seed; widen an exploration locally with HYPOTHESIS_PROFILE=explore.
settings.register_profile("runbook", derandomize=True, database=None)
settings.register_profile("explore", derandomize=False)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "runbook"))

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import build  # noqa: E402

CHROMIUM = os.environ.get("RUNBOOK_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def pytest_configure(config):
    """Under xdist the controller builds once before the workers start, so on a fresh machine the
    vendor cache is filled by one process rather than raced for by two."""
    if getattr(config.option, "numprocesses", None) and not hasattr(config, "workerinput"):
        with tempfile.TemporaryDirectory() as folder:
            build.build(ROOT / "content", Path(folder) / "site")


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("site") / "site"
    build.build(ROOT / "content", out)
    return out


@pytest.fixture
def content_copy(tmp_path) -> Path:
    """A private copy of content/ that a test may break."""
    copy = tmp_path / "content"
    shutil.copytree(ROOT / "content", copy)
    return copy


@pytest.fixture(scope="session")
def browser():
    if not Path(CHROMIUM).exists():
        pytest.fail(f"Chromium not found at {CHROMIUM}: install Debian's chromium (apt-get install -y chromium) "
                    "or set RUNBOOK_CHROMIUM")
    from playwright.sync_api import sync_playwright
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield chromium
        chromium.close()


class Watched:
    """A page whose every request and console error is recorded, with the network blocked."""

    def __init__(self, context, site: Path):
        self.site = site
        self.requests: list[str] = []
        self.blocked: list[str] = []
        self.problems: list[str] = []
        context.route("**/*", self._route)
        self.page = context.new_page()
        self.page.on("request", lambda request: self.requests.append(request.url))
        self.page.on("console", lambda message: message.type == "error" and self.problems.append(message.text))
        self.page.on("pageerror", lambda error: self.problems.append(str(error)))
        context.on("weberror", lambda error: self.problems.append(str(error.error)))

    def _route(self, route):
        if route.request.url.startswith(("file://", "blob:", "data:")):
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def url_of(self, name: str, fragment: str = "") -> str:
        return (self.site / name).as_uri() + fragment

    def network(self) -> list[str]:
        """Requests that would have left the machine: anything not file:, blob: or data:."""
        return [u for u in self.requests if not u.startswith(("file://", "blob:", "data:"))] + self.blocked


@pytest.fixture
def watched(browser, site):
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    yield Watched(context, site)
    context.close()


def booted_page(browser, tmp_path_factory, number: str, name: str):
    """A site with one document, opened in a watched page whose Python has started: a generator
    for module-scoped fixtures, which checks at the end that nothing left the machine."""
    site = tmp_path_factory.mktemp(f"site-{number}") / "site"
    outputs = build.build(ROOT / "content", site, only=number)
    context = browser.new_context(viewport={"width": 1200, "height": 900})
    watched = Watched(context, site)
    watched.page.goto(watched.url_of(next(iter(outputs))))
    watched.page.evaluate("() => window.runbookCalculator.start()")
    yield watched
    assert watched.network() == []
    assert watched.problems == []
    context.close()


def same_answer(browser: object, cpython: object) -> bool:
    """An answer from Pyodide equals CPython's, a chart's floats to within a few units in the last place:
    WebAssembly's libm may round log₂ and powers one bit differently from glibc's, which moves a curve's
    point and never a printed figure."""
    if isinstance(browser, float) or isinstance(cpython, float):
        return (isinstance(browser, (int, float)) and isinstance(cpython, (int, float))
                and math.isclose(browser, cpython, rel_tol=1e-12, abs_tol=1e-300))
    if isinstance(browser, dict) and isinstance(cpython, dict):
        return browser.keys() == cpython.keys() and all(same_answer(browser[k], cpython[k]) for k in browser)
    if isinstance(browser, (list, tuple)) and isinstance(cpython, (list, tuple)):
        return len(browser) == len(cpython) and all(same_answer(a, b) for a, b in zip(browser, cpython))
    return browser == cpython


class Calculator:
    """One calculator on a page, driven as a reader would."""

    def __init__(self, name: str):
        self.name = name
        self.selector = f"[data-calculator={name}]"

    def settle(self, page) -> str:
        """Wait for the computation the last input started, and say how it ended."""
        from playwright.sync_api import expect
        expect(page.locator(self.selector)).not_to_have_attribute("data-state", "computing", timeout=60_000)
        return page.get_attribute(self.selector, "data-state")

    def set(self, page, **values) -> str:
        for field_name, value in values.items():
            field = page.locator(f"{self.selector} [name={field_name}]")
            if field.evaluate("node => node.tagName") == "SELECT":
                field.select_option(value)
            else:
                field.fill(value)
        return self.settle(page)

    def paste(self, page, text: str) -> str:
        """Paste a config.json into the calculator's box (as text, however long) and use it."""
        page.locator(f"{self.selector} details.calc-config").evaluate("node => node.open = true")
        page.locator(f"{self.selector} textarea[name=config]").evaluate("(node, text) => { node.value = text; }", text)
        page.click(f"{self.selector} [data-action=use-config]")
        return self.settle(page)

    def live(self, page) -> dict[str, str]:
        """Every figure that follows this calculator, by reference."""
        return page.eval_on_selector_all(
            f"[data-live~={self.name}] [data-ref]",
            "nodes => Object.fromEntries(nodes.map(n => [n.dataset.ref, n.textContent]))")

    def refuse(self, page, field: str, value: str, expected: str) -> dict[str, str]:
        """Type a bad value: the field's message is `expected`, the field is marked invalid, and the
        last valid figures stay, with nothing unprintable in them. Returns those figures."""
        before = self.live(page)
        assert self.set(page, **{field: value}) == "invalid"
        assert page.text_content(f"{self.selector} [data-error-for={field}]") == expected
        assert page.get_attribute(f"{self.selector} [name={field}]", "aria-invalid") == "true"
        after = self.live(page)
        assert after == before, "the last valid figures stay"
        assert not any(word in text for text in after.values() for word in ("NaN", "Infinity", "undefined"))
        return after
