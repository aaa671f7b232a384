"""Printing a built site to PDF with Chromium: the edition (every document, deep read) and each
document in its quick learn form, the revision sheet.

The pages carry their own print rules (runbook.css): page numbers and a running header with the
document's title in the page margins, cards and figures kept whole, the edition's contents as
links. Printing waits until the page has unpacked its documents and drawn its charts.
"""
from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

from .catalogue import Catalogue


class PrintError(Exception):
    pass


def chromium() -> str:
    """The Chromium the tests use: $RUNBOOK_CHROMIUM, else `chromium` on the PATH."""
    found = os.environ.get("RUNBOOK_CHROMIUM") or shutil.which("chromium") or shutil.which("chromium-browser")
    if not found or not Path(found).exists():
        raise PrintError("--pdf prints with Chromium, and none was found: install it (Debian: apt-get install -y "
                         "chromium) or set RUNBOOK_CHROMIUM to its path")
    return found


def print_site(site: Path, catalogue: Catalogue, edition: str) -> dict[str, bytes]:
    """Every PDF, by file name: the edition's deep read, and each document's quick learn."""
    executable = chromium()
    try:
        from playwright.sync_api import Error as PlaywrightError, sync_playwright
    except ImportError:
        raise PrintError("--pdf drives Chromium through Playwright: pip install -e '.[pdf]'") from None
    jobs = [(edition, "deep", Path(edition).with_suffix(".pdf").name)]
    jobs += [(e.output_name, "quick", Path(e.output_name).with_suffix(".pdf").name)
             for e in catalogue.entries if (site / e.output_name).is_file()]
    printed: dict[str, bytes] = {}
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable)
            page = browser.new_page()
            page.route("**/*", lambda route: route.continue_() if route.request.url.startswith(("file:", "data:", "blob:"))
                       else route.abort())
            for html, form, pdf in jobs:
                page.goto((site / html).resolve().as_uri() + f"#{form}")
                _wait_until_drawn(page)
                printed[pdf] = page.pdf(format="A4", print_background=True, outline=True, tagged=True,
                                        prefer_css_page_size=True)
            browser.close()
    except PlaywrightError as err:
        raise PrintError(f"Chromium could not print the site: {str(err).splitlines()[0]}") from None
    return printed


def _wait_until_drawn(page, timeout_s: float = 60) -> None:
    """Documents unpacked and every chart drawn (or given up on: then its table prints)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if page.evaluate("""() => window.runbookDocuments !== undefined && document.querySelector('#documents, main') &&
            !document.getElementById('edition-documents')?.textContent &&
            Array.from(document.querySelectorAll('[data-chart]')).every(
              (n) => n.querySelector('.main-svg') || document.querySelector('.chart-data[open]'))"""):
            page.wait_for_timeout(200)
            return
        page.wait_for_timeout(100)
    raise PrintError(f"{page.url}: the page did not finish drawing within {timeout_s:.0f} s")
