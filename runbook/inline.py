"""The inline stage: the stylesheet, scripts and chart library go into the page itself.

Templates link assets the ordinary way (`<link rel="stylesheet" href="assets/…">`,
`<script src="…">`), so they read like any page; this stage replaces exactly those tags with
the files' contents, then refuses a page that still points anywhere outside itself.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
SCRIPT = re.compile(r'<script src="([^"]+)"></script>')
EXTERNAL = re.compile(
    r"""(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//)"""
    r"""|(?:url\(\s*["']?\s*(?:https?:)?//)"""
    r"""|(?:@import\s+(?:url\()?\s*["']?\s*(?:https?:)?//)""",
    re.IGNORECASE,
)


class NotSelfContained(Exception):
    pass


def vendor_file(name: str) -> Path:
    """Third-party files come from installed packages, never from the network."""
    if name == "plotly.min.js":
        import plotly
        return Path(plotly.__file__).parent / "package_data" / "plotly.min.js"
    raise FileNotFoundError(f"no vendored file named {name}")


@lru_cache(maxsize=None)
def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


def _source(href: str, templates: Path) -> str:
    if href.startswith("vendor/"):
        return _read(vendor_file(href.removeprefix("vendor/")))
    return _read(templates / href)


def inline_assets(html: str, templates: Path) -> str:
    html = STYLESHEET.sub(lambda m: f"<style>\n{_source(m.group(1), templates)}</style>", html)
    html = SCRIPT.sub(lambda m: f"<script>\n{_escape_script(_source(m.group(1), templates))}\n</script>", html)
    check_self_contained(html)
    return html


def _escape_script(code: str) -> str:
    """A script may not contain '</script' literally, or the page's parser would end it there."""
    return re.sub(r"</(script)", r"<\\/\1", code, flags=re.IGNORECASE)


def check_self_contained(html: str) -> None:
    """Markup only: the check looks at attributes, CSS url() and @import, as a browser would load them."""
    for match in EXTERNAL.finditer(_markup_only(html)):
        raise NotSelfContained(f"page refers outside itself: {match.group(0)!r}")


def _markup_only(html: str) -> str:
    """The page without the text of inline scripts: library code mentions URLs it never loads."""
    return re.sub(r"(<script\b[^>]*>).*?(</script>)", r"\1\2", html, flags=re.DOTALL | re.IGNORECASE)
