"""Document 00: every track's headline for the reference stack, carried to cards and dollars, checked
against values derived here by hand from the model's config and the card's datasheet entries (read
from calc's tables, never retyped); the start calculator in CPython and in Chromium over file://,
with its bad-input battery."""
from __future__ import annotations

import math

import pytest

from arithmetic import check
from calc.calculators import START
from calc.facts import facts
from calc.present import leaves
from calc.stack import REFERENCE
from calc.units import Result
from conftest import Calculator, booted_page

MODEL, CARD = REFERENCE.model, REFERENCE.card
L, H, FFN, VOCAB = MODEL.num_hidden_layers, MODEL.hidden_size, MODEL.intermediate_size, MODEL.vocab_size
KV_WIDTH = MODEL.num_key_value_heads * MODEL.head_dim
BLOCKS = L * (2 * H * H + 2 * H * KV_WIDTH + 3 * H * FFN)   # q, o, k, v and the SwiGLU's three matrices
HEAD = VOCAB * H
NORMS = L * 2 * H + H
PARAMS = BLOCKS + NORMS + 2 * HEAD                           # untied: embedding and output head
PER_TOKEN = 2 * L * KV_WIDTH * 2                              # key and value, every layer, bf16
PER_POSITION = 4 * L * H                                      # attention operations per attended position
COMPUTE = REFERENCE.efficiency.mfu * CARD.bf16_dense_tflops * 1e12
BANDWIDTH = REFERENCE.efficiency.bandwidth_fraction * CARD.hbm_tb_per_s * 1e12
READ = 2 * (BLOCKS + HEAD + NORMS)                            # every weight but the embedding, once a step
BLOCK = REFERENCE.block_size
PROMPT, OUTPUT = REFERENCE.workload.prompt, REFERENCE.workload.output
RATE = REFERENCE.traffic.requests_per_s


def budget_tokens() -> int:
    pool = CARD.engine_capacity.value * REFERENCE.gpu_memory_utilization  # the total the engine multiplies (calc.cards)
    budget = pool - 2 * PARAMS - REFERENCE.activation_reserve_bytes
    return int(budget // (BLOCK * PER_TOKEN)) * BLOCK


def prefill(tokens: int) -> float:
    ops = 2 * BLOCKS * tokens + 2 * HEAD + PER_POSITION * tokens * (tokens + 1) // 2
    return max(ops / COMPUTE, READ / BANDWIDTH)


def step(batch: int, held: int) -> float:
    matmuls = max(READ / BANDWIDTH, batch * 2 * (BLOCKS + HEAD) / COMPUTE)
    attention = max(batch * held * PER_TOKEN / BANDWIDTH, batch * PER_POSITION * held / COMPUTE)
    return matmuls + attention


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
    batch = int(start["users_paged"].value)
    assert start["batch"].value == batch
    assert start["prefill"].value == pytest.approx(prefill(PROMPT))
    assert start["step"].time.value == pytest.approx(step(batch, PROMPT + OUTPUT // 2))
    assert start["floor"].value == pytest.approx((READ + (PROMPT + OUTPUT // 2) * PER_TOKEN) / (CARD.hbm_tb_per_s * 1e12))
    assert start["ridge"].value == pytest.approx(CARD.bf16_dense_tflops / CARD.hbm_tb_per_s)


def test_cards_and_dollars(start):
    batch = int(start["users_paged"].value)
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


def test_every_worked_line_redoes_by_hand(start):
    for path, value in leaves({"start": start}):
        if isinstance(value, Result):
            assert check(value.worked) == [], (path, value.worked)


def test_the_chart_scales_the_load_with_the_rate():
    curves = START.curves["start-load"](facts())["curves"]
    prefill_cards, decode_cards, gpus, dollars = curves
    from calc.start import RATE_MULTIPLES
    reference = RATE_MULTIPLES.index(1)
    assert prefill_cards["x"][reference] == f"{RATE:g}/s"
    for i, scale in enumerate(RATE_MULTIPLES):
        rate = scale * RATE
        assert prefill_cards["y"][i] == pytest.approx(scale * prefill_cards["y"][reference], abs=1e-3)
        assert gpus["y"][i] == max(math.ceil(prefill_cards["y"][i] + decode_cards["y"][i] - 1e-3), 1)
        assert dollars["y"][i] == pytest.approx(
            gpus["y"][i] * REFERENCE.price.gpu_hour_usd / (rate * OUTPUT * 3600) * 1e6, abs=1e-4)


@pytest.mark.parametrize("inputs, field, words", [
    ({"prompt": "8000", "output": "300"}, "output", "over the context limit"),
    ({"model": "llama-3.1-70b"}, "prompt", "do not fit"),
    ({"context_limit": "200000", "prompt": "150000"}, "prompt", "reads at most"),
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
])
def test_the_calculator_follows_cpython(start_page, inputs):
    page = start_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    assert "start.fleet.per_million" in shown
    expected = START.run({**START.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    CALC.set(page, **{name: START.defaults[name] for name in inputs})


@pytest.mark.parametrize("field, value", [
    ("rate", ""), ("rate", "0"), ("rate", "4,5"), ("prompt", "lots"), ("output", "1e40"),
    ("context_limit", "80\u200b"), ("output", "7000"),
])
def test_bad_input_gets_a_message(start_page, field, value):
    page = start_page.page
    expected = START.run({**START.defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: START.defaults[field]})


def test_a_model_the_card_cannot_hold_is_refused_on_the_request(start_page):
    page = start_page.page
    expected = START.run({**START.defaults, "model": "llama-3.1-405b"}, None, [], [], False)["errors"]["prompt"]
    assert CALC.set(page, model="llama-3.1-405b") == "invalid"
    assert page.text_content(f"{CALC.selector} [data-error-for=prompt]") == expected
    assert CALC.set(page, model=START.defaults["model"]) == "computed"
