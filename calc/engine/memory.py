"""vLLM's memory accounting at start-up, one GPU at a time: the one ladder every document climbs.

The release's worker (calc.specs.release, `memory_source`) asks for ⌈CUDA's total × utilisation⌉,
then takes from it what its profile measured after the start-up snapshot: the weights as loaded, the
activation peak of a dummy pass of one full token budget and of the sampler over one row per
sequence, memory outside PyTorch that grew meanwhile and, by default, its estimate of the CUDA
graphs' pools. What is left is divided into whole blocks. The CUDA context, the NCCL communicators,
the custom all-reduce buffers and cuBLAS's handles exist before the snapshot, so they are not taken
from the pool: they sit in what the utilisation leaves on the card, with fragmentation.

Each term the profile measures is modelled from the shapes where the logs show how it scales, with
the published measurement it rests on, and set beside published logs in calc.engine.logs.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..specs.cards import Card
from ..model.anatomy import count_parameters
from ..model.lora import slots_reserved
from ..specs.models import Model
from ..specs.precision import BF16, Precision
from ..core.arith import Expr, ceil, field, made_of, term
from ..core.units import (BYTES, COUNT, FRACTION, GIB_HELD, MIB_REPORTED, RATIO_FINE, TOKENS, GiB, Result, given,
    grouped, plain)
from . import sharding
from ..specs.release import PINNED, Release

PLANNER = ("llm-d-incubation/llm-d-planner, accuracy/results/v0.19.0/logs/ at commit d3121e0 (April 2026): vLLM "
           "0.19.0 on H100 80 GB HBM3, DEBUG start-up logs")
# The measurements the activation and non-torch terms rest on: vLLM 0.19.0's profile of Llama 3.1 8B
# Instruct on one H100 at its default token budget and sequence cap (8,192 and 1,024) printed a torch
# peak increase of 1.89 GiB, whatever the tensor-parallel degree or max_model_len: the sampler's rows
# (one per sequence, the full vocabulary each) bound it, not the forward pass.
SAMPLER_MEASURED = {"activation_gib": 1.89, "rows": 1024, "vocab": 128_256,
                    "source": f"{PLANNER}, meta-llama-llama-3-1-8b…8192.log: 'torch peak memory increase: 1.89GiB' "
                              "at TP 1, 2 and 4 and at every max_model_len from 2,048 to 32,768"}
# Releases before 0.17 profiled a sampler about two and a half times as large per logit. Measured on
# Qwen3-0.6B, whose forward pass of 8,192 tokens is a fraction of its sampler's, so the profile's peak
# is the sampler's alone; set on another model than the Llama the runbook checks it against.
LLMD_BENCHMARK = ("llm-d/llm-d-benchmark, config_explorer/empirical-vllm-memory-results.md at commit 2593348 "
                  "(January 2026): vLLM logs on H100 80 GB read into a table, gpu_memory_utilization 0.9, "
                  "max-model-len 16000, block size 128, prefix caching on")
SAMPLER_BEFORE_0_17 = {"activation_gib": 5.56, "rows": 1024, "vocab": 151_936,
                       "source": f"{LLMD_BENCHMARK}: Qwen/Qwen3-0.6B, 'Peak activation memory: 5.56 GiB'"}
# Memory outside PyTorch that grew between the snapshot and the end of the profile, per GPU: cuBLAS and
# attention workspaces alone at one GPU; NCCL's buffers for the profile's all-reduces with two or more.
NON_TORCH_GIB = {1: 0.25, 2: 2.07, 4: 2.13}
NON_TORCH_PIPELINE_GIB = 0.07
NON_TORCH_SOURCE = (f"{PLANNER}: 'non-torch forward increase memory' 0.25 GiB at TP 1, 2.07 at TP 2, 2.13 at TP 4 "
                    "(Llama 3.1 8B; Qwen2.5-7B and Llama 3.3 70B print the same within 0.1 GiB), 0.07 at PP 2 and 4; "
                    "taken for TP 8 as at TP 4")
# vLLM 0.19.0's estimate of the CUDA graphs' memory for 51 capture sizes: 0.84 GiB for a 32-layer Llama
# 3.1 8B on one GPU, 1.70 GiB for 80-layer Llama 3.3 70B at four GPUs; calc takes it as a line through the two.
GRAPH_POINTS = ((32, 0.84), (80, 1.70))
GRAPH_SOURCE = (f"{PLANNER}: 'Estimated CUDA graph memory: 0.84 GiB total' (Llama 3.1 8B, TP 1) and 1.7 GiB "
                "(RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic, TP 4, 80 layers a GPU); vLLM 0.33.0 measures its "
                "piecewise graphs whole and extrapolates its full ones from two (vllm/v1/worker/gpu/cudagraph_utils.py, "
                "profile_cudagraph_memory), and no 0.33.0 log of this stack has been published")
RUNNER_STATE_SOURCE = ("vllm/v1/worker/gpu/sample/penalties.py, PenaltiesState: output_bin_counts (max_num_reqs × "
                       "vocabulary, int32) and prompt_bin_mask (max_num_reqs × ⌈vocabulary ÷ 32⌉, int32), made with the "
                       "sampler when the V2 model runner loads the model, after the start-up snapshot, and so in what "
                       "vllm/utils/mem_utils.py, memory_profiling counts as consumed")
FORWARD_RULE = ("gate_up's output (2 × intermediate per GPU) and SiLU·mul's (intermediate per GPU) alive together "
                "with four hidden-wide buffers, all bf16, per token of the budget; it reproduces vLLM 0.19.0's profile "
                "of CodeLlama-7b (0.77 GiB) and Granite 3.1 8B (0.85 GiB), whose small vocabularies leave the forward "
                "pass the peak")


@dataclass(frozen=True)
class Accounting:
    """One GPU's ladder as the release climbs it, each rung with its arithmetic, and the log lines
    it prints (`log_lines`)."""

    release: Release
    tensor: int
    pipeline: int
    total: Result
    utilisation: Result
    pool: Result
    weights: Result
    activation: Result
    non_torch: Result
    runner_state: Result
    graphs: Result
    graphs_estimated: Result
    lora: Result
    available: Result
    per_token: Result
    block_size: int
    block_bytes: Result
    blocks: Result
    tokens: Result
    concurrency: Result
    max_model_len: int
    max_num_batched_tokens: Result
    max_num_seqs: Result
    kv_cache_memory_bytes: int | None

    @property
    def headroom(self) -> Result:
        """What the utilisation leaves on the card: the CUDA context, NCCL, custom all-reduce buffers,
        cuBLAS handles, all made before the snapshot, and fragmentation."""
        return (term(self.total) - term(self.pool)).result(GIB_HELD, "CUDA's total − the pool")

    @property
    def consumed(self) -> Result:
        """What the profile finds consumed beyond the weights: memory outside PyTorch that grew after
        the snapshot, and the model runner's persistent buffers (0.33.0 prints the sum with the weights
        as "total consumed")."""
        if not self.runner_state.value:
            return self.non_torch
        return (term(self.non_torch) + term(self.runner_state)).result(
            GIB_HELD, "non-torch growth + the model runner's persistent state")

    @property
    def reserve(self) -> Result:
        """Everything the profile takes besides the weights and any LoRA slots."""
        return (term(self.activation) + term(self.consumed) + term(self.graphs)).result(
            GIB_HELD, "activation peak + consumed beyond the weights + CUDA-graph estimate")

    @property
    def reported_consumed(self) -> Result:
        """What the closing INFO summary calls "consumed memory (weights + non-torch)": the fall in free
        memory since the snapshot, which holds the model runner's state too."""
        return (term(self.weights) + term(self.consumed)).result(GIB_HELD, "weights + consumed beyond the weights")

    @property
    def reported_peak(self) -> Result:
        """What the closing INFO summary calls "peak activation": the profile's transient peak with the
        CUDA-graph estimate the budget subtracted (vllm/v1/worker/gpu_worker.py, peak_activation_memory)."""
        return (term(self.activation) + term(self.graphs)).result(GIB_HELD, "activation peak + CUDA-graph estimate subtracted")

    @property
    def fits(self) -> bool:
        return self.available.value > 0

    @property
    def log_lines(self) -> tuple[str, ...]:
        """What this release prints for these rungs, in its own format (GiB as round(x, 2))."""
        def gib(value: float) -> str:
            return f"{round(value / GiB, 2)}"
        kv = (f"GPU KV cache size: {int(self.tokens.value):,} tokens",
              f"Maximum concurrency for {self.max_model_len:,} tokens per request: {self.concurrency.value:.2f}x")
        summary = (f"Free memory on device (…/{gib(self.total.value)} GiB) on startup. Desired GPU memory utilization "
                   f"is ({self.utilisation.value:g}, {gib(self.pool.value)} GiB). Actual usage is "
                   f"{gib(self.reported_consumed.value)} GiB for consumed memory (weights + non-torch), "
                   f"{gib(self.reported_peak.value)} GiB for peak activation, and … GiB for CUDAGraph memory.")
        return (f"Model loading took {gib(self.weights.value)} GiB memory",
                f"Available KV cache memory: {gib(self.available.value)} GiB",
                *((", ".join(kv),) if self.release.one_line_kv_log else kv),
                *((summary,) if self.release.summary_at_info else ()))


class Rungs:
    """The ladder's rungs read off an `accounting`, by the names the pages use, for every object that
    climbs one (document 06's ladder, a split's plan on one GPU)."""

    accounting: Accounting

    @property
    def capacity(self) -> Result:
        return self.accounting.total

    @property
    def pool(self) -> Result:
        return self.accounting.pool

    @property
    def weights(self) -> Result:
        return self.accounting.weights

    @property
    def activation(self) -> Result:
        return self.accounting.activation

    @property
    def non_torch(self) -> Result:
        return self.accounting.non_torch

    @property
    def runner_state(self) -> Result:
        return self.accounting.runner_state

    @property
    def consumed(self) -> Result:
        return self.accounting.consumed

    @property
    def graphs(self) -> Result:
        return self.accounting.graphs

    @property
    def reserve(self) -> Result:
        return self.accounting.reserve

    @property
    def kv_budget(self) -> Result:
        return self.accounting.available

    @property
    def per_token(self) -> Result:
        return self.accounting.per_token

    @property
    def token_capacity(self) -> Result:
        return self.accounting.tokens

    @property
    def concurrency(self) -> Result:
        return self.accounting.concurrency

    @property
    def utilisation(self) -> Result:
        return self.accounting.utilisation

    @property
    def held_back(self) -> Result:
        """What the utilisation keeps from the engine: the CUDA context, NCCL, cuBLAS, fragmentation."""
        return self.accounting.headroom


def _subtracted(terms: list[Result]) -> Expr:
    """terms[0] − terms[1] − …, each as printed when they subtract by hand to the result as printed;
    precisely otherwise."""
    value = terms[0].value - sum(t.value for t in terms[1:])
    rounded = [round(t.value / GiB, 2) for t in terms]
    as_printed = abs(rounded[0] - sum(rounded[1:]) - round(value / GiB, 2)) < 0.005
    shown = [term(t, str(t) if as_printed else None) for t in terms]
    out = shown[0]
    for t in shown[1:]:
        out = out - t
    return out


def gib(value: float, what: str) -> Result:
    return given(value * GiB, GIB_HELD, what)


def requested(total: Result, utilisation: float) -> Result:
    share = given(utilisation, FRACTION, "gpu_memory_utilization")
    return ceil(term(total) * term(share, f"{utilisation:g}")).result(GIB_HELD, "⌈CUDA's total × gpu_memory_utilization⌉")


def weights_loaded(model: Model, precision: Precision, tensor: int, pipeline: int) -> Result:
    """What "Model loading took" measures on one GPU: its share of the weights and the rotary table."""
    weights = sharding.weights_per_gpu(model, precision, tensor, pipeline)
    table = sharding.rotary_table(model)
    rotary = term(table, f"{grouped(table.value)} B")
    if tensor == pipeline == 1 and not precision.quantised:  # every parameter, at one width
        total = count_parameters(model).total
        return (term(total, grouped(total.value)) * term(precision.bytes, f"{plain(precision.bytes)} B") + rotary).result(
            GIB_HELD, "parameters × bytes per parameter + rotary table")
    return (term(weights, f"{grouped(weights.value)} B") + rotary).result(GIB_HELD, "weights per GPU + rotary table")


def sampler_bytes_per_logit(release: Release = PINNED) -> Result:
    """The sampler's profiled peak per logit, from a measured profile whose peak is the sampler's."""
    m = SAMPLER_BEFORE_0_17 if release.older_sampler else SAMPLER_MEASURED
    value = m["activation_gib"] * GiB / (m["rows"] * m["vocab"])
    return Result(value, BYTES, formula="measured activation peak ÷ (rows × vocabulary)",
                  worked=(f"{m['activation_gib']:g} GiB ÷ ({grouped(m['rows'])} × {grouped(m['vocab'])}) = "
                          f"{BYTES.show(value, 2)} per logit"), inputs=())  # a measured profile's figures


def forward_bytes_per_token(model: Model, tensor: int) -> Result:
    intermediate = _intermediate(model) // tensor
    hidden = field(model, "hidden_size")
    return ((3 * term(intermediate) + 4 * term(hidden)) * term(BF16.bytes, "2 B")).result(
        BYTES, "(3 × intermediate per GPU + 4 × hidden) × 2 B")


def _intermediate(model: Model) -> int:
    """The widest MLP a token passes through: a mixture's routed experts side by side."""
    if model.is_mixture_of_experts:
        width = model.moe_intermediate_size or model.intermediate_size
        return width * model.num_experts_per_tok
    return model.intermediate_size


def activation_peak(model: Model, tensor: int, last_stage: bool, tokens: int, seqs: int,
                    release: Release = PINNED) -> Result:
    """The profile's activation peak: the larger of the forward pass over the token budget and the
    sampler over min(budget, sequence cap) rows of the whole vocabulary (only the last pipeline stage
    samples)."""
    forward = forward_bytes_per_token(model, tensor)
    forward_total = tokens * forward.value
    rows = min(tokens, seqs)
    per_logit = sampler_bytes_per_logit(release)
    sampler = rows * model.vocab_size * per_logit.value if last_stage else 0.0
    value = max(forward_total, sampler)
    return Result(value, GIB_HELD, formula="max(token budget × forward bytes per token, rows × vocabulary × sampler bytes)",
                  worked=(f"max({grouped(tokens)} × {forward.operand}, {grouped(rows)} × {grouped(model.vocab_size)} × "
                          f"{per_logit.operand}) = max({GIB_HELD.show(forward_total)}, {GIB_HELD.show(sampler)}) = "
                          f"{GIB_HELD.show(value)}"), inputs=made_of(forward, field(model, "vocab_size"), per_logit))


def non_torch_growth(tensor: int, pipeline: int) -> Result:
    if tensor == 1:
        value = NON_TORCH_PIPELINE_GIB if pipeline > 1 else NON_TORCH_GIB[1]
        where = f"{pipeline} pipeline stages" if pipeline > 1 else "one GPU"
    elif tensor in NON_TORCH_GIB:
        value, where = NON_TORCH_GIB[tensor], f"tensor parallel {tensor}"
    else:
        value = NON_TORCH_GIB[4]
        return Result(value * GiB, GIB_HELD, formula="measured at tensor parallel 4, taken for more GPUs",
                      worked=f"{value:g} GiB, as vLLM 0.19.0 measured it at tensor parallel 4 (no log at {tensor} published)",
                      inputs=())
    return Result(value * GiB, GIB_HELD, formula="measured, by tensor-parallel degree",
                  worked=f"{value:g} GiB at {where}, as vLLM 0.19.0 measured it on H100s", inputs=())


def runner_state(model: Model, seqs: int, release: Release) -> Result:
    """The V2 model runner's per-request penalty state, on every GPU of the last pipeline stage: a count
    of each vocabulary entry's appearances in the output and a bit mask of the prompt's, per sequence."""
    if not release.v2_runner:
        return Result(0, GIB_HELD, formula="none: this release's default model runner keeps no such state",
                      worked=f"0 GiB: vLLM {release.version} runs the V1 model runner by default", inputs=())
    vocab = field(model, "vocab_size")
    mask = -(-model.vocab_size // 32)
    return (term(seqs) * (term(vocab) + term(mask)) * term(4, "4 B")).result(
        GIB_HELD, "max_num_seqs × (vocabulary + ⌈vocabulary ÷ 32⌉) × 4 B")


def graph_estimate(layers: int, eager: bool) -> Result:
    if eager:
        return Result(0, GIB_HELD, formula="no CUDA graphs under --enforce-eager", worked="0 GiB: --enforce-eager", inputs=())
    (x0, y0), (x1, y1) = GRAPH_POINTS
    slope = (y1 - y0) / (x1 - x0)
    value = round(y0 + slope * (layers - x0), 9) * GiB  # a measured point lands on its figure exactly
    return Result(value, GIB_HELD, formula="the measured estimate, a line through 32 and 80 layers",
                  worked=(f"{y0:g} GiB + ({y1:g} GiB − {y0:g} GiB) × ({layers} − {x0}) ÷ ({x1} − {x0}) = "
                          f"{GIB_HELD.show(value)}"), inputs=())  # two measured points and the layer count


@lru_cache(maxsize=1024)
def account(model: Model, card: Card, weights: Precision, kv: Precision, utilisation: float, max_model_len: int,
            block_size: int, tensor: int = 1, pipeline: int = 1, max_num_batched_tokens: int | None = None,
            max_num_seqs: int | None = None, kv_cache_memory_bytes: int | None = None, max_loras: int = 0,
            max_lora_rank: int = 16, eager: bool = False, release: Release = PINNED,
            total_override_gib: float = 0.0) -> Accounting:
    """The release's ladder on one GPU of a tensor × pipeline split. `total_override_gib`: a total
    printed by a log, for a card calc has no CUDA total for."""
    total = gib(total_override_gib, "CUDA's total, as the log printed it") if total_override_gib else card.engine_capacity
    pool = requested(total, utilisation)
    tokens, seqs = release.scheduler_caps(card, max_model_len, max_num_batched_tokens, max_num_seqs)
    loaded = weights_loaded(model, weights, tensor, pipeline)
    peak = activation_peak(model, tensor, True, tokens, seqs, release)
    growth = non_torch_growth(tensor, pipeline)
    state = runner_state(model, seqs, release)
    layers = sharding.stage_layers(model, pipeline)
    estimated = graph_estimate(layers, eager)
    graphs = estimated if release.graph_estimate_subtracted else Result(
        0, GIB_HELD, formula="not subtracted by this release",
        worked=f"{estimated} estimated, left in the headroom by vLLM {release.version}", inputs=made_of(estimated))
    lora = slots_reserved(model, max_lora_rank, max_loras, tensor)
    if kv_cache_memory_bytes is not None:
        available = given(kv_cache_memory_bytes, GIB_HELD, "--kv-cache-memory-bytes")
    else:
        terms = [pool, loaded, peak, growth] + ([state] if state.value else []) + [graphs] + ([lora] if lora.value else [])
        available = _subtracted(terms).result(GIB_HELD, "pool − weights − activation peak − non-torch"
                                              + (" − runner state" if state.value else "") + " − CUDA graphs"
                                              + (" − LoRA slots" if lora.value else ""))
    per_token = sharding.cache_per_token(model, kv, tensor, pipeline)
    block_bytes = (term(block_size) * term(per_token, f"{grouped(per_token.value)} B")).result(
        MIB_REPORTED, "block × cache per token on this GPU", shown=f"{grouped(block_size * per_token.value)} B")
    count = max(int(available.value // block_bytes.value), 0)
    blocks = ((term(available, f"{grouped(int(available.value))} B") // term(block_bytes, f"{grouped(block_bytes.value)} B"))
              .result(COUNT, "⌊available ÷ bytes per block⌋") if available.value > 0 else
              Result(count, COUNT, formula="⌊available ÷ bytes per block⌋", worked=f"no blocks: {available} available",
                     inputs=made_of(available)))
    per_request = -(-max_model_len // block_size)
    concurrency_value = count / per_request
    concurrency = Result(concurrency_value, RATIO_FINE, formula="blocks ÷ ⌈max_model_len ÷ block⌉",
                         worked=(f"{grouped(count)} ÷ ⌈{grouped(max_model_len)} ÷ {block_size}⌉ = {grouped(count)} ÷ "
                                 f"{grouped(per_request)} = {RATIO_FINE.show(concurrency_value)}"), inputs=made_of(blocks))
    held = int(concurrency_value * max_model_len)
    tokens_held = Result(held, TOKENS, formula="⌊concurrency × max_model_len⌋",
                         worked=(f"⌊{grouped(count)} ÷ {grouped(per_request)} × {grouped(max_model_len)}⌋ = "
                                 f"{TOKENS.show(held)}"), inputs=made_of(blocks))
    return Accounting(
        release=release, tensor=tensor, pipeline=pipeline, total=total,
        utilisation=given(utilisation, FRACTION, "gpu_memory_utilization"), pool=pool, weights=loaded,
        activation=peak, non_torch=growth, runner_state=state, graphs=graphs, graphs_estimated=estimated, lora=lora, available=available,
        per_token=per_token, block_size=block_size, block_bytes=block_bytes, blocks=blocks, tokens=tokens_held,
        concurrency=concurrency, max_model_len=max_model_len,
        max_num_batched_tokens=given(tokens, TOKENS, "max_num_batched_tokens"),
        max_num_seqs=given(seqs, COUNT, "max_num_seqs"), kv_cache_memory_bytes=kv_cache_memory_bytes)


def of_stack(stack, tensor: int | None = None, pipeline: int = 1, model: Model | None = None) -> Accounting:
    """The ladder of a calc.specs.stack.Stack, on one GPU of its serving split (or the one given)."""
    serving = stack.serving
    return account(model or stack.model, stack.card, stack.weight_precision, stack.kv_precision,
                   stack.gpu_memory_utilization, stack.context_limit, stack.block_size,
                   tensor or serving.tensor_parallel, pipeline, serving.max_num_batched_tokens, serving.max_num_seqs,
                   serving.kv_cache_memory_bytes, serving.max_loras, serving.max_lora_rank, serving.enforce_eager,
                   stack.engine)
