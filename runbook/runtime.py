"""What a page with a calculator carries so that calc runs in the reader's browser.

Pyodide's own files come from the pinned npm package (runbook/vendor.py). Three more are made
here: calc's source, a lock file that lists no packages (calc needs none), and a standard
library cut down to the modules calc and Pyodide's start-up actually import, compiled to
bytecode by that same Pyodide (runbook/bytecode.mjs, under Node) so the page never compiles it.
"""
from __future__ import annotations

import io
import json
import shutil
import subprocess
import sys
import tempfile
import tokenize
import zipfile
from functools import lru_cache
from pathlib import Path

from . import vendor
from .tokens import tokenizer_source

ROOT = Path(__file__).resolve().parent.parent
CALC = ROOT / "calc"
STDLIB_KEEP = Path(__file__).with_name("stdlib_modules.txt")


def calc_sources() -> bytes:
    """calc's modules, its subpackages' too, as one JSON object, path under calc/ → source, written
    into Pyodide's file system; a package's command line (__main__.py) stays out of the page."""
    sources = {p.relative_to(CALC).as_posix(): p.read_text(encoding="utf-8") for p in sorted(CALC.rglob("*.py"))
               if p.name != "__main__.py"}
    return json.dumps(sources, sort_keys=True, ensure_ascii=False).encode("utf-8")


def lock_file() -> bytes:
    """Pyodide's lock file with its package list emptied: nothing is ever installed."""
    lock = json.loads(vendor.read_bytes("pyodide", "pyodide-lock.json"))
    return json.dumps({"info": lock["info"], "packages": {}}, sort_keys=True).encode("utf-8")


COMPILER = Path(__file__).with_name("bytecode.mjs")


@lru_cache(maxsize=1)
def stdlib() -> bytes:
    """python_stdlib.zip cut to the files stdlib_modules.txt names (all, if it is absent), without
    comments or docstrings, as sourceless bytecode, stored uncompressed so the page's one
    compression sees across files."""
    full = vendor.read_bytes("pyodide", "python_stdlib.zip")
    keep_text = STDLIB_KEEP.read_text() if STDLIB_KEEP.is_file() else None
    recipe = [full, (keep_text or "").encode(), Path(__file__).read_bytes(), COMPILER.read_bytes(), sys.version.encode()]
    return vendor.cached("python_stdlib.pyc.zip", recipe, lambda: bytecode(_trimmed(full, keep_text)))


def bytecode(sources: bytes) -> bytes:
    """A zip of .py files as a zip of .pyc files, compiled by the pinned Pyodide under Node."""
    node = shutil.which("node")
    if node is None:
        raise vendor.VendorError("the build compiles Pyodide's standard library once with Node.js (which comes with "
                                 "npm): install it, or copy a .cache/vendor folder from a machine that has it")
    folder = vendor.path("pyodide", "pyodide.mjs").parent
    with tempfile.TemporaryDirectory() as tmp:
        source, out = Path(tmp) / "source.zip", Path(tmp) / "out.zip"
        source.write_bytes(sources)
        result = subprocess.run([node, str(COMPILER), str(folder), str(source), str(out)], capture_output=True, text=True)
        if result.returncode != 0 or not out.is_file():
            raise vendor.VendorError(f"Pyodide under Node could not compile the standard library: {result.stderr.strip()[-600:]}")
        return out.read_bytes()


def _trimmed(full: bytes, keep_text: str | None) -> bytes:
    keep = None
    if keep_text is not None:
        keep = {line.strip() for line in keep_text.splitlines() if line.strip() and not line.startswith("#")}
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(full)) as source, zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as target:
        for info in source.infolist():
            if keep is not None and info.filename not in keep and not info.is_dir():
                continue
            data = source.read(info.filename)
            if info.filename.endswith(".py"):
                data = without_comments_or_docstrings(data.decode("utf-8"), info.filename).encode("utf-8")
            copy = zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0))
            copy.external_attr = info.external_attr
            target.writestr(copy, data)
    return out.getvalue()


_LAYOUT = {tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}


def without_comments_or_docstrings(source: str, name: str) -> str:
    """Comments removed and each lone string statement (docstrings) emptied to "".

    Only for files this Python can compile before and after; anything else is kept verbatim,
    so a newer grammar in Pyodide's stdlib can cost bytes but never correctness.
    """
    try:
        compile(source, name, "exec", dont_inherit=True)
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (SyntaxError, tokenize.TokenError, ValueError):
        return source
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))

    def offset(point: tuple[int, int]) -> int:
        return starts[point[0] - 1] + point[1]

    cuts = [(offset(t.start), offset(t.end), "") for t in tokens if t.type == tokenize.COMMENT]
    statements = [t for t in tokens if t.type not in _LAYOUT]
    for i, t in enumerate(statements):
        before = statements[i - 1].type if i else tokenize.NEWLINE
        after = statements[i + 1].type if i + 1 < len(statements) else tokenize.ENDMARKER
        if t.type == tokenize.STRING and before == tokenize.NEWLINE and after in (tokenize.NEWLINE, tokenize.ENDMARKER):
            cuts.append((offset(t.start), offset(t.end), '""'))
    stripped = source
    for start, end, replacement in sorted(cuts, reverse=True):
        stripped = stripped[:start] + replacement + stripped[end:]
    try:
        compile(stripped, name, "exec", dont_inherit=True)
    except SyntaxError:
        return source
    return stripped


GENERATED = {
    "calc.json": calc_sources,
    "llama3-tokenizer.js": tokenizer_source,
    "pyodide-lock.json": lock_file,
    "python_stdlib.zip": stdlib,
}


def generated(name: str) -> bytes:
    return GENERATED[name]()
