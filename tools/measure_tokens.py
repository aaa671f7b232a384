#!/usr/bin/env python3
"""Write calc/specs/token_counts.py: document 01's token counts, measured on content/samples/ by the
Llama 3 tokenizer the page carries (llama3-tokenizer-js under Node). Run it after changing a
sample text or the pinned tokenizer; the build stops until you do."""
from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from runbook import tokens  # noqa: E402


def main() -> int:
    measured = tokens.measure(ROOT / "content" / "samples")
    tokens.COUNTS.write_text(tokens.module_text(measured), encoding="utf-8")
    for key, (characters, words, count) in measured["SAMPLES"].items():
        print(f"{key}: {characters:,} characters, {words or '—'} words, {count:,} tokens")
    print(f"wrote {tokens.COUNTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
