"""Document 15: the simulated stream and the production figures, checked against arithmetic done here
by hand from the model's config and the card's datasheet, read from calc's tables."""
from __future__ import annotations

import math
import time
from dataclasses import replace

import pytest

from arithmetic import check
from calc import simulation
from calc.calculators import PRODUCTION
from calc.facts import facts
from calc.present import leaves
from calc.stack import REFERENCE
from calc.units import Result
from conftest import Calculator, booted_page

MODEL, CARD = REFERENCE.model, REFERENCE.card
LAYERS, HIDDEN, KV_HEADS = MODEL.num_hidden_layers, MODEL.hidden_size, MODEL.num_key_value_heads
HEAD_DIM = HIDDEN // MODEL.num_attention_heads
BLOCKS = LAYERS * (2 * HIDDEN * HIDDEN + 2 * HIDDEN * KV_HEADS * HEAD_DIM + 3 * HIDDEN * MODEL.intermediate_size)
TABLE = MODEL.vocab_size * HIDDEN                        # untied: embedding and head each this size
NORMS = LAYERS * 2 * HIDDEN + HIDDEN
PER_TOKEN = 2 * LAYERS * KV_HEADS * HEAD_DIM * 2           # cache bytes per token, bf16
PER_POSITION = 4 * LAYERS * HIDDEN                         # attention operations per attended position
COMPUTE = REFERENCE.efficiency.mfu * CARD.bf16_dense.value
BANDWIDTH = REFERENCE.efficiency.bandwidth_fraction * CARD.bandwidth.value
WEIGHTS_READ = 2 * (BLOCKS + TABLE + NORMS)                # every weight but the gathered embedding


@pytest.fixture(scope="module")
def section():
    return facts()["production"]


def test_a_decode_step_is_the_time_models():
    costs = simulation.step_costs(REFERENCE)
    for batch, held in ((1, 2_000), (64, 2_300), (300, 5_000)):
        matmuls = max(WEIGHTS_READ / BANDWIDTH, batch * 2 * (BLOCKS + TABLE) / COMPUTE)
        attention = max(batch * held * PER_TOKEN / BANDWIDTH, batch * held * PER_POSITION / COMPUTE)
        assert costs.step(batch, batch * held, 0, 0.0, 0.0) == pytest.approx(matmuls + attention, rel=1e-9)


def test_a_whole_prompt_in_one_step_is_its_prefill():
    costs = simulation.step_costs(REFERENCE)
    prompt = 4_000
    ops = 2 * BLOCKS * prompt + 2 * TABLE + PER_POSITION * prompt * (prompt + 1) // 2
    by_hand = max(ops / COMPUTE, WEIGHTS_READ / BANDWIDTH)
    simulated = costs.step(0, 0.0, prompt, prompt * (prompt + 1) / 2, prompt)
    assert simulated == pytest.approx(by_hand, rel=0.02)  # the head's one token and the cache write differ


def test_lengths_are_lognormal_through_p50_and_p95():
    fitted = simulation.lognormal_through(2_000, 8_000)
    assert fitted.median == 2_000 and fitted.sigma == pytest.approx(math.log(4) / 1.6448536, rel=1e-6)
    drawn = simulation.drawn_for(REFERENCE)
    assert all(p + o <= REFERENCE.context_limit for p, o in zip(drawn.prompts, drawn.outputs))
    prompts = sorted(drawn.prompts)
    assert 1_500 < prompts[len(prompts) // 2] < 2_600  # the sample's median near p50


def test_the_same_seed_gives_the_same_percentiles():
    rate = 4.0
    first = simulation.measure(REFERENCE, simulation.simulate(REFERENCE, rate))
    again = simulation.measure(REFERENCE, simulation.simulate(REFERENCE, rate))
    assert (first.ttft, first.itl, first.goodput_tokens) == (again.ttft, again.itl, again.goodput_tokens)
    other = replace(REFERENCE, stream=replace(REFERENCE.stream, seed=REFERENCE.stream.seed + 1))
    moved = simulation.measure(other, simulation.simulate(other, rate))
    assert moved.ttft != first.ttft


def test_littles_law_holds_at_every_rate():
    for outcome in simulation.sweep(REFERENCE).outcomes:
        assert outcome.mean_in_system == pytest.approx(outcome.arrival_rate * outcome.mean_time_in_system, rel=0.03)


def test_past_saturation_queues_grow_goodput_falls_and_nothing_raises():
    saturation = simulation.closed_form(REFERENCE).saturation.value
    outcomes = [simulation.measure(REFERENCE, simulation.simulate(REFERENCE, f * saturation)) for f in (0.5, 1.3, 2, 4)]
    waits = [o.peak_waiting for o in outcomes]
    assert waits == sorted(waits) and waits[-1] > 10 * max(waits[0], 1)
    ttfts = [o.ttft["p95"] for o in outcomes]
    assert ttfts == sorted(ttfts)
    best = max(o.goodput_tokens for o in simulation.sweep(REFERENCE).outcomes)
    assert outcomes[-1].goodput_tokens < 0.2 * best
    assert all(math.isfinite(o.ttft["p99"]) and math.isfinite(o.itl["p99"]) for o in outcomes)


def test_the_knee_is_where_a_p95_crosses(section):
    run = simulation.sweep(REFERENCE)
    knee = section["knee"]["rate"].value
    promise = REFERENCE.promise
    for outcome in run.outcomes:
        if outcome.rate < knee:
            assert outcome.ttft["p95"] <= promise.ttft_p95_s and outcome.itl["p95"] <= promise.itl_p95_s
    beyond = [o for o in run.outcomes if o.rate > knee]
    assert beyond[0].ttft["p95"] > promise.ttft_p95_s or beyond[0].itl["p95"] > promise.itl_p95_s


def test_the_closed_form_by_hand(section):
    closed = section["closed"]
    prompt, output = closed.mean_prompt.value, closed.mean_output.value
    held = prompt + output / 2
    batch = closed.batch_at_saturation.value
    step = max(WEIGHTS_READ / BANDWIDTH, batch * 2 * (BLOCKS + TABLE) / COMPUTE) \
        + max(batch * held * PER_TOKEN / BANDWIDTH, batch * held * PER_POSITION / COMPUTE)
    assert closed.saturation.value == pytest.approx(1 / (closed.prefill.value + output * step / batch), rel=1e-6)
    assert closed.itl_bound.value < closed.saturation.value


def test_cost_gpus_and_cold_start_by_hand(section):
    knee = section["knee"]["rate"].value
    output = section["closed"].mean_output.value
    price = REFERENCE.price.gpu_hour_usd
    assert section["cost"].value == pytest.approx(price / (knee * output * 3600) * 1e6, rel=1e-9)
    assert section["gpus"].value == math.ceil(REFERENCE.traffic.requests_per_s / knee)
    held = 2 * (BLOCKS + 2 * TABLE + NORMS)
    assert section["cold"]["reading"].value == pytest.approx(held / (REFERENCE.stream.storage_gb_per_s * 1e9), rel=1e-9)
    assert section["utilisation"]["gain"].value == pytest.approx(0.5 / 0.2)


def test_every_worked_line_adds_up(section):
    for path, value in leaves({"production": section}, depth=5):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_one_sweep_is_fast_in_cpython():
    stack = replace(REFERENCE, stream=replace(REFERENCE.stream, seed=REFERENCE.stream.seed + 7))
    started = time.perf_counter()
    simulation.sweep(stack)
    assert time.perf_counter() - started < 3.0


@pytest.mark.parametrize("values, field", [
    ({"prompt_p95": "1000"}, "prompt_p95"), ({"output_p95": "100"}, "output_p95"), ({"ttft": "100"}, "ttft"),
    ({"itl": "2"}, "itl"), ({"model": "llama-3.1-70b"}, "card"), ({"prompt_p50": "8000"}, "prompt_p50"),
    ({"rate": "0"}, "rate"), ({"seed": "1.5"}, "seed"), ({"step_tokens": "8"}, "step_tokens"), ({"price": "-1"}, "price"),
])
def test_the_calculator_refuses_what_cannot_be(values, field):
    answer = PRODUCTION.run({**PRODUCTION.defaults, **values}, None, ["production.knee.rate"])
    assert not answer["ok"] and field in answer["errors"], answer


def test_the_rate_and_the_price_do_not_resimulate():
    shown = ["production.knee.rate", "production.gpus", "production.cost"]
    base = PRODUCTION.run(PRODUCTION.defaults, None, shown)["refs"]
    moved = PRODUCTION.run({**PRODUCTION.defaults, "rate": "20", "price": "6"}, None, shown)["refs"]
    assert moved["production.knee.rate"] == base["production.knee.rate"]
    assert moved["production.cost"][0] != base["production.cost"][0]


# ---- In Chromium, over file://, with the network blocked.

CALC = Calculator("production")


@pytest.fixture(scope="module")
def production_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "15", "production")


@pytest.mark.parametrize("inputs", [
    {"rate": "25", "seed": "3", "step_tokens": "2048"},
    {"model": "llama-3.2-1b", "card": "l40s", "itl": "80", "price": "1.5"},
])
def test_the_calculator_follows_cpython(production_page, inputs):
    page = production_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = PRODUCTION.run({**PRODUCTION.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    CALC.set(page, **{k: PRODUCTION.defaults[k] for k in inputs})


@pytest.mark.parametrize("field, value", [
    ("rate", ""), ("prompt_p95", "500"), ("ttft", "0,5"), ("itl", "fast"), ("seed", "-1"),
    ("step_tokens", "1e40"), ("price", "3\u200b"),
])
def test_bad_input_gets_a_message(production_page, field, value):
    page = production_page.page
    expected = PRODUCTION.run({**PRODUCTION.defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: PRODUCTION.defaults[field]})


def test_a_pasted_config_the_card_cannot_serve_is_refused():
    import json
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
              "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
              "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": False}
    answer = PRODUCTION.run({**PRODUCTION.defaults, "model": "custom"}, json.dumps(config), ["production.knee.rate"])
    assert not answer["ok"] and "no room for one" in answer["errors"]["card"]  # the pasted model, checked like a listed one
