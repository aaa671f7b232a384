"""Document 03: one request's twelve stages. The stages for the reference stack worked by hand, the
interlock with the time model (doc 05's), and the journey calculator under Pyodide in Chromium over
file:// with the network blocked, against CPython."""
from __future__ import annotations

from dataclasses import replace

import pytest

from arithmetic import check
from calc.documents import journey as journeys
from calc.engine import timing
from calc.calculators import JOURNEY
from calc.specs.cards import CARDS
from calc.facts import facts
from calc.specs.precision import KV_PRECISIONS, PRECISIONS
from calc.core.present import leaves
from calc.specs.stack import REFERENCE, Workload
from conftest import Calculator, booted_page

import by_hand

DOC = "03-journey.html"
CALC = "[data-calculator=journey]"
DEFAULTS = JOURNEY.defaults
KEYS = [stage.key for stage in facts()["journey"].stages]
STAGE_PATHS = [f"journey.{key}.time" for key in KEYS] + [f"journey.{key}.clock" for key in KEYS]
TOTAL_PATHS = ["journey.ttft", "journey.total", "journey.shares.cpu", "journey.shares.prefill",
               "journey.shares.decode", "journey.step.time", "journey.blocks", "journey.cache_written"]


def test_the_reference_stages_worked_by_hand():
    """Llama 3.1 8B in bf16 on an H100 SXM: every GPU stage from the config and the datasheet."""
    trip = facts()["journey"]
    hidden, layers, vocab, heads_width = 4_096, 32, 128_256, 32 * 128
    block_params = 6_979_321_856
    head = vocab * hidden
    per_position = 4 * layers * heads_width
    prompt, output = 2_000, 300
    ops = 2 * block_params * prompt + 2 * head + per_position * prompt * (prompt + 1) // 2
    assert trip.pass_ops.value == ops
    assert trip.head.time.value == pytest.approx(by_hand.head_s(1), rel=1e-9)  # the head's 1.05 GB read once
    assert trip.embed.time.value == pytest.approx(2 * prompt * hidden * 2 / (0.8 * 3.35e12) + 3e-6, rel=1e-9)
    layers_time = by_hand.matrices_s(prompt) + by_hand.prefill_attention_s(prompt) + by_hand.norms_s(prompt, False)
    assert trip.prefill.time.value == pytest.approx(layers_time, rel=1e-5)
    assert trip.sample.time.value == pytest.approx(by_hand.overhead_s(), rel=1e-9)  # the step's measured fixed cost
    step = by_hand.decode_step_s(1, prompt + output // 2)
    assert trip.step.time.value == pytest.approx(step, rel=1e-9)
    assert trip.decode.time.value == pytest.approx((output - 1) * step, rel=1e-9)
    # English prose at Llama 3's measured 1,486 characters per 319 tokens (content/samples), a byte each
    assert trip.tokenise.time.value == pytest.approx(prompt / (13.8e6 / 4.5 / (1486 / 319)), rel=1e-12)
    assert round(trip.characters.value) == round(prompt * 1486 / 319) == 9_317
    assert (trip.blocks.value, trip.blocks_at_end.value) == (125, 144)
    assert trip.allocate.time.value == pytest.approx(125 * 0.8e-6)
    assert trip.cache_written.value == prompt * 131_072
    assert trip.total.value == pytest.approx(sum(s.time.value for s in trip.stages), rel=1e-12)
    assert trip.finish.clock.value == pytest.approx(trip.total.value, rel=1e-12)
    assert trip.emit.clock.value == pytest.approx(trip.ttft.value, rel=1e-12)
    shares = trip.shares
    assert shares.cpu.value + shares.prefill.value + shares.decode.value == pytest.approx(1)
    assert shares.decode.value > 0.95 and shares.cpu.value < 0.005
    assert [s.where for s in trip.stages].count("GPU") == 4  # the step's fixed cost is CPU and GPU both


CASES = [
    (2_000, 300, "h100-sxm", "bf16", "bf16"),
    (8_000, 1_000, "h200-sxm", "fp8", "fp8"),
    (1, 1, "a100-80", "int4", "bf16"),
    (50_000, 20, "mi300x", "bf16", "fp8"),
    (512, 4_096, "l40s", "fp8", "bf16"),
]


@pytest.mark.parametrize("prompt, output, card, weights, kv", CASES)
def test_journey_and_the_time_model_agree(prompt, output, card, weights, kv):
    """03 and 05 cannot disagree: the journey's prefill and step are calc.engine.timing's for the same inputs."""
    stack = replace(REFERENCE, card=CARDS[card], weight_precision=PRECISIONS[weights], kv_precision=KV_PRECISIONS[kv],
                    workload=Workload(prompt, output, 1))
    trip = journeys.journey(stack, prompt, output)
    prefill = timing.prefill_time(stack, prompt)
    step = timing.decode_step(stack, 1, prompt + output // 2)
    assert trip.prefill_pass.value == prefill.value
    gpu = trip.embed.time.value + trip.prefill.time.value + trip.head.time.value + trip.sample.time.value
    assert gpu == pytest.approx(prefill.value, rel=1e-12)
    assert trip.step.time.value == step.time.value
    assert trip.prefill_pass.value + trip.decode.time.value == pytest.approx(
        timing.request_time(stack, prompt, output, 1).value, rel=1e-12)
    assert facts(stack)["journey"].prefill_pass.value == facts(stack)["workload"]["prefill"].value


def test_every_journey_figure_shows_arithmetic_that_reproduces_it():
    for path, value in leaves({"journey": facts()["journey"]}):
        if hasattr(value, "worked"):
            assert check(value.worked) == [], (path, value.worked)


def test_the_calculator_refuses_a_request_that_cannot_run():
    over = JOURNEY.run({**DEFAULTS, "prompt": "131000", "output": "300"})
    assert not over["ok"] and "reads at most" in over["errors"]["prompt"]
    small = JOURNEY.run({**DEFAULTS, "prompt": "100000", "card": "l4"})
    assert not small["ok"] and "L4" in small["errors"]["prompt"]


# The calculator in the browser

DRIVER = Calculator("journey")


@pytest.fixture(scope="module")
def journey_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "03", DOC)


settle, set_inputs = DRIVER.settle, DRIVER.set


live_figures = DRIVER.live


def test_figures_before_and_after_python_starts_are_identical(journey_page):
    page = journey_page.page
    set_inputs(page, **DEFAULTS)
    page.goto(journey_page.url_of(DOC))
    before = live_figures(page)
    assert set(STAGE_PATHS + TOTAL_PATHS) <= set(before)
    page.evaluate("() => window.runbookCalculator.recompute('journey')")
    assert settle(page) == "computed"
    assert live_figures(page) == before


@pytest.mark.parametrize("values", [
    {"prompt": "8000", "output": "1000"},
    {"prompt": "500", "output": "20", "card": "h200-sxm", "weights": "fp8"},
    {"prompt": "32,768", "output": "2000", "card": "mi300x", "kv": "fp8"},
    {"prompt": "1", "output": "1", "card": "a100-40", "weights": "int4"},
])
def test_the_stopwatch_rederives_like_cpython(journey_page, values):
    page = journey_page.page
    set_inputs(page, **DEFAULTS)
    assert set_inputs(page, **values) == "computed"
    shown = live_figures(page)
    expected = JOURNEY.run({**DEFAULTS, **values}, None, list(shown), ["journey-shares"], True)
    assert expected["ok"]
    for path, text in shown.items():
        assert text == expected["refs"][path][0], path
    widths = page.eval_on_selector_all("figure.anim [data-bar]", "bars => bars.map(b => parseFloat(b.style.width))")
    assert widths == pytest.approx(expected["bars"], abs=1e-3)
    rows = page.eval_on_selector_all("[data-chart-table='journey-shares'] tr",
                                     "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")
    assert rows == expected["curves"]["journey-shares"]["rows"]
    titles = page.eval_on_selector_all("[data-live~=journey] [data-ref][title]", "nodes => nodes.map(n => n.title)")
    for line in titles:
        assert check(line) == [], line


@pytest.mark.parametrize("field, value", [
    ("prompt", ""),
    ("prompt", "0"),
    ("prompt", "-2000"),
    ("prompt", "two thousand"),
    ("prompt", "2000.5"),
    ("prompt", "2,5"),
    ("prompt", "1e40"),
    ("prompt", "Infinity"),
    ("prompt", "2000\u200b"),
    ("prompt", "131000"),
    ("output", "0"),
    ("output", "NaN"),
    ("output", "9" * 60),
])
def test_bad_input_gets_a_message_and_keeps_the_last_figures(journey_page, field, value):
    page = journey_page.page
    set_inputs(page, **DEFAULTS)
    before = live_figures(page)
    assert set_inputs(page, **{field: value}) == "invalid"
    expected = JOURNEY.run({**DEFAULTS, field: value})
    assert not expected["ok"]
    assert page.text_content(f"{CALC} [data-error-for={field}]") == expected["errors"][field]
    assert page.get_attribute(f"{CALC} [name={field}]", "aria-invalid") == "true"
    assert live_figures(page) == before
    assert "Traceback" not in page.text_content(CALC)


def test_a_card_too_small_for_the_request_is_refused_inline(journey_page):
    page = journey_page.page
    set_inputs(page, **DEFAULTS)
    assert set_inputs(page, prompt="100000", card="l4") == "invalid"
    assert "L4" in page.text_content(f"{CALC} [data-error-for=prompt]")
    assert set_inputs(page, card="h100-sxm") == "computed"
    assert page.text_content(f"{CALC} [data-error-for=prompt]") == ""


# The figure

def test_the_journey_figure_walks_the_stages(watched):
    page = watched.page
    page.goto(watched.url_of(DOC))
    figure = page.locator("figure.anim")
    assert "playing" in figure.get_attribute("class")
    assert figure.locator(".journey-row").count() == 12 and figure.locator("ol > li").count() == 12
    page.wait_for_timeout(200)
    assert figure.locator(".journey-row.hidden").count() > 0
    assert figure.locator(".clock-reading.current").count() == 1
    visible = figure.locator(".clock-reading").evaluate_all(
        "nodes => nodes.filter(n => getComputedStyle(n).display !== 'none').length")
    assert visible == 1, "one clock reading at a time"


def test_reduced_motion_and_print_show_the_whole_journey(browser, site):
    context = browser.new_context(reduced_motion="reduce")
    page = context.new_page()
    page.goto((site / DOC).as_uri())
    figure = page.locator("figure.anim")
    assert "playing" not in figure.get_attribute("class")
    assert figure.locator(".journey-row.hidden").count() == 0
    page.emulate_media(media="print")
    opacities = figure.locator(".journey-row").evaluate_all("rows => rows.map(r => getComputedStyle(r).opacity)")
    assert set(opacities) == {"1"}
    final = figure.locator(".clock-reading.final")
    assert final.is_visible() and final.text_content() == page.text_content(".hero [data-ref='journey.total']")
    assert figure.locator("ol").evaluate("ol => getComputedStyle(ol).listStyleType") == "decimal"
    context.close()


@pytest.mark.parametrize("form", ["#quick", "#deep"])
def test_the_journey_fits_a_phone(browser, site, form):
    context = browser.new_context(viewport={"width": 390, "height": 800})
    page = context.new_page()
    page.goto((site / DOC).as_uri() + form)
    assert page.evaluate("() => document.documentElement.scrollWidth") <= 390
    context.close()
