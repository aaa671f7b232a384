"""The engine the runbook describes: one vLLM release, pinned, with the defaults and rules calc
models read from that release's own code (`pip download --no-deps vllm==0.33.0`, the .py files in
the wheel), each cited by file and function.

Earlier releases appear only where a published start-up log was printed by one: the rules that
changed between them and the pinned release are fields here, so a log is redone by its own
release's arithmetic and the pinned release's is never bent to fit it.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from .cards import Card
from ..core.units import GiB

ENTRY_SERVE = "vllm serve"  # UsageContext.OPENAI_API_SERVER
ENTRY_LLM = "the LLM class"  # UsageContext.LLM_CLASS


@dataclass(frozen=True)
class Default:
    """One default of the release, as its code states it."""

    name: str
    value: str
    source: str


@dataclass(frozen=True)
class BatchTier:
    """One tier of EngineArgs.get_batch_defaults: from which card total it applies, and the token budget
    (under `vllm serve` and for the LLM class) and sequence cap it gives."""

    from_gib: int
    tokens_serve: int
    tokens_class: int
    seqs: int
    excludes_a100: bool = False


LARGE_TIER_GIB = 160
# vllm/engine/arg_utils.py, EngineArgs.get_batch_defaults: ≥ 160 GiB ("GPUs like B200/B300"); ≥ 70 GiB and
# not an A100 ("GPUs like H100 and H200"); everything else. The 160 GiB tier arrived after 0.21.0.
BATCH_TIERS = (BatchTier(LARGE_TIER_GIB, 16384, 16384, 1024), BatchTier(70, 8192, 16384, 1024, excludes_a100=True),
               BatchTier(0, 2048, 8192, 256))


@dataclass(frozen=True)
class Release:
    """One vLLM release: what calc needs of it, each rule with where the release's code states it.

    `graph_estimate_subtracted`: whether the CUDA-graph memory estimate comes out of the cache budget
    by default (envs.py, VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS). `large_tier`: whether the
    tier where `vllm serve` gets the LLM class's token budget too exists. `one_line_kv_log`: whether the cache's size and concurrency print on one line.
    `summary_at_info`: whether the closing "Free memory on device … Actual usage is …" summary prints at
    INFO (vllm/v1/worker/gpu_worker.py, Worker.compile_or_warm_up_model); 0.19.0 and 0.20.0 print it at
    DEBUG.
    `older_sampler`: whether the profile's sampler peak is the one releases before 0.17 measured,
    about two and a half times today's per logit (calc.engine.memory, `SAMPLER_BEFORE_0_17`).
    `v2_runner`: whether the V2 model runner is the default (vllm/config/vllm.py,
    VllmConfig.use_v2_model_runner), whose sampler keeps per-request penalty state on the GPU.
    `blackwell_capture_ceiling`: the largest CUDA-graph capture size on compute capability 10.
    """

    version: str
    wheel: str
    graph_estimate_subtracted: bool
    large_tier: bool
    one_line_kv_log: bool
    summary_at_info: bool = True
    gpu_memory_utilization: float = 0.92
    older_sampler: bool = False
    v2_runner: bool = True
    blackwell_capture_ceiling: int = 1024

    @property
    def name(self) -> str:
        return f"vLLM {self.version}"

    def cite(self, path: str, where: str) -> str:
        return f"{path}, {where} (vLLM {self.version})"

    @property
    def batch_source(self) -> str:
        return self.cite("vllm/engine/arg_utils.py", "EngineArgs.get_batch_defaults")

    @property
    def memory_source(self) -> str:
        return self.cite("vllm/v1/worker/gpu_worker.py", "Worker.determine_available_memory")

    @property
    def blocks_source(self) -> str:
        return self.cite("vllm/v1/core/kv_cache_planning.py", "get_kv_cache_config_from_groups: available // bytes per block")

    @property
    def concurrency_source(self) -> str:
        return self.cite("vllm/v1/core/kv_cache_utils.py", "get_max_concurrency_for_kv_cache_config and "
                         "get_kv_cache_capacity: blocks ÷ ⌈max_model_len ÷ block⌉; tokens = ⌊that × max_model_len⌋")

    @property
    def requested_source(self) -> str:
        return self.cite("vllm/v1/worker/utils.py", "request_memory: ⌈total × gpu_memory_utilization⌉, the total "
                         "from torch's get_memory_info (CUDA's, not nvidia-smi's)")

    @property
    def batch_tiers(self) -> tuple[BatchTier, ...]:
        """The scheduler's default tiers, largest first; the last takes every card the others do not."""
        return tuple(t for t in BATCH_TIERS if self.large_tier or t.from_gib != LARGE_TIER_GIB)

    def batch_tier(self, card: Card) -> BatchTier:
        """The tier a card gets: chosen by NVML's total (nvidia-smi's) in bytes against 2^30-byte GiB; an
        A100 is kept on the small tier by the name the driver gives it (get_batch_defaults reads
        current_platform.get_device_name())."""
        total = card.reported_capacity.value
        return next(t for t in self.batch_tiers
                    if total >= t.from_gib * GiB and not (t.excludes_a100 and "a100" in card.device_name.lower()))

    def batch_defaults(self, card: Card, entry: str = ENTRY_SERVE) -> tuple[int, int]:
        """(max_num_batched_tokens, max_num_seqs) before the adjustments for a short max_model_len."""
        tier = self.batch_tier(card)
        return (tier.tokens_serve if entry == ENTRY_SERVE else tier.tokens_class), tier.seqs

    def scheduler_caps(self, card: Card, max_model_len: int, tokens: int | None = None, seqs: int | None = None,
                       entry: str = ENTRY_SERVE) -> tuple[int, int]:
        """(max_num_batched_tokens, max_num_seqs) as the engine settles them: the defaults for what the
        line leaves unset, a defaulted token budget capped at max_num_seqs × max_model_len and a
        defaulted sequence cap at the token budget (arg_utils.py,
        _set_default_max_num_seqs_and_batched_tokens_args; chunked prefill on)."""
        default_tokens, default_seqs = self.batch_defaults(card, entry)
        chosen_seqs = seqs or default_seqs
        chosen_tokens = tokens or min(default_tokens, chosen_seqs * max_model_len)
        if not seqs:
            chosen_seqs = min(chosen_seqs, chosen_tokens)
        return chosen_tokens, chosen_seqs

    def block_size(self, card: Card, latent: bool) -> int:
        """Tokens per cache block: 16 (CacheConfig.DEFAULT_BLOCK_SIZE) unless the attention backend
        vLLM picks needs another. On Hopper and older cards Llama-style attention gets FlashAttention and
        latent attention FlashAttention MLA, both taking 16; on Blackwell (compute capability 10) latent
        attention gets FlashInfer MLA, whose smallest block is 32 (platforms/cuda.py,
        _get_backend_priorities; platforms/interface.py, update_block_size_for_backend)."""
        if latent and card.compute_capability[0] == 10:
            return 32
        return 16

    def capture_sizes(self, card: Card, max_num_batched_tokens: int, max_num_seqs: int) -> tuple[int, ...]:
        """The batch sizes CUDA graphs are captured for (config/vllm.py, VllmConfig._set_cudagraph_sizes):
        1, 2, 4, then every 8 to 248, every 16 from 256, up to min(2 × max_num_seqs, 512 — 1024 on
        compute capability 10 — , max_num_batched_tokens)."""
        ceiling = self.blackwell_capture_ceiling if card.compute_capability[0] == 10 else 512
        largest = min(max_num_seqs * 2, ceiling, max_num_batched_tokens)
        sizes = [s for s in (1, 2, 4) if s <= largest]
        if largest >= 8:
            sizes += list(range(8, min(largest + 1, 256), 8))
        if largest >= 256:
            sizes += list(range(256, largest + 1, 16))
        if max_num_seqs <= largest:
            sizes.append(max_num_seqs)
        return tuple(sorted(set(sizes)))

    @property
    def defaults(self) -> tuple[Default, ...]:
        """The defaults the pages quote, each where this release's code states it."""
        cite = self.cite
        return (
            Default("gpu_memory_utilization", f"{self.gpu_memory_utilization:g}",
                    cite("vllm/config/cache.py", "CacheConfig.gpu_memory_utilization")),
            Default("block_size", "16, or what the attention backend needs",
                    cite("vllm/config/cache.py", "CacheConfig.DEFAULT_BLOCK_SIZE; vllm/platforms/interface.py, "
                         "Platform.update_block_size_for_backend")),
            Default("enable_prefix_caching", "on for generative models",
                    cite("vllm/engine/arg_utils.py", "_set_default_chunked_prefill_and_prefix_caching_args")),
            Default("enable_chunked_prefill", "on for generative models",
                    cite("vllm/engine/arg_utils.py", "_set_default_chunked_prefill_and_prefix_caching_args")),
            Default("async_scheduling", "on, except for pooling models and executors without it",
                    cite("vllm/config/vllm.py", "VllmConfig.__post_init__")),
            Default("cudagraph_mode", "FULL_AND_PIECEWISE (optimisation level O2); none under --enforce-eager",
                    cite("vllm/config/vllm.py", "OPTIMIZATION_LEVEL_02 and VllmConfig.__post_init__")),
            Default("VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS", "1" if self.graph_estimate_subtracted else "0",
                    cite("vllm/envs.py", "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS")),
            Default("max_model_len", "the model's context length; -1 or auto: the longest the cache holds",
                    cite("vllm/config/model.py", "ModelConfig.max_model_len")),
            Default("long_prefill_token_threshold", "0 (no cap on one prompt's chunk)",
                    cite("vllm/config/scheduler.py", "SchedulerConfig.long_prefill_token_threshold")),
            Default("preemption", "recompute: a preempted request's blocks are freed and it restarts from its "
                    "first token (no swap to host memory)",
                    cite("vllm/v1/core/sched/scheduler.py", "Scheduler._preempt_request")),
            Default("model runner", "V2 (vllm/v1/worker/gpu/model_runner.py), V1 for features V2 lacks",
                    cite("vllm/config/vllm.py", "VllmConfig.use_v2_model_runner")),
        )


PINNED = Release(
    version="0.33.0",
    wheel="vllm-0.33.0-cp38-abi3-manylinux_2_28_x86_64.whl from PyPI, built 2026-11-01 (commit g4ba787ec9)",
    graph_estimate_subtracted=True,
    large_tier=True,
    one_line_kv_log=True,
)
# The release the published V1 logs of the reference stack were printed by. It profiled the CUDA
# graphs' memory and printed the estimate but left it in the headroom (envs.py: the default was "0";
# 0.20.0 made it "1", though its log line says "default since v0.21.0"), had no 160 GiB tier, printed
# the cache's size and concurrency on two lines, and defaulted gpu_memory_utilization to 0.9
# (config/cache.py; 0.20.0 made it 0.92).
V0_19_0 = replace(PINNED, version="0.19.0", wheel="vllm-0.19.0 from PyPI", graph_estimate_subtracted=False,
                  large_tier=False, one_line_kv_log=False, summary_at_info=False, gpu_memory_utilization=0.9, v2_runner=False,
                  blackwell_capture_ceiling=512)
# The release of the published 24 GB log: as 0.19.0, and it did not profile CUDA graphs at all.
V0_17_1 = replace(V0_19_0, version="0.17.1", wheel="vllm-0.17.1 from PyPI")
# Releases before 0.17: as 0.17.1, with the older sampler's activation peak. calc has read no wheel of
# these; the rule rests on published profiles (calc.engine.memory, SAMPLER_BEFORE_0_17).
BEFORE_0_17 = replace(V0_17_1, version="before 0.17", wheel="none read", older_sampler=True)
# 0.20.0 and 0.21.0: the graph estimate subtracted and the utilisation 0.92, as today, but no 160 GiB
# tier (engine/arg_utils.py, get_batch_defaults), two log lines for the cache, the V1 model runner
# by default (envs.py, VLLM_USE_V2_MODEL_RUNNER "0") and capture sizes up to 512 on every card.
V0_21_0 = replace(PINNED, version="0.21.0", wheel="vllm-0.21.0 from PyPI", large_tier=False, one_line_kv_log=False,
                  summary_at_info=False,
                  v2_runner=False, blackwell_capture_ceiling=512)
RELEASES = {r.version: r for r in (PINNED, V0_21_0, V0_19_0, V0_17_1)}
