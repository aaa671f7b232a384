"""The build: self-contained pages, reproducible output, and clean failure on bad content."""
from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import build
from runbook.catalogue import read_catalogue
from runbook.errors import ContentError

ROOT = Path(__file__).resolve().parent.parent
DOC = "06-kv-cache.html"


def run_build(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, str(ROOT / "build.py"), *args], capture_output=True, text=True, cwd=ROOT)


class Attributes(HTMLParser):
    """Every src and href in a page, and the CSP meta."""

    def __init__(self):
        super().__init__()
        self.urls: list[str] = []
        self.csp = ""

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for name in ("src", "href", "action", "poster", "srcset"):
            if attrs.get(name):
                self.urls.append(attrs[name])
        if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy":
            self.csp = attrs["content"]


WRITTEN = sorted(e.output_name for e in read_catalogue(ROOT / "content").entries if e.written)


def test_writes_every_written_document_and_the_contents(site):
    assert {DOC, "02-anatomy.html", "05-phases.html", "03-journey.html", "04-hardware.html", "09-precision.html"} <= set(WRITTEN)
    assert sorted(p.name for p in site.iterdir()) == sorted(WRITTEN + ["index.html"])


@pytest.mark.parametrize("name", WRITTEN + ["index.html"])
def test_pages_are_self_contained(site, name):
    html = (site / name).read_text(encoding="utf-8")
    parser = Attributes()
    parser.feed(html)
    external = [u for u in parser.urls if re.match(r"(https?:)?//", u)]
    assert external == []
    assert all(u.startswith("#") or u.endswith(".html") or ".html#" in u for u in parser.urls), parser.urls
    assert not re.search(r"url\(\s*['\"]?\s*(https?:)?//", html)
    assert not re.search(r"@import\s+(url\()?\s*['\"]?\s*(https?:)?//", html)
    assert not re.search(r"<(link|script)[^>]+(src|href)=", html), "an asset was left as a link"
    assert "default-src 'none'" in parser.csp and "connect-src 'none'" in parser.csp


def test_plotly_is_embedded_once_packed(site):
    html = (site / DOC).read_text(encoding="utf-8")
    assert len(re.findall(r'<script type="application/zstd" id="plotly-js">', html)) == 1
    assert "plotly.js v" not in html, "Plotly travels packed, not as raw script"


def test_chart_spec_is_valid_plotly():
    import plotly.graph_objects as go

    from calc.facts import facts
    from runbook.charts import CHARTS
    for build_chart in CHARTS.values():
        spec = build_chart(facts())
        go.Figure(data=spec["data"], layout=spec["layout"])


def test_no_reference_or_component_syntax_leaks_into_the_page(site):
    html = (site / DOC).read_text(encoding="utf-8")
    body = re.sub(r"<script\b.*?</script>|<style>.*?</style>", "", html, flags=re.S)
    assert "{{" not in body and ":::" not in body
    assert not re.search(r"^@[a-z]", body, flags=re.M)


def test_both_forms_and_the_components_are_rendered(site):
    html = (site / DOC).read_text(encoding="utf-8")
    assert 'class="form form-quick"' in html and 'class="form form-deep"' in html
    assert len(re.findall(r'<li class="rung[ "]', html)) == 16, "the ladder, and the calculator's own"
    for ref in ("ladder.kv_budget", "ladder.users_worst", "ladder.users_paged", "levers.paging.users"):
        assert f'data-ref="{ref}"' in html
    assert ">53.34 GiB<" in html and ">189<" in html and ">106<" in html
    assert "2 × 32 × 8 × 128 × 2 = 131,072 B = 128 KiB" in html
    assert html.count('class="fast-answer"') == 10
    assert 'data-chart="cache-share"' in html


def test_navigation_lists_all_sixteen_documents(site):
    html = (site / "index.html").read_text(encoding="utf-8")
    nav = re.search(r'<nav class="docnav".*?</nav>', html, flags=re.S).group(0)
    numbers = re.findall(r">(\d\d) [A-Z]", nav)
    assert numbers == [f"{n:02d}" for n in range(16)]
    assert nav.count("<a ") == len(WRITTEN) and all(f'href="{name}"' in nav for name in WRITTEN)
    assert nav.count('class="unwritten"') == 16 - len(WRITTEN)
    doc_nav = re.search(r'<nav class="docnav".*?</nav>', (site / DOC).read_text(), flags=re.S).group(0)
    assert 'aria-current="page"' in doc_nav


def test_two_builds_are_byte_identical(tmp_path):
    first, second = tmp_path / "a", tmp_path / "b"
    build.build(ROOT / "content", first)
    build.build(ROOT / "content", second)
    for name in ("04-hardware.html", DOC, "index.html"):
        assert (first / name).read_bytes() == (second / name).read_bytes()


def test_one_document_builds_alone(tmp_path):
    out = tmp_path / "site"
    result = run_build("--doc", "06", "--out", str(out))
    assert result.returncode == 0, result.stderr
    assert [p.name for p in out.iterdir()] == [DOC]
    assert f"wrote {out / DOC}" in result.stdout or DOC in result.stdout
    assert re.search(r"built 1 file\(s\) in \d+\.\d\d s", result.stdout)


def test_unknown_document_is_refused(tmp_path):
    result = run_build("--doc", "99", "--out", str(tmp_path / "site"))
    assert result.returncode != 0 and "no document numbered '99'" in result.stderr
    assert "Traceback" not in result.stderr


def _line_of(path: Path, text: str) -> int:
    return next(i for i, line in enumerate(path.read_text().splitlines(), start=1) if text in line)


def _break(content: Path, old: str, new: str) -> Path:
    doc = content / "06-kv-cache.md"
    source = doc.read_text()
    assert old in source
    doc.write_text(source.replace(old, new, 1))
    return doc


BREAKAGES = {
    "unknown reference": ("{{ ladder.kv_budget }} budget", "{{ ladder.kv_budgt }} budget",
                          "unknown calc reference 'ladder.kv_budgt'"),
    "malformed reference": ("{{ ladder.kv_budget }} budget", "{{ ladder.kv_budget budget",
                            "malformed reference"),
    "unknown filter": ("{{ ladder.kv_budget }} budget", "{{ ladder.kv_budget | bold }} budget",
                       "unknown filter 'bold'"),
    "unknown container": ("::: analogy A group chat", "::: anology A group chat",
                          "unknown component '::: anology'"),
    "unknown directive": ("@ladder", "@ladders", "unknown component '@ladders'"),
    "typed derived number": ("connect, whether they use it or not.", "connect, so 53 users fit.",
                             "'53' is typed by hand, but calc derives it as"),
    "typed derived decimal": ("connect, whether they use it or not.", "connect: 53.34 GiB in all.",
                              "'53.34' is typed by hand"),
    "typed small ratio": ("connect, whether they use it or not.", "connect, a 4× saving.",
                          "'4×' is typed by hand"),
    "stray fence": ("@ladder", "@ladder\n\n::::", "'::::' closes no component here"),
}
# Where the fault is, counted from the first line of the replacement.
FAULT_OFFSET = {"stray fence": 2}


@pytest.mark.parametrize("case", sorted(BREAKAGES))
def test_bad_content_stops_the_build_with_file_and_line(content_copy, tmp_path, case):
    old, new, message = BREAKAGES[case]
    doc = _break(content_copy, old, new)
    line = _line_of(doc, new.splitlines()[0]) + FAULT_OFFSET.get(case, 0)
    out = tmp_path / "site"
    out.mkdir()
    (out / "previous.html").write_text("the previous build")
    result = run_build("--content", str(content_copy), "--out", str(out))
    assert result.returncode == 1
    assert f"06-kv-cache.md:{line}: " in result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.stderr
    assert [p.name for p in out.iterdir()] == ["previous.html"]
    assert (out / "previous.html").read_text() == "the previous build"


@pytest.mark.parametrize("front, message", [
    ('number = "06"\nkicker = "x"\ntitle = "x"\nlede = "x"\ncolour = "red"\n', "unknown front matter key 'colour'"),
    ('number = "06"\nkicker = "x"\ntitle = "x"\n', "front matter lacks 'lede'"),
    ('number = "06"\nkicker = "x"\ntitle = "x"\nlede = x\n', "front matter is not valid TOML"),
    ('number = "07"\nkicker = "x"\ntitle = "x"\nlede = "x"\n', "runbook.toml lists this file as '06'"),
])
def test_bad_front_matter_is_reported(content_copy, front, message):
    doc = content_copy / "06-kv-cache.md"
    body = doc.read_text().split("+++", 2)[2]
    doc.write_text("+++\n" + front + "+++" + body)
    with pytest.raises(ContentError) as err:
        build.build(content_copy, content_copy.parent / "site")
    assert message in str(err.value)
    assert str(err.value).startswith(f"{doc}:")


def test_toml_error_points_at_its_line(content_copy):
    doc = content_copy / "06-kv-cache.md"
    body = doc.read_text().split("+++", 2)[2]
    doc.write_text('+++\nnumber = "06"\nkicker = "x"\nlede = x\ntitle = "x"\n+++' + body)
    with pytest.raises(ContentError) as err:
        build.build(content_copy, content_copy.parent / "site")
    assert err.value.line == 4


def test_every_page_number_comes_from_calc(site):
    """A backstop for the typed-number check: the figures on the page are references."""
    html = (site / DOC).read_text(encoding="utf-8")
    for shown in ("53.34 GiB", "128 KiB", "1.00 GiB", "14.96 GiB"):
        assert re.search(rf'data-ref="[^"]+"[^>]*>{re.escape(shown)}<', html), shown
