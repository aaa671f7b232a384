"""Tokens: what Llama 3's tokenizer makes of text (measured, never assumed) and what the
vocabulary costs the model that reads and writes it."""
from __future__ import annotations

import codecs
from dataclasses import dataclass, replace
from functools import lru_cache

from ..specs import token_counts
from ..specs.inputs import PromptText
from ..model.anatomy import count_parameters, rule_of_thumb
from ..specs.models import CATALOGUE, Model, short_key
from ..specs.precision import BF16, Precision
from ..core.arith import field, made_of, term
from ..core.units import (COUNT, GFLOP, GIB_HELD, KIB_HELD, PERCENT, RATIO_FINE, TOKENS, Result, Unit, given,
    grouped, plain)

# Llama 3's tokenizer: 128,000 byte-level BPE tokens (the ranks of tokenizer.model) and 256 ids
# reserved for special tokens after them, so config.json's vocab_size is 128,256.
# Source: meta-llama/llama3, llama/tokenizer.py (num_reserved_special_tokens = 256).
ORDINARY_TOKENS = 128_000
RESERVED_SPECIAL = 256
TOKENIZER_SOURCE = "https://github.com/meta-llama/llama3/blob/main/llama/tokenizer.py"
# The Llama 3 paper (Dubey et al., 2024, "The Llama 3 Herd of Models", section 3.1.1): 100K tokens
# from tiktoken plus 28K for non-English languages; compression on a sample of English data rose
# from 3.17 to 3.94 characters per token against Llama 2's tokenizer.
LLAMA_3_PAPER = "https://arxiv.org/abs/2407.21783"
PAPER_FROM_TIKTOKEN = 100_000
PAPER_ADDED = 28_000
PAPER_ENGLISH_BEFORE = 3.17
PAPER_ENGLISH_AFTER = 3.94
# Llama 2's vocabulary, from meta-llama/Llama-2-7b-hf config.json.
LLAMA_2_VOCAB = 32_000
LLAMA_2_SOURCE = "https://huggingface.co/meta-llama/Llama-2-7b-hf/blob/main/config.json"

# The chat template of Llama 3.1 Instruct, for one user message and no tools, as its
# tokenizer_config.json writes it (date_string defaults to "26 Jul 2024"; the message is trimmed).
CHAT_TEMPLATE_SOURCE = "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/tokenizer_config.json"
# Sent once per request, whatever the conversation's length.
SYSTEM_BLOCK = ("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"
                "Cutting Knowledge Date: December 2023\nToday Date: 26 Jul 2024\n\n<|eot_id|>")
USER_HEADER = "<|start_header_id|>user<|end_header_id|>\n\n"
END_OF_TURN = "<|eot_id|>"
# The cue the model continues from.
ASSISTANT_CUE = "<|start_header_id|>assistant<|end_header_id|>\n\n"
BEFORE_MESSAGE = SYSTEM_BLOCK + USER_HEADER
AFTER_MESSAGE = END_OF_TURN + ASSISTANT_CUE

PER_TOKEN = Unit("characters per token", 1, "characters per token", 2)
PER_WORD = Unit("tokens per word", 1, "tokens per word", 2)

# vLLM's sampler turns the head's logits to float32 before it samples.
LOGIT_BYTES = 4


def chat_prompt(message: str) -> str:
    """What the engine actually tokenises for one user message."""
    return BEFORE_MESSAGE + message.strip() + AFTER_MESSAGE


@dataclass(frozen=True)
class Sample:
    """A text in content/samples/, as the tokenizer measured it."""

    key: str
    label: str
    characters: int
    words: int | None  # None for a script written without spaces between words
    tokens: int

    @property
    def characters_per_token(self) -> Result:
        read = measured(self)
        return (term(read["characters"], f"{grouped(self.characters)} characters")
                / term(read["tokens"], f"{grouped(self.tokens)} tokens")).result(PER_TOKEN, "characters ÷ tokens")

    @property
    def tokens_per_word(self) -> Result | None:
        if not self.words:
            return None
        read = measured(self)
        return (term(read["tokens"], f"{grouped(self.tokens)} tokens")
                / term(read["words"], f"{grouped(self.words)} words")).result(PER_WORD, "tokens ÷ words")


@lru_cache(maxsize=64)
def measured(sample: Sample) -> dict[str, Result | None]:
    """The sample's measured counts as results, one object each, so what is divided by them links them."""
    return {
        "characters": given(sample.characters, COUNT, "characters in the sample"),
        "words": given(sample.words, COUNT, "words in the sample") if sample.words else None,
        "tokens": given(sample.tokens, TOKENS, "tokens the tokenizer made of it"),
    }

LABELS = {
    "english": "English prose",
    "french": "the same passage in French",
    "chinese": "the same passage in Chinese",
    "python": "Python source",
}


@lru_cache(maxsize=1)
def samples() -> dict[str, Sample]:
    return {key: Sample(key, LABELS[key], *token_counts.SAMPLES[key]) for key in LABELS}


def same_passage_cost(sample: Sample, english: Sample) -> Result:
    """How many times the English token count the same content costs in another language."""
    return (term(measured(sample)["tokens"], grouped(sample.tokens)) / term(measured(english)["tokens"], grouped(english.tokens))
            ).result(RATIO_FINE, "tokens of the passage ÷ tokens of the English passage")


def tokens_for_characters(characters: int, sample: Sample) -> Result:
    """A text of `characters` characters, at the sample's measured characters per token."""
    rate = sample.characters / sample.tokens
    value = max(round(characters / rate), 1 if characters else 0)
    floor_note = ", and a prompt is at least one token" if value > characters / rate + 0.5 else ""
    return Result(value, TOKENS, formula="characters ÷ characters per token",
                  worked=f"{grouped(characters)} ÷ {rate:.4f} ≈ {TOKENS.show(value)}{floor_note}",
                  inputs=made_of(sample.characters_per_token))


def template_overhead() -> dict[str, Result]:
    """Tokens the chat template adds, measured: the whole of it around the English sample, and its
    parts: the system block (once a request), the cue (once), and the framing of each message."""
    wrapped, bare, system, cue = token_counts.CHAT_TEMPLATE
    templated = given(wrapped, TOKENS, "tokens of the English sample in the chat template, measured")
    message = given(bare, TOKENS, "tokens of the English sample alone, measured")
    one = (term(templated, grouped(wrapped)) - term(message, grouped(bare))).result(
        TOKENS, "tokens of the templated message − tokens of the message")
    system_read = given(system, TOKENS, "the system block with its date, once a request")
    cue_read = given(cue, TOKENS, "the assistant header the model continues from, once a request")
    return {
        "one_message": one,
        "system": system_read,
        "cue": cue_read,
        "per_message": (term(one, grouped(one.value)) - term(system_read, grouped(system)) - term(cue_read, grouped(cue))
                        ).result(TOKENS, "all the template − system block − cue"),
    }


@dataclass(frozen=True)
class VocabularyCost:
    """What the vocabulary costs a model: two tables of vocab × hidden, and logits per position."""

    model: Model
    rows: Result
    embedding: Result
    head: Result
    share: Result
    held: Result
    logits_per_position: Result
    head_ops: Result


def vocabulary_cost(model: Model, precision: Precision = BF16) -> VocabularyCost:
    """The embedding table and the LM head are each vocab_size × hidden_size (one table if tied).
    Both stay in bf16 in quantised checkpoints, so `precision` only matters when it is wider."""
    vocab_read, hidden_read = field(model, "vocab_size", COUNT, "vocab_size"), field(model, "hidden_size")
    vocab, hidden = term(vocab_read, grouped(model.vocab_size)), term(hidden_read, grouped(model.hidden_size))
    total = count_parameters(model).total
    element = max(precision.bytes, BF16.bytes) if precision.quantised else precision.bytes
    embedding = (vocab * hidden).result(COUNT, "vocab_size × hidden_size")
    head = (Result(0, COUNT, formula="vocab_size × hidden_size, unless tied", worked="tied to the embedding: the same table",
                   inputs=made_of(embedding)) if model.tie_word_embeddings else
            (vocab * hidden).result(COUNT, "vocab_size × hidden_size, unless tied"))
    both = (term(embedding) + term(head)).result(COUNT, "embedding + head")
    tables = term(both, grouped(both.value))
    share = tables / term(total, grouped(total.value))
    held = tables * term(element, f"{plain(element)} B")
    logits = vocab * term(LOGIT_BYTES, f"{LOGIT_BYTES} B")
    return VocabularyCost(
        model=model,
        rows=vocab_read,
        embedding=embedding,
        head=head,
        share=share.result(PERCENT, "(embedding + head) ÷ all parameters", shown=PERCENT.show(share.value, 2)),
        held=held.result(GIB_HELD, "(embedding + head) × bytes per parameter",
                         shown=f"{grouped(held.value)} B = {GIB_HELD.show(held.value)}"),
        logits_per_position=logits.result(KIB_HELD, "vocab_size × 4 B (float32 logits)",
                                          shown=f"{grouped(logits.value)} B = {KIB_HELD.show(logits.value)}"),
        head_ops=(term(2) * vocab * hidden).result(GFLOP, "2 × vocab_size × hidden_size, per sampled position"),
    )


def logits_for_positions(model: Model, positions: int) -> Result:
    """Float32 logits for every position of a sequence: what asking for the prompt's log-probs costs."""
    expr = (term(positions) * term(field(model, "vocab_size"), grouped(model.vocab_size))
            * term(LOGIT_BYTES, f"{LOGIT_BYTES} B"))
    return expr.result(GIB_HELD, "positions × vocab_size × 4 B", shown=f"{grouped(expr.value)} B = {GIB_HELD.show(expr.value)}")


@dataclass(frozen=True)
class StreamStep:
    """One token of a streamed reply: its bytes, what can be shown, and what must wait."""

    token: int
    piece: bytes
    shown: str
    held: bytes


def stream(pieces: tuple[tuple[int, bytes], ...]) -> tuple[StreamStep, ...]:
    """Incremental detokenisation: each token's bytes go into a UTF-8 decoder, which releases only
    whole characters; the bytes of a character split across tokens wait for the next token."""
    decoder = codecs.getincrementaldecoder("utf-8")()
    steps = []
    for token, piece in pieces:
        shown = decoder.decode(piece)
        held = decoder.getstate()[0]
        steps.append(StreamStep(token, piece, shown, held))
    return tuple(steps)


def stream_example() -> tuple[StreamStep, ...]:
    text, pieces = token_counts.STREAM
    return stream(tuple((token, bytes(piece)) for token, piece in pieces))


def sample_figures(sample: Sample, english: Sample) -> dict[str, Result | None]:
    return {
        "label": sample.label,
        **measured(sample),
        "characters_per_token": sample.characters_per_token,
        "tokens_per_word": sample.tokens_per_word,
        "versus_english": same_passage_cost(sample, english),
    }


def section(stack, text: PromptText) -> dict[str, object]:
    """Document 01's figures on a stack: the measured samples, the prompt `text` as the stack's model
    tokenizes it, and what the model's vocabulary costs."""
    from ..engine import kvcache, timing
    from ..specs.models import CATALOGUE
    measured = samples()
    english = measured["english"]
    prompt = tokens_for_characters(text.characters, measured[text.kind])
    count = int(prompt.value)
    vocab = stack.model.vocab_size
    characters = given(text.characters, COUNT, "characters in the prompt")
    prompt = replace(prompt, inputs=made_of(characters, *prompt.inputs))
    vocab_read = field(stack.model, "vocab_size", COUNT, "vocab_size")
    llama2_vocab = given(LLAMA_2_VOCAB, COUNT, "Llama 2's vocab_size")
    return {
        "ordinary": given(ORDINARY_TOKENS, COUNT, "BPE tokens in tokenizer.model"),
        "reserved": given(RESERVED_SPECIAL, COUNT, "ids reserved for special tokens"),
        "vocab": vocab_read,
        "llama2_vocab": llama2_vocab,
        "growth": (term(vocab_read, grouped(vocab)) / term(llama2_vocab, grouped(LLAMA_2_VOCAB))).result(
            RATIO_FINE, "vocab_size ÷ Llama 2's"),
        "samples": {key: sample_figures(sample, english) for key, sample in measured.items()},
        "paper": {
            "from_tiktoken": given(PAPER_FROM_TIKTOKEN, COUNT, "tokens taken from tiktoken (Llama 3 paper)"),
            "added": given(PAPER_ADDED, COUNT, "tokens added for other languages (Llama 3 paper)"),
            "before": given(PAPER_ENGLISH_BEFORE, PER_TOKEN, "Llama 2's tokenizer on Meta's English sample"),
            "after": given(PAPER_ENGLISH_AFTER, PER_TOKEN, "Llama 3's tokenizer on Meta's English sample"),
        },
        "template": template_overhead(),
        "prompt": {
            "characters": characters,
            "kind": LABELS[text.kind],
            "tokenizer": ("Llama 3's tokenizer, this model's own" if vocab == ORDINARY_TOKENS + RESERVED_SPECIAL else
                          f"Llama 3's rate: {stack.model.name} has its own tokenizer ({grouped(vocab)} ids), "
                          "so its count will differ"),
            "tokens": prompt,
            "cache": kvcache.bytes_for_tokens(kvcache.bytes_per_token(stack.model, stack.kv_precision), count),
            "prefill": timing.prefill_time(stack, max(count, 1)),
        },
        "cost": vocabulary_cost(stack.model, stack.weight_precision),
        "logits_at_limit": logits_for_positions(stack.model, stack.context_limit),
        "llama2_cost": vocabulary_cost(replace(stack.model, vocab_size=LLAMA_2_VOCAB), stack.weight_precision),
        "small_tied": vocabulary_cost(CATALOGUE["llama-3.2-1b"]),
        "small_untied": vocabulary_cost(replace(CATALOGUE["llama-3.2-1b"], tie_word_embeddings=False)),
        "stream": stream_groups(stream_example()),
        "stream_text": token_counts.STREAM[0],
    }


SHARE_CURVE_VOCABS = (32_000, 50_257, 65_536, 100_277, 128_256, 152_064, 202_048, 256_000)


def vocabulary_share_curves(model: Model) -> list[dict]:
    """The embedding and head's share of all parameters as the vocabulary grows, for this model's
    other shapes, untied and tied."""
    curves = []
    for tied, name in ((False, f"{model.name}, embedding and head separate"), (True, f"{model.name}, tied (one table)")):
        shares = [100 * vocabulary_cost(replace(model, vocab_size=v, tie_word_embeddings=tied)).share.value
                  for v in SHARE_CURVE_VOCABS]
        curves.append({"name": name, "x": list(SHARE_CURVE_VOCABS), "y": shares})
    return curves


def stream_groups(steps: tuple[StreamStep, ...]) -> tuple[tuple[StreamStep, ...], ...]:
    """The stream in the figure's steps: a token that finds bytes waiting, or leaves some, is a step
    of its own; a run of tokens that are whole characters shares one."""
    groups: list[list[StreamStep]] = []
    waiting = b""
    previous_whole = False
    for step in steps:
        whole = not waiting and not step.held
        if whole and previous_whole:
            groups[-1].append(step)
        else:
            groups.append([step])
        waiting, previous_whole = step.held, whole
    return tuple(tuple(group) for group in groups)


def family_sizes() -> dict[str, dict[str, Result]]:
    """Each Llama 3.1 size's parameters, the rule of thumb against them, and its vocabulary tables' share."""
    return {short_key(key): {"total": count_parameters(model).total, "rule": rule_of_thumb(model).coefficient,
                                 "short": rule_of_thumb(model).short_of_total,
                                 "tables": vocabulary_cost(model).share, "table": vocabulary_cost(model).embedding}
            for key, model in CATALOGUE.items() if key.startswith("llama-3.1")}
