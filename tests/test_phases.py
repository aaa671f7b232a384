"""Document 05: the time model on the reference stack, derived independently here, and the
phases calculator in Chromium over file:// against CPython."""
from __future__ import annotations

import pytest

from calc import operations, timing
from calc.calculators import PHASES
from calc.facts import facts
from calc.models import LLAMA_3_1_8B
from calc.stack import REFERENCE
from conftest import Calculator, booted_page

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
    assert timing.prefill_time(REFERENCE, 2_000).value == pytest.approx(ops / (0.40 * PEAK))
    assert str(timing.prefill_time(REFERENCE, 2_000)) == "73.2 ms"


def test_attention_meets_the_matrices_past_fifty_thousand_tokens():
    crossover = 4 * BLOCKS / PER_POSITION - 1
    assert operations.attention_crossover(LLAMA_3_1_8B).value == pytest.approx(crossover)
    assert round(crossover) == 53_247
    n = round(crossover)
    assert PER_POSITION * n * (n + 1) / 2 == pytest.approx(2 * BLOCKS * n, rel=1e-4)


def test_a_decode_step_is_matrix_multiplies_then_attention():
    step = timing.decode_step(REFERENCE, 1, 2_150)
    assert step.read.total.value == WEIGHTS_READ + 2_150 * PER_TOKEN
    matmuls = max(WEIGHTS_READ / (0.60 * BANDWIDTH), 2 * (BLOCKS + HEAD) / (0.40 * PEAK))
    attention = max(2_150 * PER_TOKEN / (0.60 * BANDWIDTH), PER_POSITION * 2_150 / (0.40 * PEAK))
    assert step.time.value == pytest.approx(matmuls + attention)
    assert step.bound == "memory bandwidth"
    assert str(step.time) == "7.6 ms"


def test_the_matrix_multiplies_cross_the_ridge_and_attention_never_does():
    assert timing.ridge_point(REFERENCE.card, REFERENCE.weight_precision).value == pytest.approx(PEAK / BANDWIDTH)
    assert round(PEAK / BANDWIDTH) == 295
    ridge = 0.40 * PEAK / (0.60 * BANDWIDTH)
    crossing = ridge * WEIGHTS_READ / (2 * (BLOCKS + HEAD))
    assert timing.matmul_crossing(REFERENCE).value == pytest.approx(crossing)
    assert round(crossing) == 197
    assert timing.attention_intensity(REFERENCE).value == PER_POSITION / PER_TOKEN == 4
    limit = (2 * (BLOCKS + HEAD) + PER_POSITION * 8_192) / (8_192 * PER_TOKEN)
    at_limit = timing.compute_bound_batch(REFERENCE, 8_192)
    assert at_limit.limit.value == pytest.approx(limit) and limit < ridge
    assert at_limit.admitted.value == 53 and not at_limit.happens, "the cache never admits the crossing batch"
    assert timing.compute_bound_batch(REFERENCE, 128).happens


def test_chunked_prefill_has_little_slack_at_a_full_batch():
    chunked = facts()["workload"]["chunked"]
    decode = chunked.decode
    slack = decode.matmuls.reading.value - decode.matmuls.computing.value
    assert chunked.free_tokens.value == pytest.approx(slack * 0.40 * PEAK / (2 * BLOCKS))
    assert chunked.free_tokens.value < 10
    chunk_linear = 2 * BLOCKS * 512
    chunk_attention = PER_POSITION * 512 * 513 // 2
    mixed = (max(decode.matmuls.reading.value, (decode.matmuls.ops.value + chunk_linear) / (0.40 * PEAK))
             + max(decode.attention.reading.value, (decode.attention.ops.value + chunk_attention) / (0.40 * PEAK)))
    assert chunked.mixed_step.value == pytest.approx(mixed)
    assert chunked.mixed_step.value > REFERENCE.promise.itl_p95_s > decode.time.value, "a 512-token chunk breaks the promise"
    assert chunked.steps.value == 4
    assert chunked.ttft.value == pytest.approx(4 * mixed)


def test_short_prompts_wait_on_the_weights():
    floor = WEIGHTS_READ / (0.60 * BANDWIDTH)
    assert timing.prefill_time(REFERENCE, 32).value == pytest.approx(floor)
    assert round(facts()["time"]["prefill_floor"].value) == round(floor * 0.40 * PEAK / (2 * BLOCKS)) == 212


def test_the_defaults_sit_beside_the_measurements():
    measured = facts()["measured"]
    assert 0.38 <= measured["prefill_steps"].implied.value <= 0.44
    assert abs(measured["bandwidth_fraction"].value - REFERENCE.efficiency.bandwidth_fraction) < 0.03
    assert measured["step_1"].implied.value == pytest.approx(
        (WEIGHTS_READ + 615 * PER_TOKEN) / (0.00705 * BANDWIDTH))


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
    {"mfu": "55", "bandwidth": "75", "batch": "1"},
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
    ("mfu", "150", "MFU must be between"),
    ("bandwidth", "6,5", "write decimals with a point"),
    ("measured_prefill", "0.001", "no card beats its datasheet"),
    ("measured_step", "0.01", "no step reads faster than the memory can"),
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
