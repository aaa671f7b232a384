"""The inline stage: every stylesheet, script and embedded file goes into the page itself.

Templates link assets the ordinary way, so they read like any page; this stage replaces exactly
those tags with the files' contents, then refuses a page that still points outside itself.

- `<link rel="stylesheet" href="assets/x.css">`                 → `<style>` with the file
- `<script [id="…"] src="assets/x.js"></script>`                → the script inline
- `<script type="text/plain" … src="…"></script>`               → the file as text (also application/json)
- `<script type="application/zstd" … src="…"></script>`         → the file packed (Zstandard, base85)

Sources: `assets/…` from templates/, `vendor/PACKAGE/FILE` from the pinned npm packages,
`runtime/FILE` made by runbook/runtime.py.
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from . import runtime, vendor

STYLESHEET = re.compile(r'<link rel="stylesheet" href="([^"]+)">')
SCRIPT = re.compile(r'<script((?: id="[^"]+")?) src="([^"]+)"></script>')
TEXT = re.compile(r'<script type="(text/plain|application/json)"([^>]*?) src="([^"]+)"></script>')
PACKED = re.compile(r'<script type="application/zstd"([^>]*?) src="([^"]+)"></script>')
EXTERNAL = re.compile(
    r"""(?:\b(?:src|href|action|poster|data)\s*=\s*["']?\s*(?:https?:)?//)"""
    r"""|(?:url\(\s*["']?\s*(?:https?:)?//)"""
    r"""|(?:@import\s+(?:url\()?\s*["']?\s*(?:https?:)?//)""",
    re.IGNORECASE,
)


SCRIPT_OPEN = re.compile(r"<script\b[^>]*>", re.IGNORECASE)
SCRIPT_CLOSE = re.compile(r"</script>", re.IGNORECASE)


class NotSelfContained(Exception):
    pass


@lru_cache(maxsize=None)
def source(href: str, templates: Path) -> bytes:
    kind, _, rest = href.partition("/")
    if kind == "assets":
        return (templates / href).read_bytes()
    if kind == "vendor":
        package, _, name = rest.partition("/")
        return vendor.read_bytes(package, name)
    if kind == "runtime":
        return runtime.generated(rest)
    raise FileNotFoundError(f"no asset {href}")


def inline_assets(html: str, templates: Path) -> str:
    def text(href: str) -> str:
        return source(href, templates).decode("utf-8")

    html = STYLESHEET.sub(lambda m: f"<style>\n{text(m.group(1))}</style>", html)
    html = SCRIPT.sub(lambda m: f"<script{m.group(1)}>\n{_escape_script(text(m.group(2)))}\n</script>", html)
    html = TEXT.sub(lambda m: f'<script type="{m.group(1)}"{m.group(2)}>{_escape_script(text(m.group(3)))}</script>', html)
    html = PACKED.sub(lambda m: f'<script type="application/zstd"{m.group(1)}>'
                                f'{vendor.packed(source(m.group(2), templates), Path(m.group(2)).name)}</script>', html)
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
    """The page without the text of inline scripts: library code mentions URLs it never loads.
    (A scan from tag to tag, not one regular expression over the page: pages carry megabytes of
    script.)"""
    kept, at = [], 0
    while opening := SCRIPT_OPEN.search(html, at):
        closing = SCRIPT_CLOSE.search(html, opening.end())
        if closing is None:
            break
        kept.append(html[at:opening.end()])
        at = closing.start()
    kept.append(html[at:])
    return "".join(kept)
