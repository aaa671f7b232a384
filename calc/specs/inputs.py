"""Each document's own inputs: what its calculator lets a reader set that is not the system served.

The system (model, card, engine, traffic, promise, price…) is the Stack (calc.specs.stack). What
document 01 tokenizes, the context 08 prices, the number 09 stores, 10's cache operations, 13's
sampler and speculation and 15's simulated stream are carried beside it, in DocumentInputs, so a new
calculator does not widen the Stack, and what is cached on the Stack alone is not keyed on them.
"""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class PromptText:
    """A prompt as text, before the tokenizer: how long, and what kind (a sample in
    content/samples/, whose characters per token were measured)."""

    characters: int = 9_000
    kind: str = "english"


@dataclass(frozen=True)
class CacheOps:
    """What document 10's cache operations are priced on: the named assumptions, each with its source.

    `spread`: sequence lengths are taken as spread evenly within ± this many tokens of the typical
    conversation (an assumption; any spread wider than a few blocks gives the same expected waste).
    `prefix`: tokens at the start of every prompt that requests share, a system prompt and tool
    definitions (an example workload). `hit_rate`: the share of requests that find that prefix
    still cached (an assumption; measure it from the engine's prefix-cache hit and query counters).
    `link_fraction`: the share of the host link's nominal rate a copy achieves (an assumption; one
    nvbandwidth run on an H100 system, https://github.com/NVIDIA/nvbandwidth/issues/24, measured
    35.2 GB/s host-to-device, 55% of 64 GB/s, and 52.8 GB/s device-to-host; the slower direction,
    the one a resumed request waits on, is applied both ways). `copy_overhead_s`: the fixed cost of
    each copy: vLLM's swap issues one cudaMemcpyAsync per block, per layer, for keys and for values
    (csrc/cache_kernels.cu, swap_blocks, which notes "this can be slow if the number of blocks is
    large"); a few microseconds each is typical of an asynchronous copy's launch (an assumption). `samples`: parallel samples drawn from one prompt (the request's
    `n`). `replicas`: engine replicas behind one router (an example). `host_ratio`: host cache pool
    over device pool, SGLang's `--hicache-ratio` default.
    """

    spread: int = 1_000
    prefix: int = 1_000
    hit_rate: float = 0.80
    link_fraction: float = 0.55
    copy_overhead_s: float = 0.000_002_5
    samples: int = 4
    replicas: int = 4
    host_ratio: float = 2.0


@dataclass(frozen=True)
class Sampling:
    """What document 13's sampling explorer starts from: six candidate next tokens' logits (an
    example, invented to show each filter at work) and the sampling parameters.

    `temperature` 0.6 and `top_p` 0.9 are Llama 3.1 8B Instruct's own defaults (its
    generation_config.json, https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/generation_config.json);
    `min_p` 0.02 and `top_k` 4 are this page's examples, chosen so each filter removes a token
    (vLLM's defaults are 0 for min-p, off, and 0 or −1 for top-k, off). `seed` picks the uniform
    draw (Python's random.Random, the same Mersenne Twister in CPython and Pyodide).
    """

    logits: tuple[float, ...] = (4.0, 3.5, 3.0, 2.4, 1.8, -0.5)
    temperature: float = 0.6
    top_k: int = 4
    top_p: float = 0.9
    min_p: float = 0.02
    seed: int = 42


@dataclass(frozen=True)
class Speculation:
    """What document 13's speculative decoding is priced on.

    `acceptance`: α, the chance the target accepts a drafted token (an assumption: it depends on
    the draft, the target, the text and the temperature). vLLM's logged draft acceptance rate is not
    α: it counts only drafts before the first rejection, so it is α(1 − α^γ) ÷ ((1 − α)γ); recover α
    from it with calc.engine.speculative.alpha_from_rate, or read tokens per pass directly as vLLM's mean
    acceptance length. `drafted`: γ, tokens drafted per verification pass (vLLM's num_speculative_tokens; an example). `drafter`:
    who drafts (a key of calc.engine.speculative.DRAFTERS). `batch`: sequences decoding together.
    """

    acceptance: float = 0.8
    drafted: int = 4
    drafter: str = "llama-3.2-1b"
    batch: int = 1


@dataclass(frozen=True)
class Stream:
    """Document 15's simulated stream, and what starting a replica costs: named assumptions.

    `seed`: the generator the arrivals and lengths are drawn from (Python's random.Random, the same
    Mersenne Twister in CPython and Pyodide). `requests`: arrivals simulated at each request rate,
    of which the first `warm_up` share is discarded before anything is measured (at the reference
    stack's saturation, 600 requests arrive over about two minutes, several times the mean time a
    request spends in the system, so the measured window starts from a queue in its steady state). `storage_gb_per_s`:
    the rate a cold replica reads its weights at (an assumption: one local NVMe drive, PCIe 4.0 x4,
    reads sequentially at about 7 GB/s by its datasheet; safetensors loading reaches a fraction, so
    2 GB/s is taken; object storage over the network is usually slower). `engine_start_s`: what a
    vLLM replica spends after the weights are in memory, profiling the activation peak, compiling
    and capturing CUDA graphs (an assumption: vLLM logs each phase at start-up, "Graph capturing
    finished in … secs"; tens of seconds for an 8B model is typical; measure yours). The scheduler's
    caps, `max_num_seqs` and `max_num_batched_tokens`, are document 12's (`Serving`), vLLM's defaults
    for the card unless a launch line sets them.
    """

    seed: int = 1
    requests: int = 3_000
    warm_up: float = 0.2
    storage_gb_per_s: float = 2.0
    engine_start_s: float = 60.0


@dataclass(frozen=True)
class DocumentInputs:
    """The documents' own inputs, each set by its calculator and read only by its document (document
    15 also prices document 10's shared prefix). `priced_context`: the context document 08 prices;
    None: the model's max_position_embeddings. `stored_number`: the real number document 09 stores
    in every format."""

    text: PromptText = PromptText()  # document 01: the prompt tokenized
    priced_context: int | None = None  # document 08
    stored_number: float = 0.1  # document 09
    cache: CacheOps = CacheOps()  # document 10: the cache operations' assumptions
    sampling: Sampling = Sampling()  # document 13: the sampling explorer's logits and parameters
    speculation: Speculation = Speculation()  # document 13: speculative decoding's assumptions
    stream: Stream = Stream()  # document 15: the simulated stream and a replica's cold start


REFERENCE_INPUTS = DocumentInputs()
