"""Third-party files for the pages: fetched once with npm, verified, then served from a cache.

`vendor.toml` pins each package's version and the registry's sha512 integrity. The first build
runs `npm pack` (which also fills npm's own cache), checks the tarball's hash, and extracts the
listed files into `.cache/vendor/NAME-VERSION/`. Later builds read that folder and need no
network. Packed forms (Zstandard, then base85) are cached beside the files, keyed by content.
"""
from __future__ import annotations

import base64
import hashlib
import io
import os
import shutil
import subprocess
import tarfile
import tempfile
import tomllib
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import zstandard

ROOT = Path(__file__).resolve().parent.parent
PINS = ROOT / "vendor.toml"
CACHE = ROOT / ".cache" / "vendor"


class VendorError(Exception):
    """A vendored package that cannot be had: says what to do about it."""


@dataclass(frozen=True)
class Package:
    name: str
    version: str
    integrity: str
    files: tuple[str, ...]

    @property
    def folder(self) -> Path:
        return CACHE / f"{self.name}-{self.version}"


@lru_cache(maxsize=None)
def pins() -> dict[str, Package]:
    data = tomllib.loads(PINS.read_text(encoding="utf-8"))
    return {name: Package(name, p["version"], p["integrity"], tuple(p["files"])) for name, p in data.items()}


def path(package: str, file: str) -> Path:
    """The verified local copy of one file of a pinned package, fetching the package if needed."""
    pkg = pins()[package]
    if not (pkg.folder / ".verified").is_file():
        _fetch(pkg)
    return pkg.folder / file


def read_bytes(package: str, file: str) -> bytes:
    return path(package, file).read_bytes()


# RFC 1924's 85 digits, mapped one to one onto printable ASCII without < > & ' " \ ` ^ ~, so that
# nothing in the text can end or confuse the <script> element that carries it.
_RFC1924 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz!#$%&()*+-;<=>?@^_`{|}~"
SAFE_85 = "".join(chr(c) for c in range(33, 127) if chr(c) not in "<>&'\"\\`^~")
_TO_SAFE = str.maketrans(_RFC1924, SAFE_85)


def cached(label: str, recipe: list[bytes], produce, only_latest: bool = False) -> bytes:
    """Bytes made from `recipe`, kept on disk by its hash so later builds skip the work. With
    `only_latest`, making a new one removes the label's others (for a kind with one current recipe)."""
    digest = hashlib.sha256(b"\0".join(hashlib.sha256(part).digest() for part in recipe)).hexdigest()[:24]
    path = CACHE / "made" / f"{label}-{digest}"
    try:
        return path.read_bytes()
    except FileNotFoundError:
        pass
    data = produce()
    write_atomically(path, data)
    if only_latest:
        for other in path.parent.glob(f"{label}-*"):
            if other != path:
                other.unlink(missing_ok=True)
    return data


def write_atomically(path: Path, data: bytes) -> None:
    """Readers see the whole file or none: written beside its place, then renamed onto it."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    os.replace(temporary, path)


@lru_cache(maxsize=64)  # every page packs the same runtime: hash and look it up once per build
def packed(data: bytes, label: str) -> str:
    """Zstandard (level 19) then base85 (safe digits), cached by content; the page's unpack.js
    undoes both, the Zstandard with the pinned fzstd. Against gzip -9 this carries Pyodide's
    WebAssembly in 18% fewer bytes; base85 costs 25% where base64 costs 33%."""
    return cached(f"{label}.zst.b85", [data], lambda: _pack(data)).decode("ascii")


def _pack(data: bytes) -> bytes:
    compressed = zstandard.ZstdCompressor(level=19, write_content_size=True).compress(data)
    return base64.b85encode(compressed).decode("ascii").translate(_TO_SAFE).encode("ascii")


def _fetch(pkg: Package) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(f"{pkg.name}@{pkg.version} is not in {pkg.folder} yet, and fetching it needs npm "
                          "(Node.js): install npm once, or copy a .cache/vendor folder from a machine that has it")
    with tempfile.TemporaryDirectory() as tmp:
        result = subprocess.run([npm, "pack", f"{pkg.name}@{pkg.version}", "--prefer-offline", "--silent",
                                 "--pack-destination", tmp], capture_output=True, text=True)
        tarballs = list(Path(tmp).glob("*.tgz"))
        if result.returncode != 0 or not tarballs:
            raise VendorError(f"npm could not fetch {pkg.name}@{pkg.version}: {result.stderr.strip()[:400]}")
        data = tarballs[0].read_bytes()
    actual = "sha512-" + base64.b64encode(hashlib.sha512(data).digest()).decode()
    if actual != pkg.integrity:
        raise VendorError(f"{pkg.name}@{pkg.version} does not match vendor.toml: expected {pkg.integrity}, got {actual}")
    staging = Path(tempfile.mkdtemp(prefix=f".{pkg.name}-", dir=_ensure(CACHE)))
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for name in pkg.files:
            member = archive.extractfile(f"package/{name}")
            if member is None:
                raise VendorError(f"{pkg.name}@{pkg.version} has no file {name}")
            _ensure((staging / name).parent)
            (staging / name).write_bytes(member.read())
    (staging / ".verified").write_text(pkg.integrity + "\n")
    if pkg.folder.exists():
        shutil.rmtree(pkg.folder)
    staging.rename(pkg.folder)


def _ensure(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder
