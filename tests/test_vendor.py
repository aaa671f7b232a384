"""The pinned third-party files: fetched with npm once, verified, then read offline."""
from __future__ import annotations

import base64
import hashlib
import io
import zipfile

import pytest
import zstandard

from runbook import runtime, vendor


def test_cached_packages_match_their_pins():
    for name, package in vendor.pins().items():
        for file in package.files:
            assert vendor.path(name, file).is_file()
        assert (package.folder / ".verified").read_text().strip() == package.integrity


def test_without_npm_or_a_cache_the_build_says_what_to_do(monkeypatch, tmp_path):
    monkeypatch.setattr(vendor, "CACHE", tmp_path)
    monkeypatch.setattr(vendor.shutil, "which", lambda name: None)
    vendor.pins.cache_clear()
    try:
        with pytest.raises(vendor.VendorError, match="fetching it needs npm"):
            vendor.path("pyodide", "pyodide.asm.wasm")
    finally:
        vendor.pins.cache_clear()


def test_a_tampered_pin_is_refused(monkeypatch, tmp_path):
    pins = dict(vendor.pins())
    bad = vendor.Package("plotly.js-basic-dist-min", pins["plotly.js-basic-dist-min"].version,
                         "sha512-" + base64.b64encode(hashlib.sha512(b"not it").digest()).decode(), ("plotly-basic.min.js",))
    monkeypatch.setattr(vendor, "CACHE", tmp_path)
    with pytest.raises(vendor.VendorError, match="does not match vendor.toml"):
        vendor._fetch(bad)


def test_packing_round_trips_through_the_safe_alphabet():
    data = bytes(range(256)) * 50 + b"tail"
    text = vendor.packed(data, "round-trip")
    assert not set(text) & set("<>&'\"\\`^~")
    back = text.translate(str.maketrans(vendor.SAFE_85, vendor._RFC1924))
    assert zstandard.ZstdDecompressor().decompress(base64.b85decode(back)) == data


def test_the_page_gets_the_standard_library_as_bytecode_only():
    with zipfile.ZipFile(io.BytesIO(runtime.stdlib())) as archive:
        names = archive.namelist()
        sources = [n for n in names if n.endswith(".py")]
        compiled = [n for n in names if n.endswith(".pyc")]
    assert not sources and len(compiled) > 100
    keep = {line for line in runtime.STDLIB_KEEP.read_text().splitlines() if line and not line.startswith("#")}
    assert {n + "c" for n in keep} == set(compiled)


def test_stripped_stdlib_keeps_code_and_drops_prose():
    source = '"""Module doc."""\n# a comment\ndef f(x):\n    """Doc."""\n    return x  # trailing\n'
    stripped = runtime.without_comments_or_docstrings(source, "m.py")
    assert "comment" not in stripped and "Doc" not in stripped and "trailing" not in stripped
    namespace: dict = {}
    exec(compile(stripped, "m.py", "exec"), namespace)
    assert namespace["f"](3) == 3
    newer = "def f[T](x: T) -> T:\n    return x  # kept\n"
    assert runtime.without_comments_or_docstrings(newer, "n.py") in (newer, "def f[T](x: T) -> T:\n    return x  \n")
