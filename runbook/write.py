"""The write stage: all or nothing, so a failed build never leaves a half-written site."""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path


def write_site(outputs: dict[str, bytes], out: Path, replace_all: bool) -> None:
    """Write every file beside `out`, then swap it into place in one rename per file or folder."""
    out = out.resolve()
    out.parent.mkdir(parents=True, exist_ok=True)
    if not replace_all and out.is_dir():
        for name, data in outputs.items():
            _replace_file(out / name, data)
        return
    staging = Path(tempfile.mkdtemp(prefix=f".{out.name}-", dir=out.parent))
    try:
        for name, data in outputs.items():
            (staging / name).write_bytes(data)
        os.chmod(staging, 0o755)
        retired = None
        if out.exists():
            retired = out.with_name(f".{out.name}-old-{os.getpid()}")
            out.rename(retired)
        staging.rename(out)
        if retired:
            shutil.rmtree(retired)
    finally:
        if staging.exists():
            shutil.rmtree(staging)


def _replace_file(path: Path, data: bytes) -> None:
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}-", dir=path.parent)
    with os.fdopen(handle, "wb") as stream:
        stream.write(data)
    os.chmod(temporary, 0o644)
    os.replace(temporary, path)
