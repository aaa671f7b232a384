"""Document 05: the time model on the reference stack, derived independently here, and the
phases calculator in Chromium over file:// against CPython."""
from __future__ import annotations

import pytest

from calc.model import operations

from calc.engine import timing
from calc.calculators import PHASES
from calc.facts import facts
from calc.specs.models import LLAMA_3_1_8B
from calc.specs.stack import REFERENCE
from conftest import Calculator, booted_page

import by_hand

BLOCKS = 32 * (4096 * 4096 * 2 + 2 * 4096 * 1024 + 3 * 4096 * 14336)  # q, o; k, v; gate, up, down
HEAD = 128_256 * 4_096
PER_POSITION = 4 * 32 * 32 * 128
PEAK = 989.4e12
BANDWIDTH = 3.35e12
PER_TOKEN = 2 * 32 * 8 * 128 * 2
WEIGHTS_READ = 2 * (8_030_261_248 - HEAD)  # every matrix but the gathered embedding table


def test_prefill_counts_what_each_position_multiplies():
    assert BLOCKS == operations.block_parameters(LLAMA_3_1_8B) == 6_979_321_856
    ops = 2 * BLOCKS * 2_000 + 2 * HEAD + PER_POSITION * 2_000 * 2_001 // 2
    assert operations.prefill_ops(LLAMA_3_1_8B, 2_000).value == ops
    assert timing.prefill_time(REFERENCE, 2_000).value == pytest.approx(by_hand.prefill_s(2_000), rel=1e-5)
    assert str(timing.prefill_time(REFERENCE, 2_000)) == "42.4 ms"
    assert str(facts()["time"]["prefill_mfu"]) == f"{ops / (by_hand.prefill_s(2_000) * PEAK):.0%}"


def test_attention_meets_the_matrices_past_fifty_thousand_tokens():
    crossover = 4 * BLOCKS / PER_POSITION - 1
    assert operations.attention_crossover(LLAMA_3_1_8B).value == pytest.approx(crossover)
    assert round(crossover) == 53_247
    n = round(crossover)
    assert PER_POSITION * n * (n + 1) / 2 == pytest.approx(2 * BLOCKS * n, rel=1e-4)


def test_a_decode_step_is_every_kernel_and_the_fixed_cost():
    step = timing.decode_step(REFERENCE, 1, 2_150)
    assert step.read.total.value == WEIGHTS_READ + 2_150 * PER_TOKEN
    assert step.time.value == pytest.approx(by_hand.decode_step_s(1, 2_150), rel=1e-6)
    assert step.bound == "memory bandwidth"
    assert str(step.time) == "6.5 ms"
    assert step.overhead.value == pytest.approx(by_hand.overhead_s())


def test_the_matrix_multiplies_cross_the_ridge_and_attention_never_does():
    assert timing.ridge_point(REFERENCE.card, REFERENCE.weight_precision).value == pytest.approx(PEAK / BANDWIDTH)
    assert round(PEAK / BANDWIDTH) == 295
    ridge = by_hand.achieved_compute() / by_hand.achieved_bandwidth()
    crossing = ridge * WEIGHTS_READ / (2 * (BLOCKS + HEAD))
    assert timing.matmul_crossing(REFERENCE).value == pytest.approx(crossing)
    assert timing.attention_intensity(REFERENCE).value == PER_POSITION / PER_TOKEN == 4
    at_limit = timing.compute_bound_batch(REFERENCE, 8_192)
    assert at_limit.admitted.value == by_hand.token_capacity(by_hand.kv_budget()) // 8_192
    assert not at_limit.happens, "the cache never admits the crossing batch"
    assert timing.compute_bound_batch(REFERENCE, 128).happens


def test_a_chunk_rides_in_a_full_batchs_step():
    chunked = facts()["workload"]["chunked"]
    batch, held = chunked.decode.read.batch, chunked.decode.read.tokens
    assert chunked.mixed_step.value == pytest.approx(by_hand.mixed_step_s(batch, held, 512), rel=1e-4)
    assert chunked.free_tokens.value == max(timing.matmul_crossing(REFERENCE).value - batch, 0)
    assert chunked.steps.value == 4
    assert chunked.ttft.value == pytest.approx(4 * chunked.mixed_step.value)


def test_short_prompts_wait_on_the_weights():
    floor = WEIGHTS_READ / by_hand.achieved_bandwidth()
    assert round(facts()["time"]["prefill_floor"].value) == round(floor * by_hand.achieved_compute() / (2 * BLOCKS))


def test_the_model_sits_beside_the_measurements():
    measured = facts()["measured"]
    for key in ("prefill", "step_1", "step_32", "step_128"):
        assert 0.9 < measured["kernels"][key].ratio.value < 1.1, key
    assert 0.95 < measured["single"]["itl"].ratio.value < 1.05
    assert 0.85 < measured["closed"]["trt_128"]["rate"].ratio.value < 1.15


DOC = "05-phases.html"
CALC = "[data-calculator=phases]"


PHASES_PAGE = Calculator("phases")


@pytest.fixture(scope="module")
def phases_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "05", DOC)


settle, set_inputs, live = PHASES_PAGE.settle, PHASES_PAGE.set, PHASES_PAGE.live


def expected(values: dict) -> dict[str, str]:
    paths = list(live_paths)
    answer = PHASES.run({**PHASES.defaults, **values}, None, paths)
    return {path: text for path, (text, _) in answer["refs"].items()}


live_paths: list[str] = []


@pytest.mark.parametrize("values", [
    {},
    {"card": "h200-sxm", "prompt": "8000", "output": "1000"},
    {"model": "llama-3.1-70b", "card": "b200", "weights": "fp8", "batch": "32"},
    {"card": "a100-80", "weights": "int4", "kv": "fp8", "prompt": "128", "batch": "512"},
    {"compute_scale": "55", "bandwidth_scale": "75", "batch": "1"},
    {"measured_prefill": "100", "measured_step": "9.5", "batch": "16"},
])
def test_the_phases_calculator_agrees_with_cpython(phases_page, values):
    page = phases_page.page
    live_paths[:] = sorted(live(page))
    for name, value in {**PHASES.defaults, **values}.items():
        page.locator(f"{CALC} [name={name}]").evaluate(
            "(node, value) => { node.value = value; }", value)
    page.evaluate("() => window.runbookCalculator.recompute('phases')")
    assert settle(page) == "computed"
    assert live(page) == expected(values)


def test_calibration_sets_the_prefill_it_was_given(phases_page):
    page = phases_page.page
    for name, value in PHASES.defaults.items():
        page.locator(f"{CALC} [name={name}]").evaluate("(node, value) => { node.value = value; }", value)
    assert set_inputs(page, measured_prefill="100") == "computed"
    assert page.locator(f"{CALC} ~ .live [data-ref='workload.prefill']").first.text_content() == "100.0 ms"


@pytest.mark.parametrize("field, value, says", [
    ("prompt", "", "Prompt is empty"),
    ("prompt", "-5", "Prompt must be between"),
    ("batch", "0", "Batch must be between"),
    ("compute_scale", "150", "Compute speed must be between"),
    ("bandwidth_scale", "6,5", "write decimals with a point"),
    ("measured_prefill", "20", "no card beats its datasheet"),
    ("measured_prefill", "0.001", "no longer than the step's fixed cost"),
    ("measured_step", "0.01", "no longer than the step's fixed cost"),
])
def test_bad_inputs_are_named_inline(phases_page, field, value, says):
    page = phases_page.page
    for name, default in PHASES.defaults.items():
        page.locator(f"{CALC} [name={name}]").evaluate("(node, value) => { node.value = value; }", default)
    before = live(page)
    assert set_inputs(page, **{field: value}) == "invalid"
    message = page.text_content(f"{CALC} [data-error-for={field}]")
    assert says in message
    assert message == PHASES.run({**PHASES.defaults, field: value})["errors"][field]
    assert live(page) == before
