"""The author's loop: `build.py --serve` rebuilds on a change, reloads the open page, and shows a
content fault in the page instead of the stale document."""
from __future__ import annotations

import re
import subprocess
import sys
import time

import pytest
from playwright.sync_api import expect

from conftest import ROOT


@pytest.fixture
def served(content_copy, tmp_path):
    process = subprocess.Popen([sys.executable, str(ROOT / "build.py"), "--serve", "--port", "0",
                                "--content", str(content_copy), "--out", str(tmp_path / "site")],
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    deadline = time.monotonic() + 120
    address = None
    while address is None and time.monotonic() < deadline:
        line = process.stdout.readline()
        found = re.search(r"serving (http://127\.0\.0\.1:\d+/)", line)
        address = found and found.group(1)
    assert address, "the server said where it listens"
    yield address, content_copy
    process.terminate()
    process.wait(timeout=20)


def test_a_change_rebuilds_and_reloads_and_a_fault_shows_in_the_page(browser, served):
    address, content = served
    context = browser.new_context()
    page = context.new_page()
    page.goto(address + "06-kv-cache.html")
    lede = page.locator(".hero .lede")
    doc = content / "06-kv-cache.md"
    source = doc.read_text()
    first_lede = re.search(r'^lede = "(.*?)"', source, re.M).group(1)
    doc.write_text(source.replace(first_lede, "A lede changed while the page was open.", 1))
    expect(lede).to_have_text("A lede changed while the page was open.", timeout=90_000)

    broken = source.replace("{{ ladder.kv_budget }} budget", "{{ ladder.kv_budgt }} budget", 1)
    doc.write_text(broken)
    fault = page.locator(".build-fault")
    expect(fault).to_contain_text("unknown calc reference 'ladder.kv_budgt'", timeout=90_000)
    line = next(i for i, text in enumerate(broken.splitlines(), start=1) if "ladder.kv_budgt" in text)
    assert f"06-kv-cache.md:{line}: " in fault.text_content()

    doc.write_text(source)
    expect(page.locator(".hero .lede")).to_contain_text(first_lede[:30], timeout=90_000)
    context.close()
