"""vLLM start-up logs read and set beside the model: the published logs the memory ladder is checked
against, and a reader for any log a reader pastes.

One reader (`read`) finds the lines it knows in a log of any release, from V0's profiling summary to
the pinned release's, and `compare` sets each figure beside the model's rung for the same model,
card and flags, under the rules of the release that printed it (calc.specs.release): which term
differs and by how much, and which lines the log did not print. The published logs are kept as their
own lines, so they pass through the same reader a pasted log does.
"""
from __future__ import annotations

import re
from functools import lru_cache
from dataclasses import dataclass, replace

from ..specs.cards import CARDS, H100_SXM, Card
from ..specs.models import Model
from ..specs.precision import BF16, FP8, Precision
from ..specs.repositories import MODELS
from ..core.arith import term
from ..core.units import COUNT, GIB_HELD, RATIO_FINE, SHARE, TOKENS, GiB, Result, given, grouped
from . import memory
from ..specs.release import BEFORE_0_17, PINNED, RELEASES, V0_19_0, V0_21_0, Release

V1_FIRST = (0, 8)  # the first release whose default engine was V1
LONGEST_LOG = 5_000_000  # characters: a day of DEBUG output is smaller; anything larger is not one start-up
CLOSE = 0.02  # a term within 2% of the log's figure matches it
# The 24 GB card of the published consumer log: only its memory figures take part (its CUDA total is
# the one the log prints), so it is not among the cards the pages compare.
RTX_3090 = Card(
    name="GeForce RTX 3090 24 GB", marketed_gb=24, reported_mib=24576, hbm_tb_per_s=0.936, bf16_dense_tflops=71,
    fp8_dense_tflops=0, power_w=350, interconnect="PCIe Gen4 x16", interconnect_gb_per_s=64,
    source=("NVIDIA Ampere GA102 GPU Architecture whitepaper, GeForce RTX 3090: 24 GB GDDR6X at 936 GB/s, 71 TFLOP/s "
            "dense bf16 tensor with fp32 accumulate; 24,576 MiB is nvidia-smi's total"),
    compute_capability=(8, 6),
    device_name="NVIDIA GeForce RTX 3090",
    traits_source=("'NVIDIA GeForce RTX 3090' is the name NVML gives the card (nvidia-smi --query-gpu=name); the GA102 "
                   "whitepaper lists no FP8 Tensor Core"),
)


# The cards a log can be read on: the pages' cards, and the consumer card of a published log.
LOG_CARDS: dict[str, Card] = {**CARDS, "rtx-3090": RTX_3090}


@dataclass(frozen=True)
class Published:
    """One published log: where it is, the card it ran on, and the lines calc keeps of it, verbatim; or,
    where the source is a table read from logs rather than the lines themselves, the figures it printed
    (`figures`) and the release rules they are read under (`rules`)."""

    key: str
    label: str
    url: str
    card: Card
    lines: tuple[str, ...] = ()
    note: str = ""
    release: str = ""  # the release, where the lines kept do not print it
    figures: Printed | None = None
    rules: Release | None = None

    @property
    def text(self) -> str:
        return "\n".join(self.lines)


PUBLISHED_PLANNER_8B = Published(
    key='planner_8b',
    label='Llama 3.1 8B Instruct on one H100, 0.95',
    url='https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/meta-llama-llama-3-1-8b---h100-80gb--tp1pp1dp1--8192.log',
    card=H100_SXM,
    lines=(
        '(APIServer pid=1) INFO 04-22 00:03:35 [entrypoints/utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.0',
        "(APIServer pid=1) INFO 04-22 00:03:35 [entrypoints/utils.py:233] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192, 'gpu_memory_utilization': 0.95, 'enable_prefix_caching': False}",
        '(EngineCore pid=242) DEBUG 04-22 00:03:47 [v1/worker/gpu_worker.py:284] worker init memory snapshot: torch_peak=0.0GiB, free_memory=78.68GiB, total_memory=79.19GiB, cuda_memory=0.51GiB, torch_memory=0.0GiB, non_torch_memory=0.51GiB, timestamp=1776816227.5468106, auto_measure=True',
        '(EngineCore pid=242) DEBUG 04-22 00:03:47 [v1/worker/gpu_worker.py:285] worker requested memory: 75.23GiB',
        '(EngineCore pid=242) INFO 04-22 00:04:02 [v1/worker/gpu_model_runner.py:4820] Model loading took 14.99 GiB memory and 14.429680 seconds',
        '(EngineCore pid=242) INFO 04-22 00:04:20 [v1/worker/gpu_model_runner.py:5955] Estimated CUDA graph memory: 0.84 GiB total',
        '(EngineCore pid=242) DEBUG 04-22 00:04:20 [v1/worker/gpu_worker.py:435] Memory profiling takes 17.96 seconds. Total non KV cache memory: 17.12GiB; torch peak memory increase: 1.89GiB; non-torch forward increase memory: 0.25GiB; weights memory: 14.99GiB.',
        '(EngineCore pid=242) INFO 04-22 00:04:20 [v1/worker/gpu_worker.py:436] Available KV cache memory: 58.11 GiB',
        '(EngineCore pid=242) INFO 04-22 00:04:20 [v1/worker/gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9500 to 0.9606 to maintain the same effective KV cache size.',
        '(EngineCore pid=242) INFO 04-22 00:04:20 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 476,016 tokens',
        '(EngineCore pid=242) INFO 04-22 00:04:20 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 58.11x',
    ),
)

PUBLISHED_PLANNER_8B_TP2 = Published(
    key='planner_8b_tp2',
    label='Llama 3.1 8B Instruct at tensor parallel 2, 0.95',
    url='https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/meta-llama-llama-3-1-8b---h100-80gb--tp2pp1dp1--8192.log',
    card=H100_SXM,
    lines=(
        '(APIServer pid=1) INFO 04-22 01:35:30 [entrypoints/utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.0',
        "(APIServer pid=1) INFO 04-22 01:35:30 [entrypoints/utils.py:233] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192, 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.95, 'enable_prefix_caching': False}",
        '(Worker pid=445) DEBUG 04-22 01:35:55 [v1/worker/gpu_worker.py:284] worker init memory snapshot: torch_peak=0.01GiB, free_memory=77.66GiB, total_memory=79.19GiB, cuda_memory=1.53GiB, torch_memory=0.02GiB, non_torch_memory=1.51GiB, timestamp=1776821755.3217318, auto_measure=True',
        '(Worker pid=445) DEBUG 04-22 01:35:55 [v1/worker/gpu_worker.py:285] worker requested memory: 75.23GiB',
        '(Worker_TP0 pid=444) INFO 04-22 01:36:06 [v1/worker/gpu_model_runner.py:4820] Model loading took 7.51 GiB memory and 10.562171 seconds',
        '(Worker_TP0 pid=444) INFO 04-22 01:36:26 [v1/worker/gpu_model_runner.py:5955] Estimated CUDA graph memory: 1.69 GiB total',
        '(Worker_TP0 pid=444) DEBUG 04-22 01:36:26 [v1/worker/gpu_worker.py:435] Memory profiling takes 19.38 seconds. Total non KV cache memory: 11.47GiB; torch peak memory increase: 1.89GiB; non-torch forward increase memory: 2.07GiB; weights memory: 7.51GiB.',
        '(Worker_TP0 pid=444) INFO 04-22 01:36:26 [v1/worker/gpu_worker.py:436] Available KV cache memory: 63.76 GiB',
        '(Worker_TP0 pid=444) INFO 04-22 01:36:26 [v1/worker/gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9500 to 0.9714 to maintain the same effective KV cache size.',
        '(EngineCore pid=245) INFO 04-22 01:36:26 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 1,044,688 tokens',
        '(EngineCore pid=245) INFO 04-22 01:36:26 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 127.53x',
    ),
)

PUBLISHED_PLANNER_8B_TP4 = Published(
    key='planner_8b_tp4',
    label='Llama 3.1 8B Instruct at tensor parallel 4, 0.95',
    url='https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/meta-llama-llama-3-1-8b---h100-80gb--tp4pp1dp1--8192.log',
    card=H100_SXM,
    lines=(
        '(APIServer pid=1) INFO 04-22 01:36:59 [entrypoints/utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.0',
        "(APIServer pid=1) INFO 04-22 01:36:59 [entrypoints/utils.py:233] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192, 'tensor_parallel_size': 4, 'gpu_memory_utilization': 0.95, 'enable_prefix_caching': False}",
        '(Worker pid=443) DEBUG 04-22 01:37:28 [v1/worker/gpu_worker.py:284] worker init memory snapshot: torch_peak=0.01GiB, free_memory=77.64GiB, total_memory=79.19GiB, cuda_memory=1.55GiB, torch_memory=0.02GiB, non_torch_memory=1.53GiB, timestamp=1776821848.1358237, auto_measure=True',
        '(Worker pid=443) DEBUG 04-22 01:37:28 [v1/worker/gpu_worker.py:285] worker requested memory: 75.23GiB',
        '(Worker_TP0 pid=443) INFO 04-22 01:37:39 [v1/worker/gpu_model_runner.py:4820] Model loading took 3.77 GiB memory and 10.527112 seconds',
        '(Worker_TP0 pid=443) INFO 04-22 01:38:03 [v1/worker/gpu_model_runner.py:5955] Estimated CUDA graph memory: 0.57 GiB total',
        '(Worker_TP0 pid=443) DEBUG 04-22 01:38:03 [v1/worker/gpu_worker.py:435] Memory profiling takes 23.99 seconds. Total non KV cache memory: 7.79GiB; torch peak memory increase: 1.89GiB; non-torch forward increase memory: 2.13GiB; weights memory: 3.77GiB.',
        '(Worker_TP0 pid=443) INFO 04-22 01:38:03 [v1/worker/gpu_worker.py:436] Available KV cache memory: 67.44 GiB',
        '(Worker_TP0 pid=443) INFO 04-22 01:38:03 [v1/worker/gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9500 to 0.9572 to maintain the same effective KV cache size.',
        '(EngineCore pid=244) INFO 04-22 01:38:04 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 2,209,792 tokens',
        '(EngineCore pid=244) INFO 04-22 01:38:04 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 269.75x',
    ),
)

PUBLISHED_PLANNER_8B_FP8_CACHE = Published(
    key='planner_8b_fp8_cache',
    label='Llama 3.1 8B Instruct with an fp8 cache, 0.95',
    url='https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/meta-llama---h100-80gb--tp1pp1dp1--8192-dtbf16-kvfp8.log',
    card=H100_SXM,
    lines=(
        '(APIServer pid=1) INFO 04-22 00:23:30 [entrypoints/utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.0',
        "(APIServer pid=1) INFO 04-22 00:23:30 [entrypoints/utils.py:233] non-default args: {'model_tag': 'meta-llama/Llama-3.1-8B-Instruct', 'model': 'meta-llama/Llama-3.1-8B-Instruct', 'dtype': 'bfloat16', 'max_model_len': 8192, 'gpu_memory_utilization': 0.95, 'kv_cache_dtype': 'fp8', 'enable_prefix_caching': False}",
        '(EngineCore pid=241) DEBUG 04-22 00:23:42 [v1/worker/gpu_worker.py:284] worker init memory snapshot: torch_peak=0.0GiB, free_memory=78.68GiB, total_memory=79.19GiB, cuda_memory=0.51GiB, torch_memory=0.0GiB, non_torch_memory=0.51GiB, timestamp=1776817422.4285054, auto_measure=True',
        '(EngineCore pid=241) DEBUG 04-22 00:23:42 [v1/worker/gpu_worker.py:285] worker requested memory: 75.23GiB',
        '(EngineCore pid=241) INFO 04-22 00:23:50 [v1/worker/gpu_model_runner.py:4820] Model loading took 14.99 GiB memory and 6.965058 seconds',
        '(EngineCore pid=241) INFO 04-22 00:24:08 [v1/worker/gpu_model_runner.py:5955] Estimated CUDA graph memory: 0.84 GiB total',
        '(EngineCore pid=241) DEBUG 04-22 00:24:08 [v1/worker/gpu_worker.py:435] Memory profiling takes 18.33 seconds. Total non KV cache memory: 17.12GiB; torch peak memory increase: 1.89GiB; non-torch forward increase memory: 0.25GiB; weights memory: 14.99GiB.',
        '(EngineCore pid=241) INFO 04-22 00:24:08 [v1/worker/gpu_worker.py:436] Available KV cache memory: 58.11 GiB',
        '(EngineCore pid=241) INFO 04-22 00:24:08 [v1/worker/gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9500 to 0.9606 to maintain the same effective KV cache size.',
        '(EngineCore pid=241) INFO 04-22 00:24:08 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 952,032 tokens',
        '(EngineCore pid=241) INFO 04-22 00:24:08 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 116.21x',
    ),
)

PUBLISHED_PLANNER_70B_TP2 = Published(
    key='planner_70b_tp2',
    label='Llama 3.3 70B fp8 at tensor parallel 2, 0.95',
    url='https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/fp8dyn-llama-3-3-70b--h100-80gb--tp2pp1dp1--8192.log',
    card=H100_SXM,
    lines=(
        '(APIServer pid=1) INFO 04-22 00:16:12 [entrypoints/utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.0',
        "(APIServer pid=1) INFO 04-22 00:16:12 [entrypoints/utils.py:233] non-default args: {'model_tag': 'RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic', 'model': 'RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic', 'max_model_len': 8192, 'tensor_parallel_size': 2, 'gpu_memory_utilization': 0.95, 'enable_prefix_caching': False}",
        '(Worker pid=445) DEBUG 04-22 00:16:36 [v1/worker/gpu_worker.py:284] worker init memory snapshot: torch_peak=0.01GiB, free_memory=77.66GiB, total_memory=79.19GiB, cuda_memory=1.53GiB, torch_memory=0.02GiB, non_torch_memory=1.51GiB, timestamp=1776816996.768284, auto_measure=True',
        '(Worker pid=445) DEBUG 04-22 00:16:36 [v1/worker/gpu_worker.py:285] worker requested memory: 75.23GiB',
        '(Worker_TP0 pid=444) INFO 04-22 00:17:32 [v1/worker/gpu_model_runner.py:4820] Model loading took 33.88 GiB memory and 54.254199 seconds',
        '(Worker_TP0 pid=444) INFO 04-22 00:18:22 [v1/worker/gpu_model_runner.py:5955] Estimated CUDA graph memory: 1.82 GiB total',
        '(Worker_TP0 pid=444) DEBUG 04-22 00:18:23 [v1/worker/gpu_worker.py:435] Memory profiling takes 50.74 seconds. Total non KV cache memory: 37.95GiB; torch peak memory increase: 1.96GiB; non-torch forward increase memory: 2.1GiB; weights memory: 33.88GiB.',
        '(Worker_TP0 pid=444) INFO 04-22 00:18:23 [v1/worker/gpu_worker.py:436] Available KV cache memory: 37.28 GiB',
        '(Worker_TP0 pid=444) INFO 04-22 00:18:23 [v1/worker/gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9500 to 0.9730 to maintain the same effective KV cache size.',
        '(EngineCore pid=245) INFO 04-22 00:18:23 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 244,304 tokens',
        '(EngineCore pid=245) INFO 04-22 00:18:23 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 29.82x',
    ),
)

PUBLISHED_PLANNER_70B_TP4 = Published(
    key='planner_70b_tp4',
    label='Llama 3.3 70B fp8 at tensor parallel 4, 0.95',
    url='https://github.com/llm-d-incubation/llm-d-planner/blob/d3121e059da88662db39a926a3ead964be97359b/accuracy/results/v0.19.0/logs/fp8dyn-llama-3-3-70b--h100-80gb--tp4pp1dp1--8192.log',
    card=H100_SXM,
    lines=(
        '(APIServer pid=1) INFO 04-22 00:18:52 [entrypoints/utils.py:299]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.19.0',
        "(APIServer pid=1) INFO 04-22 00:18:52 [entrypoints/utils.py:233] non-default args: {'model_tag': 'RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic', 'model': 'RedHatAI/Llama-3.3-70B-Instruct-fp8-dynamic', 'max_model_len': 8192, 'tensor_parallel_size': 4, 'gpu_memory_utilization': 0.95, 'enable_prefix_caching': False}",
        '(Worker pid=445) DEBUG 04-22 00:19:20 [v1/worker/gpu_worker.py:284] worker init memory snapshot: torch_peak=0.01GiB, free_memory=77.64GiB, total_memory=79.19GiB, cuda_memory=1.55GiB, torch_memory=0.02GiB, non_torch_memory=1.53GiB, timestamp=1776817160.5383635, auto_measure=True',
        '(Worker pid=445) DEBUG 04-22 00:19:20 [v1/worker/gpu_worker.py:285] worker requested memory: 75.23GiB',
        '(Worker_TP0 pid=442) INFO 04-22 00:19:35 [v1/worker/gpu_model_runner.py:4820] Model loading took 16.96 GiB memory and 14.442714 seconds',
        '(Worker_TP0 pid=442) INFO 04-22 00:20:28 [v1/worker/gpu_model_runner.py:5955] Estimated CUDA graph memory: 1.70 GiB total',
        '(Worker_TP0 pid=442) DEBUG 04-22 00:20:29 [v1/worker/gpu_worker.py:435] Memory profiling takes 52.17 seconds. Total non KV cache memory: 21.14GiB; torch peak memory increase: 1.97GiB; non-torch forward increase memory: 2.21GiB; weights memory: 16.96GiB.',
        '(Worker_TP0 pid=442) INFO 04-22 00:20:29 [v1/worker/gpu_worker.py:436] Available KV cache memory: 54.09 GiB',
        '(Worker_TP0 pid=442) INFO 04-22 00:20:29 [v1/worker/gpu_worker.py:470] In v0.19, CUDA graph memory profiling will be enabled by default (VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1), which more accurately accounts for CUDA graph memory during KV cache allocation. To try it now, set VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS=1 and increase --gpu-memory-utilization from 0.9500 to 0.9715 to maintain the same effective KV cache size.',
        '(EngineCore pid=243) INFO 04-22 00:20:29 [v1/core/kv_cache_utils.py:1319] GPU KV cache size: 708,992 tokens',
        '(EngineCore pid=243) INFO 04-22 00:20:29 [v1/core/kv_cache_utils.py:1324] Maximum concurrency for 8,192 tokens per request: 86.55x',
    ),
)
BUCCANEER = ("https://github.com/TheBuccaneer/vllm-offload-profiles/blob/547be9005dd6483d21e15e32416ffab96d1a2e63/"
             "data/provenance/gpu_memory_configuration/")
PUBLISHED_RTX_3090 = Published(
    key="rtx_3090",
    label="Llama 3.1 8B Instruct on one RTX 3090, 0.90",
    url=BUCCANEER + "baseline_llama_gmem090_offload0.log",
    card=RTX_3090,
    lines=(
        "(APIServer pid=119922) INFO 04-15 14:02:10 [utils.py:238] non-default args: {'model_tag': "
        "'meta-llama/Llama-3.1-8B-Instruct', 'model': 'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192}",
        "(EngineCore_DP0 pid=120146) INFO 04-15 14:02:24 [gpu_model_runner.py:4364] Model loading took 14.99 GiB "
        "memory and 3.489510 seconds",
        "(EngineCore_DP0 pid=120146) INFO 04-15 14:02:29 [gpu_worker.py:424] Available KV cache memory: 5.68 GiB",
        "(EngineCore_DP0 pid=120146) INFO 04-15 14:02:29 [kv_cache_utils.py:1314] GPU KV cache size: 46,544 tokens",
        "(EngineCore_DP0 pid=44265) ERROR 07-26 10:24:28 [core.py:1100] torch.OutOfMemoryError: CUDA out of memory. "
        "Tried to allocate 126.00 MiB. GPU 0 has a total capacity of 23.54 GiB of which 139.75 MiB is free.",
    ),
    release="0.17.1",
    note=("vLLM 0.17.1 (the repository's README), curated excerpts that keep the configuration and memory lines but "
          "not the profile's; the card's total is from the same repository's later run on the same card "
          f"({BUCCANEER}fixd_llama_gmem090_offload0_failed.log), since the first log does not print it"),
)
PUBLISHED_V0 = Published(
    key="v0_pr_10511",
    label="Llama 3 8B on one H100, 0.90, vLLM's V0 engine",
    url="https://github.com/vllm-project/vllm/pull/10511",
    card=H100_SXM,
    lines=("total_gpu_memory     79.22GiB",
           "gpu_memory_utilization       0.90",
           "the current vLLM instance can use    71.29GiB",
           "model weights take   14.96GiB",
           "non_torch_memory     1.79GiB",
           "PyTorch activation peak memory       1.26GiB",
           "available_kv_cache_memory    53.29GiB"),
    note=("vLLM main at the pull request that introduced this profile, 13 December 2024: the V0 engine, whose non-torch "
          "term counted the CUDA context and whose activation profile differs from V1's; kept as history"),
)


# ---- Reading a log: every figure a release prints about its memory, whatever the release.

# A figure as vLLM prints one: digits grouped by commas or not, a few decimals; never more than a
# float holds exactly, so an edited paste cannot smuggle in a number that overflows. A longer run of
# digits matches nothing, and the line counts as unprinted.
_NUMBER = r"((?:[0-9]{1,3}(?:,[0-9]{3}){1,4}|[0-9]{1,15})(?:\.[0-9]{1,12})?)(?![0-9,.])"
# The space vLLM prints between a label and its figure. Bounded, and never a newline: two unbounded
# runs of white space either side of an optional bracket would make a search quadratic in the run.
_GAP = r"[ \t]{0,40}"
_VERSION = r"(\d{1,4}\.\d{1,4}\.\d{1,4}[\w.+-]{0,20})"
# (field, pattern); the first match of each field wins, since a log may print a figure once per worker.
PATTERNS: tuple[tuple[str, re.Pattern], ...] = tuple((field, re.compile(pattern, re.MULTILINE)) for field, pattern in (
    ("version", rf"version {_VERSION}"),
    ("version", rf"LLM engine \(v{_VERSION}\)"),
    ("args", r"non-default args: (\{[^\n]*)"),
    ("total", rf"total_memory={_NUMBER}{_GAP}GiB"),
    ("total", rf"total_gpu_memory{_GAP}\(?{_GAP}{_NUMBER}{_GAP}GiB"),
    ("total", rf"total_gpu_memory={_NUMBER}GiB"),
    ("total", rf"total capacity of {_NUMBER} GiB"),
    ("total", rf"Free memory on device \([0-9.]+/{_NUMBER} GiB\)"),
    ("utilisation", rf"gpu_memory_utilization{_GAP}\(?{_GAP}{_NUMBER}\)?{_GAP}$"),
    ("requested", rf"worker requested memory: {_NUMBER}{_GAP}GiB"),
    ("requested", rf"Requested memory: {_NUMBER} \(util\), {_NUMBER} GiB"),
    ("requested", rf"the current vLLM instance can use{_GAP}{_NUMBER}{_GAP}GiB"),
    ("requested", rf"Desired GPU memory utilization is \([0-9.]+, {_NUMBER} GiB\)"),
    ("weights", rf"Model loading took {_NUMBER} ?GiB"),
    ("weights", rf"Loading model weights took {_NUMBER} ?GB"),
    ("weights", rf"model weights take{_GAP}{_NUMBER}{_GAP}GiB"),
    ("activation", rf"torch peak memory increase: {_NUMBER}{_GAP}GiB"),
    ("activation", rf"PyTorch activation peak memory(?: takes)?{_GAP}{_NUMBER}{_GAP}GiB"),
    ("non_torch", rf"non-torch forward increase memory: {_NUMBER}{_GAP}GiB"),
    ("non_torch", rf"non_torch_memory(?: takes)?[ \t]{{1,40}}{_NUMBER}{_GAP}GiB"),
    ("consumed", rf"total consumed \(from mem_get_info\): {_NUMBER}{_GAP}GiB"),
    ("consumed", rf"Actual usage is {_NUMBER} GiB for consumed memory"),
    ("peak_with_graphs", rf"consumed memory \(weights \+ non-torch\), {_NUMBER} GiB for peak activation"),
    ("non_kv", rf"Total non KV cache memory: {_NUMBER}{_GAP}GiB"),
    ("graphs", rf"Estimated CUDA graph memory: {_NUMBER} GiB total"),
    ("graphs", rf"CUDA graph pool memory: [0-9.]+ GiB \(actual\), {_NUMBER} GiB \(estimated\)"),
    ("graphs_subtracted", r"(CUDA graph memory profiling is enabled)"),
    ("graphs_left", r"(CUDA graph memory profiling is disabled|CUDA graph memory profiling will be enabled by default)"),
    ("available", rf"Available KV cache memory: {_NUMBER} GiB"),
    ("available", rf"available_kv_cache_memory{_GAP}{_NUMBER}{_GAP}GiB"),
    ("available", rf"reserved for KV Cache is {_NUMBER}{_GAP}GiB"),
    ("tokens", rf"GPU KV cache size: {_NUMBER} tokens"),
    ("concurrency", rf"Maximum concurrency for {_NUMBER} tokens per request: {_NUMBER}x"),
))
ARGS = {"model": r"'model': '([^']+)'", "max_model_len": r"'max_model_len': (\d{1,18})\b",
        "gpu_memory_utilization": r"'gpu_memory_utilization': ([0-9]{1,3}(?:\.[0-9]{0,12})?)(?![0-9.eE])",
        "tensor_parallel_size": r"'tensor_parallel_size': (\d{1,18})\b", "pipeline_parallel_size": r"'pipeline_parallel_size': (\d{1,18})\b",
        "kv_cache_dtype": r"'kv_cache_dtype': '([^']+)'", "quantization": r"'quantization': '([^']+)'",
        "max_num_seqs": r"'max_num_seqs': (\d{1,18})\b", "max_num_batched_tokens": r"'max_num_batched_tokens': (\d{1,18})\b",
        "block_size": r"'block_size': (\d{1,18})\b", "enforce_eager": r"'enforce_eager': (True|False)"}
# The label of each line a reader is told is missing, to tell a line not printed from one printed with
# a figure calc cannot read (a negative, an exponent, a run of digits past a float's precision).
LABELS = {"weights": "Model loading took", "available": "Available KV cache memory", "tokens": "GPU KV cache size",
          "concurrency": "Maximum concurrency for"}
WANTED = {"weights": "Model loading took … GiB",
          "activation": "torch peak memory increase (a DEBUG line), or Actual usage is … for peak activation",
          "non_torch": "non-torch forward increase memory or total consumed (DEBUG lines), or Actual usage is … for consumed memory",
          "graphs": "Estimated CUDA graph memory, or CUDA graph pool memory … (estimated)",
          "available": "Available KV cache memory", "tokens": "GPU KV cache size",
          "concurrency": "Maximum concurrency for … tokens per request"}


@dataclass(frozen=True)
class Printed:
    """What a log printed, each figure as printed (GiB, tokens); 0 or "" where it printed nothing."""

    version: str = ""
    args: tuple[tuple[str, str], ...] = ()
    total_gib: float = 0.0
    utilisation: float = 0.0
    requested_gib: float = 0.0
    weights_gib: float = 0.0
    activation_gib: float = 0.0
    non_torch_gib: float = 0.0
    consumed_gib: float = 0.0
    non_kv_gib: float = 0.0
    peak_with_graphs_gib: float = 0.0
    graphs_gib: float = 0.0
    graphs_subtracted: bool | None = None
    available_gib: float = 0.0
    tokens: int = 0
    concurrency_length: int = 0
    concurrency: float = 0.0
    derived: tuple[str, ...] = ()  # figures worked out from the lines printed, in words
    unreadable: tuple[str, ...] = ()  # lines or arguments printed whose figure calc could not read
    disagreeing: tuple[str, ...] = ()  # lines printed more than once with different figures

    def arg(self, name: str) -> str:
        return dict(self.args).get(name, "")

    @property
    def missing(self) -> tuple[str, ...]:
        """The lines calc looks for that this log did not print."""
        found = {"weights": self.weights_gib, "activation": self.activation_gib, "non_torch": self.non_torch_gib,
                 "graphs": self.graphs_gib, "available": self.available_gib, "tokens": self.tokens,
                 "concurrency": self.concurrency}
        return tuple(line for field, line in WANTED.items() if not found[field] and line not in self.unreadable)


PUBLISHED_LLMD_090 = Published(
    key="llmd_090",
    label="Llama 3.1 8B Instruct on one H100, 0.90, before 0.17",
    url=("https://github.com/llm-d/llm-d-benchmark/blob/4f4d44943c39b76b28e30dfa1fb0dfaf1ee894b5/config_explorer/"
         "empirical-vllm-memory-results.md"),
    card=H100_SXM,
    figures=Printed(
        args=(("model", "meta-llama/Llama-3.1-8B-Instruct"), ("max_model_len", "16000"),
              ("gpu_memory_utilization", "0.9"), ("block_size", "128")),
        total_gib=79.18, requested_gib=71.26, weights_gib=14.99, activation_gib=4.76, non_torch_gib=0.13,
        available_gib=51.38),
    rules=BEFORE_0_17,
    note=("a table of figures llm-d-benchmark read from its own vLLM logs, not the lines themselves (its 'How to "
          "Replicate' section: image vllm/vllm-openai:latest, --gpu-memory-utilization=0.90, --block-size=128, "
          "--enable-prefix-caching; the same table's Mistral run names vLLM 0.11.0): 'Model loading took: 14.99 GiB memory', 'Available KV cache memory: 51.38 "
          "GiB', 'Free memory on device: 78.57/79.18 GiB on startup', 'Desired GPU utilization: 0.9 (71.26 GiB)', "
          "'Peak activation memory: 4.76 GiB', 'Non-torch memory: 0.13 GiB'; it names no release for this run, and its "
          "activation peak is the older sampler's, so it is read under the rules of releases before 0.17; it prints no "
          "token count"),
)
PUBLISHED = (PUBLISHED_PLANNER_8B, PUBLISHED_PLANNER_8B_TP2, PUBLISHED_PLANNER_8B_TP4, PUBLISHED_PLANNER_8B_FP8_CACHE,
             PUBLISHED_PLANNER_70B_TP2, PUBLISHED_PLANNER_70B_TP4, PUBLISHED_LLMD_090, PUBLISHED_RTX_3090)


def _figure(text: str) -> float:
    return float(text.replace(",", ""))


@lru_cache(maxsize=4)
def read(text: str) -> Printed:
    """Every figure calc knows, from a log of any release; lines it does not know are passed over.
    Every pattern runs in time linear in the text, so a paste of the largest size calc takes is read
    in about a second."""
    if len(text) > LONGEST_LOG:
        raise ValueError(f"a start-up log of {grouped(len(text))} characters is past the {grouped(LONGEST_LOG)} "
                         f"calc reads; paste from the engine's start to its 'GPU KV cache size' line")
    # Each pattern searches the whole text once; a field printed by several patterns takes the
    # earliest line that prints it.
    first: dict[str, re.Match] = {}
    for field, pattern in PATTERNS:
        match = pattern.search(text)
        if match and (field not in first or match.start() < first[field].start()):
            first[field] = match
    found = {field: match.groups() for field, match in first.items()}
    values: dict[str, object] = {}
    if "version" in found:
        values["version"] = found["version"][0]
    unreadable = []
    if "args" in found:
        line = found["args"][0]
        values["args"] = tuple((name, m.group(1)) for name, pattern in ARGS.items() if (m := re.search(pattern, line)))
        read_args = dict(values["args"])
        unreadable += [f"the argument {name}" for name in ARGS if f"'{name}':" in line and name not in read_args]
    for field, name in (("total", "total_gib"), ("utilisation", "utilisation"), ("weights", "weights_gib"),
                        ("activation", "activation_gib"), ("non_torch", "non_torch_gib"), ("consumed", "consumed_gib"),
                        ("non_kv", "non_kv_gib"), ("peak_with_graphs", "peak_with_graphs_gib"), ("graphs", "graphs_gib"),
                        ("available", "available_gib")):
        if field in found:
            values[name] = _figure(found[field][0])
    values.update(_worked_out(values))
    if "requested" in found:
        values["requested_gib"] = _figure(found["requested"][-1])
    if "tokens" in found:
        values["tokens"] = int(_figure(found["tokens"][0]))
    if "concurrency" in found:
        values["concurrency_length"] = int(_figure(found["concurrency"][0]))
        values["concurrency"] = _figure(found["concurrency"][1])
    if "graphs_subtracted" in found:
        values["graphs_subtracted"] = True
    elif "graphs_left" in found:
        values["graphs_subtracted"] = False
    unreadable += [WANTED[field] for field, label in LABELS.items() if field not in found and label in text]
    values["unreadable"] = tuple(unreadable)
    values["disagreeing"] = _disagreeing(text)
    return Printed(**values)


def _disagreeing(text: str) -> tuple[str, ...]:
    """The memory lines a log prints more than once (once per worker) with different figures: which
    worker's line was read is then a choice the reader should know about."""
    lines = []
    for field in ("weights", "available", "tokens"):
        seen = set()
        for name, pattern in PATTERNS:
            if name == field:
                for i, match in enumerate(pattern.finditer(text)):
                    seen.add(match.group(1))
                    if i >= 64:
                        break
        if len(seen) > 1:
            lines.append(WANTED[field])
    return tuple(lines)


def _worked_out(values: dict[str, object]) -> dict[str, object]:
    """vLLM 0.20.0 and later print no non-torch figure, and at INFO level no activation peak: both come
    out of what they do print (vllm/v1/worker/gpu_worker.py, Worker.determine_available_memory and
    _compile_or_warm_up_model): the memory consumed while loading and profiling is the weights and the
    non-torch growth, and the "peak activation" the last start-up line reports carries the CUDA-graph
    estimate the budget subtracted."""
    found: dict[str, object] = {}
    derived = []
    weights, consumed = values.get("weights_gib", 0.0), values.get("consumed_gib", 0.0)
    if not values.get("non_torch_gib") and weights and consumed:
        if consumed > weights:
            found["non_torch_gib"] = round(consumed - weights, 2)
            derived.append(f"non-torch is the consumed memory less the weights, {consumed:g} − {weights:g} GiB (with "
                           f"the model runner's persistent buffers, which the model adds to it)")
        else:
            derived.append(f"the consumed memory it printed, {consumed:g} GiB, is no more than its weights, {weights:g} "
                           f"GiB: the log's figures contradict each other, so no non-torch figure is read")
    peak, graphs = values.get("peak_with_graphs_gib", 0.0), values.get("graphs_gib", 0.0)
    if not values.get("activation_gib") and peak:
        if peak > graphs:
            found["activation_gib"] = round(peak - graphs, 2)
            derived.append(f"the activation peak is the reported peak less the CUDA-graph estimate, {peak:g} − {graphs:g} GiB"
                           if graphs else f"the activation peak is the reported peak, {peak:g} GiB (no graph estimate printed)")
        else:
            derived.append(f"the peak activation it printed, {peak:g} GiB, is no more than its graph estimate, {graphs:g} "
                           f"GiB: the log's figures contradict each other, so no activation figure is read")
    if derived:
        found["derived"] = tuple(derived)
    return found


# ---- Setting a log beside the model.

@dataclass(frozen=True)
class Term:
    """One rung: the model's figure, the log's, and how far apart they are."""

    name: str
    model: Result
    log: Result | None

    @property
    def gap(self) -> Result | None:
        if self.log is None:
            return None
        return (term(self.model) - term(self.log)).result(self.model.unit, "model − log")

    @property
    def share(self) -> Result | None:
        """The gap as a share of the log's figure."""
        if self.log is None or not self.log.value:
            return None
        return ((term(self.model) - term(self.log)) / term(self.log)).result(SHARE, "(model − log) ÷ log")

    @property
    def matches(self) -> bool:
        return self.share is not None and abs(self.share.value) <= CLOSE


RUNG_KEYS = {"total": "total", "pool": "pool", "weights": "weights", "activation": "activation", "non-torch": "non_torch",
             "CUDA-graph estimate": "graphs", "available": "available", "tokens": "tokens", "concurrency": "concurrency"}


@dataclass(frozen=True)
class Reading:
    """A log beside the model: the release whose rules apply, the model and flags read from the log,
    each rung, and what could not be compared and why."""

    printed: Printed
    release: Release
    model: Model | None
    terms: tuple[Term, ...]
    accounting: memory.Accounting | None
    notes: tuple[str, ...]

    def term(self, name: str) -> Term | None:
        return next((t for t in self.terms if t.name == name), None)

    @property
    def rungs(self) -> dict[str, Term]:
        """The terms by a name a page can write: total, pool, weights, activation, non_torch, graphs,
        available, tokens, concurrency."""
        return {RUNG_KEYS[t.name]: t for t in self.terms}

    @property
    def largest(self) -> Term | None:
        """The rung furthest from the log, as a share of the log's figure."""
        compared = [t for t in self.terms if t.share is not None]
        return max(compared, key=lambda t: abs(t.share.value), default=None)

    @property
    def verdict(self) -> str:
        if self.accounting is None:
            return "nothing set beside the model (see the notes)"
        worst = self.largest
        if worst is None:
            return "the log printed none of the rungs calc compares"
        if worst.matches:
            return f"every rung it printed is within {CLOSE:.0%} of the model; the furthest is {worst.name}, {worst.share}"
        return f"{worst.name} differs most: the model's {worst.model} against the log's {worst.log}, {worst.share}"


def release_of(printed: Printed) -> tuple[Release, str]:
    """The rules the log's release follows, and a note when they are inferred."""
    version = printed.version
    if not version:
        return PINNED, f"the log names no release: read as vLLM {PINNED.version}"
    parts = tuple(int(p) for p in re.findall(r"\d+", version)[:3])
    pinned = tuple(int(p) for p in PINNED.version.split("."))
    if version in RELEASES:
        return RELEASES[version], ""
    if parts == pinned:
        return replace(PINNED, version=version), f"vLLM {version}, a build of {PINNED.version}: read with its rules"
    if parts > pinned:
        return replace(PINNED, version=version), (f"vLLM {version} is newer than any release calc has read: read with "
                                                  f"{PINNED.version}'s rules, which it may have changed")
    if parts >= (0, 22):
        return replace(PINNED, version=version), (f"vLLM {version}, read with {PINNED.version}'s rules (calc has read "
                                                  f"the code of 0.21.0 and {PINNED.version}, not of the releases between)")
    if parts >= (0, 20):
        return replace(V0_21_0, version=version), f"vLLM {version}, read with 0.21.0's rules (the same in 0.20)"
    if parts >= (0, 17):
        return replace(V0_19_0, version=version), f"vLLM {version}, read with 0.19.0's rules (the same from 0.17 to 0.19)"
    return replace(BEFORE_0_17, version=version), (f"vLLM {version} predates 0.17, whose profile found a sampler peak "
                                                   f"about two and a half times today's per logit: read with that peak")


def compare(printed: Printed, card: Card, rules: Release | None = None) -> Reading:
    """The model's ladder for the log's model, card and flags, rung by rung beside the log's, under the
    rules of the release the log names (or those given)."""
    release, note = (rules, "") if rules else release_of(printed)
    notes = ([note] if note else []) + list(printed.derived)
    notes += [f"it printed {line} but calc could not read its figure" for line in printed.unreadable]
    notes += [f"it printed {line} more than once, with different figures (one per worker?): the first is read"
              for line in printed.disagreeing]
    if printed.version and tuple(int(p) for p in re.findall(r"\d+", printed.version)[:2]) < V1_FIRST:
        return Reading(printed, release, None, (), None, tuple(notes + [
            f"vLLM {printed.version} ran the V0 engine, whose profile counted the CUDA context as non-torch memory "
            f"and sized its cache in GPU blocks: calc sets V1 logs (0.8.0 and later) beside the model"]))
    name = printed.arg("model").lower().rstrip("/")
    known = _known_model(name) if name else None
    if not name:
        return Reading(printed, release, None, (), None, tuple(notes + [
            "the log names no model (its 'non-default args' line): paste from the engine's first lines"]))
    if known is None:
        return Reading(printed, release, None, (), None, tuple(notes + [
            f"calc knows no config for {name[:80]}, so it has no rungs of its own to set beside the log's"]))
    model, checkpoint = known
    weights = checkpoint or (FP8 if printed.arg("quantization") == "fp8" else BF16)
    kv: Precision = FP8 if printed.arg("kv_cache_dtype").startswith("fp8") else BF16
    if printed.graphs_subtracted is not None and printed.graphs_subtracted != release.graph_estimate_subtracted:
        release = replace(release, graph_estimate_subtracted=printed.graphs_subtracted)
        notes.append("the log says whether the CUDA-graph estimate was subtracted, and that is followed")
    utilisation = float(printed.arg("gpu_memory_utilization") or printed.utilisation or release.gpu_memory_utilization)
    limit = int(printed.arg("max_model_len") or model.max_position_embeddings)
    tensor = int(printed.arg("tensor_parallel_size") or 1)
    pipeline = int(printed.arg("pipeline_parallel_size") or 1)
    block = int(printed.arg("block_size") or release.block_size(card, model.is_latent))
    tokens = int(printed.arg("max_num_batched_tokens") or 0) or None
    seqs = int(printed.arg("max_num_seqs") or 0) or None
    refused = _refused_args(utilisation, limit, tensor, pipeline, block, model)
    if refused:
        return Reading(printed, release, None, (), None, tuple(notes + [
            f"the log's non-default args ask for {refused}, which vLLM refuses to start with: is the paste edited?"]))
    eager = printed.arg("enforce_eager") == "True"
    total = printed.total_gib  # the engine multiplied the total it read, whatever the card's usual one
    accounting = memory.account(model, card, weights, kv, utilisation, limit, block, tensor, pipeline, tokens, seqs,
                                eager=eager, release=release, total_override_gib=total)
    expected = card.engine_capacity.value / GiB
    if printed.total_gib and abs(printed.total_gib - expected) > max(0.05, 0.02 * expected):
        notes.append(f"the log's CUDA total, {printed.total_gib:g} GiB, is not the {card.name}'s "
                     f"{card.engine_capacity}: is the card right?")

    def logged(value: float, what: str, unit=GIB_HELD) -> Result | None:
        if not value:
            return None
        return given(value * (GiB if unit is GIB_HELD else 1), unit, what)

    terms = (
        Term("total", card.engine_capacity, logged(printed.total_gib, "CUDA's total, as logged")),
        Term("pool", accounting.pool, logged(printed.requested_gib, "requested memory, as logged")),
        Term("weights", accounting.weights, logged(printed.weights_gib, "Model loading took, as logged")),
        Term("activation", accounting.activation, logged(printed.activation_gib, "torch peak memory increase, as logged")),
        Term("non-torch", accounting.consumed, logged(printed.non_torch_gib, "non-torch increase, as logged")),
        Term("CUDA-graph estimate", accounting.graphs_estimated, logged(printed.graphs_gib, "CUDA graph estimate, as logged")),
        Term("available", accounting.available, logged(printed.available_gib, "Available KV cache memory, as logged")),
        Term("tokens", accounting.tokens, logged(printed.tokens, "GPU KV cache size, as logged", TOKENS)),
        Term("concurrency", accounting.concurrency, logged(printed.concurrency, "Maximum concurrency, as logged",
                                                           RATIO_FINE)),
    )
    if printed.concurrency_length and printed.concurrency_length != limit:
        notes.append(f"the concurrency line is for {grouped(printed.concurrency_length)} tokens, "
                     f"max_model_len is {grouped(limit)}")
    return Reading(printed, release, model, terms, accounting, tuple(notes))


def _known_model(name: str) -> tuple[Model, Precision | None] | None:
    """The model a log's `model` argument names: a Hugging Face id, or a local path that ends in one's
    name (`/models/meta-llama/Llama-3.1-8B-Instruct`, `/data/Llama-3.1-8B-Instruct`)."""
    if name in MODELS:
        return MODELS[name]
    last = name.rsplit("/", 1)[-1]
    return next((known for repo, known in MODELS.items() if repo.rsplit("/", 1)[-1] == last), None)


def _refused_args(utilisation: float, limit: int, tensor: int, pipeline: int, block: int, model: Model) -> str:
    """The first argument vLLM would refuse, in words, or "" (config/cache.py: 0 < utilisation ≤ 1,
    block_size > 0; config/parallel.py: sizes ≥ 1; the model's heads must divide by the GPUs)."""
    if not 0 < utilisation <= 1:
        return f"gpu_memory_utilization {utilisation:g} (it must be above 0 and at most 1)"
    if limit < 1:
        return f"max_model_len {grouped(limit)}"
    if limit > model.max_position_embeddings:
        return (f"max_model_len {grouped(limit)}, past the model's {grouped(model.max_position_embeddings)} positions "
                f"(allowed only with VLLM_ALLOW_LONG_MAX_MODEL_LEN)")
    if tensor < 1 or pipeline < 1 or tensor * pipeline > 1024:
        return f"tensor_parallel_size {tensor} and pipeline_parallel_size {pipeline}"
    if model.num_attention_heads % tensor:
        return f"tensor_parallel_size {tensor}, which does not divide the model's {model.num_attention_heads} heads"
    if pipeline > model.num_hidden_layers:
        return f"pipeline_parallel_size {pipeline}, more stages than the model's {model.num_hidden_layers} layers"
    if block < 1:
        return f"block_size {block}"
    return ""


def published(log: Published) -> Reading:
    printed = log.figures or read(log.text)
    if log.release and not printed.version:
        printed = replace(printed, version=log.release)
    return compare(printed, log.card, log.rules)


def section() -> dict[str, object]:
    """Every published log beside the model, and the V0 log as history."""
    readings = {log.key: published(log) for log in PUBLISHED}
    return {"logs": {log.key: {"log": log, "reading": readings[log.key]} for log in PUBLISHED},
            "v0": {"log": PUBLISHED_V0, "printed": read(PUBLISHED_V0.text)},
            "older_sampler": memory.sampler_bytes_per_logit(BEFORE_0_17),
            "count": given(len(PUBLISHED), COUNT, "published logs set beside the model")}


NOT_PRINTED = "not printed"


def reader(stack) -> dict[str, object]:
    """Document 12's log reader: the stack's pasted log (the published 0.95 log until one is pasted)
    beside the model on the stack's card, as text a page can show."""
    text = stack.serving.log or PUBLISHED_PLANNER_8B.text
    printed = read(text)
    reading = compare(printed, stack.card)
    rows = {}
    for key, name, value, unit in (("total", "total", printed.total_gib, "GiB"), ("pool", "pool", printed.requested_gib, "GiB"),
                                   ("weights", "weights", printed.weights_gib, "GiB"),
                                   ("activation", "activation", printed.activation_gib, "GiB"),
                                   ("non_torch", "non-torch", printed.non_torch_gib, "GiB"),
                                   ("graphs", "CUDA-graph estimate", printed.graphs_gib, "GiB"),
                                   ("available", "available", printed.available_gib, "GiB"),
                                   ("tokens", "tokens", printed.tokens, "tokens"),
                                   ("concurrency", "concurrency", printed.concurrency, "x")):
        term = reading.term(name)
        shown = (f"{grouped(value)} tokens" if unit == "tokens" else f"{value:g}x" if unit == "x" else f"{value:g} GiB")
        rows[key] = {"model": str(term.model) if term else "—",
                     "log": shown if value else NOT_PRINTED,
                     "share": str(term.share) if term and term.share else "—",
                     "verdict": ("matches" if term.matches else "differs") if term and term.share else "—"}
    return {
        "release": reading.release.name,
        "model": reading.model.name if reading.model else "no model calc knows",
        "verdict": reading.verdict,
        "notes": "; ".join(reading.notes) or "none",
        "missing": ", ".join(printed.missing) or "none",
        "subtracted": ("subtracted from the cache" if reading.release.graph_estimate_subtracted
                       else "left in the headroom"),
        "rows": rows,
    }
