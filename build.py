#!/usr/bin/env python3
"""Build the runbook: a Site passed through STAGES, in the order that list gives.

    python build.py              every written document, and the contents page
    python build.py --doc 06     one document
    python build.py --out DIR    somewhere other than site/
    python build.py --content D  from another content folder (a draft, a test case)
    python build.py --facts      every name content can refer to, with its value
    python build.py --serve      build, serve on localhost, rebuild and reload on every change
    python build.py --pdf        also print the edition and each quick learn to PDF (Chromium)

A fault in content stops the build with `file:line: what is wrong` and leaves site/ as it was; a
bug in the build or in calc stops it too, with its traceback, said to be a bug and not content.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
import traceback
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape
from markupsafe import Markup

from calc.facts import facts
from calc.core.present import leaves, resolve, show
from calc.core.units import Result
from runbook.catalogue import Catalogue, read_catalogue
from runbook.components import table
from runbook.components.base import registry
from runbook.components.reference import reference_html, resolve_reference, shown
from runbook.compute import check_components, derived_numbers, guard_typed_numbers, resolve_references
from runbook.dialect import make_markdown
from runbook.factcache import every_fact
from runbook.errors import ContentError
from runbook.inline import NotSelfContained, check_self_contained, inline_assets
from runbook.links import IN_EDITION, IN_PAGE, check_once_in_the_runbook, link_documents, placed
from runbook.pages import Page, read_page
from runbook.pdf import PrintError, print_site
from runbook.provenance import Explainer, Provenance, deriving_documents
from runbook.register import Namespace, counts, gathered, register_page
from runbook.search import search_index
from runbook.serve import serve
from runbook.site import Site
from runbook.tokens import StaleCounts, check as check_token_counts
from runbook.vendor import VendorError, packed
from runbook.write import write_site

ROOT = Path(__file__).resolve().parent
EDITION = "runbook.html"
CSP = ("default-src 'none'; script-src 'unsafe-inline' blob: 'wasm-unsafe-eval'; worker-src blob:; "
       "style-src 'unsafe-inline'; img-src data: blob:; font-src data:; connect-src 'none'; base-uri 'none'; "
       "form-action 'none'")


def read(site: Site) -> None:
    """Every written document: even a one-document build reads the others, to check links into them."""
    site.catalogue = read_catalogue(site.content)
    if site.only is not None:
        entry = site.catalogue.entry(site.only)
        if entry is None:
            raise SystemExit(f"build.py: no document numbered '{site.only}' in content/runbook.toml")
        if not entry.written:
            raise SystemExit(f"build.py: document {site.only} has no content file yet (content/{entry.file})")
    site.pages = [read_page(entry, site.content) for entry in site.catalogue.entries if entry.written]


def check_samples(site: Site) -> None:
    """Document 01's token counts are what the tokenizer measures on the samples now."""
    if (site.content / "samples").is_dir():
        check_token_counts(site.content / "samples")


def parse(site: Site) -> None:
    site.md = make_markdown()
    for page in site.pages:
        parse_page(page, site.md)


def parse_page(page: Page, md) -> None:
    page.tokens = md.parse(page.body)
    for key, text in _meta_strings(page.meta):
        page.meta_tokens[key] = md.parseInline(text)[0].children or []


def _meta_strings(meta: dict) -> list[tuple[str, str]]:
    found = [(k, meta[k]) for k in ("kicker", "title", "title_em", "lede", "quote") if k in meta]
    for i, tile in enumerate(meta.get("tiles", [])):
        found += [(f"tiles.{i}.value", tile["value"]), (f"tiles.{i}.label", tile["label"])]
    return found


def check_pages(site: Site) -> None:
    once = {name for name, directive in registry(site.md).directives.items() if directive.once_in_the_runbook}
    check_once_in_the_runbook(site.pages, once)


def make_namespace(site: Site) -> None:
    """calc's facts, and the runbook's own counts, which come from the parsed pages."""
    site.register = register_page(site.pages)
    site.namespace = Namespace(counts(site.pages, site.register))
    site.jinja = make_jinja(site.templates, site.namespace)


def link(site: Site) -> None:
    by_number = {page.entry.number: page for page in site.pages}
    for page in site.pages:
        link_documents(page, by_number, site.catalogue)


def compute(site: Site) -> None:
    """References resolved and components checked: a fault in them stops the build before every
    fact is listed."""
    for page in site.computed:
        table.expand(page, site.namespace)  # a table's cells are references like any other
        resolve_references(page, site.namespace)
        check_components(page, registry(site.md), site.namespace, site.templates)
        page.charts = [page.values[id(t)] for t in page.tokens if t.type == "directive" and t.info == "chart"]


def list_facts(site: Site) -> None:
    """Every fact, from the cache while calc is unchanged (runbook/factcache.py)."""
    site.every_fact = every_fact(site.namespace)
    site.derived = derived_numbers(site.every_fact)


def guard_numbers(site: Site) -> None:
    for page in site.computed:
        guard_typed_numbers(page, site.derived)


def gather_register(site: Site) -> None:
    if site.register in site.chosen:
        for token in site.register.tokens:
            if token.type == "directive" and token.info == "register":
                site.register.values[id(token)] = gathered(site.pages, site.register)


def index(site: Site) -> None:
    """The search index every page carries; a page this build does not compute has the references
    the index reads resolved here."""
    def reference_text(page: Page, token) -> str:
        return resolve_reference(page, token, page.line_of(token), site.namespace)[0]
    site.jinja.globals["search_json"] = Markup(search_index(site.pages, site.catalogue, reference_text))


def explainer(site: Site) -> None:
    """What each page's number popovers show (runbook/provenance.py)."""
    site.explain = Explainer(Provenance(site.every_fact, site.namespace), site.namespace, deriving_documents(site.pages),
                             {e.number: [e.title, e.output_name] for e in site.catalogue.entries if e.written})


def render_markdown(site: Site) -> None:
    """Each written document's Markdown, rendered once for its page and the edition alike."""
    for page in site.chosen:
        page.parts = render_parts(page, site.md, {"jinja": site.jinja, "catalogue": site.catalogue, "page": page})


def render_pages(site: Site) -> None:
    for page in site.chosen:
        html = render(page, site.catalogue, site.jinja, site.explain)
        site.outputs[page.entry.output_name] = inline_assets(html, site.templates).encode("utf-8")


def render_whole_runbook(site: Site) -> None:
    """The edition, the attachments and the contents page, which lists them all: for a whole build."""
    if site.only is not None:
        return
    edition = inline_assets(render_edition(site.pages, site.catalogue, site.jinja, site.explain), site.templates)
    site.outputs[EDITION] = edition.encode("utf-8")
    site.outputs.update(site.attachments)
    files = {name: len(data) for name, data in site.outputs.items()}
    site.outputs["index.html"] = inline_assets(render_index(site.catalogue, site.jinja, files), site.templates).encode("utf-8")


def write(site: Site) -> None:
    write_site(site.outputs, site.out, replace_all=site.only is None)


def make_jinja(templates: Path, namespace: dict) -> Environment:
    jinja = Environment(loader=FileSystemLoader(templates), undefined=StrictUndefined,
                        autoescape=select_autoescape(["html", "j2"]), keep_trailing_newline=True)

    def fact(path: str, filter_name: str = "") -> Markup:
        ref = path + (f"|{filter_name}" if filter_name else "")
        return Markup(reference_html(ref, *shown(namespace, ref)))

    jinja.globals["fact"] = fact
    jinja.filters["css_string"] = css_string
    jinja.filters["size"] = file_size
    jinja.globals["fact_value"] = lambda path: resolve(namespace, path)
    return jinja


def file_size(size: int) -> str:
    return f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{max(size // 1024, 1)} KiB"


def css_string(text: str) -> Markup:
    """Text as a CSS string, safe inside <style> (where HTML escapes are not decoded)."""
    escaped = "".join(f"\\{ord(c):x} " if c in '"\\<>&\n' else c for c in text)
    return Markup(f'"{escaped}"')


def render_parts(page: Page, md, env: dict) -> dict:
    """A document's header and body as HTML, ids and links in both places it lands (runbook/links.py)."""
    inline = {key: md.renderer.render(tokens, md.options, env) for key, tokens in page.meta_tokens.items()}
    return {"inline": inline, "body": md.renderer.render(page.tokens, md.options, env)}


def _placed_parts(page: Page, where: int) -> dict:
    inline = {key: Markup(placed(html, where)) for key, html in page.parts["inline"].items()}
    tiles = [{"value": inline[f"tiles.{i}.value"], "label": inline[f"tiles.{i}.label"]}
             for i in range(len(page.meta.get("tiles", [])))]
    return {"entry": page.entry, "kicker": inline["kicker"], "title": inline["title"],
            "title_em": inline.get("title_em"), "lede": inline["lede"], "quote": inline.get("quote"), "tiles": tiles,
            "body": Markup(placed(page.parts["body"], where))}


def _uses(pages: list[Page], directive: str) -> bool:
    return any(t.type == "directive" and t.info == directive for page in pages for t in page.tokens)


def render(page: Page, catalogue: Catalogue, jinja: Environment, explain: Explainer) -> str:
    previous, following = catalogue.neighbours(page.entry.number)
    charts = {chart["id"]: {"data": chart["data"], "layout": chart["layout"]} for chart in page.charts}
    return jinja.get_template("document.html.j2").render(
        catalogue=catalogue, previous=previous, next=following, csp=CSP, **_placed_parts(page, IN_PAGE),
        charts=bool(charts), charts_json=Markup(_script_json(charts)),
        calculator=_uses([page], "calculator"), tokenizer=_uses([page], "tokenizer"), note=_uses([page], "note"),
        provenance_packed=packed(explain([page]).encode("utf-8"), "provenance.json"),
    )


def render_edition(pages: list[Page], catalogue: Catalogue, jinja: Environment, explain: Explainer) -> str:
    """Every document in reading order in one file, on one copy of the runtime: the file a reader keeps."""
    articles = [_placed_parts(page, IN_EDITION) for page in pages]
    charts = {chart["id"]: {"data": chart["data"], "layout": chart["layout"]} for page in pages for chart in page.charts}
    documents = jinja.get_template("edition-documents.html.j2").render(articles=articles)
    check_self_contained(documents)
    return jinja.get_template("edition.html.j2").render(
        catalogue=catalogue, csp=CSP, articles=articles, edition=True,
        documents_packed=packed(documents.encode("utf-8"), "edition-documents.html"),
        charts=bool(charts), charts_json=Markup(_script_json(charts)),
        calculator=_uses(pages, "calculator"), tokenizer=_uses(pages, "tokenizer"), note=_uses(pages, "note"),
        provenance_packed=packed(explain(pages).encode("utf-8"), "provenance.json"),
    )


def render_index(catalogue: Catalogue, jinja: Environment, files: dict[str, int]) -> str:
    """The contents page; `files` are the site's files and their sizes, to offer the downloads."""
    return jinja.get_template("index.html.j2").render(catalogue=catalogue, csp=CSP, files=files, edition_name=EDITION)


def _script_json(data: object) -> str:
    """JSON safe to place inside a <script> element."""
    return json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


STAGES = [read, check_samples, parse, check_pages, make_namespace, link, compute, list_facts, guard_numbers,
          gather_register, index, explainer, render_markdown, render_pages, render_whole_runbook, write]


def build(content: Path, out: Path, only: str | None = None, templates: Path = ROOT / "templates",
          attachments: dict[str, bytes] | None = None) -> dict[str, bytes]:
    """Run every stage; return what was written, by file name. `attachments` (the PDFs) are written
    with the site and offered on its contents page."""
    site = Site(content, out, only, templates, attachments or {})
    for stage in STAGES:
        stage(site)
    return site.outputs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Build the LLM Inference Runbook into self-contained HTML files.")
    parser.add_argument("--doc", metavar="NN", help="build only this document, e.g. 06")
    parser.add_argument("--out", type=Path, default=ROOT / "site", help="output folder (default: site/)")
    parser.add_argument("--content", type=Path, default=ROOT / "content", help="content folder (default: content/)")
    parser.add_argument("--facts", action="store_true", help="list every name content can refer to, and stop")
    parser.add_argument("--serve", action="store_true",
                        help="build, serve the site on localhost, rebuild on every change to content/, calc/ or "
                             "templates/, and reload the open page")
    parser.add_argument("--port", type=int, default=8000, help="the port --serve listens on (0: any free port)")
    parser.add_argument("--pdf", action="store_true",
                        help="also print the edition (deep read) and each document (quick learn) to PDF with Chromium")
    args = parser.parse_args(argv)
    if args.facts:
        for path, value in leaves(facts()):
            print(f"{{{{ {path} }}}}  =  {show(value)}" + (f"    [{value.worked}]" if isinstance(value, Result) else ""))
        return 0
    if args.serve:
        command = [sys.executable, str(Path(__file__).resolve()), "--out", str(args.out), "--content", str(args.content)]
        serve(command, args.out, [args.content, ROOT / "calc", ROOT / "templates"], args.port)
        return 0
    if args.pdf and args.doc:
        parser.error("--pdf prints the whole runbook; leave out --doc")
    started = time.perf_counter()
    try:
        outputs = build_with_pdfs(args.content, args.out) if args.pdf else build(args.content, args.out, args.doc)
    except ContentError as err:
        print(f"{_relative(err.path)}:{err.line}: {err.message}", file=sys.stderr)
        print("build stopped; the previous site is untouched", file=sys.stderr)
        return 1
    except (VendorError, NotSelfContained, StaleCounts, PrintError) as err:
        print(f"build.py: {err}", file=sys.stderr)
        print("build stopped; the previous site is untouched", file=sys.stderr)
        return 1
    except Exception:  # anything else is a bug, in the build or in calc, never the author's to fix
        print("build.py: a bug in the build or in calc (not in content) stopped the build:", file=sys.stderr)
        traceback.print_exc()
        print("build stopped; the previous site is untouched", file=sys.stderr)
        return 2
    for name, data in sorted(outputs.items()):
        print(f"wrote {_relative(args.out / name)}  {len(data):,} bytes")
    print(f"built {len(outputs)} file(s) in {time.perf_counter() - started:.2f} s")
    return 0


def build_with_pdfs(content: Path, out: Path) -> dict[str, bytes]:
    """Print a draft build to PDF with Chromium, then write the site with the PDFs in it, all at
    once, as every build is written, its contents page listing them."""
    with tempfile.TemporaryDirectory() as tmp:
        draft = Path(tmp) / "site"
        build(content, draft)
        pdfs = print_site(draft, read_catalogue(content), EDITION)
    return build(content, out, attachments=pdfs)


def _relative(path: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return str(path)


if __name__ == "__main__":
    sys.exit(main())
