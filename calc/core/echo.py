"""Quoting the reader's own input back in a message: short, and with nothing hidden."""
from __future__ import annotations

import json
import re

LONGEST_ECHO = 40
_HF_CACHE = re.compile(r"models--([^/]+?)--([^/]+)")


def visible(text: str) -> str:
    """Characters that do not print (direction marks, zero-width spaces, controls) as U+XXXX."""
    return "".join(c if c.isprintable() else f"⟨U+{ord(c):04X}⟩" for c in text)


def excerpt(value: object, limit: int = LONGEST_ECHO) -> str:
    """At most `limit` characters of a value, then how many more there were. Text is quoted as
    typed; anything else is written as JSON writes it (true, null, "4096"), as the reader pasted it."""
    text = value if isinstance(value, str) else as_json(value)
    if len(text) <= limit:
        return visible(text)
    more = len(text) - limit
    return f"{visible(text[:limit])}… ({more:,} more {'character' if more == 1 else 'characters'})"


def as_json(value: object) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        return repr(value)


def hidden_characters(text: str) -> list[str]:
    return [f"U+{ord(c):04X}" for c in dict.fromkeys(text) if not c.isprintable()]


def model_name(name_or_path: str) -> str:
    """A config's `_name_or_path` as a name: a Hugging Face cache path becomes owner/name."""
    found = _HF_CACHE.search(name_or_path)
    return excerpt(f"{found.group(1)}/{found.group(2)}" if found else name_or_path, 60)
