"""The reference stack: the one worked system every document's figures come from."""
from __future__ import annotations

from dataclasses import dataclass

from .cards import H100_SXM, Card
from .release import PINNED, Release
from .models import LLAMA_3_1_8B, LLAMA_3_1_70B, Model
from .precision import BF16, Precision


@dataclass(frozen=True)
class Traffic:
    """Peak load and the shape of a request, as percentiles (never the mean)."""

    requests_per_s: float = 40
    prompt_p50: int = 2_000
    prompt_p95: int = 8_000
    prompt_p99: int = 50_000
    output_p50: int = 300
    output_long: int = 1_000


@dataclass(frozen=True)
class Promise:
    """The service-level objective, both at p95 and at the real request rate."""

    ttft_p95_s: float = 1.0
    itl_p95_s: float = 0.050


@dataclass(frozen=True)
class Workload:
    """One request shape decoding in one batch: what the time documents time. Without a batch,
    the busiest the card can be at this length: every resident the cache admits (calc.facts).
    `held`: the tokens each sequence holds at the step document 04 times; without it, the prompt
    and half the output."""

    prompt: int = Traffic.prompt_p50
    output: int = Traffic.output_p50
    batch: int | None = None
    held: int | None = None

    @property
    def tokens_held(self) -> int:
        return self.held or self.prompt + self.output // 2


@dataclass(frozen=True)
class Efficiency:
    """How fast this stack's kernels run against the measured ones the time model is calibrated on
    (calc.engine.kernels): 1 is the measurement. `compute` scales the kernels that wait on arithmetic,
    `bandwidth` those that wait on memory; a reader who times their own prefill or decode step sets
    them (document 05). `prefill_target_s`: the measured prefill `compute` was set from, if it was, so a
    measured decode step set afterwards solves both speeds together and keeps that prefill."""

    compute: float = 1.0
    bandwidth: float = 1.0
    prefill_target_s: float = 0.0


@dataclass(frozen=True)
class Pricing:
    """What a GPU costs to run, which documents 14 and 15 turn into dollars per million tokens.

    `gpu_hour_usd`: one card rented on demand for an hour (an assumption, one round figure: H100
    SXM on-demand rates listed by specialty clouds in 2026 ran about $2.50 to $3.50 an hour, by
    the Mercatus GPU Index, https://www.mercatus-ai.com/blog/cloud-gpu-pricing, May 2026; use your
    contract's rate).
    """

    gpu_hour_usd: float = 3.00


REFERENCE_COMMAND = "vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192"


@dataclass(frozen=True)
class Serving:
    """Document 12: what a vLLM launch line sets besides the ladder's own inputs (calc.engine.launch reads
    the line into these). `max_num_seqs` and `max_num_batched_tokens`: None leaves vLLM's default for
    the card. `kv_cache_memory_bytes`: None sizes the cache from the utilisation. `max_loras`: LoRA
    slots held on each GPU, 0 when LoRA is off. `notes`: what the line set that changes no capacity."""

    command: str = REFERENCE_COMMAND
    tensor_parallel: int = 1
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    kv_cache_memory_bytes: int | None = None
    max_loras: int = 0
    max_lora_rank: int = 16
    enforce_eager: bool = False
    notes: str = ""
    log: str = ""  # a start-up log document 12 reads (calc.engine.logs); "" until a reader pastes one


MEASURED, SKETCH = "measured", "sketch"  # how Parallel prices an all-reduce


@dataclass(frozen=True)
class Parallel:
    """How document 11 spreads a model over several GPUs, and the assumptions its communication is
    priced on.

    `model`: the model it shards, Llama 3.1 70B, which one 80 GB card cannot hold in bf16. `tensor`:
    the tensor-parallel degree (`--tensor-parallel-size`); `pipeline`: pipeline stages
    (`--pipeline-parallel-size`). `batch`: sequences decoding together; None: every sequence the
    cache admits at the context limit. `link_fraction`: the share of the link's one-way line rate a
    ring all-reduce reaches (an assumption: NCCL's developers put H100 NVLink's line rate at
    450 GB/s each way and the ring's effective rate at about 370 GB/s after some 20% of protocol
    overhead, https://github.com/NVIDIA/nccl-tests/issues/212). `latency_s`: the fixed cost of one
    all-reduce however small (an assumption: vLLM's custom all-reduce took 9 to 10 µs for a
    512-byte message on H100 at two, four and eight GPUs, without CUDA graphs, in
    https://github.com/sgl-project/sglang/pull/2904; TensorRT-LLM's kernel 4 to 6 µs).
    `microbatches`: how many pieces a pipeline's batch is cut into (an example). `all_reduce`: how an
    all-reduce is priced: MEASURED, as vLLM's was measured on the card at that degree (where it was:
    calc.engine.kernels.all_reduce_time), or SKETCH, the fixed cost plus a ring's traffic over the
    achieved link, which the two assumptions above set.
    """

    model: Model = LLAMA_3_1_70B
    tensor: int = 4
    pipeline: int = 1
    batch: int | None = None
    link_fraction: float = 0.80
    latency_s: float = 0.000_010
    microbatches: int = 4
    all_reduce: str = "measured"


@dataclass(frozen=True)
class Headroom:
    """How document 14 turns a load into a fleet: each a named choice, with its reasoning.

    `target`: the busiest any resource is planned to be at peak, cache or card time (an assumption:
    a queue's wait grows as 1 ÷ (1 − load), so past about eight tenths a small burst costs a large
    wait; document 15 measures where the knee falls). `spares`: replicas beyond the load, so one
    card can fail or be drained for an upgrade at peak (N+1). `node`: cards per server, the unit
    they are bought or rented in (H100 SXM servers carry eight: MLCommons inference v3.1 lists
    accelerators_per_node 8 for Dell's XE9680, https://github.com/mlcommons/inference_results_v3.1/blob/main/closed/Dell/systems/XE9680_H100_SXM_80GBx8_TRT.json,
    as for NVIDIA's DGX H100). `average_load`: the month's
    average traffic as a share of the peak, which sets the tokens the fixed bill is spread over (an
    assumption for an interactive product with a daily cycle; measure your own).
    """

    target: float = 0.80
    spares: int = 1
    node: int = 8
    average_load: float = 0.40


@dataclass(frozen=True)
class Stack:
    """A model on a card under an engine, with the traffic it must carry, what it promises and what it
    costs: the system served. What only one document's calculator sets is not here but beside it
    (calc.specs.inputs.DocumentInputs)."""

    model: Model
    card: Card
    weight_precision: Precision
    kv_precision: Precision
    engine: Release
    gpu_memory_utilization: float
    context_limit: int
    typical_conversation: int
    block_size: int
    traffic: Traffic
    promise: Promise
    efficiency: Efficiency = Efficiency()
    workload: Workload = Workload()
    price: Pricing = Pricing()  # documents 00, 14 and 15: what an hour of one card costs
    headroom: Headroom = Headroom()  # documents 14 and 15: from a load to a fleet
    parallel: Parallel = Parallel()  # document 11: the model spread over GPUs
    serving: Serving = Serving()  # document 12: what the engine's launch line sets


REFERENCE = Stack(
    model=LLAMA_3_1_8B,
    card=H100_SXM,
    weight_precision=BF16,
    kv_precision=BF16,
    engine=PINNED,
    gpu_memory_utilization=0.90,
    context_limit=8_192,
    typical_conversation=2_300,
    block_size=16,
    traffic=Traffic(),
    promise=Promise(),
)
