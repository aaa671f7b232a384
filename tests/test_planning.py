"""Document 14: the planning chain for the reference traffic derived here by hand from the model's
config and the card's datasheet (as calc's tables hold them); the planning calculator in CPython
and in Chromium over file://, with its bad-input battery; the capacity note's content, its print on
exactly one A4 and one Letter page, and its download as a self-contained file."""
from __future__ import annotations

import math
import re

import pytest

from arithmetic import check
from calc import planning
from calc.calculators import PLANNING
from calc.cards import H100_SXM
from calc.facts import facts
from calc.models import LLAMA_3_1_8B as M
from calc.present import leaves
from calc.units import GiB, Result
from conftest import Calculator, booted_page

RATE, PROMPT, PROMPT_P95, OUTPUT, ITL, TTFT = 40, 2000, 8000, 300, 0.050, 1.0
MFU, BANDWIDTH, TARGET, SPARES, NODE, PRICE, AVERAGE = 0.40, 0.60, 0.80, 1, 8, 3.00, 0.40
BLOCK, BYTES = 16, 2

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
COMPUTE = MFU * H100_SXM.bf16_dense_tflops * 1e12
READ_RATE = BANDWIDTH * H100_SXM.hbm_tb_per_s * 1e12
WEIGHTS_READ = (BLOCKS + HEAD + NORMS) * BYTES          # every weight but the gathered embedding


def prefill(tokens: int) -> float:
    ops = 2 * BLOCKS * tokens + 2 * HEAD + PER_POSITION * tokens * (tokens + 1) // 2
    return max(ops / COMPUTE, WEIGHTS_READ / READ_RATE)


def step(batch: int, held: int) -> float:
    matmuls = max(WEIGHTS_READ / READ_RATE, batch * 2 * (BLOCKS + HEAD) / COMPUTE)
    attention = max(batch * held * PER_TOKEN / READ_RATE, batch * PER_POSITION * held / COMPUTE)
    return matmuls + attention


def by_hand() -> dict[str, float]:
    """The chain, link by link. The card's total as the runtime reports it is the ladder's first rung
    (read from calc, since which total the runtime reports is document 06's to decide)."""
    in_system = prefill(PROMPT) + (OUTPUT - 1) * ITL
    residents = RATE * in_system
    budget = facts()["ladder"].capacity.value * 0.90 - PARAMS * BYTES - 3 * GiB
    capacity = math.floor(budget / (BLOCK * PER_TOKEN)) * BLOCK
    request = math.ceil((PROMPT + OUTPUT) / BLOCK) * BLOCK
    per_replica = capacity // request
    memory = math.ceil(residents / (per_replica * TARGET))
    held = PROMPT + OUTPUT // 2
    batch = max(b for b in range(1, per_replica + 1) if step(b, held) <= ITL)
    prefill_cards = RATE * prefill(PROMPT)
    decode_cards = RATE * (OUTPUT - 1) * step(batch, held) / batch
    compute = math.ceil((prefill_cards + decode_cards) / TARGET)
    fleet = max(memory, compute) + SPARES
    bought = math.ceil(fleet / NODE) * NODE
    month = bought * PRICE * 365 * 24 / 12
    tokens = RATE * AVERAGE * (PROMPT + OUTPUT) * 365 * 24 / 12 * 3600
    return {"in_system": in_system, "residents": residents, "per_replica": per_replica, "memory": memory,
            "batch": batch, "prefill_cards": prefill_cards, "decode_cards": decode_cards, "compute": compute,
            "fleet": fleet, "bought": bought, "month": month, "per_million": month / tokens * 1e6,
            "ttft_p95": prefill(PROMPT_P95)}


@pytest.fixture(scope="module")
def chain():
    return facts()["plan"]["chain"]


def test_the_model_is_read_by_hand():
    assert PARAMS == 8_030_261_248
    assert PER_TOKEN == 131_072


def test_the_chain_for_the_reference_traffic(chain):
    hand = by_hand()
    assert chain.in_system.value == pytest.approx(hand["in_system"])
    assert chain.residents.value == pytest.approx(hand["residents"])
    assert chain.per_replica.value == hand["per_replica"]
    assert chain.memory_gpus.value == hand["memory"]
    assert chain.batch.value == hand["batch"]
    assert chain.prefill_cards.value == pytest.approx(hand["prefill_cards"])
    assert chain.decode_cards.value == pytest.approx(hand["decode_cards"])
    assert chain.compute_gpus.value == hand["compute"]
    assert chain.fleet.value == hand["fleet"]
    assert chain.bought.value == hand["bought"]
    assert chain.cost_month.value == pytest.approx(hand["month"])
    assert chain.per_million.value == pytest.approx(hand["per_million"])
    assert chain.ttft_p95.value == pytest.approx(hand["ttft_p95"])
    assert chain.ttft_met and chain.itl_met


def test_the_binding_constraint_is_named(chain):
    hand = by_hand()
    expected = "card time (compute)" if hand["compute"] > hand["memory"] else "the cache (memory)"
    assert facts()["plan"]["binding"] == expected


def test_decode_costed_as_operations_understates_its_card_time(chain):
    hand = by_hand()
    held = PROMPT + OUTPUT // 2
    as_operations = RATE * (OUTPUT - 1) * (2 * (BLOCKS + HEAD) + PER_POSITION * held) / COMPUTE
    assert chain.decode_as_flops.value == pytest.approx(as_operations)
    assert chain.understated.value == pytest.approx(hand["decode_cards"] / as_operations)
    assert chain.understated.value > 1


def test_a_looser_promise_grows_the_memory_path():
    looser = facts()["plan"]["changes"]["looser_itl"]
    assert looser.binding == "the cache (memory)"
    assert looser.fleet.value > facts()["plan"]["chain"].memory_gpus.value + SPARES


def test_every_worked_line_adds_up():
    for path, value in leaves({"plan": facts()["plan"]}, depth=6):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_the_utilisation_lever():
    lever = facts()["plan"]["lever"]
    assert lever["gain"].value == pytest.approx(0.50 / 0.20)
    assert lever["quiet_per_million"].value == pytest.approx(by_hand()["per_million"] * AVERAGE / 0.20)


@pytest.mark.parametrize("change, field, message", [
    ({"model": "llama-3.1-70b"}, "card", "this plan puts one replica on one card"),
    ({"itl": "3"}, "itl", "no batch meets an ITL of 3 ms"),
    ({"ttft": "100"}, "ttft", "more cards do not shorten it"),
    ({"prompt_p95": "1000"}, "prompt_p95", "a percentile cannot fall as it rises"),
    ({"prompt_p50": "131000", "prompt_p95": "131000"}, "prompt_p95", "reaches at most 131,072 positions"),
    ({"prompt_p50": "100000", "prompt_p95": "100000", "card": "l4"}, "prompt_p50",
     "more than one replica's KV budget"),
])
def test_a_plan_calc_would_get_wrong_is_refused_by_name(change, field, message):
    answer = PLANNING.run({**PLANNING.defaults, **change}, None, [], [], False)
    assert message in answer["errors"][field]


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


def test_the_note_states_the_reference_plan(plan_page):
    page = plan_page.page
    hand = by_hand()

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
])
def test_bad_input_gets_a_message(plan_page, field, value):
    page = plan_page.page
    CALC.set(page, **PLANNING.defaults)
    expected = PLANNING.run({**PLANNING.defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: PLANNING.defaults[field]})


def page_count(pdf: bytes) -> int:
    return int(re.findall(rb"/Type\s*/Pages\b.*?/Count (\d+)", pdf, re.DOTALL)[0])


@pytest.mark.parametrize("paper", ["A4", "Letter"])
def test_the_note_prints_on_one_page(plan_page, paper):
    page = plan_page.page
    CALC.set(page, **PLANNING.defaults)
    # The button prints through the browser's dialog; the page's own print step is what it runs first.
    page.evaluate(f"() => window.runbookNote.prepare(document.querySelector('{NOTE}'))")
    page.emulate_media(media="print")
    try:
        assert page_count(page.pdf(format=paper, print_background=True)) == 1
    finally:
        page.emulate_media(media="screen")
        page.evaluate("() => window.runbookNote.release()")


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
