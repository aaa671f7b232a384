"""Document 01: Llama 3's tokenizer as the page carries it (llama3-tokenizer-js), checked against an
independent encoder (tiktoken, given Llama 3's split pattern and merge ranks) at build time under
Node and in Chromium; the figures it measures; the tokens calculator; the tokenizer against a
hostile reader."""
from __future__ import annotations

import base64
import re

import pytest
import tiktoken

import build
from arithmetic import check
from calc.specs import token_counts
from calc.documents import tokens
from calc.calculators import TOKENS
from calc.facts import facts
from calc.specs.models import CATALOGUE
from calc.core.present import leaves
from calc.core.units import Result
from conftest import ROOT, Calculator, booted_page
from runbook import tokens as measuring
from runbook import vendor

DOC = "01-tokens.html"
TOKENIZER = "[data-tokenizer]"

# Llama 3's pre-tokenizer pattern, from meta-llama/llama3 llama/tokenizer.py.
LLAMA3_PATTERN = (r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|"
                  r"\s*[\r\n]+|\s+(?!\S)|\s+")
SPECIALS = (["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>", "<|reserved_special_token_1|>",
             "<|finetune_right_pad_id|>", "<|reserved_special_token_2|>", "<|start_header_id|>", "<|end_header_id|>",
             "<|eom_id|>", "<|eot_id|>", "<|python_tag|>"] + [f"<|reserved_special_token_{i}|>" for i in range(3, 248)])

CORPUS = {
    "prose": "The quick brown fox jumps over the lazy dog. It wasn't me; they'll say it's you!",
    "code": "def f(x: int) -> int:\n    return x ** 2  # square\n\nprint({k: v for k, v in zip('ab', [1, 2])})\n",
    "numbers": "1 12 123 1234 12345 1234567 3.14159 -42 1e-9 0x1F 2,000,000 ٣٤٥",
    "whitespace": "a  b   c\t\td\n\n\n  e \r\n f      \n",
    "emoji": "Llamas 🦙 love 🤖🧠 and 👩🏽‍💻 flags 🇫🇷🇯🇵 ❤️",
    "accents": "naïve café, crème brûlée, Ångström, Zürich, São Paulo, Dvořák",
    "cjk": "数学很难。日本語のテキスト。한국어 문장입니다.",
    "mixed": "«Bonjour» — said the 猫. Ünïcödé\u200b zero\u00a0width",
    "template": tokens.chat_prompt("What is a KV cache?"),
    # JavaScript's \s and Rust's differ on exactly these two: a byte-order mark and NEL.
    "bom and nel": "\ufeffHello \ufeff> \ufeff's \u0085 3 a\u0085b",
}


def ranks_from_bundle() -> dict[bytes, int]:
    """The merge ranks the page's tokenizer carries, read out of its file: id = rank, each token's
    characters mapped back to bytes through GPT-2's byte-level alphabet."""
    text = vendor.path(*measuring.BUNDLE).read_text(encoding="utf-8")
    vocab = base64.b64decode(re.search(r'llama_vocab_base64\s*=\s*"([^"]+)"', text).group(1)).decode("utf-8").split("\n")
    printable = [*range(33, 127), *range(161, 173), *range(174, 256)]
    byte_of, extra = {}, 0
    for b in range(256):
        if b in printable:
            byte_of[chr(b)] = b
        else:
            byte_of[chr(256 + extra)] = b
            extra += 1
    return {bytes(byte_of[c] for c in piece): rank for rank, piece in enumerate(vocab)}


@pytest.fixture(scope="module")
def reference_encoder() -> tiktoken.Encoding:
    ranks = ranks_from_bundle()
    assert len(ranks) == tokens.ORDINARY_TOKENS
    return tiktoken.Encoding("llama3", pat_str=LLAMA3_PATTERN, mergeable_ranks=ranks,
                             special_tokens={s: tokens.ORDINARY_TOKENS + i for i, s in enumerate(SPECIALS)})


def test_the_vocabulary_is_meta_s():
    """Meta's own tokenizer test (meta-llama/llama3, llama/test_tokenizer.py): "This is a test
    sentence." encodes to [128000, 2028, 374, 264, 1296, 11914, 13, 128001] with BOS and EOS; the
    ranks tiktoken is given come out of the page's bundle, so this checks the bundle's vocabulary
    against a source that is not the bundle."""
    assert measuring.encode({"meta": "This is a test sentence."})["meta"]["ids"] == [2028, 374, 264, 1296, 11914, 13]


def test_build_time_encodings_match_tiktoken(reference_encoder):
    encoded = measuring.encode(CORPUS)
    for name, text in CORPUS.items():
        assert encoded[name]["ids"] == reference_encoder.encode(text, allowed_special="all"), name
        assert b"".join(bytes(p) for p in encoded[name]["pieces"]) == text.encode("utf-8"), name


def test_samples_are_counted_by_the_same_encoder(reference_encoder):
    texts = measuring.sample_texts(ROOT / "content" / "samples")
    for key, text in texts.items():
        characters, words, count = token_counts.SAMPLES[key]
        assert (characters, count) == (len(text), len(reference_encoder.encode(text)))
        assert words == (None if key in measuring.UNSPACED else len(text.split()))
    wrapped, bare, _, _ = token_counts.CHAT_TEMPLATE
    assert wrapped == len(reference_encoder.encode(tokens.chat_prompt(texts["english"]), allowed_special="all"))


def test_figures_follow_the_counts():
    section = facts()["tokens"]
    english = token_counts.SAMPLES["english"]
    assert section["samples"]["english"]["characters_per_token"].value == english[0] / english[2]
    assert section["vocab"].value == tokens.ORDINARY_TOKENS + tokens.RESERVED_SPECIAL == 128_256
    assert section["cost"].embedding.value == section["cost"].head.value == 128_256 * 4096 == 525_336_576
    assert section["cost"].share.value == pytest.approx(2 * 525_336_576 / 8_030_261_248)
    assert section["cost"].logits_per_position.value == 128_256 * 4
    assert section["logits_at_limit"].value == 8192 * 128_256 * 4
    assert section["prompt"]["tokens"].value == round(9000 / (english[0] / english[2]))
    tied = tokens.vocabulary_cost(CATALOGUE["llama-3.2-1b"])
    assert tied.head.value == 0 and tied.share.value == pytest.approx(128_256 * 2048 / 1_235_814_400)


def test_streaming_holds_back_a_split_character():
    steps = tokens.stream_example()
    text, _ = token_counts.STREAM
    assert "".join(s.shown for s in steps) == text
    held = [s.held for s in steps if s.held]
    assert held and all(not h.decode("utf-8", "ignore") for h in held), "only incomplete characters wait"
    assert not any("\ufffd" in s.shown for s in steps)
    groups = tokens.stream_groups(steps)
    assert sum(len(g) for g in groups) == len(steps)


def test_every_worked_line_on_the_page_adds_up():
    for path, value in leaves(facts()["tokens"]):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_a_changed_sample_stops_the_build(content_copy, tmp_path):
    (content_copy / "samples" / "english.txt").write_text("A different passage altogether.\n", encoding="utf-8")
    with pytest.raises(measuring.StaleCounts, match="measure_tokens.py"):
        build.build(content_copy, tmp_path / "site", only="01")


def test_without_node_the_build_says_what_to_do(monkeypatch):
    monkeypatch.setattr(measuring.shutil, "which", lambda name: None)
    with pytest.raises(vendor.VendorError, match="Node.js"):
        measuring._run_node(vendor.path(*measuring.BUNDLE), b"{}")


# ---- In Chromium, over file://, with the network blocked.

@pytest.fixture(scope="module")
def tokens_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "01", "tokens")


def test_the_page_tokenizer_matches_tiktoken(tokens_page, reference_encoder):
    page = tokens_page.page
    for name, text in CORPUS.items():
        ids = page.evaluate("text => window.runbookTokenizer.encode(text)", text)
        assert ids == reference_encoder.encode(text, allowed_special="all"), name


def type_text(page, text: str) -> None:
    """Type, then wait until the tokenizer has answered this text (computed, or refused it)."""
    page.fill(f"{TOKENIZER} textarea", text)
    page.wait_for_function("() => ['computed', 'invalid'].includes(document.querySelector('[data-tokenizer]').dataset.state)",
                           timeout=30_000)


def test_typing_shows_pieces_counts_and_the_template(tokens_page, reference_encoder):
    page = tokens_page.page
    text = "Hello world! Llamas 🦙 love 12345."
    type_text(page, text)
    count = len(reference_encoder.encode(text))
    assert page.text_content(f"{TOKENIZER} [data-tok=tokens]") == str(count)
    assert page.locator(f"{TOKENIZER} [data-tok=pieces] .tok-piece").count() == count
    assert page.locator(f"{TOKENIZER} [data-tok=pieces] .tok-partial").count() == 3, "the llama's four bytes span three tokens, none a whole character"
    page.check(f"{TOKENIZER} input[name=template]")
    page.wait_for_function("() => !document.querySelector('.tok-template-only').hidden")
    wrapped = len(reference_encoder.encode(tokens.chat_prompt(text), allowed_special="all"))
    assert page.text_content(f"{TOKENIZER} [data-tok=tokens]") == f"{wrapped:,}"
    assert page.text_content(f"{TOKENIZER} [data-tok=template]") == str(wrapped - count)
    page.uncheck(f"{TOKENIZER} input[name=template]")


def test_pasted_markup_is_only_text(tokens_page):
    page = tokens_page.page
    type_text(page, '<img src=x onerror="window.pwned=1"><script>window.pwned=2</script>')
    assert page.evaluate("() => window.pwned") is None
    assert page.locator(f"{TOKENIZER} [data-tok=pieces] img, {TOKENIZER} [data-tok=pieces] script").count() == 0


def test_too_long_a_paste_gets_a_message_and_keeps_the_figures(tokens_page):
    page = tokens_page.page
    type_text(page, "short text")
    before = page.text_content(f"{TOKENIZER} [data-tok=tokens]")
    page.fill(f"{TOKENIZER} textarea", "数" * 200_000)
    page.wait_for_function("() => document.querySelector('[data-tokenizer] .tok-error').textContent !== ''")
    assert "200,000 characters" in page.text_content(f"{TOKENIZER} .tok-error")
    assert page.get_attribute(f"{TOKENIZER} textarea", "aria-invalid") == "true"
    assert page.text_content(f"{TOKENIZER} [data-tok=tokens]") == before
    type_text(page, "数" * 50_000)
    assert page.text_content(f"{TOKENIZER} .tok-error") == ""
    assert page.locator(f"{TOKENIZER} [data-tok=pieces] .tok-piece").count() == 2000, "drawing is capped; counting is not"


def test_one_unbroken_run_too_long_to_encode_is_refused_in_words(tokens_page):
    page = tokens_page.page
    type_text(page, "short text")
    page.fill(f"{TOKENIZER} textarea", "\U000F0000" * 40_000)
    page.wait_for_function("() => document.querySelector('[data-tokenizer] .tok-error').textContent !== ''", timeout=30_000)
    assert "too many tokens to encode at once" in page.text_content(f"{TOKENIZER} .tok-error")
    assert page.get_attribute(f"{TOKENIZER} textarea", "aria-invalid") == "true"
    assert page.get_attribute(TOKENIZER, "data-stale") is not None, "the last figures are marked as not this text's"
    type_text(page, "short text")
    assert page.get_attribute(TOKENIZER, "data-stale") is None


CALC = Calculator("tokens")


def test_the_tokens_calculator_follows_cpython(tokens_page):
    page = tokens_page.page
    inputs = {"characters": "20000", "kind": "chinese", "model": "llama-3.2-1b"}
    assert CALC.set(page, **inputs) == "computed"
    expected = TOKENS.run(inputs, None, list(CALC.live(page)), [], False)
    shown = CALC.live(page)
    for ref, text in shown.items():
        assert text == expected["refs"][ref][0], ref


@pytest.mark.parametrize("field, value", [("characters", "-5"), ("characters", "9,5"), ("characters", "lots"),
                                          ("characters", "10000000")])
def test_bad_input_gets_a_message(tokens_page, field, value):
    page = tokens_page.page
    CALC.set(page, characters="9000", kind="english", model="llama-3.1-8b")
    expected = TOKENS.run({field: value}, None, [], [], False)["errors"][field]
    CALC.refuse(page, field, value, expected)
    CALC.set(page, characters="9000")
