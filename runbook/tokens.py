"""Token counts for document 01, measured by the Llama 3 tokenizer the page carries.

calc/ never runs the tokenizer (it is JavaScript, and calc is pure Python); it reads the counts
from calc/specs/token_counts.py. That file is written by `python tools/measure_tokens.py` from the
texts in content/samples/, and every build measures those texts again with the pinned
llama3-tokenizer-js under Node and stops if the file is stale.
"""
from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

from calc.specs import token_counts
from calc.documents.tokens import AFTER_MESSAGE, ASSISTANT_CUE, BEFORE_MESSAGE, LABELS, SYSTEM_BLOCK, chat_prompt

from . import vendor

ROOT = Path(__file__).resolve().parent.parent
ENCODER = Path(__file__).with_name("tokenize.mjs")
COUNTS = ROOT / "calc" / "token_counts.py"
BUNDLE = ("llama3-tokenizer-js", "bundle/llama3-tokenizer-with-baked-data.js")
# A reply to stream in the figure: the llama emoji's four UTF-8 bytes arrive in three tokens.
STREAM_TEXT = "Llamas 🦙 love naïve café"
UNSPACED = {"chinese"}
# What the page's tokenizer holds before the reader types: plain words, a number, accents, an emoji.
DEFAULT_TEXT = "Serving Llama 3.1 8B on one H100: 12,345 tokens a second? Naïve maths 🦙 says no."
LONGEST_TEXT = 50_000  # characters the page tokenises at once (the library's encoder holds up to here)


# The library writes Llama 3's split pattern with \s, which JavaScript reads as including U+FEFF and
# excluding U+0085; tiktoken and Hugging Face's tokenizers (Rust) read it as Unicode's White_Space,
# which is the other way round. The page and the build use the library with \s spelt out as
# White_Space, so all three agree (tests/test_tokens.py holds both characters in its corpus).
PATTERN_AS_PUBLISHED = r'| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+"'
PATTERN_AS_RUST_READS_IT = (r'| ?[^\\p{White_Space}\\p{L}\\p{N}]+[\\r\\n]*|\\p{White_Space}*[\\r\\n]+|'
                            r'\\p{White_Space}+(?!\\P{White_Space})|\\p{White_Space}+"')


def tokenizer_source() -> bytes:
    """The pinned llama3-tokenizer-js with its split pattern's whitespace read as Rust reads it."""
    source = vendor.read_bytes(*BUNDLE).decode("utf-8")
    if source.count(PATTERN_AS_PUBLISHED) != 1:
        raise vendor.VendorError(f"{BUNDLE[0]} no longer writes its split pattern as expected; check runbook/tokens.py")
    return source.replace(PATTERN_AS_PUBLISHED, PATTERN_AS_RUST_READS_IT).encode("utf-8")


def tokenizer_path() -> Path:
    """The adjusted tokenizer as a file, for Node."""
    data = tokenizer_source()
    path = vendor.CACHE / "made" / f"llama3-tokenizer-{hashlib.sha256(data).hexdigest()[:24]}.mjs"
    if not path.is_file():
        vendor.write_atomically(path, data)
    return path


class StaleCounts(Exception):
    """calc/specs/token_counts.py disagrees with what the tokenizer measures now."""


def encode(texts: dict[str, str]) -> dict[str, dict]:
    """Each text's token ids and the bytes of each token, from the pinned tokenizer under Node."""
    bundle = tokenizer_path()
    request = json.dumps(texts, sort_keys=True, ensure_ascii=False).encode("utf-8")
    recipe = [bundle.read_bytes(), ENCODER.read_bytes(), request]
    return json.loads(vendor.cached("tokens.json", recipe, lambda: _run_node(bundle, request)))


def _run_node(bundle: Path, request: bytes) -> bytes:
    node = shutil.which("node")
    if node is None:
        raise vendor.VendorError("measuring document 01's samples needs Node.js (it comes with npm): install it, "
                                 "or copy a .cache/vendor folder from a machine that has it")
    result = subprocess.run([node, str(ENCODER), str(bundle)], input=request, capture_output=True)
    if result.returncode != 0:
        raise vendor.VendorError(f"the Llama 3 tokenizer failed under Node: {result.stderr.decode()[-600:]}")
    return result.stdout


def sample_texts(samples: Path) -> dict[str, str]:
    return {key: (samples / f"{key}.txt").read_text(encoding="utf-8").rstrip("\n") for key in LABELS}


def measure(samples: Path) -> dict[str, object]:
    """What calc/specs/token_counts.py should say for the texts in `samples`."""
    texts = sample_texts(samples)
    encoded = encode({**texts, "templated": chat_prompt(texts["english"]), "system": SYSTEM_BLOCK,
                      "cue": ASSISTANT_CUE, "stream": STREAM_TEXT})
    counts = {key: (len(text), None if key in UNSPACED else len(text.split()), len(encoded[key]["ids"]))
              for key, text in texts.items()}
    stream = tuple(zip(encoded["stream"]["ids"], (tuple(p) for p in encoded["stream"]["pieces"])))
    return {
        "SAMPLES": counts,
        "CHAT_TEMPLATE": (len(encoded["templated"]["ids"]), counts["english"][2], len(encoded["system"]["ids"]),
                          len(encoded["cue"]["ids"])),
        "STREAM": (STREAM_TEXT, stream),
    }


def module_text(measured: dict[str, object]) -> str:
    lines = ['"""Token counts measured by Llama 3\'s tokenizer (llama3-tokenizer-js, pinned in vendor.toml) on the',
             "texts in content/samples/. Written by tools/measure_tokens.py; every build measures again and stops",
             'if this file is stale. Never edit by hand."""', "",
             "# sample: (characters, words or None where words are not spaced, tokens)",
             f"SAMPLES = {measured['SAMPLES']!r}", "",
             "# (tokens of the English sample in Llama 3.1's chat template, tokens of the sample alone,",
             "#  tokens of the template's system block, tokens of its assistant cue)",
             f"CHAT_TEMPLATE = {measured['CHAT_TEMPLATE']!r}", "",
             "# (text, ((token id, bytes of the token), ...))",
             f"STREAM = {measured['STREAM']!r}", ""]
    return "\n".join(lines)


def check(samples: Path) -> None:
    """Stop the build if calc/specs/token_counts.py is not what the tokenizer measures now."""
    measured = measure(samples)
    recorded = {"SAMPLES": token_counts.SAMPLES, "CHAT_TEMPLATE": token_counts.CHAT_TEMPLATE, "STREAM": token_counts.STREAM}
    for name, value in measured.items():
        if recorded[name] != value:
            raise StaleCounts(f"calc/specs/token_counts.py is stale: its {name} is not what the tokenizer measures on "
                              f"{samples} now; run `python tools/measure_tokens.py`")


def tokenizer_view(text: str) -> dict[str, object]:
    """The tokenizer component's build-time state: pieces as the page draws them, and the limits."""
    encoded = encode({"text": text})["text"]
    return {
        "text": text,
        "pieces": [piece_view(token, bytes(piece)) for token, piece in zip(encoded["ids"], encoded["pieces"])],
        "characters": len(text),
        "words": len(text.split()),
        "before": BEFORE_MESSAGE,
        "after": AFTER_MESSAGE,
        "longest": LONGEST_TEXT,
    }


INVISIBLE = {0x00AD, 0x0085, 0x061C, 0x180E, *range(0x200B, 0x2010), *range(0x202A, 0x202F), *range(0x2060, 0x2065), 0xFEFF}


def visible(text: str) -> str:
    """Whitespace and invisible characters as the page draws them (tokenizer.js does the same)."""
    out = []
    for ch in text:
        code = ord(ch)
        out.append("·" if ch == " " else "↵" if ch == "\n" else "→" if ch == "\t" else chr(0x2400 + code) if code < 0x20
                   else "␡" if code == 0x7F else f"⟨U+{code:04X}⟩" if code in INVISIBLE else ch)
    return "".join(out)


def piece_view(token: int, piece: bytes) -> dict[str, object]:
    """A token as the page shows it: its text with whitespace made visible, or its bytes in hex
    when they are not whole characters on their own (tokenizer.js draws the same)."""
    try:
        text = piece.decode("utf-8")
        whole = True
    except UnicodeDecodeError:
        text = " ".join(f"{b:02X}" for b in piece)
        whole = False
    if whole:
        text = visible(text)
    return {"id": token, "text": text, "whole": whole, "special": token >= 128_000,
            "bytes": " ".join(f"{b:02X}" for b in piece)}
