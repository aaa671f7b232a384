"""Document 10: what the engine does with the cache's blocks once the formula has sized them.

Paged allocation wastes only the unfilled tail of each sequence's last block; prefix caching
shares whole blocks, hash-chained to everything before them, so only full blocks of an identical
prefix are reused, and only on a hit; parallel samples share their prompt's blocks and copy a block
only when they write to it; a preempted sequence is either recomputed (its prompt and output so far
prefilled again) or swapped over the host link and back. Every time comes from calc.engine.timing's model;
every byte from calc.engine.kvcache's formula. The engines' own flags and defaults are recorded in FLAGS
with the page each was read from.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from . import kvcache, timing
from ..specs.stack import Stack
from ..core.units import (COUNT, GB_MOVED, GB_PER_S_FINE, GIB_HELD, MS, PERCENT, RATIO, SHARE, TOKENS, TOKENS_FINE,
    Result, Unit, given, grouped, plain)


@dataclass(frozen=True)
class Flag:
    """One engine flag: what it controls, its default, and where that was read."""

    engine: str
    flag: str
    default: str
    controls: str
    source: str


VLLM_CACHE = "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/cache.py"
FLAGS = (
    Flag("vLLM", "--block-size", "16 (CacheConfig.DEFAULT_BLOCK_SIZE)", "tokens per block", VLLM_CACHE),
    Flag("vLLM", "--enable-prefix-caching / --no-enable-prefix-caching", "on (enable_prefix_caching = True)",
         "hash-chained reuse of full blocks", VLLM_CACHE),
    Flag("vLLM", "--kv-cache-dtype", "auto: the model's dtype", "bytes per cached element", VLLM_CACHE),
    Flag("vLLM", "--kv-offloading-size, --kv-offloading-backend", "unset (no offloading); native or lmcache",
         "a host-memory tier for KV blocks, in GiB", VLLM_CACHE),
    Flag("vLLM", "--cpu-offload-gb", "0", "model weights parked in host memory, not the cache",
         "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/config/offload.py"),
    Flag("vLLM", "preemption mode", "RECOMPUTE in V1", "what happens to a preempted sequence's blocks",
         "https://docs.vllm.ai/en/stable/configuration/optimization/"),
    Flag("vLLM V0", "--swap-space, --preemption-mode", "4 GiB per GPU; recompute or swap",
         "host memory for swapped blocks", "https://docs.vllm.ai/en/v0.8.5/serving/engine_args.html"),
    Flag("SGLang", "--disable-radix-cache", "off (the radix cache is on)", "RadixAttention's prefix reuse",
         "https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/server_arguments.md"),
    Flag("SGLang", "--page-size", "1", "tokens per page: a hit can end at any token",
         "https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/server_arguments.md"),
    Flag("SGLang", "--radix-eviction-policy", "lru", "which cached prefix goes first",
         "https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/server_arguments.md"),
    Flag("SGLang", "--enable-hierarchical-cache, --hicache-ratio", "off; 2.0 × the device pool",
         "a host-memory tier under the radix cache",
         "https://github.com/sgl-project/sglang/blob/main/docs/advanced_features/server_arguments.md"),
)

# Kwon et al., "Efficient Memory Management for Large Language Model Serving with PagedAttention",
# SOSP 2023 (arXiv:2309.06180), section 1: in the existing systems profiled, only 20.4% to 38.2% of
# the KV cache memory held actual token states; the abstract claims near-zero waste for vLLM and
# 2-4× the throughput of FasterTransformer and Orca at the same latency.
PAPER = "Kwon et al., SOSP 2023 (arXiv:2309.06180), section 1"
PAPER_TOKEN_SHARE = (0.204, 0.382)


def wasted_slots(tokens: int, block: int) -> int:
    """Slots left empty in a sequence's last block: ⌈tokens ÷ block⌉ × block − tokens."""
    return -tokens % block


def wasted_in_range(lowest: int, highest: int, block: int) -> int:
    """Empty slots summed over every length from `lowest` to `highest`: whole cycles of `block`
    lengths each waste 0 + 1 + … + (block − 1), and the lengths left over are counted one by one."""
    count = highest - lowest + 1
    cycles, left = divmod(count, block)
    return cycles * block * (block - 1) // 2 + sum(wasted_slots(lowest + i, block) for i in range(left))


def _blocks(count: int) -> str:
    return f"{grouped(count)} block" + ("" if count == 1 else "s")


def paging_waste(stack: Stack) -> dict[str, Result]:
    """The last block's expected waste over a spread of lengths, set against reserving every
    sequence's window up front (contiguous allocation to the context limit)."""
    block, typical, limit = stack.block_size, stack.typical_conversation, stack.context_limit
    spread = stack.cache.spread
    lowest, highest = max(typical - spread, 1), max(min(typical + spread, limit), 1)
    count = highest - lowest + 1
    total = wasted_in_range(lowest, highest, block)
    expected = total / count
    per_token = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    ladder = kvcache.ladder(stack)
    mean = (lowest + highest) / 2
    reserved_waste = limit - mean
    paged_users = kvcache.users_by_tokens(ladder.token_capacity, Result(mean + expected, TOKENS_FINE))
    pool_paged = int(paged_users.value) * expected * per_token.value
    worst = int(ladder.users_worst.value)
    pool_contiguous = worst * reserved_waste * per_token.value
    one = wasted_slots(typical, block)
    return {
        "block": given(block, TOKENS, "--block-size"),
        "spread": given(spread, TOKENS, "lengths spread evenly within ± this of the typical conversation"),
        "lowest": given(lowest, TOKENS, "shortest length in the spread"),
        "highest": given(highest, TOKENS, "longest length in the spread"),
        "mean": Result(mean, TOKENS_FINE, formula="(shortest + longest) ÷ 2",
                       worked=f"({grouped(lowest)} + {grouped(highest)}) ÷ 2 = {TOKENS_FINE.show(mean)}"),
        "one": Result(one, TOKENS, formula="⌈tokens ÷ block⌉ × block − tokens",
                      worked=f"⌈{grouped(typical)} ÷ {block}⌉ × {block} − {grouped(typical)} = {TOKENS.show(one)}"),
        "expected": Result(expected, TOKENS_FINE, formula="empty slots summed over every length ÷ number of lengths",
                           worked=(f"lengths {grouped(lowest)} to {grouped(highest)}, each leaving ⌈L ÷ {block}⌉ × "
                                   f"{block} − L slots empty; {grouped(total)} slots ÷ {grouped(count)} lengths = "
                                   f"{TOKENS_FINE.show(expected)}")),
        "uniform": Result((block - 1) / 2, TOKENS_FINE, formula="(block − 1) ÷ 2: every remainder equally likely",
                          worked=f"({block} − 1) ÷ 2 = {TOKENS_FINE.show((block - 1) / 2)}"),
        "share": Result(expected / (mean + expected), SHARE, formula="expected waste ÷ (mean length + expected waste)",
                        worked=(f"{TOKENS_FINE.show(expected)} ÷ ({TOKENS_FINE.show(mean)} + {TOKENS_FINE.show(expected)}) = "
                                f"{SHARE.show(expected / (mean + expected), 2)}")),
        "reserved": Result(reserved_waste, TOKENS_FINE, formula="context limit − mean length",
                           worked=f"{grouped(limit)} − {TOKENS_FINE.show(mean)} = {TOKENS_FINE.show(reserved_waste)}"),
        "reserved_share": Result(reserved_waste / limit, SHARE, formula="(context limit − mean length) ÷ context limit",
                                 worked=(f"{TOKENS_FINE.show(reserved_waste)} ÷ {TOKENS.show(limit)} = "
                                         f"{SHARE.show(reserved_waste / limit)}")),
        "users": paged_users,
        "pool_paged": Result(pool_paged, GIB_HELD, formula="paged users × expected waste × cache per token",
                             worked=(f"{grouped(int(paged_users.value))} × {TOKENS_FINE.show(expected)} × "
                                     f"{per_token.operand} = {GIB_HELD.show(pool_paged)}")),
        "pool_contiguous": Result(pool_contiguous, GIB_HELD,
                                  formula="worst-case users × (context limit − mean length) × cache per token",
                                  worked=(f"{grouped(worst)} × {TOKENS_FINE.show(reserved_waste)} × {per_token.operand} = "
                                          f"{GIB_HELD.show(pool_contiguous)}")),
    }


def paper() -> dict[str, Result]:
    """The PagedAttention paper's measured share of cache holding tokens in earlier systems, and the
    waste that leaves."""
    low, high = PAPER_TOKEN_SHARE
    return {
        "tokens_low": given(low, SHARE, f"{PAPER}: share of KV cache memory holding token states, lowest"),
        "tokens_high": given(high, SHARE, f"{PAPER}: share of KV cache memory holding token states, highest"),
        "waste_high": Result(1 - low, SHARE, formula="1 − lowest share holding tokens",
                             worked=f"100% − {SHARE.show(low)} = {SHARE.show(1 - low)}"),
        "waste_low": Result(1 - high, SHARE, formula="1 − highest share holding tokens",
                            worked=f"100% − {SHARE.show(high)} = {SHARE.show(1 - high)}"),
    }


def reusable_tokens(prefix: int, prompt: int, block: int) -> int:
    """Tokens a hit can skip: whole blocks of the shared prefix only, and never the prompt's last
    token, which must be computed to sample from (vLLM caps a hit at prompt − 1 tokens)."""
    return min(prefix // block, (prompt - 1) // block) * block


def prefill_after_hit(stack: Stack, prompt: int, reused: int) -> Result:
    """A prompt's prefill when its first `reused` tokens are found cached: only the rest goes through
    the blocks, attending to the whole prompt (calc.engine.timing.prefill_after)."""
    return timing.prefill_after(stack, prompt, reused).time


def prefix_caching(stack: Stack) -> dict[str, Result]:
    """What a shared prefix saves: the full blocks it covers, the prefill they skip on a hit, the
    expected saving at the hit rate, and the users the pool holds when residents share it."""
    block, prompt, prefix = stack.block_size, stack.workload.prompt, stack.cache.prefix
    hit_rate = stack.cache.hit_rate
    reused = reusable_tokens(prefix, prompt, block)
    blocks = reused // block
    full = timing.prefill_time(stack, prompt)
    hit = prefill_after_hit(stack, prompt, reused)
    saved = full.value - hit.value
    expected = hit_rate * hit.value + (1 - hit_rate) * full.value
    ladder = kvcache.ladder(stack)
    own = ladder.tokens_per_user_paged.value
    average = own - hit_rate * reused
    room = ladder.token_capacity.value - reused
    users = int(room // average) if room > 0 and average > 0 else 0
    users_worked = (f"({grouped(int(ladder.token_capacity.value))} − {grouped(reused)}) ÷ {TOKENS.show(average, 1)} = "
                    f"{grouped(room / average, 2)} → {grouped(users)} users" if users else
                    f"a token capacity of {ladder.token_capacity} leaves no room beside one copy of the prefix: 0 users")
    rate = stack.traffic.requests_per_s
    cap = min(prefix // block, (prompt - 1) // block)
    return {
        "tokens": given(prefix, TOKENS, "shared prefix: system prompt and tool definitions"),
        "prompt": given(prompt, TOKENS, "prompt length"),
        "hit_rate": given(hit_rate, PERCENT, "share of requests that find the prefix cached, an assumption"),
        "blocks": Result(blocks, COUNT, formula="⌊min(prefix, prompt − 1) ÷ block⌋",
                         worked=(f"⌊{grouped(min(prefix, prompt - 1))} ÷ {block}⌋ = {_blocks(cap)}")),
        "reused": Result(reused, TOKENS, formula="full blocks × block",
                         worked=f"{_blocks(blocks)} × {block} = {TOKENS.show(reused)}"),
        "tail": Result(prefix - reused, TOKENS, formula="prefix − tokens in full blocks",
                       worked=f"{grouped(prefix)} − {grouped(reused)} = {TOKENS.show(prefix - reused)}"),
        "full": full,
        "hit": hit,
        "saved": Result(saved, MS, formula="prefill without a hit − prefill with one",
                        worked=timing.difference(full.value, hit.value, MS)),
        "saved_share": Result(saved / full.value, PERCENT, formula="prefill saved ÷ prefill without a hit",
                              worked=f"{MS.precise(saved)} ÷ {MS.precise(full.value)} = {PERCENT.show(saved / full.value)}"),
        "expected": Result(expected, MS, formula="hit rate × prefill with a hit + (1 − hit rate) × prefill without",
                           worked=(f"{plain(hit_rate)} × {MS.precise(hit.value)} + {plain(round(1 - hit_rate, 6))} × "
                                   f"{MS.precise(full.value)} = {MS.show(expected)}")),
        "ttft_saved": Result(hit_rate * saved, MS, formula="hit rate × prefill saved on a hit",
                             worked=f"{plain(hit_rate)} × {MS.precise(saved)} = {MS.show(hit_rate * saved)}"),
        "cards_saved": Result(rate * hit_rate * saved, RATIO, formula="requests per second × hit rate × prefill saved",
                              worked=(f"{grouped(rate)} × {plain(hit_rate)} × {MS.precise(saved)} = "
                                      f"{RATIO.show(rate * hit_rate * saved)}")),
        "per_user": Result(average, TOKENS, formula="tokens per user in blocks − hit rate × shared tokens",
                           worked=f"{grouped(int(own))} − {plain(hit_rate)} × {grouped(reused)} = {TOKENS.show(average, 1)}"),
        "users": Result(users, COUNT, formula="⌊(token capacity − one copy of the prefix) ÷ tokens per user⌋",
                        worked=users_worked),
    }


def parallel_samples(stack: Stack) -> dict[str, Result]:
    """`n` samples from one prompt, each a child request (vllm/v1/engine/parallel_sampling.py,
    ParentRequest): separately, each holds every block; shared through the prefix cache, the prompt's
    full blocks a hit may reuse are held once and each sample owns the rest. A hit stops a token short
    of the prompt (vllm/v1/core/kv_cache_manager.py, get_computed_blocks: at most prompt − 1 tokens),
    so a prompt that fills its last block exactly still has each sample compute and hold that block."""
    block, prompt, output, n = stack.block_size, stack.workload.prompt, stack.workload.output, stack.cache.samples
    each = kvcache.blocks_for(prompt + output, block)
    shared_prompt = reusable_tokens(prompt, prompt, block) // block
    separate = n * each
    shared = shared_prompt + n * (each - shared_prompt)
    per_token = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    block_bytes = block * per_token.value
    return {
        "n": given(n, COUNT, "parallel samples per prompt (the request's n)"),
        "each": Result(each, COUNT, formula="⌈(prompt + output) ÷ block⌉",
                       worked=f"⌈({grouped(prompt)} + {grouped(output)}) ÷ {block}⌉ = {_blocks(each)}"),
        "prompt_blocks": Result(shared_prompt, COUNT, formula="⌊(prompt − 1) ÷ block⌋: the prompt's full blocks a hit reuses",
                                worked=f"⌊({grouped(prompt)} − 1) ÷ {block}⌋ = {_blocks(shared_prompt)}"),
        "separate": Result(separate * block_bytes, GIB_HELD, formula="n × blocks each × block bytes",
                           worked=(f"{n} × {grouped(each)} × {block} × {per_token.operand} = "
                                   f"{GIB_HELD.show(separate * block_bytes)}")),
        "shared": Result(shared * block_bytes, GIB_HELD, formula="(prompt's full blocks + n × the rest) × block bytes",
                         worked=(f"({grouped(shared_prompt)} + {n} × ({grouped(each)} − {grouped(shared_prompt)})) × "
                                 f"{block} × {per_token.operand} = {GIB_HELD.show(shared * block_bytes)}")),
        "saving": Result(1 - shared / separate, PERCENT, formula="1 − shared blocks ÷ separate blocks",
                         worked=(f"1 − {grouped(shared)} ÷ {grouped(separate)} = {PERCENT.show(1 - shared / separate)}")),
    }


def link_rate(stack: Stack) -> Result:
    """The host link at the achieved fraction of its nominal one-way rate."""
    nominal = stack.card.host_bandwidth
    value = nominal.value * stack.cache.link_fraction
    return Result(value, GB_PER_S_FINE, formula="nominal one-way rate × achieved fraction",
                  worked=f"{nominal} × {plain(stack.cache.link_fraction)} = {GB_PER_S_FINE.show(value)}")


def cache_bytes(stack: Stack, tokens: int) -> Result:
    """The cache `tokens` tokens hold, in decimal GB: bytes moved over a link are quoted that way."""
    per_token = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    held = stack.model.tokens_cached(tokens)
    value = held * per_token.value
    return Result(value, GB_MOVED, formula="tokens × cache per token",
                  worked=f"{grouped(held)} × {grouped(per_token.value)} B = {GB_MOVED.show(value)}")


def copies(stack: Stack, tokens: int) -> int:
    """Separate copies one trip takes: a block's keys and its values, in every layer."""
    blocks = kvcache.blocks_for(stack.model.tokens_cached(tokens), stack.block_size)
    return blocks * stack.model.num_hidden_layers * 2


def transfer(stack: Stack, tokens: int, trips: int) -> Result:
    """Moving `tokens` tokens' cache over the host link `trips` times (out, or out and back): the
    bytes at the achieved rate, plus a fixed cost for each of the many small copies."""
    moved, rate = cache_bytes(stack, tokens), link_rate(stack)
    count, overhead = copies(stack, tokens), stack.cache.copy_overhead_s
    one = moved.value / rate.value + count * overhead if rate.value else math.inf
    value = trips * one
    times = f"{trips} × " if trips > 1 else ""
    return Result(value, MS, formula=f"{times}(bytes ÷ achieved link rate + copies × cost of one copy)",
                  worked=(f"{times}({moved.operand} ÷ {rate.operand} + {grouped(count)} × {MS.precise(overhead)}) = "
                          f"{MS.show(value)}"))


def crossings(stack: Stack, highest: int) -> list[int]:
    """Lengths where the swap round trip and the recompute change places, found on a doubling grid
    and narrowed by bisection: none, one or (a slow link, with attention's square catching up) two."""
    def gap(n: int) -> float:
        return transfer(stack, n, 2).value - timing.prefill_time(stack, n).value
    points, n = [], 1
    while n < highest:
        points.append(n)
        n *= 2
    points.append(highest)
    found = []
    for low, high in zip(points, points[1:]):
        if (gap(low) > 0) != (gap(high) > 0):
            while high - low > 1:
                middle = (low + high) // 2
                if (gap(middle) > 0) == (gap(low) > 0):
                    low = middle
                else:
                    high = middle
            found.append(high)
    return found


def tie_worked(moved: Result, recompute: float, fixed: float, tie: float) -> str:
    """The tie rate's arithmetic; when the copies' fixed cost all but equals the recompute, the two
    terms cancel below the digits shown, so the time left is shown on its own."""
    if not tie:
        return "no link rate ties: the copies' fixed cost alone exceeds the recompute"
    left = recompute - fixed
    if left < 0.01 * recompute:
        return (f"the recompute outlasts the copies' fixed cost by only {MS.precise(left)}; "
                f"2 × {moved.operand} in that time needs {GB_PER_S_FINE.show(tie)}")
    return f"2 × {moved.operand} ÷ ({MS.precise(recompute)} − {MS.precise(fixed)}) = {GB_PER_S_FINE.show(tie)}"


def swap_or_recompute(stack: Stack) -> dict[str, object]:
    """A preempted sequence of the typical length: swapped out and back over the host link, against
    recomputed (its tokens prefilled again) by the time model, and the link rate at which they tie."""
    tokens = stack.typical_conversation
    moved, rate = cache_bytes(stack, tokens), link_rate(stack)
    one_way, round_trip = transfer(stack, tokens, 1), transfer(stack, tokens, 2)
    recompute = timing.prefill_time(stack, tokens)
    fixed = 2 * copies(stack, tokens) * stack.cache.copy_overhead_s
    tie = 2 * moved.value / (recompute.value - fixed) if recompute.value > fixed else 0.0
    highest = max(stack.model.max_position_embeddings, stack.context_limit)
    found = crossings(stack, highest)
    cheaper = "swap" if round_trip.value < recompute.value else "recompute"
    if found:
        where = ", then ".join(grouped(n) for n in found)
        text = f"the cheaper choice changes at {where} tokens"
    else:
        text = f"none up to {grouped(highest)} tokens: {cheaper} is cheaper at every length"
    return {
        "tokens": given(tokens, TOKENS, "a preempted sequence of the typical length"),
        "bytes": moved,
        "nominal": stack.card.host_bandwidth,
        "link": stack.card.host_link,
        "fraction": given(stack.cache.link_fraction, PERCENT, "achieved share of the host link, an assumption"),
        "rate": rate,
        "one_way": one_way,
        "round_trip": round_trip,
        "recompute": recompute,
        "ratio": Result(recompute.value / round_trip.value, RATIO, formula="recompute ÷ swap round trip",
                        worked=(f"{MS.precise(recompute.value)} ÷ {MS.precise(round_trip.value)} = "
                                f"{RATIO.show(recompute.value / round_trip.value)}")),
        "copies": Result(copies(stack, tokens), COUNT, formula="blocks × layers × 2 (keys and values)",
                         worked=(f"{grouped(kvcache.blocks_for(stack.model.tokens_cached(tokens), stack.block_size))} × "
                                 f"{stack.model.num_hidden_layers} × 2 = {grouped(copies(stack, tokens))}")),
        "copy_overhead": given(stack.cache.copy_overhead_s, MS_FINE_COPY, "fixed cost of one copy, an assumption"),
        "tie_rate": Result(tie, GB_PER_S_FINE,
                           formula="2 × bytes ÷ (recompute time − the copies' fixed cost): the link rate at which they tie",
                           worked=tie_worked(moved, recompute.value, fixed, tie)),
        "tie": (f"they tie at {GB_PER_S_FINE.show(tie)} of achieved link rate" if tie >= 0.05 else
                f"they tie only below {GB_PER_S_FINE.show(0.05e9)}, a link no server has" if tie else
                "no link rate makes the swap cheaper: its copies' fixed cost alone exceeds the recompute"),
        "cheaper": cheaper,
        "break_even": text,
        "crossings": found,
    }


MS_FINE_COPY = Unit("ms", 0.001, "ms", 4)

SWAP_CURVE_TOKENS = (128, 256, 512, 1_024, 2_048, 4_096, 8_192, 16_384, 32_768, 65_536, 131_072)


def swap_curves(stack: Stack) -> dict:
    """Swap (one way and round trip) and recompute, in ms, against tokens held, up to the model's
    reach; the crossing, if there is one, as a vertical marker. Curves, and the table's rows."""
    highest = max(stack.model.max_position_embeddings, stack.context_limit)
    x = [n for n in SWAP_CURVE_TOKENS if n <= highest] or [highest]
    one = [1000 * transfer(stack, n, 1).value for n in x]
    both = [1000 * transfer(stack, n, 2).value for n in x]
    again = [1000 * timing.prefill_time(stack, n).value for n in x]
    found = [n for n in crossings(stack, highest) if x[0] <= n <= x[-1]]
    top = max(again + both)
    marker = {"x": [found[0]] * 2, "y": [0, top]} if found else {"x": [], "y": []}
    curves = [
        {"name": "swap in (the stall on resuming)", "x": x, "y": one},
        {"name": "swap out and back in", "x": x, "y": both},
        {"name": "recompute (prefill again)", "x": x, "y": again},
        {"name": "break-even", **marker},
    ]
    rows = [[grouped(n), f"{one[i]:,.1f}", f"{both[i]:,.1f}", f"{again[i]:,.1f}"] for i, n in enumerate(x)]
    return {"curves": curves, "rows": rows}


def host_tier(stack: Stack, ladder: kvcache.Ladder, reused: int, saved: Result) -> dict[str, Result]:
    """A host-memory tier under the device pool: how much more it holds, and what restoring the shared
    prefix from it costs against the prefill a hit saves. SGLang's tier moves whole pages with its own
    I/O kernel, layer by layer, so a restore is priced by its bytes alone, not as V0's swap of one copy
    per block, layer and tensor."""
    ratio = stack.cache.host_ratio
    budget = max(ladder.kv_budget.value, 0)
    pool = ratio * budget
    pool_worked = (f"{plain(ratio)} × {ladder.kv_budget.operand} = {GIB_HELD.show(pool)}" if budget else
                   f"a KV budget of {ladder.kv_budget} sizes no host pool: {GIB_HELD.show(0)}")
    tokens = ratio * ladder.token_capacity.value
    moved, rate = cache_bytes(stack, reused), link_rate(stack)
    value = moved.value / rate.value if rate.value else math.inf
    restore = Result(value, MS, formula="bytes ÷ achieved link rate",
                     worked=f"{moved.operand} ÷ {rate.operand} = {MS.show(value)}")
    return {
        "ratio": given(ratio, RATIO, "host pool ÷ device pool (SGLang --hicache-ratio default)"),
        "pool": Result(pool, GIB_HELD, formula="ratio × KV budget", worked=pool_worked),
        "tokens": Result(tokens, TOKENS, formula="ratio × token capacity",
                         worked=f"{plain(ratio)} × {grouped(int(ladder.token_capacity.value))} = {TOKENS.show(tokens)}"),
        "restore": restore,
        "saved": saved,
    }


def routing(stack: Stack, hit_rate: float) -> dict[str, Result]:
    """A conversation's earlier turns are cached on the replica that served them: a router that
    ignores that finds them one time in `replicas`."""
    replicas = stack.cache.replicas
    return {
        "replicas": given(replicas, COUNT, "replicas behind one router, an example"),
        "random": Result(1 / replicas, PERCENT, formula="1 ÷ replicas",
                         worked=f"1 ÷ {replicas} = {PERCENT.show(1 / replicas)}"),
        "affinity": given(hit_rate, PERCENT, "with prefix-aware routing: the hit rate the page assumes"),
    }


def section(stack: Stack) -> dict[str, object]:
    """Document 10's facts on one stack."""
    ladder = kvcache.ladder(stack)
    prefix = prefix_caching(stack)
    return {
        "waste": paging_waste(stack),
        "paper": paper(),
        "prefix": prefix,
        "samples": parallel_samples(stack),
        "swap": swap_or_recompute(stack),
        "tier": host_tier(stack, ladder, int(prefix["reused"].value), prefix["saved"]),
        "routing": routing(stack, stack.cache.hit_rate),
        "flags": {f"{i}": flag for i, flag in enumerate(FLAGS)},
    }
