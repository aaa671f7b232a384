"""calc: every number the runbook shows, derived from model configs and card datasheets.

Pure Python and the standard library only, with no I/O at import, so the same source runs at
build time under CPython and in the reader's browser under Pyodide.
"""
