"""Document 00: every track's headline for the reference stack, carried to cards and dollars, checked
against values derived here by hand from the model's config and the card's datasheet entries (read
from calc's tables, never retyped); the start calculator in CPython and in Chromium over file://,
with its bad-input battery."""
from __future__ import annotations

import json
import math
import re

import pytest

from arithmetic import check
from calc.calculators import START
from calc.facts import facts
from calc.engine.launch import default_max_num_seqs
from calc.specs.models import LLAMA_3_1_8B_CONFIG
from calc.core.present import leaves
from calc.specs.stack import REFERENCE
from calc.core.units import Result
from conftest import Calculator, booted_page

import by_hand

MODEL, CARD = REFERENCE.model, REFERENCE.card
L, H, FFN, VOCAB = MODEL.num_hidden_layers, MODEL.hidden_size, MODEL.intermediate_size, MODEL.vocab_size
KV_WIDTH = MODEL.num_key_value_heads * MODEL.head_dim
BLOCKS = L * (2 * H * H + 2 * H * KV_WIDTH + 3 * H * FFN)   # q, o, k, v and the SwiGLU's three matrices
HEAD = VOCAB * H
NORMS = L * 2 * H + H
PARAMS = BLOCKS + NORMS + 2 * HEAD                           # untied: embedding and output head
PER_TOKEN = 2 * L * KV_WIDTH * 2                              # key and value, every layer, bf16
PER_POSITION = 4 * L * H                                      # attention operations per attended position
READ = 2 * (BLOCKS + HEAD + NORMS)                            # every weight but the embedding, once a step
BLOCK = REFERENCE.block_size
PROMPT, OUTPUT = REFERENCE.workload.prompt, REFERENCE.workload.output
RATE = REFERENCE.traffic.requests_per_s
SEQUENCE_CAP = default_max_num_seqs(CARD)  # vLLM's max_num_seqs default for this card, from calc's table


def budget_tokens() -> int:
    return by_hand.token_capacity(by_hand.kv_budget())


def prefill(tokens: int) -> float:
    return by_hand.prefill_s(tokens)


def step(batch: int, held: int) -> float:
    return by_hand.decode_step_s(batch, held)


def request_seconds(batch: int, prompt: int = PROMPT, output: int = OUTPUT) -> float:
    return prefill(prompt) + (output - 1) * step(batch, prompt + output // 2)


def decode_batch(rate: float, admitted: int, prompt: int = PROMPT, output: int = OUTPUT) -> int:
    """Counted up one sequence at a time: the first batch whose own request time puts no more than
    that many requests in flight, or the cache's or the scheduler's cap if none below it does."""
    cap = min(admitted, SEQUENCE_CAP)
    for batch in range(1, cap + 1):
        if rate * request_seconds(batch, prompt, output) <= batch:
            return batch
    return cap


@pytest.fixture(scope="module")
def start():
    return facts()["start"]


def test_the_model_is_read_by_hand():
    assert PARAMS == facts()["params"].total.value
    assert PER_TOKEN == 131_072


def test_cache_and_users(start):
    assert start["per_token"].value == PER_TOKEN
    assert start["per_user"].value == math.ceil(REFERENCE.context_limit / BLOCK) * BLOCK * PER_TOKEN
    capacity = budget_tokens()
    assert start["users_worst"].value == capacity // (math.ceil(REFERENCE.context_limit / BLOCK) * BLOCK)
    assert start["users_paged"].value == capacity // (math.ceil((PROMPT + OUTPUT) / BLOCK) * BLOCK)


def test_the_two_phases_and_the_roof(start):
    batch = decode_batch(RATE, int(start["users_paged"].value))
    assert start["batch"].value == batch
    assert start["prefill"].value == pytest.approx(prefill(PROMPT))
    assert start["step"].time.value == pytest.approx(step(batch, PROMPT + OUTPUT // 2))
    assert start["floor"].value == pytest.approx((READ + (PROMPT + OUTPUT // 2) * PER_TOKEN) / (CARD.hbm_tb_per_s * 1e12))
    assert start["ridge"].value == pytest.approx(CARD.bf16_dense_tflops / CARD.hbm_tb_per_s)


def test_cards_and_dollars(start):
    batch = decode_batch(RATE, int(start["users_paged"].value))
    seconds = step(batch, PROMPT + OUTPUT // 2)
    request = prefill(PROMPT) + (OUTPUT - 1) * seconds
    load = RATE * prefill(PROMPT) + RATE * (OUTPUT - 1) / (batch / seconds)
    fleet = start["fleet"]
    assert fleet.request.value == pytest.approx(request)
    assert fleet.in_flight.value == pytest.approx(RATE * request)
    assert fleet.by_memory.value == math.ceil(RATE * request / batch)
    assert fleet.load.value == pytest.approx(load)
    assert fleet.gpus.value == math.ceil(load)
    assert fleet.spend.value == pytest.approx(math.ceil(load) * REFERENCE.price.gpu_hour_usd)
    assert fleet.per_million.value * 1e6 == pytest.approx(
        math.ceil(load) * REFERENCE.price.gpu_hour_usd / (RATE * OUTPUT * 3600) * 1e6)
    assert fleet.gpus.value >= fleet.by_memory.value, "time charges prefill too, so it never asks for fewer cards"


def run(**inputs) -> dict:
    return START.run({**START.defaults, **inputs}, None, ["start.batch", "start.fleet.in_flight",
                                                          "start.step.tokens_per_second_per_user"], [], False)


def test_a_quiet_rate_decodes_the_few_requests_in_flight():
    rate = 0.01
    answer = run(rate=str(rate))
    assert decode_batch(rate, budget_tokens()) == 1
    batch, flight, per_user = (answer["refs"][ref][0] for ref in
                               ("start.batch", "start.fleet.in_flight", "start.step.tokens_per_second_per_user"))
    assert batch == "1"
    assert float(flight) == pytest.approx(rate * request_seconds(1), rel=0.05), "a fraction of a request, never 0"
    assert per_user == f"{round(1 / step(1, PROMPT + OUTPUT // 2))} tok/s"
    assert answer["refs"]["start.batch"][1].endswith("= 1 sequence")


def test_one_token_requests_do_not_fill_the_whole_cache():
    answer = run(prompt="1", output="1")
    assert answer["refs"]["start.batch"][0] == "1"


def test_the_scheduler_caps_the_batch():
    # A small model on a big card with short requests: the cache admits far more than max_num_seqs.
    answer = run(model="llama-3.2-1b", prompt="100", output="500", rate="10000")
    assert answer["refs"]["start.batch"][0] == f"{SEQUENCE_CAP:,}"


def test_a_limit_the_cache_cannot_hold_names_the_longest_that_fits():
    # The 70B in int4 fits one H100, but its cache holds less than one sequence at 131,072 tokens.
    inputs = {**START.defaults, "model": "llama-3.1-70b", "weights": "int4", "context_limit": "131072"}
    answer = START.run(inputs, None, [], [], False)
    message = answer["errors"]["context_limit"]
    assert not answer["ok"] and list(answer["errors"]) == ["context_limit"], answer
    assert "tensor parallelism" in message
    longest = int(re.search(r"set the limit to ([\d,]+) or less", message).group(1).replace(",", ""))
    assert START.run({**inputs, "context_limit": str(longest)}, None, [], [], False)["ok"]
    assert not START.run({**inputs, "context_limit": str(longest + 1)}, None, [], [], False)["ok"]


@pytest.mark.parametrize("model, weights, card", [
    ("llama-3.1-70b", "bf16", "h100-sxm"), ("llama-3.1-405b", "fp8", "h100-sxm"),
    ("mixtral-8x7b", "bf16", "h100-sxm"), ("llama-3.1-70b", "fp8", "l4"),
])
def test_weights_one_card_cannot_hold_are_refused_on_the_model(model, weights, card):
    answer = START.run({**START.defaults, "model": model, "weights": weights, "card": card}, None, [], [], False)
    assert not answer["ok"] and list(answer["errors"]) == ["model"], answer
    assert "do not fit" in answer["errors"]["model"] and "document 11" in answer["errors"]["model"]


def test_the_tail_request_and_the_decode_steps(start):
    assert start["p95_request"].value == REFERENCE.traffic.prompt_p95 + REFERENCE.traffic.output_p50
    assert start["p95_request"].value > REFERENCE.context_limit, "the page says the p95 prompt with a median answer is refused"
    assert start["decode_steps"].value == OUTPUT - 1


def test_every_worked_line_redoes_by_hand(start):
    for path, value in leaves({"start": start}):
        if isinstance(value, Result):
            assert check(value.worked) == [], (path, value.worked)


def test_the_chart_scales_the_load_with_the_rate():
    curves = START.curves["start-load"](facts())["curves"]
    prefill_cards, decode_cards, gpus, dollars = curves
    from calc.documents.start import RATE_MULTIPLES
    reference = RATE_MULTIPLES.index(1)
    assert prefill_cards["x"][reference] == f"{RATE:g}/s"
    for i, scale in enumerate(RATE_MULTIPLES):
        rate = scale * RATE
        assert prefill_cards["y"][i] == pytest.approx(scale * prefill_cards["y"][reference], abs=1e-3 * (scale + 1))  # each rounded to 0.001
        assert gpus["y"][i] == max(math.ceil(prefill_cards["y"][i] + decode_cards["y"][i] - 1e-3), 1)
        assert dollars["y"][i] == pytest.approx(
            gpus["y"][i] * REFERENCE.price.gpu_hour_usd / (rate * OUTPUT * 3600) * 1e6, abs=1e-4)


@pytest.mark.parametrize("inputs, field, words", [
    ({"prompt": "8000", "output": "300"}, "output", "more than the context limit of 8,192"),
    ({"prompt": "8000", "output": "300"}, "context_limit", "less than prompt + output, 8,300 tokens"),
    ({"context_limit": "1", "prompt": "1", "output": "1"}, "output", "more than the context limit of 1"),
    ({"model": "llama-3.1-70b"}, "model", "do not fit"),
    ({"context_limit": "200000", "prompt": "150000"}, "context_limit", "reaches at most 131,072 positions"),
    ({"context_limit": "10000000"}, "context_limit", "reaches at most 131,072 positions"),
])
def test_requests_that_cannot_run_are_refused(inputs, field, words):
    answer = START.run({**START.defaults, **inputs}, None, [], [], False)
    assert not answer["ok"] and words in answer["errors"][field], answer


CALC = Calculator("start")


@pytest.fixture(scope="module")
def start_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "00", "start")


@pytest.mark.parametrize("inputs", [
    {"rate": "5", "prompt": "500", "output": "1000"},
    {"card": "h200-sxm", "weights": "fp8", "kv": "fp8", "rate": "120"},
    {"model": "llama-3.2-1b", "card": "l4", "context_limit": "4096", "rate": "1", "prompt": "3000", "output": "50"},
    {"rate": "0.01"},
    # extremes a hostile reader tries: the shortest request, the fastest rate, the longest context,
    # a small model far past max_num_seqs, a 70B in fp8 on an H200 (on one H100 its weights leave no cache)
    {"prompt": "1", "output": "1"},
    {"rate": "100000"},
    {"model": "llama-3.2-1b", "card": "b200", "prompt": "1", "output": "1", "rate": "100000"},
    {"context_limit": "131072", "prompt": "130000", "output": "1000"},
    {"model": "llama-3.1-70b", "weights": "fp8", "kv": "fp8", "card": "h200-sxm", "context_limit": "4096"},
])
def test_the_calculator_follows_cpython(start_page, inputs):
    page = start_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    assert "start.fleet.per_million" in shown
    expected = START.run({**START.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    text = page.text_content("[data-live~=start]")
    assert not re.search(r"(?<![\d.,])1 (GPUs|sequences)\b", text), "a count of one reads in the singular"
    assert not any(word in text for word in ("NaN", "Infinity", "undefined", "Traceback"))
    CALC.set(page, **{name: START.defaults[name] for name in inputs})


@pytest.mark.parametrize("field, value", [
    ("rate", ""), ("rate", "0"), ("rate", "4,5"), ("rate", "-1"), ("rate", "1e400"), ("rate", "NaN"),
    ("rate", "0x10"), ("rate", "<script>alert(1)</script>"), ("rate", "123456"),
    ("prompt", "lots"), ("prompt", "0"), ("prompt", "2,000.5"), ("prompt", "9" * 5000),
    ("output", "1e40"), ("output", "Infinity"), ("output", "7000"),
    ("context_limit", "80\u200b"), ("context_limit", "1"), ("context_limit", "10000000"),
])
def test_bad_input_gets_a_message(start_page, field, value):
    page = start_page.page
    expected = START.run({**START.defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: START.defaults[field]})


def test_a_huge_paste_is_refused_quickly(start_page):
    page = start_page.page
    value = "x" * 1_000_000
    expected = START.run({**START.defaults, "prompt": value}, None, [], [], False)["errors"]["prompt"]
    CALC.refuse(page, "prompt", value, expected)
    CALC.set(page, prompt=START.defaults["prompt"])


@pytest.mark.parametrize("inputs, field", [
    ({"model": "llama-3.1-405b"}, "model"),
    ({"model": "llama-3.1-70b", "weights": "fp8", "kv": "fp8", "card": "l4"}, "model"),
    ({"model": "llama-3.1-70b", "weights": "fp8", "kv": "fp8"}, "model"),      # the profile's reserve tips it over
    ({"model": "llama-3.1-70b", "weights": "int4", "context_limit": "131072"}, "context_limit"),
])
def test_a_stack_one_card_cannot_serve_is_refused_on_the_field_to_change(start_page, inputs, field):
    page = start_page.page
    expected = START.run({**START.defaults, **inputs}, None, [], [], False)["errors"][field]
    assert CALC.set(page, **inputs) == "invalid"
    assert page.text_content(f"{CALC.selector} [data-error-for={field}]") == expected
    assert CALC.set(page, **{name: START.defaults[name] for name in inputs}) == "computed"


@pytest.mark.parametrize("config, says", [
    ("", "paste the contents of a config.json"),
    ("{", "not valid JSON"),
    ("[]", "expected a JSON object"),
    (json.dumps({**LLAMA_3_1_8B_CONFIG, "num_hidden_layers": -1}), "num_hidden_layers: must be at least 1"),
    ("{\"a\":" * 5_000, "levels deep"),
    (json.dumps({**LLAMA_3_1_8B_CONFIG, "padding": "y" * 300_000}), "over 200,000 characters"),
], ids=["empty", "broken", "not-an-object", "negative-layers", "deep", "huge"])
def test_a_bad_config_is_named_once(start_page, config, says):
    page = start_page.page
    assert CALC.paste(page, config) == "invalid"
    message = page.text_content(f"{CALC.selector} [data-error-for=config]")
    assert says in message and not message.startswith("config:"), message
    assert message == START.run({**START.defaults, "model": "custom"}, config, [], [], False)["errors"]["config"]
    assert CALC.set(page, model=START.defaults["model"]) == "computed"


def test_a_pasted_config_follows_cpython(start_page):
    page = start_page.page
    config = json.dumps(LLAMA_3_1_8B_CONFIG)
    assert CALC.paste(page, config) == "computed"
    shown = CALC.live(page)
    expected = START.run({**START.defaults, "model": "custom"}, config, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    assert CALC.set(page, model=START.defaults["model"]) == "computed"


def test_fast_typing_ends_on_the_last_value(start_page):
    page = start_page.page
    field = page.locator(f"{CALC.selector} [name=rate]")
    field.fill("")
    field.type("0.05", delay=5)
    assert CALC.settle(page) == "computed"
    shown = CALC.live(page)
    expected = START.run({**START.defaults, "rate": "0.05"}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    assert CALC.set(page, rate=START.defaults["rate"]) == "computed"


def test_a_reload_mid_compute_starts_again(start_page):
    page = start_page.page
    page.locator(f"{CALC.selector} [name=rate]").fill("80")
    page.reload()
    page.evaluate("() => window.runbookCalculator.start()")
    CALC.settle(page)
    assert CALC.set(page, rate="20") == "computed"
    shown = CALC.live(page)
    expected = START.run({**START.defaults, "rate": "20"}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
