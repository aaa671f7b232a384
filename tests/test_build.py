"""The build: self-contained pages, reproducible output, and clean failure on bad content."""
from __future__ import annotations

import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

import build
import by_hand
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
    assert sorted(p.name for p in site.iterdir()) == sorted(WRITTEN + ["index.html", build.EDITION])


@pytest.mark.parametrize("name", WRITTEN + ["index.html", build.EDITION])
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
    assert len(re.findall(r'<li class="rung[ "]', html)) == 20, "the ladder's ten rungs, and the calculator's own"
    for ref in ("ladder.kv_budget", "ladder.users_worst", "ladder.users_paged", "levers.paging.users"):
        assert f'data-ref="{ref}"' in html
    paged = by_hand.token_capacity(by_hand.kv_budget()) // (144 * 16)
    assert f">{BUDGET} GiB<" in html and f">{paged}<" in html
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


# The reference ladder's budget and worst-case users, by hand (tests/by_hand.py), as the page prints them.
BUDGET = f"{by_hand.kv_budget() / 2 ** 30:.2f}"
USERS = by_hand.token_capacity(by_hand.kv_budget()) // 8_192
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
    "typed derived number": ("connect, whether they use it or not.", f"connect, so {USERS} users fit.",
                             f"'{USERS}' is typed by hand, but calc derives it as"),
    "typed derived decimal": ("connect, whether they use it or not.", f"connect: {BUDGET} GiB in all.",
                              f"'{BUDGET}' is typed by hand"),
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


def test_a_character_the_build_marks_ids_with_is_refused_at_its_line(content_copy):
    """U+E000–U+E002 mark an id's two forms (its page's, the edition's) in the one rendering of a
    document; typed into content they would be read as such a mark."""
    doc = _break(content_copy, "connect, whether they use it or not.", "connect, whether they use it or not.\ue001")
    with pytest.raises(ContentError) as err:
        build.build(content_copy, content_copy.parent / "site")
    assert err.value.line == _line_of(doc, "connect, whether they use it or not.\ue001")
    assert "U+E001" in err.value.message


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
    for shown in (f"{BUDGET} GiB", "128 KiB", "1.00 GiB", "14.99 GiB"):
        assert re.search(rf'data-ref="[^"]+"[^>]*>{re.escape(shown)}<', html), shown


def _fault(content: Path, doc: Path) -> ContentError:
    with pytest.raises(ContentError) as err:
        build.build(content, content.parent / "site")
    assert str(err.value).startswith(f"{doc}:")
    return err.value


def test_a_component_never_closed_stops_at_its_opening_line(content_copy):
    doc = content_copy / "06-kv-cache.md"
    source = doc.read_text()
    doc.write_text(source + "\n::: card Left open\nEverything after this would vanish into the card.\n")
    err = _fault(content_copy, doc)
    assert err.line == len(source.splitlines()) + 2
    assert "'::: card' is never closed" in err.message


def test_an_outer_component_never_closed_is_named_not_its_inner_one(content_copy):
    doc = content_copy / "06-kv-cache.md"
    source = doc.read_text()
    doc.write_text(source + "\n:::: cards 2\n::: card Closed\nText.\n:::\n")
    err = _fault(content_copy, doc)
    assert err.line == len(source.splitlines()) + 2
    assert "':::: cards' is never closed" in err.message


def test_a_file_that_is_not_utf8_names_its_line(content_copy):
    doc = content_copy / "06-kv-cache.md"
    lines = doc.read_bytes().split(b"\n")
    lines[29] = lines[29] + " caf\u00e9".encode("latin-1")
    doc.write_bytes(b"\n".join(lines))
    err = _fault(content_copy, doc)
    assert err.line == 30
    assert "not UTF-8" in err.message and "0xe9" in err.message


def _link(content: Path, target: str) -> Path:
    return _break(content, "connect, whether they use it or not.",
                  f"connect, whether they use it or not ([see]({target})).")


@pytest.mark.parametrize("target, message", [
    ("99", "links to document '99', which runbook.toml does not list"),
    ("05#no-such-section", "links to '#no-such-section' in document 05, which has no such section"),
    ("#nowhere", "links to '#nowhere' in document 06"),
    ("kv-cache.html", "links to 'kv-cache.html', which is neither a document"),
    ("../secrets.txt", "which is neither a document"),
])
def test_a_link_to_nothing_stops_the_build(content_copy, target, message):
    doc = _link(content_copy, target)
    err = _fault(content_copy, doc)
    assert err.line == _line_of(doc, f"]({target})")
    assert message in err.message


def test_a_link_to_a_document_without_content_says_so(content_copy):
    (content_copy / "09-precision.md").unlink()
    _link(content_copy, "09#the-grid")
    with pytest.raises(ContentError, match=r"links to document 09 \(Precision\), which has no content yet"):
        build.build(content_copy, content_copy.parent / "site")


def test_links_between_documents_point_at_their_files(content_copy, tmp_path):
    _link(content_copy, "05#deep")
    _break(content_copy, "@ladder", "See [the ladder](#the-ladder) and [tokens](01-tokens.html).\n\n@ladder")
    html = build.build(content_copy, tmp_path / "out", "06")["06-kv-cache.html"].decode()
    assert '<a href="05-phases.html#deep">see</a>' in html
    assert '<a href="#the-ladder">the ladder</a>' in html
    assert '<a href="01-tokens.html">tokens</a>' in html


def test_a_chart_appears_once_in_the_runbook(content_copy):
    doc = _break(content_copy, "::: live capacity\n@chart cache-share", "::: live capacity\n@chart step-vs-batch")
    err = _fault(content_copy, doc)
    assert err.line == _line_of(doc, "@chart step-vs-batch")
    assert "@chart step-vs-batch is already in document 05" in err.message


def test_a_chart_in_a_live_region_must_follow_its_calculator(content_copy):
    phases = content_copy / "05-phases.md"
    phases.write_text("\n".join(line for line in phases.read_text().split("\n") if not line.startswith("@chart step-vs-batch")))
    doc = _break(content_copy, "::: live capacity\n@chart cache-share", "::: live capacity\n@chart step-vs-batch")
    err = _fault(content_copy, doc)
    assert err.line == _line_of(doc, "@chart step-vs-batch")
    assert "does not redraw it (it redraws: cache-share)" in err.message


START = """+++
number = "00"
kicker = "Start"
title = "Start"
lede = "{{ runbook.documents }} documents, {{ runbook.formulas }} formula, {{ runbook.corrections }} corrections."
+++

@formula kv.formula | the one to know

## The corrections register | gathered from every document

@register
"""


def test_the_register_is_every_documents_corrections_gathered(content_copy, tmp_path):
    (content_copy / "00-start.md").write_text(START)
    outputs = build.build(content_copy, tmp_path / "site")
    written = sorted(content_copy.glob("[0-9][0-9]-*.md"))
    claims = [(path.name[:2], line.split("correction", 1)[1].strip()) for path in written if path.name != "00-start.md"
              for line in path.read_text().splitlines() if re.match(r":{3,}\s+correction\s", line)]
    start = outputs["00-start.html"].decode()
    entries = re.findall(r'<p class="register-source"><a href="(\d\d)-[a-z-]+\.html#([a-z0-9-]+)">Document (\d\d) · [^<]+'
                         r'</a></p>\s*<article class="card correction"><p class="eyebrow">Was</p><h[2-6] class="component-title">(.*?)</h[2-6]>', start)
    assert len(entries) == len(claims) > 30
    for (number, claim), (linked, section, named, title) in zip(claims, entries):
        assert linked == named == number
        assert f'id="{section}"' in outputs[next(n for n in outputs if n.startswith(number + "-"))].decode()
    assert f"{len(written)} documents, 1 formula, {len(claims)} corrections." in re.sub(r"<[^>]+>", "", start)


def test_the_register_draws_each_correction_with_links_into_its_own_document(content_copy, tmp_path):
    (content_copy / "00-start.md").write_text(START)
    _break(content_copy, "::: correction ", "::: correction See [below](#the-ladder): ")
    start = build.build(content_copy, tmp_path / "site", "00")["00-start.html"].decode()
    assert '<a href="06-kv-cache.html#the-ladder">below</a>' in start


def test_a_bug_in_a_component_is_reported_as_a_bug_with_its_traceback(monkeypatch, capsys, tmp_path):
    """A check that fails on good content is a fault in the build, not a line of Markdown to fix."""
    from runbook.components import ladder

    def broken(args, namespace):
        raise ValueError("a bug in the ladder's check")

    monkeypatch.setattr(ladder, "check", broken)
    out = tmp_path / "site"
    out.mkdir()
    (out / "previous.html").write_text("the previous build")
    assert build.main(["--doc", "06", "--out", str(out)]) == 2
    stderr = capsys.readouterr().err
    assert "a bug in the build or in calc (not in content)" in stderr
    assert "Traceback" in stderr and "ValueError: a bug in the ladder's check" in stderr
    assert "while checking @ladder on line " in stderr
    assert not re.search(r"06-kv-cache\.md:\d+: ", stderr)
    assert [p.name for p in out.iterdir()] == ["previous.html"]


def test_a_fault_in_calc_under_a_reference_is_a_bug_not_an_unknown_name(monkeypatch, content_copy):
    """calc's sections are computed when first asked for: a KeyError inside one is calc's bug, and
    must not read as 'unknown calc reference'."""
    from calc import facts as calc_facts

    def broken(*_):
        raise KeyError("a bug in the ladder's section")

    monkeypatch.setitem(calc_facts.SECTIONS, "ladder", broken)
    with pytest.raises(KeyError, match="a bug in the ladder's section"):
        build.build(content_copy, content_copy.parent / "site", "06")


def test_a_type_error_inside_calc_under_a_reference_is_a_bug_not_a_content_fault(monkeypatch, content_copy):
    """A reference that names something unprintable is the author's fault; calc failing while it
    computes the section is not, whatever it raises."""
    from calc import facts as calc_facts

    def broken(*_):
        raise TypeError("a bug in the ladder's section")

    monkeypatch.setitem(calc_facts.SECTIONS, "ladder", broken)
    with pytest.raises(TypeError, match="a bug in the ladder's section"):
        build.build(content_copy, content_copy.parent / "site", "06")
