"""Document 11: the per-GPU ladders of Llama 3.1 70B at tensor-parallel 2, 4 and 8 and of the 405B in
fp8 on a node, and the all-reduce traffic of a decode step, each derived here by hand from the
config's numbers (read from calc's config dicts) and the card's datasheet fields; the parallel
calculator in CPython and in Chromium over file://, with its bad-input battery."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from arithmetic import check
from calc.engine import parallel
from calc.engine import measured_kernels, sharding
from calc.calculators import PARALLEL
from calc.specs.cards import H100_SXM, H200_SXM, L40S
from calc.facts import facts
from calc.specs.models import DEEPSEEK_V3_CONFIG, LLAMA_3_1_405B_CONFIG, LLAMA_3_1_70B_CONFIG
from calc.core.present import leaves
from calc.specs.stack import REFERENCE, SKETCH
from calc.core.units import GiB, Result
from conftest import Calculator, booted_page

import by_hand

POOL = math.ceil(H100_SXM.engine_capacity.value * REFERENCE.gpu_memory_utilization)  # the total the engine requests
LIMIT, BLOCK, TYPICAL = REFERENCE.context_limit, REFERENCE.block_size, REFERENCE.typical_conversation


def llama_counts(config: dict) -> tuple[int, int, int, int]:
    """Block matrices, K and V projections, norms and embedding of a Llama config, counted by hand."""
    layers, hidden = config["num_hidden_layers"], config["hidden_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    head_dim = hidden // heads
    ffn = config["intermediate_size"]
    attention = 2 * hidden * heads * head_dim + 2 * hidden * kv * head_dim
    blocks = layers * (attention + 3 * hidden * ffn)
    kv_projections = layers * 2 * hidden * kv * head_dim
    norms = layers * 2 * hidden + hidden
    return blocks, kv_projections, norms, config["vocab_size"] * hidden


def per_gpu_ladder(config: dict, weight_bytes: float, tp: int, pp: int = 1) -> dict[str, float]:
    """One GPU's ladder, by hand: the blocks split tp ways over ⌈layers ÷ pp⌉ layers, one vocabulary
    slice of each table on the stage, norms whole; the KV heads split."""
    layers, hidden = config["num_hidden_layers"], config["hidden_size"]
    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    blocks, _, _, _ = llama_counts(config)
    stage = math.ceil(layers / pp)
    tables = (2 if pp == 1 else 1) * math.ceil(config["vocab_size"] / tp) * hidden  # 128,256 is a multiple of 64
    rotary = config["max_position_embeddings"] * (hidden // heads) * 2    # vLLM's cos/sin table, on every GPU
    weights = blocks * stage / layers / tp * weight_bytes + (tables + stage * 2 * hidden + hidden) * 2 + rotary
    budget = POOL - weights - by_hand.profile_reserve(config, tp, pp=pp)
    per_token = 2 * stage * (kv // tp) * (hidden // heads) * 2
    tokens = max(budget // (BLOCK * per_token) * BLOCK, 0)
    return {"weights": weights, "budget": budget, "per_token": per_token, "tokens": tokens,
            "users": tokens // LIMIT, "paged": tokens // (math.ceil(TYPICAL / BLOCK) * BLOCK)}


@pytest.fixture(scope="module")
def section():
    return facts()["parallel"]


def test_the_counts_by_hand_agree_with_calcs_whole_model():
    from calc.specs.models import LLAMA_3_1_70B
    from calc.specs.precision import BF16
    from calc.model.weights import weight_bytes
    blocks, _, norms, table = llama_counts(LLAMA_3_1_70B_CONFIG)
    assert weight_bytes(LLAMA_3_1_70B, BF16).value == (blocks + norms + 2 * table) * 2
    assert sharding.weights_per_gpu(LLAMA_3_1_70B, BF16, 1, 1).value == weight_bytes(LLAMA_3_1_70B, BF16).value


@pytest.mark.parametrize("tp", [2, 4, 8])
def test_the_70b_ladder_per_gpu_at_each_degree(section, tp):
    expected = per_gpu_ladder(LLAMA_3_1_70B_CONFIG, 2, tp)
    split = section["degrees"][f"tp{tp}"].plan
    assert split.pool.value == pytest.approx(POOL)
    assert split.weights.value == pytest.approx(expected["weights"])
    assert split.kv_budget.value == pytest.approx(expected["budget"])
    assert split.per_token.value == expected["per_token"]
    assert split.token_capacity.value == expected["tokens"]
    assert split.users_worst.value == expected["users"]
    assert split.users_paged.value == expected["paged"]
    assert split.node_users.value == expected["users"] * (8 // tp)


def test_the_70b_does_not_load_on_one_card(section):
    blocks, _, norms, table = llama_counts(LLAMA_3_1_70B_CONFIG)
    one = section["degrees"]["tp1"]
    rotary = LLAMA_3_1_70B_CONFIG["max_position_embeddings"] * 128 * 2
    reserve = by_hand.profile_reserve(LLAMA_3_1_70B_CONFIG)
    assert one.plan.kv_budget.value == pytest.approx(POOL - (blocks + norms + 2 * table) * 2 - rotary - reserve)
    assert one.plan.kv_budget.value < 0
    assert one.lone is None and one.busy is None
    assert section["fits"]["l70_bf16"].smallest == "tensor-parallel 4", "at two GPUs the profile's reserve overflows"


def test_the_405b_in_fp8_on_a_node(section):
    blocks, _, norms, table = llama_counts(LLAMA_3_1_405B_CONFIG)
    expected = per_gpu_ladder(LLAMA_3_1_405B_CONFIG, 1, 8)
    split = section["l405_fp8"]
    assert split.weights.value == pytest.approx(expected["weights"])
    assert split.weights.value == pytest.approx((blocks / 8 * 1 + (2 * table / 8 + norms) * 2)
                                                + LLAMA_3_1_405B_CONFIG["max_position_embeddings"] * 128 * 2)
    assert split.per_token.value == 2 * 126 * 1 * 128 * 2
    assert split.users_worst.value == expected["users"]
    assert section["fits"]["l405_fp8"].smallest == "tensor-parallel 8"
    assert section["fits"]["l405_bf16"].smallest == "more than one node"


def test_the_405b_in_bf16_over_two_stages(section):
    expected = per_gpu_ladder(LLAMA_3_1_405B_CONFIG, 2, 8, pp=2)
    split = section["l405_bf16"]
    assert split.layers.value == 63
    assert split.weights.value == pytest.approx(expected["weights"])
    assert split.users_worst.value == expected["users"]
    assert section["bubble"].value == pytest.approx((2 - 1) / (REFERENCE.parallel.microbatches + 2 - 1))


def test_all_reduce_traffic_of_a_decode_step(section):
    hidden, layers = LLAMA_3_1_70B_CONFIG["hidden_size"], LLAMA_3_1_70B_CONFIG["num_hidden_layers"]
    link = H100_SXM.interconnect_gb_per_s * 1e9 / 2 * REFERENCE.parallel.link_fraction
    latency = REFERENCE.parallel.latency_s
    for batch, step in ((1, section["lone"]), (int(section["step"].batch.value), section["step"])):
        message = batch * hidden * 2
        traffic = 2 * (4 - 1) / 4 * message
        reduces = step.all_reduce
        assert reduces.count.value == 2 * layers + 1
        assert reduces.message.value == message
        assert reduces.traffic.value == pytest.approx(traffic)
        assert reduces.bytes.value == pytest.approx((2 * layers + 1) * traffic)
        assert reduces.sketch.value == pytest.approx(latency + traffic / link)
        measured = measured_all_reduce(H100_ALL_REDUCE[4], batch * hidden)
        assert reduces.measured and reduces.each.value == pytest.approx(measured)
        assert reduces.time.value == pytest.approx((2 * layers + 1) * measured)
    assert section["step"].batch.value == per_gpu_ladder(LLAMA_3_1_70B_CONFIG, 2, 4)["users"]


H100_ALL_REDUCE = measured_kernels.CARDS["h100-sxm"]["all_reduce"]


def measured_all_reduce(rows, elements: int) -> float:
    """The measured time of one all-reduce of `elements` bf16 values, read by hand: a power law between
    the two message sizes either side."""
    for (n0, t0), (n1, t1) in zip(rows, rows[1:]):
        if n0 <= elements <= n1:
            return t0 * (t1 / t0) ** (math.log(elements / n0) / math.log(n1 / n0))
    raise AssertionError(f"{elements} is outside the table")


def test_a_decode_all_reduce_is_the_measured_kernel_under_cuda_graphs(section):
    """aiconfigurator-core's table of vLLM 0.24.0's all-reduce in a CUDA graph on H100s: one decode token of
    the 70B (8,192 elements) at four GPUs, and a 2,000-token prompt's (16,384,000 elements)."""
    assert section["lone"].all_reduce.each.value == pytest.approx(dict(H100_ALL_REDUCE[4])[8192])
    hidden = LLAMA_3_1_70B_CONFIG["hidden_size"]
    prompt = section["prefill"].all_reduce
    assert prompt.each.value == pytest.approx(measured_all_reduce(H100_ALL_REDUCE[4], REFERENCE.traffic.prompt_p50 * hidden))
    assert prompt.each.value > prompt.sketch.value, "at a prompt's size the measured kernel is slower than the sketch"
    sketched = replace(REFERENCE, parallel=replace(REFERENCE.parallel, all_reduce=SKETCH))
    assert parallel.all_reduces(parallel.sharded(sketched), 4, 1, 80).each.value == pytest.approx(
        REFERENCE.parallel.latency_s + 1.5 * hidden * 2 / (H100_SXM.interconnect_gb_per_s * 1e9 / 2 * REFERENCE.parallel.link_fraction))
    assert not parallel.all_reduces(parallel.sharded(sketched), 4, 1, 80).measured


def test_the_step_and_its_share(section):
    """One GPU's kernels by the time model, then the all-reduces after them."""
    hidden, layers, vocab = (LLAMA_3_1_70B_CONFIG[k] for k in ("hidden_size", "num_hidden_layers", "vocab_size"))
    blocks, _, _, _ = llama_counts(LLAMA_3_1_70B_CONFIG)
    lone = section["lone"]
    assert lone.matmuls.bytes.value >= blocks / 4 * 2, "each GPU reads its quarter of the block matrices"
    assert lone.attention.bytes.value == REFERENCE.traffic.prompt_p50 * 2 * layers * (8 // 4) * (hidden // 64) * 2
    communicating = lone.all_reduce.time.value
    kernels = sum(g.time.value for g in (lone.matmuls, lone.head, lone.attention, lone.others))
    assert lone.time.value == pytest.approx(kernels + lone.overhead.value + communicating)
    assert lone.share.value == pytest.approx(communicating / lone.time.value)
    assert section["lone"].all_reduce.latency_share.value > 0.9, "a decode all-reduce is nearly all fixed cost"
    eight = section["degrees"]["tp8"].lone.share.value
    assert eight > section["degrees"]["tp4"].lone.share.value, "more GPUs, a larger share communicating"


def test_the_ring_and_the_link():
    for n in (2, 4, 8):
        assert parallel.ring_factor(n).value == 2 * (n - 1) / n
    assert parallel.one_way(H100_SXM).value == H100_SXM.interconnect_gb_per_s * 1e9 / 2
    assert parallel.one_way(L40S).value == L40S.interconnect_gb_per_s * 1e9 / 2


def test_kv_heads_are_replicated_past_their_count(section):
    kv, layers = LLAMA_3_1_405B_CONFIG["num_key_value_heads"], LLAMA_3_1_405B_CONFIG["num_hidden_layers"]
    assert section["beyond"]["copies"].value == 16 // kv
    assert section["beyond"]["at_two_nodes"].value == section["beyond"]["at_node"].value == 2 * layers * 1 * 128 * 2
    from calc.specs.models import LLAMA_3_1_405B
    blocks, projections, _, _ = llama_counts(LLAMA_3_1_405B_CONFIG)
    assert sharding.matrices_per_gpu(LLAMA_3_1_405B, 16, 1).value == pytest.approx((blocks - projections) / 16 + projections / kv)


def test_moe_saves_operations_not_memory(section):
    deepseek = section["deepseek"]
    assert deepseek["weights"].value > 8 * POOL
    assert deepseek["over"].value == pytest.approx(deepseek["weights"].value - 8 * POOL)
    assert deepseek["active_share"].value < 0.06
    cuda = H100_SXM.engine_capacity.value  # CUDA's total, as calc's card data holds it
    assert deepseek["spare"].value == pytest.approx((8 * cuda - deepseek["weights"].value) / 8)
    assert 0 < deepseek["spare"].value < GiB, "the weights load into CUDA's total, with under a GiB to spare"


def test_expert_parallelism_against_tensor_parallelism_on_one_basis(section):
    """Bytes the node sends per token and MoE layer: every GPU's all-reduce share under tensor
    parallelism; at most the 4 GPUs a node-limited token reaches (config: n_group 8 = GPUs,
    topk_group 4), or its 8 experts, under expert parallelism."""
    hidden, chosen = DEEPSEEK_V3_CONFIG["hidden_size"], DEEPSEEK_V3_CONFIG["num_experts_per_tok"]
    expert = section["expert"]
    assert expert["tensor_per_gpu"].value == 2 * 2 * 7 / 8 * hidden * 2
    assert expert["tensor_node"].value == 8 * 2 * 2 * 7 / 8 * hidden * 2
    assert expert["by_rank"].value == 2 * 4 * hidden * 2
    assert expert["by_expert"].value == 2 * chosen * hidden * 2
    assert 0.25 < expert["rank_share"].value < expert["expert_share"].value < 0.6, "a quarter to a half, never more"


def test_a_latent_cache_is_copied_by_tensor_parallelism(section):
    latent = section["latent"]
    layers = DEEPSEEK_V3_CONFIG["num_hidden_layers"]
    per_token = layers * (DEEPSEEK_V3_CONFIG["kv_lora_rank"] + DEEPSEEK_V3_CONFIG["qk_rope_head_dim"]) * 2
    assert latent["tp"].per_token.value == per_token, "the whole latent on every GPU"
    pool = math.ceil(H200_SXM.engine_capacity.value * REFERENCE.gpu_memory_utilization)
    reserve = latent["tp"].reserve.value  # the split's own profile: tested for Llama shapes above
    tokens = (pool - latent["tp"].weights.value - reserve) // (BLOCK * per_token) * BLOCK
    assert latent["tp"].users_worst.value == tokens // LIMIT
    each = (pool - latent["dp_weights"].value - reserve) // (BLOCK * per_token) * BLOCK // LIMIT
    assert latent["dp_users"].value == 8 * each > latent["tp"].users_worst.value


def test_every_worked_line_adds_up(section):
    for path, value in leaves({"parallel": section}, depth=6):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], (path, value.worked)


@pytest.mark.parametrize("values, field, words", [
    ({"tensor": "3"}, "tensor", "does not divide"),
    ({"tensor": "16"}, "tensor", "between 1 and 8 GPUs"),
    ({"tensor": "100"}, "tensor", "between 1 and 8 GPUs"),
    ({"tensor": "0"}, "tensor", "between 1 and 8 GPUs"),
    ({"context_limit": "1000"}, "context_limit", "2,000-token prompt"),
    ({"batch": "100001"}, "batch", "between"),
    ({"batch": "100000"}, "batch", "more than this split's cache admits"),
    ({"pipeline": "9"}, "pipeline", "between"),
    ({"tensor": "2.5"}, "tensor", "whole"),
    ({"context_limit": "200000"}, "context_limit", "positions"),
    ({"ring": "0"}, "ring", "between"),
    ({"latency": "-1"}, "latency", "between"),
    ({"batch": "0"}, "batch", "between"),
])
def test_the_calculator_refuses_what_cannot_be(values, field, words):
    answer = PARALLEL.run({**PARALLEL.defaults, **values}, None, ["parallel.plan.users_worst"])
    assert not answer["ok"] and words in answer["errors"][field], answer


def test_a_split_that_does_not_load_is_a_result_not_an_error():
    answer = PARALLEL.run({**PARALLEL.defaults, "tensor": "1"}, None, ["parallel.plan.verdict", "parallel.step.time"])
    assert answer["ok"]
    assert answer["refs"]["parallel.plan.verdict"][0].startswith("does not fit")
    assert answer["refs"]["parallel.step.time"][0] == "—"


def test_the_calculator_in_cpython_follows_the_page(section):
    answer = PARALLEL.run(PARALLEL.defaults, None, ["parallel.plan.users_worst", "parallel.step.share"], ["tp-scaling"])
    assert answer["refs"]["parallel.plan.users_worst"][0] == str(section["plan"].users_worst)
    curves = answer["curves"]["tp-scaling"]["curves"]
    # the 70B in bf16 loads from four GPUs: at two the profile's reserve overdraws the pool (test_parallel above)
    assert curves[0]["x"] == [1, 2, 4, 8] and curves[2]["x"] == [4, 8], "no step where the weights do not load"


# ---- In Chromium, over file://, with the network blocked.

CALC = Calculator("parallel")


@pytest.fixture(scope="module")
def parallel_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "11", "parallel")


@pytest.mark.parametrize("inputs", [
    {"model": "llama-3.1-70b", "card": "h100-sxm", "weights": "bf16", "kv": "bf16", "tensor": "8", "pipeline": "1"},
    {"model": "llama-3.1-405b", "card": "h100-sxm", "weights": "bf16", "kv": "fp8", "tensor": "8", "pipeline": "2"},
    {"model": "mixtral-8x7b", "card": "l40s", "weights": "fp8", "kv": "fp8", "tensor": "4", "pipeline": "1", "batch": "16"},
])
def test_the_calculator_follows_cpython(parallel_page, inputs):
    page = parallel_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = PARALLEL.run({**PARALLEL.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}


@pytest.mark.parametrize("field, value", [
    ("tensor", ""), ("tensor", "3"), ("tensor", "16"), ("pipeline", "0"), ("ring", "8,5"), ("latency", "lots"),
    ("context_limit", "1e40"), ("batch", "12\u200b"), ("tensor", "100"), ("context_limit", "1000"),
    ("batch", "100000"), ("latency", "4" * 100_000),
])
def test_bad_input_gets_a_message(parallel_page, field, value):
    page = parallel_page.page
    defaults = PARALLEL.defaults
    CALC.set(page, **defaults)
    expected = PARALLEL.run({**defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: defaults[field]})


def test_every_field_at_fault_is_named_at_once():
    answer = PARALLEL.run({**PARALLEL.defaults, "tensor": "3", "context_limit": "200000"}, None, [])
    assert set(answer["errors"]) == {"tensor", "context_limit"}


def test_the_context_limit_must_hold_the_prompt_the_page_times():
    prompt = REFERENCE.traffic.prompt_p50
    assert PARALLEL.run({**PARALLEL.defaults, "context_limit": str(prompt)}, None, [])["ok"]
    assert not PARALLEL.run({**PARALLEL.defaults, "context_limit": str(prompt - 1)}, None, [])["ok"]


def _summary(**values):
    refs = ["parallel.summary.decode", "parallel.summary.prefill", "parallel.plan.copies_text",
            "parallel.plan.gpus_text", "parallel.plan.kv_heads_text", "parallel.step.time"]
    answer = PARALLEL.run({**PARALLEL.defaults, **values}, None, refs, ["tp-scaling"])
    assert answer["ok"], answer
    return {ref.rsplit(".", 1)[1]: text for ref, (text, _) in answer["refs"].items()}, answer["curves"]["tp-scaling"]


def test_no_busy_step_is_timed_when_no_sequence_fits():
    words, chart = _summary(tensor="2", weights="fp8", card="l40s", context_limit="131072")
    assert words["time"] == "—" and words["decode"].startswith("No busy step: not one sequence")
    assert words["copies_text"] == "no copy serves a user"
    assert 2 not in chart["curves"][3]["x"] and chart["rows"][1][4] == "no user fits"


def test_the_batch_is_priced_only_where_the_cache_admits_it():
    """The default split admits more than 20 sequences at the limit; tensor-parallel 2 does not load."""
    words, chart = _summary(batch="20")
    assert words["decode"].startswith("161 all-reduces of 327,680 B at 20 sequences"), words  # 20 × 8,192 × 2 B
    assert chart["curves"][3]["name"] == "step, batch of 20 (ms)"
    assert chart["curves"][3]["x"] == [4, 8] and chart["rows"][1][4] == "does not load"


def test_a_split_that_does_not_load_says_so_in_words():
    words, chart = _summary(model="deepseek-v3", card="l4", weights="bf16")
    assert words["decode"].startswith("Nothing to time. The split does not fit")
    assert words["prefill"] == "No prefill to time" and words["copies_text"] == "no copy serves a user"
    assert all(not curve["x"] for curve in chart["curves"][2:])


def test_one_of_anything_is_singular():
    words, _ = _summary(model="llama-3.1-8b", tensor="1", batch="1")
    assert words["gpus_text"] == "1 GPU per copy" and words["kv_heads_text"] == "8 KV heads each"
    assert " at 1 sequence." in words["decode"] and "no all-reduce" in words["decode"]
    values = {**PARALLEL.defaults, "model": "llama-3.1-8b", "tensor": "1", "pipeline": "1", "batch": "1",
              "latency": "1e-7"}
    printed = PARALLEL.summary(values, PARALLEL.stack(values)[0])
    for words in ("tensor parallel 1 GPU ·", "pipeline 1 stage ·", "batch 1 sequence ·", "link achieved 80% ·",
                  "all-reduce fixed cost 0.0000001 µs"):
        assert words in printed, printed


def test_a_long_paste_is_quoted_without_a_count_the_page_may_have_cut():
    """Any calculator's number field: the page sends at most 1,000 characters of a paste."""
    from calc.calculators import CALCULATORS
    from calc.core.echo import excerpt
    from calc.fields import NumberField
    numbers = [f for calc in CALCULATORS.values() for f in calc.fields if isinstance(f, NumberField)]
    assert numbers
    for field in numbers:
        with pytest.raises(ValueError) as whole:
            field.parse("4" * 100_000)
        with pytest.raises(ValueError) as cut:
            field.parse("4" * 1_000)
        assert str(whole.value) == str(cut.value) and "more character" not in str(whole.value)
    assert excerpt("x" * 41).endswith("(1 more character)")


def test_the_busiest_pipeline_stage_reads_its_lm_head(section):
    """Over two stages the last is priced: its half of the layers' matrices and its LM head slice."""
    split = section["l405_bf16"]
    step = parallel.decode_step(split, 1, 2_000)
    blocks, _, _, table = llama_counts(LLAMA_3_1_405B_CONFIG)
    assert step.head.bytes.value == table / 8 * 2
    assert step.matmuls.bytes.value >= blocks * 63 / 126 / 8 * 2


def test_the_line_rate_reading_uses_the_ring_bytes(section):
    hidden = LLAMA_3_1_70B_CONFIG["hidden_size"]
    traffic = 2 * 7 / 8 * hidden * 2  # one token's activations, a ring's share at eight GPUs
    assert section["naive"]["at_datasheet"].value == pytest.approx(traffic / (H100_SXM.interconnect_gb_per_s * 1e9 / 2))


def _axes(page) -> dict:
    return page.evaluate("""() => { const n = document.querySelector("[data-chart='tp-scaling']");
        return {x: n._fullLayout.xaxis.type, y2: n._fullLayout.yaxis2.range, ticks: n._fullLayout.xaxis._categories}; }""")


def test_the_chart_keeps_its_category_axis_and_refits_its_ranges(parallel_page):
    """A recompute restyles the curves: the degrees stay categories, and an axis whose lines vanish
    does not keep the last range."""
    page = parallel_page.page
    # In view, the chart is recomputed and redrawn with the figures (out of view, once the reader pauses).
    page.eval_on_selector("[data-chart='tp-scaling']", "node => node.scrollIntoView()")
    page.wait_for_function("() => window.runbook.chartInView(document.querySelector(\"[data-chart='tp-scaling']\"))")
    CALC.set(page, **PARALLEL.defaults)
    assert CALC.set(page, tensor="8") == "computed"
    drawn = _axes(page)
    assert drawn["x"] == "category" and drawn["ticks"] == ["1", "2", "4", "8"], drawn
    assert CALC.set(page, model="llama-3.1-405b", pipeline="2") == "computed"
    slow = _axes(page)["y2"]
    assert CALC.set(page, model="deepseek-v3", card="l4", pipeline="1") == "computed"
    empty = _axes(page)
    assert empty["x"] == "category" and empty["y2"][1] < slow[1] / 10, (slow, empty)
    CALC.set(page, **PARALLEL.defaults)


def test_the_page_names_every_field_at_fault_at_once(parallel_page):
    page = parallel_page.page
    CALC.set(page, **PARALLEL.defaults)
    assert CALC.set(page, tensor="3", context_limit="200000") == "invalid"
    expected = PARALLEL.run({**PARALLEL.defaults, "tensor": "3", "context_limit": "200000"}, None, [])["errors"]
    for field in ("tensor", "context_limit"):
        assert page.text_content(f"{CALC.selector} [data-error-for={field}]") == expected[field]
    CALC.set(page, **PARALLEL.defaults)


def test_the_page_says_in_words_when_nothing_loads(parallel_page):
    page = parallel_page.page
    inputs = {"model": "deepseek-v3", "card": "l4", "weights": "bf16"}
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    assert shown["parallel.summary.decode"].startswith("Nothing to time.")
    assert shown["parallel.plan.copies_text"] == "no copy serves a user"
    CALC.set(page, **PARALLEL.defaults)
