"""Published engine start-up logs, set beside the ladder rung by rung.

An engine climbs the same ladder as document 06 when it starts, and prints its rungs. vLLM's
worker (vllm/worker/worker.py, determine_num_available_blocks, since PR 10511) takes the total from
torch.cuda.mem_get_info(), multiplies it by gpu_memory_utilization, subtracts the weights, the
memory outside PyTorch's allocator (non_torch: the CUDA context, cuBLAS and NCCL buffers) and the
activation peak of a profiling pass, and sizes the cache from the rest:
num_gpu_blocks = int(available_kv_cache_memory // cache_block_size). It prints every GiB as
bytes ÷ 2^30 to two places, and the weights it loaded as "GB" that are bytes ÷ 2^30 as well
(vllm/worker/model_runner.py: "Loading model weights took %.4f GB", model_memory_usage /
float(2**30)). Its executor logs "Maximum concurrency for L tokens per request" as
num_gpu_blocks × block_size ÷ max_model_len. CUDA graphs are captured after the cache is sized
(model_runner.py, capture_model), so their memory is not in the reserve: it comes out of what
the utilisation fraction holds back.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from . import kvcache
from .anatomy import count_parameters
from .cards import H100_SXM, Card
from .models import LLAMA_3_1_8B, Model
from .precision import BF16
from .stack import Stack
from .units import COUNT, GIB_HELD, KIB_HELD, MIB_REPORTED, RATIO_FINE, TOKENS, GiB, Result, floor_count, given, grouped

BLOCK_SIZE = 16  # vLLM's default --block-size on CUDA (vllm/config.py, CacheConfig)


@dataclass(frozen=True)
class StartupLog:
    """One published start-up log: where it is, what was served, and the figures it printed.

    GiB figures are as printed (two places, or four for the weights); a figure the log does not
    print is 0. `peak_torch_gib`: older logs (v0.6.4) print PyTorch's peak with the weights inside
    it, not the activation peak alone. The cache shape (layers × KV heads × head dimension) is the
    served model's config.json.
    """

    key: str
    label: str
    url: str
    engine: str
    card: str
    model: str
    flags: str
    lines: tuple[str, ...]
    total_gib: float
    utilisation: float
    weights_gib: float
    non_torch_gib: float
    kv_gib: float
    max_model_len: int
    layers: int
    kv_heads: int
    head_dim: int
    max_positions: int
    pool_gib: float = 0.0
    activation_gib: float = 0.0
    peak_torch_gib: float = 0.0
    blocks: int = 0
    concurrency: float = 0.0
    parameters: Model | None = None  # the calc model with the same parameter count, for the weights rung


PR_10511 = StartupLog(
    key="llama3_8b_h100",
    label="Llama 3 8B on one H100, vLLM's defaults",
    url="https://github.com/vllm-project/vllm/pull/10511",
    engine="vLLM main at the PR, 13 December 2024 (the PR that introduced this profiling), not a release",
    card="H100 80 GB (the author's H100-80G logs the same 79.22 GiB total in vllm-project/vllm#12126)",
    model="meta-llama/Meta-Llama-3-8B, bf16",
    flags="vllm serve meta-llama/Meta-Llama-3-8B (defaults: max_model_len 8,192 from the config, block 16, "
          "gpu_memory_utilization 0.90, CUDA graphs on)",
    lines=("total_gpu_memory     79.22GiB",
           "gpu_memory_utilization       0.90",
           "the current vLLM instance can use    71.29GiB",
           "model weights take   14.96GiB",
           "non_torch_memory     1.79GiB",
           "PyTorch activation peak memory       1.26GiB",
           "available_kv_cache_memory    53.29GiB"),
    total_gib=79.22, utilisation=0.90, pool_gib=71.29, weights_gib=14.96, non_torch_gib=1.79,
    activation_gib=1.26, kv_gib=53.29, max_model_len=8192,
    layers=32, kv_heads=8, head_dim=128, max_positions=8192, parameters=LLAMA_3_1_8B,
)

PR_12126 = StartupLog(
    key="llama32_11b_vision_h100",
    label="Llama 3.2 11B Vision on one H100, long context and no CUDA graphs",
    url="https://github.com/vllm-project/vllm/pull/12126",
    engine="vLLM main at the PR, 16 January 2025, not a release",
    card="H100-80G, as the PR states",
    model="meta-llama/Llama-3.2-11B-Vision, dummy weights",
    flags="--load-format dummy --max-model-len 65536 --max-num-seqs 128 --enforce-eager",
    lines=("the current vLLM instance can use total_gpu_memory (79.22GiB) x gpu_memory_utilization (0.90) = 71.29GiB",
           "model weights take 19.86GiB; non_torch_memory takes 0.16GiB; PyTorch activation peak memory takes "
           "36.63GiB; the rest of the memory reserved for KV Cache is 14.65GiB.",
           "# CUDA blocks: 6001, # CPU blocks: 1638"),
    total_gib=79.22, utilisation=0.90, pool_gib=71.29, weights_gib=19.86, non_torch_gib=0.16,
    activation_gib=36.63, kv_gib=14.65, max_model_len=65536, blocks=6001,
    # config.json text_config: 40 decoder layers (8 of them cross-attention, which vLLM also caches),
    # 8 KV heads of 128
    layers=40, kv_heads=8, head_dim=128, max_positions=131072,
)

ISSUE_10517 = StartupLog(
    key="llama31_8b_rtx3090",
    label="Llama 3.1 8B Instruct on an RTX 3090, 20,000-token limit",
    url="https://github.com/vllm-project/vllm/issues/10517 (comment by kaspersiminski, 2 December 2024)",
    engine="vLLM of late 2024, version not stated (the one-line profiling summary that PR 10511 replaced)",
    card="RTX 3090 24 GB: the same model on a smaller card, the nearest published log with blocks and concurrency",
    model="meta-llama/Llama-3.1-8B-Instruct, bf16",
    flags="--max-model-len 20000, gpu_memory_utilization 0.90",
    lines=("Loading model weights took 14.9888 GB",
           "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
           "peak_torch_memory=17.06GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB "
           "kv_cache_size=3.81GiB gpu_memory_utilization=0.90",
           "GPU blocks: 1952, # CPU blocks: 2048",
           "Maximum concurrency for 20000 tokens per request: 1.56x"),
    total_gib=23.58, utilisation=0.90, weights_gib=14.9888, non_torch_gib=0.35, peak_torch_gib=17.06,
    kv_gib=3.81, max_model_len=20000, blocks=1952, concurrency=1.56,
    layers=32, kv_heads=8, head_dim=128, max_positions=131072, parameters=LLAMA_3_1_8B,
)

LOGS = (PR_10511, PR_12126, ISSUE_10517)
NEAREST = PR_10511  # the reference stack's model shape, card, utilisation, limit and block size


def logged(value_gib: float, what: str) -> Result:
    return given(value_gib * GiB, GIB_HELD, what)


def difference(ours: Result, theirs: Result, formula: str) -> Result:
    """ours − theirs, in their unit, worked from the operands as shown."""
    value = ours.value - theirs.value
    unit = ours.unit
    return Result(value, unit, formula=formula,
                  worked=f"{ours.operand} − {theirs.operand} = {unit.show(value)}")


def per_token(log: StartupLog) -> Result:
    """Cache bytes per token for the served model, bf16: 2 × layers × KV heads × head dimension × 2."""
    value = 2 * log.layers * log.kv_heads * log.head_dim * BF16.bytes
    return Result(value, KIB_HELD, formula="2 × layers × kv_heads × head_dim × 2 B",
                  worked=f"2 × {log.layers} × {log.kv_heads} × {log.head_dim} × 2 B = {grouped(value)} B = {KIB_HELD.show(value)}")


def pool(log: StartupLog) -> Result:
    """The engine's own first two rungs: its total × the utilisation."""
    value = log.total_gib * GiB * log.utilisation
    return Result(value, GIB_HELD, formula="total_gpu_memory × gpu_memory_utilization",
                  worked=f"{log.total_gib:.2f} GiB × {log.utilisation:.2f} = {GIB_HELD.show(value)}")


def activation(log: StartupLog) -> Result:
    """The profiled activation peak: printed on its own, or PyTorch's peak less the weights."""
    if log.peak_torch_gib:
        value = (log.peak_torch_gib - log.weights_gib) * GiB
        return Result(value, GIB_HELD, formula="peak_torch_memory − weights",
                      worked=f"{log.peak_torch_gib:g} GiB − {log.weights_gib:g} GiB = {GIB_HELD.show(value)}")
    return logged(log.activation_gib, "PyTorch activation peak memory, as logged")


def reserve(log: StartupLog) -> Result:
    """What the engine holds back besides weights and cache: non-torch memory + activation peak."""
    peak = activation(log)
    value = log.non_torch_gib * GiB + peak.value
    return Result(value, GIB_HELD, formula="non_torch_memory + activation peak",
                  worked=f"{log.non_torch_gib:.2f} GiB + {peak.operand} = {GIB_HELD.show(value)}")


def kv_by_hand(log: StartupLog) -> Result:
    """The cache budget redone from the log's own terms: pool − weights − non-torch − activation."""
    whole = pool(log)
    held = reserve(log)
    value = whole.value - log.weights_gib * GiB - held.value
    return Result(value, GIB_HELD, formula="pool − weights − (non_torch + activation)",
                  worked=(f"{whole.operand} − {log.weights_gib:g} GiB − {held.operand} = "
                          f"{GIB_HELD.show(value)}"))


def blocks(log: StartupLog) -> Result:
    """Whole blocks in the logged budget: ⌊budget ÷ (block × bytes per token)⌋."""
    size = per_token(log).value * BLOCK_SIZE
    count = floor_count(log.kv_gib * GiB, size)
    return Result(count, COUNT, formula="⌊KV budget ÷ (block × per token)⌋",
                  worked=(f"⌊{log.kv_gib:.2f} GiB ÷ ({BLOCK_SIZE} × {grouped(per_token(log).value)} B)⌋ = "
                          f"⌊{grouped(log.kv_gib * GiB / size, 2)}⌋ = {grouped(count)} blocks"))


def tokens(log: StartupLog) -> Result:
    """The cache size in tokens: the logged block count if printed, else the one redone, × block."""
    count = log.blocks or int(blocks(log).value)
    value = count * BLOCK_SIZE
    return Result(value, TOKENS, formula="blocks × block",
                  worked=f"{grouped(count)} × {BLOCK_SIZE} = {TOKENS.show(value)}")


def concurrency(log: StartupLog) -> Result:
    """vLLM's maximum concurrency: tokens in the cache ÷ max_model_len, unfloored."""
    held = tokens(log)
    value = held.value / log.max_model_len
    return Result(value, RATIO_FINE, formula="cache tokens ÷ max_model_len",
                  worked=f"{held} ÷ {grouped(log.max_model_len)} tokens = {RATIO_FINE.show(value)}")


def rope_cache(log: StartupLog) -> Result:
    """vLLM's rotary cos/sin table, a buffer of max positions × head dimension in the model's dtype,
    loaded with the weights."""
    value = log.max_positions * log.head_dim * BF16.bytes
    return Result(value, MIB_REPORTED, formula="max positions × head_dim × 2 B",
                  worked=f"{grouped(log.max_positions)} × {log.head_dim} × 2 B = {MIB_REPORTED.show(value)}")


def weights(log: StartupLog) -> Result:
    """Parameters × 2 B, plus the rotary table: what the weights line measures."""
    params = count_parameters(log.parameters).total.value
    table = rope_cache(log)
    value = params * BF16.bytes + table.value
    return Result(value, GIB_HELD, formula="parameters × 2 B + rotary table",
                  worked=(f"{grouped(params)} × 2 B + {grouped(table.value)} B = {grouped(value)} B = "
                          f"{value / GiB:.4f} GiB"))


@dataclass(frozen=True)
class Rung:
    """One rung: the ladder's figure, the log's, and the gap with its arithmetic."""

    ladder: Result
    log: Result
    gap: Result


@dataclass(frozen=True)
class Comparison:
    """calc's ladder for a log's model, card and flags, set beside what the engine printed."""

    total: Rung
    pool: Rung
    weights: Rung
    reserve: Rung
    kv_budget: Rung
    tokens: Rung
    concurrency: Rung
    blocks: Result
    smi_total: Result
    smi_gap: Result
    smi_gap_mib: Result
    smi_kv_budget: Result
    smi_tokens: Result
    smi_tokens_gap: Result


def stack_of(log: StartupLog, stack: Stack, card: Card) -> Stack:
    """The stack the log ran: its card, the calc model of the same shape, its utilisation and limit,
    with the ladder's own named activation reserve."""
    return replace(stack, card=card, model=log.parameters, weight_precision=BF16, kv_precision=BF16,
                   gpu_memory_utilization=log.utilisation, context_limit=log.max_model_len, block_size=BLOCK_SIZE)


def compare(log: StartupLog, stack: Stack, card: Card = H100_SXM) -> Comparison:
    ladder = kvcache.ladder(stack_of(log, stack, card))
    ladder_concurrency = Result(ladder.token_capacity.value / log.max_model_len, RATIO_FINE,
                                formula="token capacity ÷ max_model_len",
                                worked=(f"{ladder.token_capacity} ÷ {grouped(log.max_model_len)} tokens = "
                                        f"{RATIO_FINE.show(ladder.token_capacity.value / log.max_model_len)}"))
    rungs = {
        "total": (ladder.capacity, logged(log.total_gib, "total_gpu_memory, as logged")),
        "pool": (ladder.pool, logged(log.pool_gib, "the current vLLM instance can use, as logged")),
        "weights": (ladder.weights, logged(log.weights_gib, "model weights take, as logged")),
        "reserve": (ladder.activations, reserve(log)),
        "kv_budget": (ladder.kv_budget, logged(log.kv_gib, "available_kv_cache_memory, as logged")),
        "tokens": (ladder.token_capacity, tokens(log)),
        "concurrency": (ladder_concurrency, concurrency(log)),
    }
    smi = card.reported_capacity
    gap = smi.value - card.engine_capacity.value
    by_smi = kvcache.ladder(stack_of(log, stack, replace(card, cuda_gib=card.reported_mib / 1024)))  # as if CUDA offered all of it
    return Comparison(
        **{name: Rung(ours, theirs, difference(ours, theirs, "ladder − log"))
           for name, (ours, theirs) in rungs.items()},
        blocks=blocks(log),
        smi_total=smi,
        smi_gap=Result(gap, GIB_HELD, formula="nvidia-smi's total − CUDA's total",
                       worked=f"{smi.operand} − {card.engine_capacity.operand} = {GIB_HELD.show(gap)}"),
        smi_gap_mib=Result(gap, MIB_REPORTED, formula="the same gap in MiB",
                           worked=f"{grouped(card.reported_mib)} MiB − {card.engine_capacity.operand} = {MIB_REPORTED.show(gap)}"),
        smi_kv_budget=by_smi.kv_budget,
        smi_tokens=by_smi.token_capacity,
        smi_tokens_gap=difference(by_smi.token_capacity, tokens(log), "nvidia-smi's ladder − log"),
    )


@dataclass(frozen=True)
class LogView:
    """A log's own figures redone by hand: pool, budget, blocks, tokens and concurrency."""

    log: StartupLog
    per_token: Result
    pool: Result
    reserve: Result
    kv_by_hand: Result
    blocks: Result
    tokens: Result
    concurrency: Result
    kv_logged: Result
    total_logged: Result
    weights_logged: Result
    max_model_len: Result
    logged_blocks_need: Result | None


def logged_blocks_need(log: StartupLog) -> Result | None:
    """The budget the printed block count needs: it must round to the printed GiB figure."""
    if not log.blocks:
        return None
    value = log.blocks * BLOCK_SIZE * per_token(log).value
    return Result(value, GIB_HELD, formula="logged blocks × block × per token",
                  worked=(f"{grouped(log.blocks)} × {BLOCK_SIZE} × {grouped(per_token(log).value)} B = "
                          f"{grouped(value)} B = {value / GiB:.4f} GiB"))


def view(log: StartupLog) -> LogView:
    return LogView(log=log, per_token=per_token(log), pool=pool(log), reserve=reserve(log),
                   kv_by_hand=kv_by_hand(log), blocks=blocks(log), tokens=tokens(log), concurrency=concurrency(log),
                   kv_logged=logged(log.kv_gib, "KV cache, as logged"),
                   total_logged=logged(log.total_gib, "total, as logged"),
                   weights_logged=Result(log.weights_gib * GiB, GIB_HELD, formula="weights, as logged",
                                         worked=f"{log.weights_gib:g} GiB"),
                   max_model_len=given(log.max_model_len, TOKENS, "max_model_len"),
                   logged_blocks_need=logged_blocks_need(log))


def smi_pool(card: Card, utilisation: float) -> Result:
    """The pool nvidia-smi's total would give: what document 06 climbed from before the logs."""
    total = card.reported_capacity
    value = total.value * utilisation
    return Result(value, GIB_HELD, formula="nvidia-smi's total × utilisation",
                  worked=f"{grouped(card.reported_mib)} MiB × {utilisation:.2f} = {GIB_HELD.show(value)}")


def section(stack: Stack) -> dict[str, object]:
    nearest = compare(NEAREST, stack)
    weights_line = ISSUE_10517
    return {
        "nearest": nearest,
        "logs": {log.key: view(log) for log in LOGS},
        "weights_31": weights(weights_line),
        "weights_31_logged": Result(weights_line.weights_gib * GiB, GIB_HELD, formula="Loading model weights took, as logged",
                                    worked=f"{weights_line.weights_gib:.4f} GiB"),
        "rope_31": rope_cache(weights_line),
        "rope_3": rope_cache(NEAREST),
        "smi_pool": smi_pool(H100_SXM, NEAREST.utilisation),
        "cuda_total": H100_SXM.cuda_capacity,
        "block_size": given(BLOCK_SIZE, COUNT, "vLLM's default block size"),
        "max_model_len": given(NEAREST.max_model_len, TOKENS, "max_model_len"),
        "users_from_log": Result(tokens(NEAREST).value // NEAREST.max_model_len, COUNT,
                                 formula="⌊cache tokens ÷ max_model_len⌋",
                                 worked=(f"{tokens(NEAREST)} ÷ {grouped(NEAREST.max_model_len)} tokens = "
                                         f"{concurrency(NEAREST).value:.2f} → {tokens(NEAREST).value // NEAREST.max_model_len} users")),
    }

