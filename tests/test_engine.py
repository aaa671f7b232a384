"""The engine layer against vLLM 0.33.0's own code, published start-up logs and measured kernels.

Every expected value here is typed from its source (a default as the wheel's .py files state it, a
figure as a log printed it, a time as a measurement reported it) or redone by hand from a config, never
read back from calc.
"""
from __future__ import annotations

import json
import math
import subprocess
import sys
from dataclasses import replace

import pytest

from arithmetic import check
from calc.engine import kvcache, simulation, timing
from calc.calculators import STARTUP
from calc.specs.cards import A100_80, B200, H100_SXM, H200_SXM, L40S, L4, MI300X
from calc.engine import kernels, logs, measured_kernels, memory
from calc.specs import release
from calc.specs.release import ENTRY_LLM, PINNED, V0_19_0
from calc.specs.models import LLAMA_3_1_8B_CONFIG
from calc.core.present import leaves
from calc.specs.stack import REFERENCE
from calc.core.units import Result

GiB, MiB = 2 ** 30, 2 ** 20
C = LLAMA_3_1_8B_CONFIG
HEAD_DIM = C["hidden_size"] // C["num_attention_heads"]
PER_TOKEN = 2 * C["num_hidden_layers"] * C["num_key_value_heads"] * HEAD_DIM * 2
PARAMS = 8_030_261_248  # tests/test_anatomy.py counts it term by term from the config
ROTARY = C["max_position_embeddings"] * HEAD_DIM * 2


# ---- The release: vLLM 0.33.0's defaults, as its wheel states them.

@pytest.mark.parametrize("card, serve, llm_class", [
    # vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults: NVML's total ≥ 160 GiB → 16384/16384 and 1024;
    # ≥ 70 GiB and not an A100 → 16384 (LLM class) / 8192 (vllm serve) and 1024; otherwise 8192 / 2048 and 256.
    (H100_SXM, (8192, 1024), (16384, 1024)),
    (H200_SXM, (8192, 1024), (16384, 1024)),
    (B200, (16384, 1024), (16384, 1024)),
    (MI300X, (16384, 1024), (16384, 1024)),
    (A100_80, (2048, 256), (8192, 256)),
    (L40S, (2048, 256), (8192, 256)),
    (L4, (2048, 256), (8192, 256)),
])
def test_batch_defaults_follow_the_card_and_the_entry_point(card, serve, llm_class):
    assert PINNED.batch_defaults(card) == serve
    assert PINNED.batch_defaults(card, ENTRY_LLM) == llm_class


def test_before_0_20_there_was_no_160_gib_tier_and_the_utilisation_was_0_9():
    assert V0_19_0.batch_defaults(B200) == (8192, 1024)
    assert (V0_19_0.gpu_memory_utilization, PINNED.gpu_memory_utilization) == (0.9, 0.92)
    assert not V0_19_0.graph_estimate_subtracted and PINNED.graph_estimate_subtracted


def test_a_short_max_model_len_caps_a_defaulted_budget():
    """_set_default_max_num_seqs_and_batched_tokens_args: min(max_num_seqs × max_model_len, default)."""
    assert PINNED.scheduler_caps(H100_SXM, 4) == (4096, 1024)
    assert PINNED.scheduler_caps(H100_SXM, 8192, tokens=512) == (512, 512), "a defaulted cap is capped at the budget"
    assert PINNED.scheduler_caps(H100_SXM, 8192, seqs=128) == (8192, 128)


def test_cuda_graphs_are_captured_for_51_sizes_up_to_512_on_an_h100():
    """config/vllm.py, _set_cudagraph_sizes: 1, 2, 4, every 8 to 248, every 16 from 256 to 512."""
    sizes = PINNED.capture_sizes(H100_SXM, 8192, 1024)
    assert sizes == tuple([1, 2, 4] + list(range(8, 256, 8)) + list(range(256, 513, 16)))
    assert len(sizes) == 51
    assert len(PINNED.capture_sizes(B200, 16384, 1024)) == 3 + 31 + len(range(256, 1025, 16))
    assert PINNED.capture_sizes(H100_SXM, 8192, 64)[-1] == 128


def test_block_size_follows_the_backend():
    assert PINNED.block_size(H100_SXM, latent=False) == 16
    assert PINNED.block_size(H100_SXM, latent=True) == 16, "FlashAttention MLA, the default MLA backend on Hopper"
    assert PINNED.block_size(B200, latent=True) == 32, "FlashInfer MLA, the default on Blackwell"


def test_every_default_cites_a_file_and_the_release():
    for default in PINNED.defaults:
        assert default.source.startswith("vllm/") and default.source.endswith("(vLLM 0.33.0)"), default


# ---- Memory: the ladder against published logs, redone by hand from what they printed.

def test_the_weights_are_the_parameters_and_the_rotary_table():
    ladder = kvcache.ladder(REFERENCE)
    assert ladder.weights.value == PARAMS * 2 + ROTARY
    assert round((PARAMS * 2 + ROTARY) / GiB, 2) == 14.99, "what 'Model loading took' prints"


def test_the_activation_peak_is_the_samplers_for_the_8b():
    """vLLM 0.19.0 printed a torch peak increase of 1.89 GiB for 1,024 rows of 128,256 logits."""
    per_logit = 1.89 * GiB / (1024 * C["vocab_size"])
    forward = 8192 * (3 * C["intermediate_size"] + 4 * C["hidden_size"]) * 2
    assert forward < 1024 * C["vocab_size"] * per_logit
    assert kvcache.ladder(REFERENCE).activation.value == pytest.approx(1.89 * GiB)
    small = replace(REFERENCE, card=L40S)
    assert kvcache.ladder(small).activation.value == pytest.approx(256 * C["vocab_size"] * per_logit), "256 rows"


def test_the_reference_ladder_by_hand():
    """vLLM 0.33.0 at 0.9: ⌈79.19 GiB × 0.9⌉ − weights − 1.89 − 0.25 GiB − the V2 runner's penalty state
    (vllm/v1/worker/gpu/sample/penalties.py: 1,024 sequences × (vocabulary + ⌈vocabulary ÷ 32⌉) int32s)
    − 0.84 GiB, in 2 MiB blocks."""
    pool = math.ceil(79.19 * GiB * 0.9)
    penalties = 1024 * (C["vocab_size"] + -(-C["vocab_size"] // 32)) * 4
    available = pool - (PARAMS * 2 + ROTARY) - 1.89 * GiB - 0.25 * GiB - penalties - 0.84 * GiB
    blocks = int(available // (16 * PER_TOKEN))
    ladder = kvcache.ladder(REFERENCE)
    assert ladder.pool.value == pool
    assert ladder.kv_budget.value == pytest.approx(available)
    assert ladder.accounting.blocks.value == blocks
    assert ladder.token_capacity.value == int(blocks / 512 * 8192) == blocks * 16
    assert ladder.concurrency.value == pytest.approx(blocks / 512)
    assert ladder.users_worst.value == blocks * 16 // 8192
    assert ladder.held_back.value == pytest.approx(79.19 * GiB - pool)


PLANNER_FIGURES = {  # as printed: available GiB, cache tokens, concurrency
    "planner_8b": (58.11, 476_016, 58.11),
    "planner_8b_tp2": (63.76, 1_044_688, 127.53),
    "planner_8b_tp4": (67.44, 2_209_792, 269.75),
    "planner_8b_fp8_cache": (58.11, 952_032, 116.21),
    "planner_70b_tp2": (37.28, 244_304, 29.82),
    "planner_70b_tp4": (54.09, 708_992, 86.55),
}


@pytest.mark.parametrize("key", PLANNER_FIGURES)
def test_the_model_reproduces_each_published_h100_log_within_two_percent(key):
    log = next(log for log in logs.PUBLISHED if log.key == key)
    available, tokens, concurrency = PLANNER_FIGURES[key]
    reading = logs.published(log)
    assert reading.release.version == "0.19.0"
    rungs = reading.rungs
    assert rungs["available"].log.value == pytest.approx(available * GiB)
    assert rungs["tokens"].log.value == tokens and rungs["concurrency"].log.value == concurrency
    for name in ("available", "tokens", "concurrency"):
        assert abs(rungs[name].model.value / rungs[name].log.value - 1) <= 0.02, (key, name)
    assert log.url.startswith("https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e0")


def test_the_0_95_log_redone_from_its_own_terms():
    """75.23 − 14.99 − 1.89 − 0.25 = 58.10 GiB (printed 58.11: each term was rounded); the estimate of
    0.84 GiB printed but not subtracted, as vLLM 0.19.0 left it."""
    printed = logs.read(logs.PUBLISHED_PLANNER_8B.text)
    assert (printed.requested_gib, printed.weights_gib, printed.activation_gib, printed.non_torch_gib) == \
        (75.23, 14.99, 1.89, 0.25)
    assert abs(75.23 - 14.99 - 1.89 - 0.25 - printed.available_gib) < 0.015
    assert printed.graphs_gib == 0.84 and printed.graphs_subtracted is False
    assert printed.tokens == 29_751 * 16 and round(printed.tokens * PER_TOKEN / GiB, 2) == 58.11, "whole blocks of the budget"


def test_tensor_parallelism_grows_non_torch_memory():
    """vLLM 0.19.0 printed 0.25 GiB at one GPU and 2.07 and 2.13 GiB at two and four."""
    for key, expected in (("planner_8b", 0.25), ("planner_8b_tp2", 2.07), ("planner_8b_tp4", 2.13)):
        reading = logs.published(next(log for log in logs.PUBLISHED if log.key == key))
        assert reading.rungs["non_torch"].log.value == pytest.approx(expected * GiB)
        assert reading.rungs["non_torch"].model.value == pytest.approx(expected * GiB)


def test_the_h100_at_0_90_before_0_17_is_within_two_percent():
    """llm-d-benchmark's table, Llama 3.1 8B on one H100 at 0.9: 71.26 GiB requested, 14.99 GiB weights, 51.38 GiB
    available. Releases before 0.17 profiled a sampler of 5.56 GiB ÷ (1,024 × 151,936) bytes a logit (the same
    table's Qwen3-0.6B), so 1,024 rows of 128,256 logits predict the 8B's peak, printed as 4.76 GiB; the pool
    is ⌈79.18 GiB × 0.9⌉, the total the table printed, less the weights, that peak and 0.19.0's 0.25 GiB of
    non-torch growth."""
    per_logit = 5.56 * GiB / (1024 * 151_936)
    activation = 1024 * C["vocab_size"] * per_logit
    available = math.ceil(79.18 * GiB * 0.9) - (PARAMS * 2 + ROTARY) - activation - 0.25 * GiB
    reading = logs.published(logs.PUBLISHED_LLMD_090)
    rungs = reading.rungs
    assert rungs["activation"].model.value == pytest.approx(activation)
    assert abs(activation / (4.76 * GiB) - 1) < 0.02
    assert rungs["available"].model.value == pytest.approx(available)
    assert rungs["available"].log.value == pytest.approx(51.38 * GiB)
    assert abs(rungs["available"].share.value) <= 0.02
    assert reading.accounting.block_size == 128 and reading.accounting.utilisation.value == 0.9
    assert "github.com/llm-d/llm-d-benchmark/blob/4f4d449" in logs.PUBLISHED_LLMD_090.url


def test_a_pasted_log_before_0_17_is_read_with_the_older_sampler():
    printed = logs.read(logs.PUBLISHED_PLANNER_8B.text.replace("version 0.19.0", "version 0.15.1"))
    reading = logs.compare(printed, H100_SXM)
    assert reading.release.older_sampler and "predates 0.17" in reading.notes[0]
    assert reading.rungs["activation"].model.value == pytest.approx(1024 * C["vocab_size"] * 5.56 * GiB / (1024 * 151_936))


def test_the_24_gb_log_is_within_four_percent_and_says_why_not_two():
    """RTX 3090, vLLM 0.17.1 at 0.9: 21.19 GiB pool − 14.99 − 5.68 printed leaves 0.52 GiB for activation
    and non-torch; the model's sampler (256 rows) and non-torch take 0.72. The excerpt does not print the
    profile's line, so the gap cannot be given to either term."""
    reading = logs.published(logs.PUBLISHED_RTX_3090)
    assert reading.release.version == "0.17.1" and not reading.release.graph_estimate_subtracted
    share = reading.rungs["available"].share.value
    assert -0.04 < share < 0
    assert any(line.startswith("torch peak memory increase") for line in reading.printed.missing)


def test_the_cuda_graph_estimate_is_subtracted_from_0_20_on():
    ladder = kvcache.ladder(REFERENCE)
    assert ladder.graphs.value == pytest.approx(0.84 * GiB)
    older = memory.of_stack(replace(REFERENCE, engine=V0_19_0, gpu_memory_utilization=0.9))
    assert older.graphs.value == 0 and older.graphs_estimated.value == pytest.approx(0.84 * GiB)
    eager = memory.of_stack(replace(REFERENCE, serving=replace(REFERENCE.serving, enforce_eager=True)))
    assert eager.graphs.value == 0


def test_the_log_lines_are_printed_as_the_release_prints_them():
    lines = kvcache.ladder(REFERENCE).accounting.log_lines
    assert lines[0] == "Model loading took 14.99 GiB memory"
    assert lines[2].startswith("GPU KV cache size: ") and ", Maximum concurrency for 8,192 tokens per request: " in lines[2]
    # vllm/v1/worker/gpu_worker.py, compile_or_warm_up_model, at INFO in 0.33.0: consumed = weights + non-torch +
    # the runner's penalty state; peak activation = the profile's peak + the graph estimate subtracted.
    penalties = 1024 * (C["vocab_size"] + -(-C["vocab_size"] // 32)) * 4
    consumed = round((PARAMS * 2 + ROTARY + 0.25 * GiB + penalties) / GiB, 2)
    assert lines[3].startswith("Free memory on device (…/79.19 GiB) on startup. Desired GPU memory utilization is "
                               f"(0.9, 71.27 GiB). Actual usage is {consumed} GiB for consumed memory (weights + non-torch), "
                               f"{round(1.89 + 0.84, 2)} GiB for peak activation")
    assert len(memory.of_stack(replace(REFERENCE, engine=V0_19_0)).log_lines) == 4, "0.19.0: two cache lines, no summary"


# ---- Time: the model beside measured kernels and published end-to-end runs.

MEASURED_KERNELS = {  # aiconfigurator-core 0.12.0's estimate from vLLM 0.24.0's H100 kernels, ms
    "prefill": 42.44, "step_1": 6.240, "step_32": 9.768, "step_128": 18.666}


def test_prefill_and_decode_steps_are_within_a_tenth_of_the_measured_kernels():
    prefill = timing.prefill_step(REFERENCE, 2000)
    assert abs(prefill.kernels.value * 1000 / MEASURED_KERNELS["prefill"] - 1) < 0.10
    for batch in (1, 32, 128):
        step = timing.decode_step(REFERENCE, batch, 2151)
        kernels_ms = sum(g.time.value for g in step.groups) * 1000
        assert abs(kernels_ms / MEASURED_KERNELS[f"step_{batch}"] - 1) < 0.10, batch


def test_one_sequence_matches_the_blogs_fit():
    """vLLM 0.19.1, one H100: ITL = 4.37e-05 ms × prompt + 6.44 ms; the fixed cost is set on its intercept."""
    step = timing.decode_step(REFERENCE, 1, 2064)
    assert abs(step.time.value * 1000 / (6.44 + 4.37e-05 * 2000) - 1) < 0.05


def test_closed_loop_throughput_at_128_is_within_fifteen_percent_of_the_published_run():
    """TensorRT-LLM 1.0.0rc3 on one H100, 2,048 in and 512 out at 128 in flight: TTFT 576.7 ms and TPOT
    31.14 ms, so 128 × 512 ÷ (0.5767 + 511 × 0.03114) tokens per second."""
    published = 128 * 512 / (0.5767 + 511 * 0.03114)
    run = simulation.closed_loop(REFERENCE, 128, 2048, 512, 1280)
    assert abs(run.output_rate / published - 1) < 0.15
    assert abs(run.mean_tpot / 0.03114 - 1) < 0.15


def test_closed_loop_at_8_is_within_fifteen_percent_of_vllms_blog():
    """vLLM 0.19.1, 150 requests of ~20k in and ~2k out at 8 in flight: 450.3 output tokens per second,
    median ITL 15.18 ms."""
    run = simulation.closed_loop(REFERENCE, 8, 20_000, 2_000, 150)
    assert abs(run.output_rate / 450.3 - 1) < 0.15
    assert abs(run.median_itl / 0.01518 - 1) < 0.15


def test_the_matrix_multiplies_share_is_the_roofline_over_the_measured_time():
    """At one token the four matrices of a layer are read once: 2 × Σ N × K bytes at 3.35 TB/s."""
    shapes = ((6144, 4096), (4096, 4096), (28672, 4096), (4096, 14336))
    reading = 2 * sum(n * k for n, k in shapes) / 3.35e12
    measured = measured_kernels.CARDS["h100-sxm"]["gemm"][0]
    assert kernels.gemm_efficiency(H100_SXM, REFERENCE.weight_precision, 1).value == pytest.approx(
        (reading + 2 * sum(n + k for n, k in shapes) / 3.35e12) / measured, rel=1e-9)
    assert 0.75 < reading / measured < 0.9


def test_each_card_says_which_efficiencies_are_its_own():
    assert kernels.measured(H100_SXM).own and "measured on the H100 SXM" in kernels.measured(H100_SXM).provenance
    assert not kernels.measured(L4).own and "carried over" in kernels.measured(L4).provenance
    assert kernels.measured(L4).measured_on == L40S


# ---- The log reader and the command line.

def test_the_reader_finds_every_figure_of_a_v0_log():
    printed = logs.read(logs.PUBLISHED_V0.text)
    assert (printed.total_gib, printed.requested_gib, printed.weights_gib, printed.non_torch_gib,
            printed.activation_gib, printed.available_gib) == (79.22, 71.29, 14.96, 1.79, 1.26, 53.29)


@pytest.mark.parametrize("text, said", [
    ("nothing a start-up log prints", "names no model"),
    ("non-default args: {'model': 'acme/secret-model'}\nAvailable KV cache memory: 5 GiB", "knows no config"),
    ("\x1b[32mINFO\x1b[0m non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192, "
     "'gpu_memory_utilization': 0.9}\nINFO Available KV cache memory: 52.8 GiB", "within 2%"),
    ("non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192}\n"
     "Available KV cache memory: 52.8 GiB", "54.38 GiB"),                 # read at 0.33.0's default of 0.92
])
def test_the_reader_says_what_it_could_read(text, said):
    answer = STARTUP.run({"card": "h100-sxm", "log": text}, paths=["logread.verdict", "logread.notes"])
    assert answer["ok"], answer
    verdict, notes = answer["refs"]["logread.verdict"][0], answer["refs"]["logread.notes"][0]
    assert said in verdict + notes and verdict != notes


# vLLM 0.33.0 at INFO level, each line in the format its wheel prints it (vllm/v1/worker/gpu_worker.py,
# Worker.determine_available_memory and _compile_or_warm_up_model; vllm/v1/core/kv_cache_utils.py,
# update_kv_cache_capacity), filled with the model's own figures for the reference stack: it tests the
# reader, not the model (no 0.33.0 log of this stack is published). At INFO there is no non-torch line
# and no activation line.
LOG_0_33_0 = """\
(APIServer pid=1) INFO 11-20 10:00:00 [entrypoints/utils.py:299] version 0.33.0
(APIServer pid=1) INFO 11-20 10:00:00 [entrypoints/utils.py:233] non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192, 'gpu_memory_utilization': 0.9}
(EngineCore pid=242) INFO 11-20 10:00:25 [v1/worker/gpu/model_runner.py:410] Model loading took 14.99 GiB memory and 11.200000 seconds
(EngineCore pid=242) INFO 11-20 10:00:41 [v1/worker/gpu_worker.py:760] Available KV cache memory: 52.8 GiB
(EngineCore pid=242) INFO 11-20 10:00:41 [v1/core/kv_cache_utils.py:1330] GPU KV cache size: 432,512 tokens, Maximum concurrency for 8,192 tokens per request: 52.80x
(EngineCore pid=242) INFO 11-20 10:00:52 [v1/worker/gpu_worker.py:1002] CUDA graph pool memory: 0.76 GiB (actual), 0.84 GiB (estimated), difference: 0.08 GiB (10.5%).
(EngineCore pid=242) INFO 11-20 10:00:52 [v1/worker/gpu_worker.py:1063] Free memory on device (78.68/79.19 GiB) on startup. Desired GPU memory utilization is (0.9, 71.27 GiB). Actual usage is 15.74 GiB for consumed memory (weights + non-torch), 2.73 GiB for peak activation, and 0.76 GiB for CUDAGraph memory. Current kv cache memory in use is 52.8 GiB.
"""


def test_a_0_33_0_info_log_gives_every_rung_from_what_it_prints():
    printed = logs.read(LOG_0_33_0)
    assert printed.version == "0.33.0" and printed.missing == ()
    assert printed.non_torch_gib == pytest.approx(15.74 - 14.99)      # consumed: the weights, non-torch, the runner's state
    assert printed.activation_gib == pytest.approx(2.73 - 0.84)       # the reported peak carries the graph estimate
    assert (printed.total_gib, printed.requested_gib, printed.graphs_gib) == (79.19, 71.27, 0.84)
    reading = logs.compare(printed, H100_SXM)
    assert all(term.matches for term in reading.terms if term.share), reading.verdict
    assert any("consumed memory less the weights" in note for note in reading.notes)


def test_the_log_reader_knows_the_consumer_card_of_the_published_log():
    answer = STARTUP.run({"card": "rtx-3090", "log": logs.PUBLISHED_RTX_3090.text}, paths=["logread.verdict"])
    assert answer["ok"] and "GeForce RTX 3090" in STARTUP.fields[0].choices["rtx-3090"]
    assert "866" not in answer["refs"]["logread.verdict"][0]


def test_a_paste_past_five_million_characters_is_refused_on_its_field():
    answer = STARTUP.run({"card": "h100-sxm", "log": "x" * 5_000_001}, paths=["logread.verdict"])
    assert not answer["ok"] and "5,000,000" in answer["errors"]["log"]


def test_the_command_line_prints_the_pages_figures_as_json():
    out = subprocess.run([sys.executable, "-m", "calc.engine", "--json"], capture_output=True, text=True, check=True)
    report = json.loads(out.stdout)
    ladder = kvcache.ladder(REFERENCE)
    assert report["engine"] == "vLLM 0.33.0"
    assert report["kv_cache_gib"] == pytest.approx(ladder.kv_budget.value / GiB)
    assert report["kv_cache_tokens"] == ladder.token_capacity.value
    assert report["max_concurrency"] == pytest.approx(ladder.concurrency.value)
    assert report["prefill_ms"] == pytest.approx(timing.prefill_time(REFERENCE, 2000).value * 1000)
    assert report["decode_step_ms"] == pytest.approx(timing.decode_step(REFERENCE, 1, 2150).time.value * 1000)


@pytest.mark.parametrize("flags, named", [
    (["--card", "v100"], "--card"), (["--batch", "two"], "--batch"), (["--gpu-memory-utilization", "1.5"],
                                                                       "--gpu-memory-utilization"),
    (["--tensor-parallel", "3"], "--tensor-parallel"), (["--model", "/nonexistent/config.json"], "--model"),
    (["--kv-cache-dtype", "int4"], "--kv-cache-dtype"), (["--frobnicate"], "usage"),
    (["--model", "/dev/zero"], "--model"), (["--model", ""], "--model"), (["--tensor-parallel", "٣"], "--tensor-parallel"),
    (["--gpu-memory-utilization", "0.9_0"], "--gpu-memory-utilization"), (["--context", ""], "--context"),
    (["--max-model-len", "1000", "--prompt", "2000"], "--prompt"),
])
def test_bad_flags_get_one_line_and_status_2(flags, named):
    out = subprocess.run([sys.executable, "-m", "calc.engine", *flags], capture_output=True, text=True)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.count("\n") == 1 and named in out.stderr


def test_a_default_is_cut_to_the_flags_given():
    """--max-model-len 1000 alone: the default prompt becomes 1,000 tokens rather than an error about a flag
    the reader never typed."""
    out = subprocess.run([sys.executable, "-m", "calc.engine", "--max-model-len", "1000", "--json"], capture_output=True,
                         text=True)
    assert out.returncode == 0 and json.loads(out.stdout)["prompt"] == 1000


def test_a_stack_vllm_would_refuse_says_so():
    """The 70B's 131.45 GiB of bf16 weights on an L4; and a 131,072-token limit the L4's cache cannot hold once."""
    out = subprocess.run([sys.executable, "-m", "calc.engine", "--card", "l4", "--model", "llama-3.1-70b", "--json"],
                         capture_output=True, text=True)
    answer = json.loads(out.stdout)
    assert out.returncode == 0 and answer["fits"] is False and "vLLM would not start" in answer["refusal"]
    assert answer["prefill_ms"] is None and answer["decode_step_ms"] is None
    plain = subprocess.run([sys.executable, "-m", "calc.engine", "--card", "l4", "--max-model-len", "131072"],
                           capture_output=True, text=True).stdout
    assert "does not fit: one sequence of --max-model-len 131,072" in plain and "as the engine logs it" not in plain


def test_a_batch_past_the_cache_is_named():
    out = subprocess.run([sys.executable, "-m", "calc.engine", "--batch", "5000", "--json"], capture_output=True, text=True)
    answer = json.loads(out.stdout)
    blocks = kvcache.ladder(REFERENCE).accounting.blocks.value
    assert answer["admitted_batch"] == blocks // math.ceil(2150 / 16) and answer["batch_fits"] is False


@pytest.mark.parametrize("tail", [
    "\ngpu_memory_utilization" + " " * 200_000 + "x", "\ntotal_gpu_memory" + "\n" * 200_000 + "x",
    "\n" + "non-default args: {" * 200_000, "\nGPU KV cache size: " + "999," * 300_000 + "999 tokens",
])
def test_hostile_pastes_are_read_in_time_and_never_overflow(tail):
    """Patterns that were quadratic in a run of white space or of one repeated line, and a grouped number too
    long for a float: each is read in a second or two, and the figure is unreadable, not infinite."""
    import time
    text = logs.PUBLISHED_PLANNER_8B.text + tail
    started = time.perf_counter()
    answer = STARTUP.run({"card": "h100-sxm", "log": text}, None, ["logread.verdict", "logread.rows.tokens.share"], [], False)
    assert time.perf_counter() - started < 5
    assert answer["ok"] and "nan" not in json.dumps(answer) and "inf" not in answer["refs"]["logread.verdict"][0]


def test_odd_logs_get_notes_not_guesses():
    base = logs.PUBLISHED_PLANNER_8B.text
    path = logs.read(base.replace("'meta-llama/Llama-3.1-8B-Instruct'", "'/models/meta-llama/Llama-3.1-8B-Instruct/'"))
    assert logs.compare(path, H100_SXM).model is not None, "a local path ending in the model's name"
    v0 = logs.read("INFO Initializing an LLM engine (v0.6.4.post1) with config: model='meta-llama/Llama-3.1-8B-Instruct'\n"
                   "non-default args: {'model': 'meta-llama/Llama-3.1-8B-Instruct'}")
    assert "ran the V0 engine" in logs.compare(v0, H100_SXM).notes[-1]
    unreadable = logs.compare(logs.read(base.replace("'gpu_memory_utilization': 0.95", "'gpu_memory_utilization': 9e-01")),
                              H100_SXM)
    assert any("gpu_memory_utilization but calc could not read" in n for n in unreadable.notes)
    twice = base + "\n(Worker_TP1) INFO Available KV cache memory: 12.00 GiB"
    assert any("more than once" in n for n in logs.compare(logs.read(twice), H100_SXM).notes)
    newer = logs.release_of(logs.read(base.replace("version 0.19.0", "version 1.2.3")))[1]
    assert "newer than any release calc has read" in newer


def test_every_worked_line_adds_up():
    checked = 0
    namespace = {"ladder": kvcache.ladder(REFERENCE), "step": timing.decode_step(REFERENCE, 32, 2150),
                 "prefill": timing.prefill_step(REFERENCE, 2000)}
    for path, value in leaves(namespace, depth=6):
        if isinstance(value, Result):
            assert check(value.worked) == [], (path, value.worked)
            checked += 1
    assert checked > 40


def test_the_release_module_names_the_wheel():
    assert release.PINNED.wheel.startswith("vllm-0.33.0")
