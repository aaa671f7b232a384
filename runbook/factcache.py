"""Every fact calc derives, listed once per version of calc and kept on disk.

Listing every fact (calc.core.present.leaves) computes every section of calc's namespace,
document 15's simulation included: seconds, and the larger part of a build. The typed-number
guard and the popovers' provenance need the whole list, but it changes only when calc does, so it
is kept in .cache/ keyed by a hash of every Python file under calc/ (calc reads no other file) and
the Python version: a build after a change to content or templates, a one-document build and a
rebuild under --serve read it back. The runbook's own counts (`runbook.documents`…) come from
content, so they are never kept: they are listed fresh, after calc's, where a full listing of the
namespace puts them.
"""
from __future__ import annotations

import pickle
import sys
from pathlib import Path
from typing import Any

from calc.core.present import leaves

from . import vendor
from .register import Namespace

CALC = Path(__file__).resolve().parent.parent / "calc"
OWN = "runbook"  # the namespace's section that comes from content


def calc_source() -> list[bytes]:
    """What the facts are made from: every file of calc's source, by name, and the Python running it."""
    return [sys.version.encode()] + [p.relative_to(CALC).as_posix().encode() + b"\0" + p.read_bytes()
                                     for p in sorted(CALC.rglob("*.py"))]


def every_fact(namespace: Namespace) -> list[tuple[str, Any]]:
    """leaves(namespace), calc's part read from the cache when calc is unchanged."""
    made = vendor.cached("facts.pickle", calc_source(), lambda: pickle.dumps(
        [fact for fact in leaves(namespace) if fact[0].split(".", 1)[0] != OWN], protocol=pickle.HIGHEST_PROTOCOL),
        only_latest=True)
    return pickle.loads(made) + list(leaves({OWN: namespace[OWN]}))
