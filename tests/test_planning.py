"""Document 14: the planning chain for the reference traffic derived here by hand from the model's
config and the card's datasheet (as calc's tables hold them); the planning calculator in CPython
and in Chromium over file://, with its bad-input battery; the capacity note's content, its print on
exactly one A4 and one Letter page, and its download as a self-contained file."""
from __future__ import annotations

import json
import math
import re
import statistics

import pytest
from playwright.sync_api import expect

from arithmetic import check
from calc.documents import planning
from calc.calculators import PLANNING
from calc.facts import facts
from calc.specs.models import LLAMA_3_1_70B_CONFIG, LLAMA_3_1_8B as M, LLAMA_3_1_8B_CONFIG
from calc.core.present import leaves
from calc.core.units import Result
from conftest import Calculator, booted_page

import by_hand as hand_model

RATE, PROMPT, PROMPT_P95, OUTPUT, ITL, TTFT = 40, 2000, 8000, 300, 0.050, 1.0
TARGET, SPARES, NODE, PRICE, AVERAGE = 0.80, 1, 8, 3.00, 0.40
BLOCK, BYTES, LIMIT = 16, 2, 8192           # LIMIT: the reference launch line's --max-model-len
Z95 = 1.6448536269514722                    # the standard normal's 95th percentile

# Llama 3.1 8B by hand from its config: per layer q and o (hidden²), k and v (hidden × KV width) and
# a SwiGLU of three hidden × intermediate matrices; an untied head of vocab × hidden.
H, L, I, V = M.hidden_size, M.num_hidden_layers, M.intermediate_size, M.vocab_size
KV_WIDTH = M.num_key_value_heads * (H // M.num_attention_heads)
BLOCKS = L * (2 * H * H + 2 * H * KV_WIDTH + 3 * H * I)
HEAD = V * H
NORMS = L * 2 * H + H
PARAMS = BLOCKS + 2 * HEAD + NORMS
PER_TOKEN = 2 * L * KV_WIDTH * BYTES
PER_POSITION = 4 * L * H
COMPUTE = hand_model.achieved_compute()               # the matrix multiplies' measured share of peak, × peak


def ops(tokens: float, positions: float | None = None) -> float:
    positions = tokens * (tokens + 1) / 2 if positions is None else positions
    return 2 * BLOCKS * tokens + 2 * HEAD + PER_POSITION * positions


def prefill(tokens: int) -> float:
    return hand_model.prefill_s(tokens)


def step(batch: int, held: int) -> float:
    return hand_model.decode_step_s(batch, held)


def lognormal_sum(power: int, cap: float, samples: int = 200_000) -> float:
    """E[min(N, cap)^power] for N lognormal through p50 and p95, by the midpoint rule over the
    normal's quantiles: a numerical integral, independent of the closed form calc uses."""
    sigma = math.log(PROMPT_P95 / PROMPT) / Z95
    normal = statistics.NormalDist()
    total = 0.0
    for i in range(samples):
        length = PROMPT * math.exp(sigma * normal.inv_cdf((i + 0.5) / samples))
        total += min(length, cap) ** power
    return total / samples


def by_hand() -> dict[str, float]:
    """The chain, link by link. The card's total as the runtime reports it is the ladder's first rung
    (read from calc, since which total the runtime reports is document 06's to decide)."""
    cap_tokens = LIMIT - OUTPUT
    mean_prompt = lognormal_sum(1, cap_tokens)
    positions = (lognormal_sum(2, cap_tokens) + mean_prompt) / 2
    # the mean prompt's operations at the rate the engine's prefill of the typical prompt achieves
    mean_prefill = ops(mean_prompt, positions) / (ops(PROMPT) / prefill(PROMPT))
    capacity = hand_model.token_capacity(hand_model.kv_budget())
    request = math.ceil((round(mean_prompt) + OUTPUT) / BLOCK) * BLOCK
    per_replica = capacity // request
    held = round(mean_prompt) + OUTPUT // 2
    cap = max(b for b in range(1, per_replica + 1) if step(b, held) <= ITL)
    prefill_cards = RATE * mean_prefill
    decode_cards = RATE * (OUTPUT - 1) * step(cap, held) / cap
    compute = math.ceil((prefill_cards + decode_cards) / TARGET)

    def stay(batch: int, cards: int) -> float:
        return mean_prefill + (OUTPUT - 1) * step(batch, held) / (1 - prefill_cards / cards)

    cards, batch = compute, 1
    while (needed := math.ceil(RATE * stay(batch, cards) / cards)) > batch:
        batch = needed
    assert batch <= cap
    residents = RATE * stay(batch, cards)
    memory = math.ceil(residents / (per_replica * TARGET))
    assert memory <= cards
    fleet = max(memory, compute) + SPARES
    bought = math.ceil(fleet / NODE) * NODE
    month = bought * PRICE * 365 * 24 / 12
    tokens = RATE * AVERAGE * (mean_prompt + OUTPUT) * 365 * 24 / 12 * 3600
    return {"mean_prompt": mean_prompt, "prefill": mean_prefill, "in_system": stay(batch, cards),
            "residents": residents, "per_replica": per_replica, "memory": memory, "cap": cap, "batch": batch,
            "prefill_cards": prefill_cards, "decode_cards": decode_cards, "compute": compute,
            "fleet": fleet, "bought": bought, "month": month, "per_million": month / tokens * 1e6,
            "ttft_p95": prefill(min(PROMPT_P95, cap_tokens)), "held": held}


@pytest.fixture(scope="module")
def hand():
    return by_hand()


@pytest.fixture(scope="module")
def chain():
    return facts()["plan"]["chain"]


def test_the_model_is_read_by_hand():
    assert PARAMS == 8_030_261_248
    assert PER_TOKEN == 131_072


def test_the_chain_for_the_reference_traffic(chain, hand):
    assert chain.mean_prompt.value == pytest.approx(hand["mean_prompt"], rel=1e-4)
    assert chain.prefill.value == pytest.approx(hand["prefill"], rel=1e-4)
    assert chain.in_system.value == pytest.approx(hand["in_system"], rel=1e-4)
    assert chain.residents.value == pytest.approx(hand["residents"], rel=1e-4)
    assert chain.per_replica.value == hand["per_replica"]
    assert chain.memory_gpus.value == hand["memory"]
    assert chain.batch_cap.value == hand["cap"]
    assert chain.batch.value == hand["batch"]
    assert chain.prefill_cards.value == pytest.approx(hand["prefill_cards"], rel=1e-4)
    assert chain.decode_cards.value == pytest.approx(hand["decode_cards"], rel=1e-4)
    assert chain.compute_gpus.value == hand["compute"]
    assert chain.fleet.value == hand["fleet"]
    assert chain.bought.value == hand["bought"]
    assert chain.cost_month.value == pytest.approx(hand["month"])
    assert chain.per_million.value == pytest.approx(hand["per_million"], rel=1e-4)
    assert chain.ttft_p95.value == pytest.approx(hand["ttft_p95"])
    assert chain.ttft_met and chain.itl_met


def test_the_mean_prefill_is_above_the_median_prompts(chain, hand):
    assert hand["prefill"] > prefill(PROMPT)
    assert chain.prefill.value > prefill(PROMPT)


def test_the_binding_constraint_is_named(chain, hand):
    expected = "card time (compute)" if hand["compute"] > hand["memory"] else "the cache (memory)"
    assert facts()["plan"]["binding"] == expected


def test_decode_costed_as_operations_understates_its_card_time(chain, hand):
    as_operations = RATE * (OUTPUT - 1) * (2 * (BLOCKS + HEAD) + PER_POSITION * hand["held"]) / COMPUTE
    assert chain.decode_as_flops.value == pytest.approx(as_operations)
    assert chain.understated.value == pytest.approx(hand["decode_cards"] / as_operations, rel=1e-4)
    assert chain.understated.value > 1


def fleet_for(**changes) -> int:
    answer = PLANNING.run({**PLANNING.defaults, **changes}, None, ["plan.chain.fleet"], [], False)
    return int(answer["refs"]["plan.chain.fleet"][0].replace(",", ""))


@pytest.mark.parametrize("base", [{}, {"rate": "5", "output_p50": "2000"}, {"card": "l40s", "kv": "fp8"}])
def test_a_looser_promise_never_grows_the_fleet(base):
    fleets = [fleet_for(**base, itl=str(itl)) for itl in (40, 50, 100, 200)]
    assert fleets == sorted(fleets, reverse=True)


def test_an_fp8_cache_moves_a_read_bound_fleet():
    changes = facts()["plan"]["changes"]
    assert int(changes["fp8_cache"].fleet.split()[0]) < facts()["plan"]["chain"].fleet.value


def test_every_worked_line_adds_up():
    for path, value in leaves({"plan": facts()["plan"]}, depth=6):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_the_utilisation_lever(hand):
    lever = facts()["plan"]["lever"]
    assert lever["gain"].value == pytest.approx(0.50 / 0.20)
    assert lever["quiet_per_million"].value == pytest.approx(hand["per_million"] * AVERAGE / 0.20, rel=1e-4)


@pytest.mark.parametrize("change, field, message", [
    ({"model": "llama-3.1-70b"}, "card", "this plan puts one replica on one card"),
    ({"itl": "3"}, "itl", "no batch meets an ITL of 3 ms"),
    ({"ttft": "100"}, "ttft", "more cards do not shorten it"),
    ({"prompt_p95": "1000"}, "prompt_p95", "a percentile cannot fall as it rises"),
    ({"context_limit": "200000"}, "context_limit", "reaches at most 131,072 positions"),
    ({"prompt_p50": "8000"}, "prompt_p50", "over the engine's --max-model-len (8,192 tokens)"),
    ({"prompt_p50": "100000", "prompt_p95": "100000", "card": "l4", "context_limit": "131072"}, "prompt_p50",
     "more than one replica's KV budget"),
])
def test_a_plan_calc_would_get_wrong_is_refused_by_name(change, field, message):
    answer = PLANNING.run({**PLANNING.defaults, **change}, None, [], [], False)
    assert message in answer["errors"][field]


def config_of(config, **changes) -> str:
    return json.dumps({**config, **changes})


@pytest.mark.parametrize("config, change, field, message", [
    (config_of(LLAMA_3_1_70B_CONFIG), {}, "card", "this plan puts one replica on one card"),
    (config_of(LLAMA_3_1_70B_CONFIG), {"card": "b200", "weights": "fp8", "itl": "10"}, "itl", "no batch meets an ITL of 10 ms"),
    (config_of(LLAMA_3_1_70B_CONFIG), {"card": "b200", "weights": "fp8", "ttft": "400"}, "ttft", "more cards do not shorten it"),
    (config_of(LLAMA_3_1_8B_CONFIG, max_position_embeddings=4096), {}, "context_limit", "reaches at most 4,096 positions"),
])
def test_a_pasted_config_is_checked_as_itself(config, change, field, message):
    answer = PLANNING.run({**PLANNING.defaults, "model": "custom", **change}, config, [], [], False)
    assert message in answer["errors"][field]


@pytest.mark.parametrize("change", [
    {"output_p50": "1"},
    {"utilisation": "0.30", "prompt_p95": "64000", "ttft": "600000"},
    {"itl": "10", "prompt_p95": "100000", "ttft": "600000"},
    {"prompt_p50": "3000", "prompt_p95": "3000"},
])
def test_inputs_that_once_crashed_now_plan(change):
    paths = [f"plan.changes.{key}.{part}" for key in ("long_prompts", "double_rate", "fp8_cache", "card_time")
             for part in ("fleet", "binding")]
    answer = PLANNING.run({**PLANNING.defaults, **change}, None, ["plan.chain.fleet", *paths], [], False)
    assert answer["ok"], answer
    for path in paths[::2]:
        text = answer["refs"][path][0]
        assert re.fullmatch(r"[\d,]+ cards?|no plan", text), (path, text)
        if text == "no plan":
            assert answer["refs"][path.replace(".fleet", ".binding")][0], "a row with no plan says why"


def test_the_rate_keeps_its_decimals():
    answer = PLANNING.run({**PLANNING.defaults, "rate": "2.5"}, None,
                          ["plan.rate", "plan.changes.double_rate.change"], [], False)["refs"]
    assert answer["plan.rate"][0] == "2.5"
    assert answer["plan.changes.double_rate.change"][0] == "peak rate doubles (5 req/s)"
    small = PLANNING.run({**PLANNING.defaults, "rate": "0.01"}, None, ["plan.rate", "plan.chain.residents"], [], False)
    assert small["refs"]["plan.rate"][0] != "0" and small["refs"]["plan.chain.residents"][0] != "0"


def test_a_source_is_claimed_only_for_the_default():
    paths = ["plan.utilisation_source", "plan.price_source"]
    default = PLANNING.run(PLANNING.defaults, None, paths, [], False)["refs"]
    typed = PLANNING.run({**PLANNING.defaults, "utilisation": "0.50", "price": "1000"}, None, paths, [], False)["refs"]
    assert default["plan.utilisation_source"][0] == "the reference stack's, below vLLM 0.33.0's default of 0.92"
    assert "Mercatus" in default["plan.price_source"][0]
    assert typed["plan.utilisation_source"][0] == typed["plan.price_source"][0] == "your input"


def test_the_chart_follows_the_plan():
    curves = planning.gpus_against_rate(facts().stack)["curves"]
    memory, compute, fleet = (c["y"] for c in curves[:3])
    assert all(f == max(m, c) + SPARES for m, c, f in zip(memory, compute, fleet))
    assert fleet == sorted(fleet)


CALC = Calculator("planning")
NOTE = "[data-note=planning]"


@pytest.fixture(scope="module")
def plan_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "14", "planning")


def test_the_note_states_the_reference_plan(plan_page, hand):
    page = plan_page.page

    def shown(ref: str) -> str:
        return page.text_content(f"{NOTE} [data-note-body] [data-ref='{ref}']")

    assert shown("plan.chain.memory_gpus") == str(hand["memory"])
    assert shown("plan.chain.compute_gpus") == str(hand["compute"])
    assert shown("plan.chain.fleet") == str(hand["fleet"])
    assert shown("plan.chain.bought") == str(hand["bought"])
    assert shown("plan.chain.cost_month") == f"{round(hand['month']):,}"
    assert shown("plan.chain.residents") == f"{round(hand['residents']):,}"
    note = " ".join(page.text_content(f"{NOTE} [data-note-body]").split())
    for section in ("1 · Inputs", "2 · Model", "3 · The two constraints", "4 · The fleet", "5 · The cost",
                    "6 · What would change it", "Assumptions, named", "Risks"):
        assert section.lower() in note.lower(), section
    assert "Binds: card time (compute)." in note


@pytest.mark.parametrize("inputs", [
    {"rate": "80", "itl": "100", "card": "h200-sxm"},
    {"rate": "5", "prompt_p50": "500", "prompt_p95": "4000", "output_p50": "800", "kv": "fp8", "spares": "2"},
    {"model": "llama-3.2-1b", "card": "a100-80", "target": "60", "price": "2.25", "average_load": "25"},
])
def test_the_calculator_and_its_note_follow_cpython(plan_page, inputs):
    page = plan_page.page
    CALC.set(page, **PLANNING.defaults)
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = PLANNING.run({**PLANNING.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    note = page.text_content(f"{NOTE} [data-note-body]")
    assert f"Binds: {expected['refs']['plan.binding'][0]}." in note
    assert expected["refs"]["plan.chain.fleet"][0] in note


@pytest.mark.parametrize("field, value", [
    ("rate", ""), ("rate", "-5"), ("prompt_p50", "2,5"), ("output_p50", "lots"), ("ttft", "1e40"),
    ("itl", "50\u200b"), ("target", "0"), ("spares", "1.5"), ("price", "∞"), ("prompt_p95", "100"), ("itl", "2"),
    ("prompt_p50", "8000"), ("context_limit", "200000"),
])
def test_bad_input_gets_a_message(plan_page, field, value):
    page = plan_page.page
    CALC.set(page, **PLANNING.defaults)
    expected = PLANNING.run({**PLANNING.defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: PLANNING.defaults[field]})


@pytest.mark.parametrize("change", [
    {"output_p50": "1"},
    {"utilisation": "0.30", "prompt_p95": "64000", "ttft": "600000"},
    {"itl": "10", "prompt_p95": "100000", "ttft": "600000"},
    {"rate": "2.5"},
    {"rate": "0.01"},
])
def test_inputs_that_once_crashed_compute_in_the_page(plan_page, change):
    page = plan_page.page
    CALC.set(page, **PLANNING.defaults)
    assert CALC.set(page, **change) == "computed"
    shown = CALC.live(page)
    expected = PLANNING.run({**PLANNING.defaults, **change}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    CALC.set(page, **PLANNING.defaults)


@pytest.mark.parametrize("config, change, field", [
    (config_of(LLAMA_3_1_70B_CONFIG), {}, "card"),
    (config_of(LLAMA_3_1_70B_CONFIG), {"card": "b200", "weights": "fp8", "itl": "10"}, "itl"),
    (config_of(LLAMA_3_1_8B_CONFIG, max_position_embeddings=4096), {}, "context_limit"),
])
def test_a_pasted_config_gets_its_own_message_in_the_page(plan_page, config, change, field):
    page = plan_page.page
    CALC.set(page, **PLANNING.defaults)
    CALC.set(page, **change, model="custom")
    assert CALC.paste(page, config) == "invalid"
    expected = PLANNING.run({**PLANNING.defaults, "model": "custom", **change}, config, [], [], False)["errors"][field]
    assert page.text_content(f"{CALC.selector} [data-error-for={field}]") == expected
    CALC.set(page, **PLANNING.defaults)


def test_a_stale_note_is_neither_printed_nor_saved(plan_page):
    page = plan_page.page
    CALC.set(page, **PLANNING.defaults)
    page.evaluate("() => { window.printedNotes = 0; window.print = () => { window.printedNotes += 1; }; }")
    assert CALC.set(page, prompt_p95="500") == "invalid"
    page.click(f"{NOTE} [data-note-action=print]")
    page.click(f"{NOTE} [data-note-action=save]")
    assert page.evaluate("() => window.printedNotes") == 0
    assert "not your current inputs" in page.text_content(f"{NOTE} .note-hint")
    assert page.evaluate(f"() => getComputedStyle(document.querySelector('{NOTE} .note')).opacity") == "0.55"
    assert CALC.set(page, **PLANNING.defaults) == "computed"
    page.click(f"{NOTE} [data-note-action=print]")
    assert page.evaluate("() => window.printedNotes") == 1
    assert "not your current inputs" not in page.text_content(f"{NOTE} .note-hint")
    page.evaluate("() => window.runbookNote.release()")


def page_count(pdf: bytes) -> int:
    return int(re.findall(rb"/Type\s*/Pages\b.*?/Count (\d+)", pdf, re.DOTALL)[0])


EXTREMES = {
    "defaults": ({}, None),
    "huge": ({"rate": "100000", "output_p50": "4000", "itl": "10000", "target": "5", "spares": "1000",
              "price": "1000", "average_load": "1"}, None),
    "long": ({"prompt_p50": "100000", "prompt_p95": "100000", "output_p50": "31000", "ttft": "600000",
              "context_limit": "131072", "card": "l40s", "itl": "10000", "rate": "100000", "spares": "1000"}, None),
    "tiny": ({"rate": "0.01", "price": "0.01"}, None),
    "long name": ({}, config_of(LLAMA_3_1_8B_CONFIG, _name_or_path="W" * 300)),
}


@pytest.mark.parametrize("paper", ["A4", "Letter"])
@pytest.mark.parametrize("case", list(EXTREMES))
def test_the_note_prints_on_one_page(plan_page, paper, case):
    page = plan_page.page
    inputs, config = EXTREMES[case]
    CALC.set(page, **PLANNING.defaults)
    if config:
        CALC.set(page, model="custom")
        assert CALC.paste(page, config) == "computed"
    assert CALC.set(page, **inputs) == "computed"
    width = page.evaluate(f"() => [document.querySelector('{NOTE} .note').scrollWidth, "
                          f"document.querySelector('{NOTE} .note').clientWidth]")
    assert width[0] <= width[1], "nothing breaks out of the note"
    # The button prints through the browser's dialog; the page's own print step is what it runs first.
    page.evaluate(f"() => window.runbookNote.prepare(document.querySelector('{NOTE}'))")
    page.emulate_media(media="print")
    try:
        assert page_count(page.pdf(format=paper, print_background=True)) == 1
    finally:
        page.emulate_media(media="screen")
        page.evaluate("() => window.runbookNote.release()")
        CALC.set(page, **PLANNING.defaults)


def test_the_note_saves_as_a_self_contained_file(plan_page, tmp_path):
    page = plan_page.page
    assert CALC.set(page, **{**PLANNING.defaults, "rate": "60"}) == "computed"
    fleet = PLANNING.run({**PLANNING.defaults, "rate": "60"}, None, ["plan.chain.fleet"], [], False)["refs"]
    with page.expect_download() as download:
        page.click(f"{NOTE} [data-note-action=save]")
    saved = download.value
    assert re.fullmatch(r"planning-note-\d{4}-\d{2}-\d{2}\.html", saved.suggested_filename)
    path = tmp_path / saved.suggested_filename
    saved.save_as(path)
    html = path.read_text(encoding="utf-8")
    assert "<script" not in html
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.IGNORECASE)
    assert "<style>" in html and "article.note" in html
    viewer = page.context.new_page()
    viewer.goto(path.as_uri())
    text = " ".join(viewer.text_content("article.note").split())
    assert viewer.text_content("article.note h3").startswith("Capacity note")
    assert "60 req/s" in text and "Binds: " in text
    assert viewer.text_content("article.note [data-ref='plan.chain.fleet']") == fleet["plan.chain.fleet"][0]
    viewer.close()
    CALC.set(page, rate=PLANNING.defaults["rate"])


@pytest.mark.parametrize("change", [{}, {"model": "llama-3.2-1b", "card": "b200"}])
def test_the_launch_line_is_one_vllm_accepts(change):
    # vLLM refuses --max-num-batched-tokens below --max-num-seqs; the note caps the batch at the plan's cap
    refs = PLANNING.run({**PLANNING.defaults, **change}, None, ["plan.flags", "plan.chain.batch_cap"], [], False)["refs"]
    flags = dict(re.findall(r"(--[a-z-]+) (\S+)", refs["plan.flags"][0]))
    assert flags["--max-num-seqs"] == refs["plan.chain.batch_cap"][0].replace(",", "")
    assert int(flags["--max-num-batched-tokens"]) == max(512, int(flags["--max-num-seqs"]))
    assert flags["--max-model-len"] == str(LIMIT)


def test_a_chart_still_owed_its_curves_says_so_in_print(plan_page):
    """Charts out of view are computed after the figures, once the reader pauses: printed in that
    moment, such a chart is marked as showing the previous inputs; then it catches up."""
    page = plan_page.page
    page.locator(CALC.selector).scroll_into_view_if_needed()
    chart = page.locator("figure.chart:has([data-chart='gpus-vs-rate'])")
    assert not page.evaluate("node => window.runbook.chartInView(node)", chart.locator("[data-chart]").element_handle())
    assert CALC.set(page, rate="12") == "computed"
    assert chart.get_attribute("data-curves-owed") == ""
    page.emulate_media(media="print")
    assert "still being recomputed" in page.evaluate(
        "node => getComputedStyle(node, '::before').content", chart.element_handle())
    page.emulate_media(media="screen")
    expect(chart).not_to_have_attribute("data-curves-owed", "", timeout=10_000)
    expected = PLANNING.run({**PLANNING.defaults, "rate": "12"}, None, [], ["gpus-vs-rate"])["curves"]["gpus-vs-rate"]
    drawn = chart.locator("[data-chart]").evaluate("node => node.data.map(trace => Array.from(trace.y))")
    assert drawn[:len(expected["curves"])] == [curve["y"] for curve in expected["curves"]]
    assert CALC.set(page, rate=PLANNING.defaults["rate"]) == "computed"
