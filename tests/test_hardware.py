"""Document 04: the hardware figures checked against values derived here independently, and the
roofline calculator in Chromium over file:// with the network blocked, against CPython's calc."""
from __future__ import annotations

import pytest

import by_hand
from arithmetic import check
from calc.calculators import HARDWARE
from calc.specs.cards import CARDS
from calc.facts import facts
from calc.core.present import leaves
from calc.core.units import Result
from conftest import Calculator, booted_page, same_answer

DOC = "04-hardware.html"
CALC = "[data-calculator=hardware]"
DEFAULTS = HARDWARE.defaults

# Llama 3.1 8B, counted by hand from its config: 32 layers of hidden 4,096, 32 query and 8 KV heads
# of width 128, feed-forward 14,336, vocabulary 128,256, untied embedding and head.
HIDDEN, LAYERS, FFN, VOCAB = 4096, 32, 14336, 128256
ATTENTION = HIDDEN * HIDDEN * 2 + HIDDEN * 1024 * 2          # q and o, then k and v (8 heads × 128)
BLOCK = ATTENTION + 3 * HIDDEN * FFN                          # plus gate, up and down
BLOCKS = LAYERS * BLOCK
TABLE = VOCAB * HIDDEN
NORMS = LAYERS * 2 * HIDDEN + HIDDEN
TOTAL = BLOCKS + 2 * TABLE + NORMS                            # 8,030,261,248
READ_BF16 = 2 * (TOTAL - TABLE)                               # a step gathers rows of the embedding
MULTIPLIED = BLOCKS + TABLE                                   # the blocks and the LM head
CACHE_PER_TOKEN = 2 * LAYERS * 8 * 128 * 2                    # 131,072 B in bf16
ATTENTION_PER_POSITION = 4 * LAYERS * HIDDEN


def card_budget(card) -> float:
    """vLLM 0.33.0's ladder on `card`: CUDA's total (or nvidia-smi's less the H100 SXM's driver share),
    and the batch defaults of its tier (vllm/engine/arg_utils.py, get_batch_defaults, by NVML's total)."""
    h100 = CARDS["h100-sxm"]
    driver = h100.reported_mib * 2 ** 20 - h100.cuda_gib * 2 ** 30
    total = card.cuda_gib * 2 ** 30 if card.cuda_gib else card.reported_mib * 2 ** 20 - driver
    nvml = card.reported_mib * 2 ** 20
    tokens, seqs = ((16384, 1024) if nvml >= 160 * 2 ** 30 else
                    (8192, 1024) if nvml >= 70 * 2 ** 30 and "A100" not in card.name else (2048, 256))
    return by_hand.kv_budget(0.90, total / 2 ** 30, tokens, seqs)


@pytest.fixture(scope="module")
def hw():
    return facts()["hardware"]


def test_hand_count_matches_the_config():
    assert TOTAL == 8_030_261_248
    assert READ_BF16 == 15_009_849_344


def test_the_h100_ridge_is_peak_over_bandwidth(hw):
    assert hw["ridge"].value == pytest.approx(989.4e12 / 3.35e12)
    assert str(hw["ridge"]) == "295 FLOP/B"
    assert hw["ridge_fp8"].value == pytest.approx(1978.9e12 / 3.35e12)
    # the matrix multiplies' achieved rates: their measured share at a 2,000-token prompt over one at a token
    assert hw["effective_ridge"].value == pytest.approx(by_hand.achieved_compute() / by_hand.achieved_bandwidth())


@pytest.mark.parametrize("key, tb_per_s, dense", [
    ("h100_sxm", 3.35, 989.4), ("h100_pcie", 2.0, 756.5), ("h200_sxm", 4.8, 989.4), ("b200", 7.7, 2250),
    ("a100_80", 2.039, 312), ("a100_40", 1.555, 312), ("l40s", 0.864, 362.05), ("l4", 0.3, 121),
    ("mi300x", 5.3, 1307.4),
])
def test_each_card_on_its_phase_axis(hw, key, tb_per_s, dense):
    view = hw["cards"][key]
    assert view.ridge.value == pytest.approx(dense / tb_per_s)
    assert view.floor.value == pytest.approx(READ_BF16 / (tb_per_s * 1e12))
    assert view.ceiling.value == pytest.approx(tb_per_s * 1e12 / READ_BF16)
    head = 128_256 * 4_096  # the LM head runs once, for the sampled position
    prefill_ops = 2 * (MULTIPLIED - head) * 2000 + 2 * head + ATTENTION_PER_POSITION * 2000 * 2001 // 2
    if key == "h100_sxm":
        assert view.prefill.value == pytest.approx(by_hand.prefill_s(2000))
    # never faster than the datasheet's dense peak; never as slow as a third of it on a 2,000-token prompt
    assert prefill_ops / (dense * 1e12) < view.prefill.value < prefill_ops / (0.33 * dense * 1e12)
    assert view.sparse.value == pytest.approx(2 * dense * 1e12, rel=0.03)  # the datasheets round the sparse row
    budget = card_budget(CARDS[key.replace("_", "-")])
    assert view.kv_budget.value == pytest.approx(budget)
    blocks = int(budget // (16 * CACHE_PER_TOKEN))
    assert view.users.value == blocks * 16 // 8192


def test_marketed_gigabytes_against_what_the_runtime_reports(hw):
    sheet = hw["datasheet"]
    assert sheet.marketed_gib.value == 80e9
    assert str(sheet.marketed_gib) == "74.51 GiB"
    assert str(sheet.reported) == "79.65 GiB"
    assert sheet.conversion_gap.value == pytest.approx(81559 * 2 ** 20 - 80e9)
    assert sheet.sparse_ratio.value == pytest.approx(1979 / 989.4)


def test_decode_intensity_follows_batch_then_levels_off(hw):
    held = 2150
    per_sequence_ops = 2 * MULTIPLIED + ATTENTION_PER_POSITION * held
    single = per_sequence_ops / (READ_BF16 + held * CACHE_PER_TOKEN)
    assert hw["single"].intensity.value == pytest.approx(single)
    batch = int(hw["batch"].value)
    busy = batch * per_sequence_ops / (READ_BF16 + batch * held * CACHE_PER_TOKEN)
    assert hw["step"].intensity.value == pytest.approx(busy)
    assert busy < batch / 4, "the cache, not the batch, sets the busy step's intensity"
    limit = per_sequence_ops / (held * CACHE_PER_TOKEN)
    assert hw["limit"].value == pytest.approx(limit)
    assert limit < hw["effective_ridge"].value
    assert hw["crossing"].happens == (hw["crossing"].admitted.value >= hw["crossing"].batch.value)
    # a full card at this length: the cache admits fewer sequences than the matrix multiplies need to cross
    admitted = by_hand.token_capacity(by_hand.kv_budget()) // 2_160      # 2,150 tokens in blocks of 16
    crossing = by_hand.achieved_compute() / by_hand.achieved_bandwidth() * READ_BF16 / (2 * MULTIPLIED)
    assert batch == admitted < crossing
    assert hw["binds"] == "memory bandwidth"


def test_the_matrix_multiplies_cross_where_the_equation_says(hw):
    ridge = by_hand.achieved_compute() / by_hand.achieved_bandwidth()
    batch = ridge * READ_BF16 / (2 * MULTIPLIED)  # weights read once; two operations per parameter per sequence
    assert hw["rule"]["bf16"].batch.value == pytest.approx(batch)
    # fp8 doubles the peak, but vLLM's fp8 kernel reaches less of its roofline than the bf16 one, as measured
    fp8_ridge = by_hand.gemm_share_fp8(2000) * by_hand.PEAK_FP8 / (by_hand.gemm_share_fp8(1) * by_hand.BANDWIDTH)
    assert hw["rule"]["fp8"].ridge.value == pytest.approx(fp8_ridge)
    assert hw["rule"]["int4"].batch.value < min(hw["rule"]["bf16"].batch.value, hw["rule"]["fp8"].batch.value)


def test_prefill_is_compute_bound_only_past_the_ridge(hw):
    assert hw["prefill"].bound == "compute"
    assert hw["prefill_short"].bound == "memory bandwidth"
    assert hw["prefill_short"].intensity.value < hw["ridge"].value < hw["prefill"].intensity.value


def test_the_ceilings_the_corrections_compare(hw):
    assert hw["ceiling"].value == pytest.approx(3.35e12 / READ_BF16)
    assert hw["held_ceiling"].value == pytest.approx(3.35e12 / (2 * TOTAL))
    assert int(hw["held_ceiling"].value) == 208


def test_every_hardware_figure_shows_arithmetic_that_holds():
    for path, value in leaves({"hardware": facts()["hardware"]}):
        if isinstance(value, Result):
            assert check(value.worked) == [], path


def test_the_roofline_curves_have_every_card_and_three_points():
    answer = HARDWARE.run(DEFAULTS, charts=["roofline"])
    curves = answer["curves"]["roofline"]["curves"]
    assert len(curves) == 1 + len(CARDS) + 3
    assert curves[0]["name"] == "H100 SXM 80 GB · chosen"
    for curve in curves[1:1 + len(CARDS)]:
        assert curve["y"][1] == curve["y"][2] and curve["x"][0] * curve["y"][1] < curve["y"][1] * curve["x"][1]
    budget = card_budget(CARDS["h100-sxm"])
    busy = int(budget // (16 * CACHE_PER_TOKEN)) * 16 // 2160  # residents at 2,000 + 300 ÷ 2 tokens, 135 blocks each
    assert [c["name"] for c in curves[-3:]] == ["prefill · 2,000 tokens", "decode · batch 1", f"decode · batch {busy}"]
    assert len(answer["curves"]["roofline"]["rows"]) == len(CARDS) + 3


def test_the_page_carries_the_chart_the_figure_and_the_calculator(site):
    html = (site / DOC).read_text(encoding="utf-8")
    assert 'data-chart="roofline"' in html and 'class="anim-picture stream-picture"' in html
    assert 'data-calculator="hardware"' in html and 'data-live="hardware"' in html


# ---- In Chromium, from file://, offline.

DRIVER = Calculator("hardware")


@pytest.fixture(scope="module")
def hw_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "04", DOC)


settle, set_inputs = DRIVER.settle, DRIVER.set


def reset(page) -> None:
    set_inputs(page, **DEFAULTS)


live_figures = DRIVER.live


def cpython(values: dict, paths=(), charts=()) -> dict:
    return HARDWARE.run({**DEFAULTS, **values}, None, list(paths), list(charts))


def test_figures_before_and_after_python_starts_are_identical(watched):
    page = watched.page
    page.goto(watched.url_of(DOC))
    before = live_figures(page)
    assert before["hardware.binds"] == "memory bandwidth"
    page.evaluate("() => window.runbookCalculator.recompute('hardware')")
    assert settle(page) == "computed"
    assert live_figures(page) == before
    assert watched.network() == [] and watched.problems == []


SAMPLE = [
    {},
    {"card": "h200-sxm", "weights": "fp8"},
    {"card": "b200", "model": "llama-3.1-70b", "weights": "fp8", "kv": "fp8", "batch": "64"},
    {"card": "a100-40", "weights": "int4", "held": "128", "batch": "512"},
    {"card": "l4", "weights": "int4", "kv": "fp8", "prompt": "64", "held": "700"},
    {"card": "mi300x", "model": "llama-3.1-70b", "held": "131072", "compute_scale": "38", "bandwidth_scale": "55"},
    {"card": "h100-pcie", "model": "llama-3.2-1b", "batch": "1", "held": "32000"},
    {"card": "l40s", "model": "llama-3.1-70b"},
]
PATHS = sorted({path for path, _ in leaves({"hardware": facts()["hardware"]})} | {
    "hardware.binds", "hardware.room", "hardware.crossing_text", "hardware.prefill.bound",
    "hardware.step.time|worked", "hardware.step.intensity|digits 1", "card.name", "model.name"})


def test_calc_under_pyodide_agrees_with_cpython(hw_page):
    page = hw_page.page
    requests = [{"calculator": "hardware", "values": {**DEFAULTS, **values}, "paths": PATHS, "charts": ["roofline"]}
                for values in SAMPLE]
    answers = page.evaluate("requests => Promise.all(requests.map(r => window.runbookCalculator.compute(r)))", requests)
    for request, answer in zip(requests, answers, strict=True):
        expected = HARDWARE.run(request["values"], None, request["paths"], ["roofline"])
        assert same_answer(answer["answer"], expected)
    assert answers[1]["answer"]["refs"]["hardware.ridge"][0] == "412 FLOP/B"  # 1,978.9 ÷ 4.8, fp8 on an H200
    assert answers[3]["answer"]["refs"]["hardware.binds"][0].startswith("compute")


def test_the_live_figures_and_the_chart_follow_the_inputs(hw_page):
    page = hw_page.page
    reset(page)
    values = {"card": "b200", "weights": "fp8", "batch": "32", "held": "4096"}
    assert set_inputs(page, **values) == "computed"
    shown = live_figures(page)
    expected = cpython(values, paths=list(shown), charts=["roofline"])
    assert shown == {path: figure[0] for path, figure in expected["refs"].items()}
    assert shown["card.name"] == "B200 180 GB"
    curves = None
    for _ in range(50):
        curves = page.eval_on_selector("[data-chart=roofline]", "node => node.data.map(t => ({name: t.name, x: t.x, y: t.y}))")
        if same_answer(curves, expected["curves"]["roofline"]["curves"]):
            break
        page.wait_for_timeout(100)
    assert same_answer(curves, expected["curves"]["roofline"]["curves"])
    rows = page.eval_on_selector_all("[data-chart-table='roofline'] tr",
                                     "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")
    assert rows == expected["curves"]["roofline"]["rows"]


@pytest.mark.parametrize("field, value", [
    ("held", ""), ("held", "0"), ("held", "-5"), ("held", "lots"), ("held", "1e40"), ("held", "2150.5"),
    ("held", "200000"), ("held", "2,150.5"), ("held", "21,50"), ("held", "2150\u200b"),
    ("batch", "0"), ("batch", "1.5"), ("batch", "NaN"), ("batch", "999999999"),
    ("prompt", ""), ("prompt", "Infinity"), ("compute_scale", "0"), ("compute_scale", "150"), ("bandwidth_scale", "-1"),
    ("bandwidth_scale", "0,6"), ("prompt", "200000"),
])
def test_bad_input_gets_a_message_naming_the_field(hw_page, field, value):
    page = hw_page.page
    reset(page)
    after = DRIVER.refuse(page, field, value, cpython({field: value})["errors"][field])
    assert not any("Traceback" in text for text in after.values())


def test_a_sequence_longer_than_the_model_reaches_is_refused_by_name():
    answer = cpython({"held": "131073"})
    assert answer["errors"] == {"held": "Llama 3.1 8B Instruct reaches at most 131,072 positions; "
                                        "a sequence cannot hold more tokens than that"}
