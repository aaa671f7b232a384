#!/usr/bin/env python3
"""Derive runbook/stdlib_modules.txt: the standard-library files the calculator really loads.

Builds document 06 with the full python_stdlib.zip into a temporary folder, opens it in Chromium,
drives the calculator through every kind of input (valid, invalid, each pasted architecture),
asks the worker which standard-library files Python has loaded, and writes that list, with each
package's __init__.py, as the keep-list the build trims the zip to. Run it after changing calc's
imports or the pinned Pyodide; the browser tests fail loudly (ImportError) if it is stale.
"""
from __future__ import annotations

import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from calc.calculators import CAPACITY  # noqa: E402
from calc.specs.models import LLAMA_3_1_70B_CONFIG  # noqa: E402
from runbook import runtime  # noqa: E402

KEEP = runtime.STDLIB_KEEP
CHROMIUM = os.environ.get("RUNBOOK_CHROMIUM", "/usr/bin/chromium")
DEFAULTS = CAPACITY.defaults
REQUESTS = [
    {"values": DEFAULTS, "paths": ["ladder.kv_budget", "ladder.kv_budget|worked", "levers.paging.users"]},
    {"values": {**DEFAULTS, "card": "mi300x", "weights": "int4", "kv": "fp8"}, "paths": ["ladder.users_worst"]},
    {"values": {**DEFAULTS, "context_limit": "abc", "utilisation": "2", "conversation": ""}, "paths": []},
    {"values": {**DEFAULTS, "model": "custom"}, "config": "{not json", "paths": []},
    {"values": {**DEFAULTS, "model": "custom"}, "config": "{\"num_hidden_layers\": NaN}", "paths": []},
    {"values": {**DEFAULTS, "model": "custom"}, "config": json.dumps(LLAMA_3_1_70B_CONFIG), "paths": ["params.total"]},
    {"values": {**DEFAULTS, "model": "custom"}, "config": json.dumps({"architectures": ["MambaForCausalLM"]})},
]


def main() -> int:
    from playwright.sync_api import sync_playwright

    import build

    hidden = KEEP.with_suffix(".off")
    if KEEP.exists():
        KEEP.rename(hidden)
    try:
        runtime.stdlib.cache_clear()
        with tempfile.TemporaryDirectory() as tmp:
            out = Path(tmp) / "site"
            build.build(ROOT / "content", out, only="06")
            with sync_playwright() as playwright:
                browser = playwright.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
                page = browser.new_page()
                page.goto((out / "06-kv-cache.html").as_uri())
                for request in REQUESTS:
                    page.evaluate("request => window.runbookCalculator.compute(request)", request)
                files = page.evaluate("() => window.runbookCalculator.loadedStdlib()")
                browser.close()
    finally:
        if hidden.exists():
            hidden.rename(KEEP)
    keep = set(files)
    for name in files:
        parts = name.split("/")[:-1]
        for depth in range(1, len(parts) + 1):
            keep.add("/".join(parts[:depth]) + "/__init__.py")
    header = "# Standard-library files the calculator loads under Pyodide; written by tools/stdlib_modules.py.\n"
    KEEP.write_text(header + "\n".join(sorted(keep)) + "\n")
    print(f"wrote {KEEP.relative_to(ROOT)}: {len(keep)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
