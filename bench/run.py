#!/usr/bin/env python3
"""Measure the runbook: build times, page weight, first paint and the calculator in headless Chromium.

    python bench/run.py            a Markdown table, to paste into the README
    python bench/run.py --json     the same figures as JSON

Build times are the median of several runs of `python build.py` as a reader would type it
(interpreter start-up included). First contentful paint is the browser's own
'first-contentful-paint' entry, median over fresh browser contexts, page opened from file://.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("RUNBOOK_CHROMIUM", "/usr/bin/chromium")
ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking",
        "--disable-component-update", "--disable-sync"]


FCP = """() => new Promise(done => new PerformanceObserver(list => {
  const entry = list.getEntriesByName('first-contentful-paint')[0];
  if (entry) done(entry.startTime);
}).observe({type: 'paint', buffered: true}))"""


def time_build(out: Path, *extra: str, runs: int) -> float:
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, str(ROOT / "build.py"), "--out", str(out), *extra],
                       check=True, capture_output=True)
        samples.append(time.perf_counter() - started)
    return statistics.median(samples)


def first_paint(pages: list[Path], runs: int) -> dict[str, float]:
    from playwright.sync_api import sync_playwright
    result = {}
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for path in pages:
            samples = []
            for _ in range(runs):
                context = browser.new_context()
                page = context.new_page()
                page.goto(path.as_uri(), wait_until="load")
                samples.append(page.evaluate(FCP))
                context.close()
            result[path.name] = statistics.median(samples)
        browser.close()
    return result


# The input each calculator's timing changes: its first select of these, cycled through its options.
TIMED_INPUTS = ("card", "model", "kind", "rope_type")


def timed_input(page, section: str) -> tuple[str, list[str], str]:
    """The input a timing changes, the values it cycles through, and its value now: the first of
    TIMED_INPUTS the calculator has, or else its first number, doubled, halved and tripled."""
    for name in TIMED_INPUTS:
        field = f"{section} select[name={name}]"
        if page.query_selector(field):
            options = [o for o in page.eval_on_selector_all(f"{field} option", "nodes => nodes.map(n => n.value)")
                       if o != "custom"]
            return field, options, page.eval_on_selector(field, "node => node.value")
    field = f"{section} input[type=text]"
    current = page.eval_on_selector(field, "node => node.value")
    value = float(current.replace(",", ""))
    return field, [current] + [f"{value * k:g}" for k in (2, 0.5, 3)], current


def choose(page, field: str, value: str) -> None:
    if " select[" in field:
        page.select_option(field, value)
    else:
        page.fill(field, value)


def calculator_timings(page_path: Path, name: str, runs: int, warm_runs: int = 20) -> dict[str, float]:
    """Cold: first input to first recomputed figures, Python not yet started. Warm: later inputs.
    The input changed is the calculator's card (or model, kind of text, scaling rule); options that
    the calculator refuses are skipped when timing."""
    from playwright.sync_api import sync_playwright
    cold, warm = [], []
    section = f"[data-calculator={name}]"
    settled = f"{section}:is([data-state=computed], [data-state=invalid])"
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        for _ in range(runs):
            context = browser.new_context()
            page = context.new_page()
            page.goto(page_path.as_uri() + "#deep", wait_until="load")
            page.wait_for_selector(section, state="attached")  # the edition unpacks its documents after load
            field, options, current = timed_input(page, section)
            others = [o for o in options if o != current]
            choose(page, field, others[0])
            page.wait_for_selector(settled, timeout=60_000)
            cold.append(page.evaluate(COLD))
            chosen = others[0]
            for i in range(warm_runs):
                chosen = next(o for o in options[i % len(options):] + options if o != chosen)
                choose(page, field, chosen)
                page.wait_for_selector(settled, timeout=60_000)
                if page.get_attribute(section, "data-state") == "computed":
                    warm.append(float(page.get_attribute(section, "data-last-ms")))
            context.close()
        browser.close()
    return {"cold_ms": statistics.median(cold), "warm_ms": statistics.median(warm), "warm_max_ms": max(warm)}


def calculators_on(path: Path) -> list[str]:
    import re
    return re.findall(r'data-calculator="([a-z_-]+)"', path.read_text(encoding="utf-8"))


def calculators_in_edition(out: Path) -> list[str]:
    """The edition packs its documents, so its calculators are those of the documents it holds."""
    return [name for page in sorted(out.glob("[0-9][0-9]-*.html")) for name in calculators_on(page)]


COLD = """() => performance.getEntriesByName('calc-first-result')[0].startTime -
              performance.getEntriesByName('calc-first-input')[0].startTime"""


def measure(runs: int, warm_runs: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "site"
        full = time_build(out, runs=runs)
        one = time_build(out, "--doc", "06", runs=runs)
        sizes = {p.name: p.stat().st_size for p in sorted(out.iterdir())}
        paint = first_paint(sorted(out.iterdir()), runs) if Path(CHROMIUM).exists() else {}
        calc = {}
        printing = None
        if Path(CHROMIUM).exists():
            for page in sorted(out.glob("[0-9][0-9]-*.html")):
                for name in calculators_on(page):
                    calc[f"{page.name} · {name}"] = calculator_timings(page, name, runs, warm_runs)
            for name in calculators_in_edition(out):
                calc[f"runbook.html · {name}"] = calculator_timings(out / "runbook.html", name, runs, warm_runs)
            printing = time_build(out, "--pdf", runs=1)
            sizes.update({p.name: p.stat().st_size for p in sorted(out.glob("*.pdf"))})
    return {
        "machine": f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}",
        "runs": runs,
        "warm": warm_runs,
        "build_full_s": round(full, 3),
        "build_doc06_s": round(one, 3),
        "build_with_pdf_s": round(printing, 1) if printing else None,
        "page_bytes": sizes,
        "first_contentful_paint_ms": {k: round(v, 1) for k, v in paint.items()},
        "calculator_ms": {k: {m: round(v, 1) for m, v in t.items()} for k, t in calc.items()},
    }


def table(figures: dict) -> str:
    lines = [
        f"Measured by `python bench/run.py` on {figures['machine']} (median of {figures['runs']} runs; "
        f"{figures['warm']} warm recomputes per run).",
        "",
        "| measure | value |",
        "| --- | --- |",
        f"| full site build (`python build.py`) | {figures['build_full_s']:.2f} s |",
        f"| one document (`python build.py --doc 06`) | {figures['build_doc06_s']:.2f} s |",
    ]
    if figures.get("build_with_pdf_s"):
        lines.append(f"| full build and every PDF (`python build.py --pdf`) | {figures['build_with_pdf_s']:.1f} s |")
    for name, size in figures["page_bytes"].items():
        lines.append(f"| `{name}` size | {size:,} bytes ({size / 2 ** 20:.2f} MiB) |")
    for name, ms in figures["first_contentful_paint_ms"].items():
        lines.append(f"| `{name}` first contentful paint, headless Chromium, file:// | {ms:.0f} ms |")
    for where, calc in figures["calculator_ms"].items():
        lines.append(f"| {where}: first input to first recomputed figures, cold (Python starts) | {calc['cold_ms']:.0f} ms |")
        lines.append(f"| {where}: recompute after that, warm (median; slowest) | {calc['warm_ms']:.1f} ms; "
                     f"{calc['warm_max_ms']:.1f} ms |")
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--warm", type=int, default=20, help="warm recomputes timed per run")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures = measure(args.runs, args.warm)
    print(json.dumps(figures, indent=2) if args.json else table(figures))
    return 0


if __name__ == "__main__":
    sys.exit(main())
