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
from ..specs.inputs import CacheOps
from ..specs.stack import Stack
from ..core.arith import Expr, ceil_div, field, made_of, term
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


def paging_waste(stack: Stack, cache: CacheOps) -> dict[str, Result]:
    """The last block's expected waste over a spread of lengths, set against reserving every
    sequence's window up front (contiguous allocation to the context limit)."""
    block, typical, limit = stack.block_size, stack.typical_conversation, stack.context_limit
    spread = cache.spread
    lowest, highest = max(typical - spread, 1), max(min(typical + spread, limit), 1)
    count = highest - lowest + 1
    total = wasted_in_range(lowest, highest, block)
    expected = total / count
    per_token = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    ladder = kvcache.ladder(stack)
    mean = (lowest + highest) / 2
    reserved_waste = limit - mean
    worst = int(ladder.users_worst.value)
    block_r = given(block, TOKENS, "--block-size")
    lowest_r = given(lowest, TOKENS, "shortest length in the spread")
    highest_r = given(highest, TOKENS, "longest length in the spread")
    typical_r, limit_r = field(stack, "typical_conversation", TOKENS), field(stack, "context_limit", TOKENS)
    blk = term(block_r, f"{block}")
    mean_r = ((term(lowest_r, grouped(lowest)) + term(highest_r, grouped(highest))) / term(2)).result(
        TOKENS_FINE, "(shortest + longest) ÷ 2")
    expected_r = Result(expected, TOKENS_FINE, formula="empty slots summed over every length ÷ number of lengths",
                        worked=(f"lengths {grouped(lowest)} to {grouped(highest)}, each leaving ⌈L ÷ {block}⌉ × "
                                f"{block} − L slots empty; {grouped(total)} slots ÷ {grouped(count)} lengths = "
                                f"{TOKENS_FINE.show(expected)}"),
                        inputs=made_of(lowest_r, highest_r, block_r))
    paged_users = kvcache.users_by_tokens(ladder.token_capacity, (term(mean_r) + term(expected_r)).result(
        TOKENS_FINE, "mean length + expected waste: a sequence's tokens in blocks"))
    reserved_r = (term(limit_r, grouped(limit)) - term(mean_r, TOKENS_FINE.show(mean))).result(
        TOKENS_FINE, "context limit − mean length")
    return {
        "block": block_r,
        "spread": given(spread, TOKENS, "lengths spread evenly within ± this of the typical conversation"),
        "lowest": lowest_r,
        "highest": highest_r,
        "mean": mean_r,
        "one": (ceil_div(term(typical_r, grouped(typical)), blk) * blk - term(typical_r, grouped(typical))).result(
            TOKENS, "⌈tokens ÷ block⌉ × block − tokens"),
        "expected": expected_r,
        "uniform": ((blk - term(1)) / term(2)).result(TOKENS_FINE, "(block − 1) ÷ 2: every remainder equally likely"),
        "share": (term(expected_r, TOKENS_FINE.show(expected))
                  / (term(mean_r, TOKENS_FINE.show(mean)) + term(expected_r, TOKENS_FINE.show(expected)))).result(
            SHARE, "expected waste ÷ (mean length + expected waste)", shown=SHARE.show(expected / (mean + expected), 2)),
        "reserved": reserved_r,
        "reserved_share": (term(reserved_r, TOKENS_FINE.show(reserved_waste)) / term(limit_r, TOKENS.show(limit))).result(
            SHARE, "(context limit − mean length) ÷ context limit"),
        "users": paged_users,
        "pool_paged": (term(paged_users, grouped(int(paged_users.value))) * term(expected_r, TOKENS_FINE.show(expected))
                       * term(per_token)).result(GIB_HELD, "paged users × expected waste × cache per token"),
        "pool_contiguous": (term(ladder.users_worst, grouped(worst)) * term(reserved_r, TOKENS_FINE.show(reserved_waste))
                            * term(per_token)).result(
            GIB_HELD, "worst-case users × (context limit − mean length) × cache per token"),
    }


def paper() -> dict[str, Result]:
    """The PagedAttention paper's measured share of cache holding tokens in earlier systems, and the
    waste that leaves."""
    low, high = PAPER_TOKEN_SHARE
    tokens_low = given(low, SHARE, f"{PAPER}: share of KV cache memory holding token states, lowest")
    tokens_high = given(high, SHARE, f"{PAPER}: share of KV cache memory holding token states, highest")
    return {
        "tokens_low": tokens_low,
        "tokens_high": tokens_high,
        "waste_high": (term(1, "100%") - term(tokens_low, SHARE.show(low))).result(SHARE, "1 − lowest share holding tokens"),
        "waste_low": (term(1, "100%") - term(tokens_high, SHARE.show(high))).result(SHARE, "1 − highest share holding tokens"),
    }


def reusable_tokens(prefix: int, prompt: int, block: int) -> int:
    """Tokens a hit can skip: whole blocks of the shared prefix only, and never the prompt's last
    token, which must be computed to sample from (vLLM caps a hit at prompt − 1 tokens)."""
    return min(prefix // block, (prompt - 1) // block) * block


def prefill_after_hit(stack: Stack, prompt: int, reused: int) -> Result:
    """A prompt's prefill when its first `reused` tokens are found cached: only the rest goes through
    the blocks, attending to the whole prompt (calc.engine.timing.prefill_after)."""
    return timing.prefill_after(stack, prompt, reused).time


def prefix_caching(stack: Stack, cache: CacheOps) -> dict[str, Result]:
    """What a shared prefix saves: the full blocks it covers, the prefill they skip on a hit, the
    expected saving at the hit rate, and the users the pool holds when residents share it."""
    block, prompt, prefix = stack.block_size, stack.workload.prompt, cache.prefix
    hit_rate = cache.hit_rate
    reused = reusable_tokens(prefix, prompt, block)
    blocks = reused // block
    full = timing.prefill_time(stack, prompt)
    hit = prefill_after_hit(stack, prompt, reused)
    saved = full.value - hit.value
    ladder = kvcache.ladder(stack)
    own = ladder.tokens_per_user_paged.value
    average = own - hit_rate * reused
    room = ladder.token_capacity.value - reused
    users = int(room // average) if room > 0 and average > 0 else 0
    cap = min(prefix // block, (prompt - 1) // block)
    prefix_r = given(prefix, TOKENS, "shared prefix: system prompt and tool definitions")
    prompt_r = given(prompt, TOKENS, "prompt length")
    hit_r = given(hit_rate, PERCENT, "share of requests that find the prefix cached, an assumption")
    rate_r = field(stack.traffic, "requests_per_s", what="requests per second")
    blk = term(field(stack, "block_size", TOKENS), f"{block}")
    blocks_formula = "⌊min(prefix, prompt − 1) ÷ block⌋"
    if prefix <= prompt - 1:  # the prefix is the lesser: the line divides it
        blocks_r = (term(prefix_r, grouped(prefix)) // blk).result(COUNT, blocks_formula, shown=_blocks(cap))
    else:
        blocks_r = Result(blocks, COUNT, formula=blocks_formula,
                          worked=f"⌊{grouped(min(prefix, prompt - 1))} ÷ {block}⌋ = {_blocks(cap)}",
                          inputs=made_of(prompt_r, blk.inputs[0]))
    reused_r = (term(blocks_r, _blocks(blocks)) * blk).result(TOKENS, "full blocks × block")
    saved_r = Result(saved, MS, formula="prefill without a hit − prefill with one",
                     worked=timing.difference(full.value, hit.value, MS), inputs=made_of(full, hit))
    rate_hit = term(hit_r, plain(hit_rate))
    average_r = (term(ladder.tokens_per_user_paged, grouped(int(own))) - rate_hit * term(reused_r, grouped(reused))).result(
        TOKENS, "tokens per user in blocks − hit rate × shared tokens", shown=TOKENS.show(average, 1))
    users_worked = (f"({grouped(int(ladder.token_capacity.value))} − {grouped(reused)}) ÷ {TOKENS.show(average, 1)} = "
                    f"{grouped(room / average, 2)} → {grouped(users)} users" if users else
                    f"a token capacity of {ladder.token_capacity} leaves no room beside one copy of the prefix: 0 users")
    return {
        "tokens": prefix_r,
        "prompt": prompt_r,
        "hit_rate": hit_r,
        "blocks": blocks_r,
        "reused": reused_r,
        "tail": (term(prefix_r, grouped(prefix)) - term(reused_r, grouped(reused))).result(
            TOKENS, "prefix − tokens in full blocks"),
        "full": full,
        "hit": hit,
        "saved": saved_r,
        "saved_share": (term(saved_r, MS.precise(saved)) / term(full, MS.precise(full.value))).result(
            PERCENT, "prefill saved ÷ prefill without a hit"),
        "expected": (rate_hit * term(hit, MS.precise(hit.value))
                     + term(1 - hit_rate, plain(round(1 - hit_rate, 6))) * term(full, MS.precise(full.value))).result(
            MS, "hit rate × prefill with a hit + (1 − hit rate) × prefill without"),
        "ttft_saved": (rate_hit * term(saved_r, MS.precise(saved))).result(MS, "hit rate × prefill saved on a hit"),
        "cards_saved": (term(rate_r, grouped(rate_r.value)) * rate_hit * term(saved_r, MS.precise(saved))).result(
            RATIO, "requests per second × hit rate × prefill saved"),
        "per_user": average_r,
        "users": Result(users, COUNT, formula="⌊(token capacity − one copy of the prefix) ÷ tokens per user⌋",
                        worked=users_worked, inputs=made_of(ladder.token_capacity, reused_r, average_r)),
    }


def parallel_samples(stack: Stack, cache: CacheOps) -> dict[str, Result]:
    """`n` samples from one prompt, each a child request (vllm/v1/engine/parallel_sampling.py,
    ParentRequest): separately, each holds every block; shared through the prefix cache, the prompt's
    full blocks a hit may reuse are held once and each sample owns the rest. A hit stops a token short
    of the prompt (vllm/v1/core/kv_cache_manager.py, get_computed_blocks: at most prompt − 1 tokens),
    so a prompt that fills its last block exactly still has each sample compute and hold that block."""
    block, prompt, output, n = stack.block_size, stack.workload.prompt, stack.workload.output, cache.samples
    each = kvcache.blocks_for(prompt + output, block)
    shared_prompt = reusable_tokens(prompt, prompt, block) // block
    separate = n * each
    shared = shared_prompt + n * (each - shared_prompt)
    per_token = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    n_r = given(n, COUNT, "parallel samples per prompt (the request's n)")
    prompt_r = field(stack.workload, "prompt", TOKENS, "prompt length")
    output_r = field(stack.workload, "output", TOKENS, "output length")
    blk = term(field(stack, "block_size", TOKENS), f"{block}")
    each_r = ceil_div(term(prompt_r, grouped(prompt)) + term(output_r, grouped(output)), blk).result(
        COUNT, "⌈(prompt + output) ÷ block⌉", shown=_blocks(each))
    prompt_blocks_r = ((term(prompt_r, grouped(prompt)) - term(1)) // blk).result(
        COUNT, "⌊(prompt − 1) ÷ block⌋: the prompt's full blocks a hit reuses", shown=_blocks(shared_prompt))
    n_t, each_t, first_t = term(n_r, f"{n}"), term(each_r, grouped(each)), term(prompt_blocks_r, grouped(shared_prompt))
    block_bytes = blk * term(per_token)
    separate_blocks = (n_t * each_t).result(COUNT, "n × blocks each")
    shared_blocks = (first_t + n_t * (each_t - first_t)).result(COUNT, "prompt's full blocks + n × the rest")
    return {
        "n": n_r,
        "each": each_r,
        "prompt_blocks": prompt_blocks_r,
        "separate": (n_t * each_t * block_bytes).result(GIB_HELD, "n × blocks each × block bytes"),
        "shared": ((first_t + n_t * (each_t - first_t)) * block_bytes).result(
            GIB_HELD, "(prompt's full blocks + n × the rest) × block bytes"),
        "saving": (term(1) - term(shared_blocks, grouped(shared)) / term(separate_blocks, grouped(separate))).result(
            PERCENT, "1 − shared blocks ÷ separate blocks"),
    }


def link_rate(stack: Stack, cache: CacheOps) -> Result:
    """The host link at the achieved fraction of its nominal one-way rate."""
    nominal = stack.card.host_bandwidth
    fraction = field(cache, "link_fraction", PERCENT, "achieved share of the host link, an assumption")
    return (term(nominal, str(nominal)) * term(fraction, plain(fraction.value))).result(
        GB_PER_S_FINE, "nominal one-way rate × achieved fraction")


def cache_bytes(stack: Stack, tokens: int) -> Result:
    """The cache `tokens` tokens hold, in decimal GB: bytes moved over a link are quoted that way."""
    per_token = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    held = stack.model.tokens_cached(tokens)
    return (term(held) * term(per_token, f"{grouped(per_token.value)} B")).result(GB_MOVED, "tokens × cache per token")


def copies(stack: Stack, tokens: int) -> int:
    """Separate copies one trip takes: a block's keys and its values, in every layer."""
    blocks = kvcache.blocks_for(stack.model.tokens_cached(tokens), stack.block_size)
    return blocks * stack.model.num_hidden_layers * 2


def transfer(stack: Stack, cache: CacheOps, tokens: int, trips: int) -> Result:
    """Moving `tokens` tokens' cache over the host link `trips` times (out, or out and back): the
    bytes at the achieved rate, plus a fixed cost for each of the many small copies."""
    moved, rate = cache_bytes(stack, tokens), link_rate(stack, cache)
    count, overhead = copies(stack, tokens), cache.copy_overhead_s
    times = f"{trips} × " if trips > 1 else ""
    formula = f"{times}(bytes ÷ achieved link rate + copies × cost of one copy)"
    if not rate.value:
        value = trips * math.inf
        return Result(value, MS, formula=formula,
                      worked=(f"{times}({moved.operand} ÷ {rate.operand} + {grouped(count)} × {MS.precise(overhead)}) = "
                              f"{MS.show(value)}"), inputs=made_of(moved, rate))
    one = (term(moved) / term(rate)
           + term(count) * term(field(cache, "copy_overhead_s", MS_FINE_COPY, "fixed cost of one copy"),
                                MS.precise(overhead)))
    one = Expr(one.value, f"({one.text})", one.inputs)  # bracketed even alone, as the rule reads
    return (term(trips) * one if trips > 1 else one).result(MS, formula)


def _transfer_seconds(stack: Stack, cache: CacheOps, tokens: int, trips: int) -> float:
    """transfer's value alone, in the same order of operations: for the scans and curves, which ask
    for it at many lengths and need no worked line."""
    moved = stack.model.tokens_cached(tokens) * kvcache.bytes_per_token(stack.model, stack.kv_precision).value
    rate = stack.card.host_bandwidth.value * cache.link_fraction
    one = moved / rate + copies(stack, tokens) * cache.copy_overhead_s if rate else math.inf
    return trips * one


def crossings(stack: Stack, cache: CacheOps, highest: int) -> list[int]:
    """Lengths where the swap round trip and the recompute change places, found on a doubling grid
    and narrowed by bisection: none, one or (a slow link, with attention's square catching up) two."""
    def gap(n: int) -> float:
        return _transfer_seconds(stack, cache, n, 2) - timing.prefill_time(stack, n).value
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


def swap_or_recompute(stack: Stack, cache: CacheOps) -> dict[str, object]:
    """A preempted sequence of the typical length: swapped out and back over the host link, against
    recomputed (its tokens prefilled again) by the time model, and the link rate at which they tie."""
    tokens = stack.typical_conversation
    moved, rate = cache_bytes(stack, tokens), link_rate(stack, cache)
    one_way, round_trip = transfer(stack, cache, tokens, 1), transfer(stack, cache, tokens, 2)
    recompute = timing.prefill_time(stack, tokens)
    blocks = kvcache.blocks_for(stack.model.tokens_cached(tokens), stack.block_size)
    copies_r = (term(blocks) * term(field(stack.model, "num_hidden_layers")) * term(2)).result(
        COUNT, "blocks × layers × 2 (keys and values)")
    overhead_r = given(cache.copy_overhead_s, MS_FINE_COPY, "fixed cost of one copy, an assumption")
    fixed_r = (term(2) * term(copies_r) * term(overhead_r)).result(MS, "2 × copies × cost of one copy: out and back")
    fixed = fixed_r.value
    tie_formula = "2 × bytes ÷ (recompute time − the copies' fixed cost): the link rate at which they tie"
    if recompute.value > fixed and (recompute.value - fixed) >= 0.01 * recompute.value:
        tie_r = (term(2) * term(moved) / (term(recompute, MS.precise(recompute.value)) - term(fixed_r, MS.precise(fixed)))
                 ).result(GB_PER_S_FINE, tie_formula)
    else:  # the copies outlast the recompute, or all but cancel it: said in words
        tie = 2 * moved.value / (recompute.value - fixed) if recompute.value > fixed else 0.0
        tie_r = Result(tie, GB_PER_S_FINE, formula=tie_formula, worked=tie_worked(moved, recompute.value, fixed, tie),
                       inputs=made_of(moved, recompute, fixed_r))
    tie = tie_r.value
    highest = max(stack.model.max_position_embeddings, stack.context_limit)
    found = crossings(stack, cache, highest)
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
        "fraction": given(cache.link_fraction, PERCENT, "achieved share of the host link, an assumption"),
        "rate": rate,
        "one_way": one_way,
        "round_trip": round_trip,
        "recompute": recompute,
        "ratio": (term(recompute, MS.precise(recompute.value)) / term(round_trip, MS.precise(round_trip.value))).result(
            RATIO, "recompute ÷ swap round trip"),
        "copies": copies_r,
        "copy_overhead": overhead_r,
        "tie_rate": tie_r,
        "tie": (f"they tie at {GB_PER_S_FINE.show(tie)} of achieved link rate" if tie >= 0.05 else
                f"they tie only below {GB_PER_S_FINE.show(0.05e9)}, a link no server has" if tie else
                "no link rate makes the swap cheaper: its copies' fixed cost alone exceeds the recompute"),
        "cheaper": cheaper,
        "break_even": text,
        "crossings": found,
    }


MS_FINE_COPY = Unit("ms", 0.001, "ms", 4)

SWAP_CURVE_TOKENS = (128, 256, 512, 1_024, 2_048, 4_096, 8_192, 16_384, 32_768, 65_536, 131_072)


def swap_curves(stack: Stack, cache: CacheOps) -> dict:
    """Swap (one way and round trip) and recompute, in ms, against tokens held, up to the model's
    reach; the crossing, if there is one, as a vertical marker. Curves, and the table's rows."""
    highest = max(stack.model.max_position_embeddings, stack.context_limit)
    x = [n for n in SWAP_CURVE_TOKENS if n <= highest] or [highest]
    one = [1000 * _transfer_seconds(stack, cache, n, 1) for n in x]
    both = [1000 * _transfer_seconds(stack, cache, n, 2) for n in x]
    again = [1000 * timing.prefill_time(stack, n).value for n in x]
    found = [n for n in crossings(stack, cache, highest) if x[0] <= n <= x[-1]]
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


def host_tier(stack: Stack, cache: CacheOps, ladder: kvcache.Ladder, reused: int, saved: Result) -> dict[str, Result]:
    """A host-memory tier under the device pool: how much more it holds, and what restoring the shared
    prefix from it costs against the prefill a hit saves. SGLang's tier moves whole pages with its own
    I/O kernel, layer by layer, so a restore is priced by its bytes alone, not as V0's swap of one copy
    per block, layer and tensor."""
    ratio = cache.host_ratio
    budget = max(ladder.kv_budget.value, 0)
    ratio_r = given(ratio, RATIO, "host pool ÷ device pool (SGLang --hicache-ratio default)")
    share = term(ratio_r, plain(ratio))
    if budget:
        pool = (share * term(ladder.kv_budget)).result(GIB_HELD, "ratio × KV budget")
    else:
        pool = Result(ratio * budget, GIB_HELD, formula="ratio × KV budget", inputs=made_of(ladder.kv_budget),
                      worked=f"a KV budget of {ladder.kv_budget} sizes no host pool: {GIB_HELD.show(0)}")
    moved, rate = cache_bytes(stack, reused), link_rate(stack, cache)
    if rate.value:
        restore = (term(moved) / term(rate)).result(MS, "bytes ÷ achieved link rate")
    else:
        restore = Result(math.inf, MS, formula="bytes ÷ achieved link rate", inputs=made_of(moved, rate),
                         worked=f"{moved.operand} ÷ {rate.operand} = {MS.show(math.inf)}")
    return {
        "ratio": ratio_r,
        "pool": pool,
        "tokens": (share * term(ladder.token_capacity, grouped(int(ladder.token_capacity.value)))).result(
            TOKENS, "ratio × token capacity"),
        "restore": restore,
        "saved": saved,
    }


def routing(cache: CacheOps) -> dict[str, Result]:
    """A conversation's earlier turns are cached on the replica that served them: a router that
    ignores that finds them one time in `replicas`."""
    replicas = given(cache.replicas, COUNT, "replicas behind one router, an example")
    return {
        "replicas": replicas,
        "random": (term(1) / term(replicas, f"{replicas.value}")).result(PERCENT, "1 ÷ replicas"),
        "affinity": given(cache.hit_rate, PERCENT, "with prefix-aware routing: the hit rate the page assumes"),
    }


def section(stack: Stack, cache: CacheOps) -> dict[str, object]:
    """Document 10's facts on one stack, its cache operations priced on `cache`."""
    ladder = kvcache.ladder(stack)
    prefix = prefix_caching(stack, cache)
    return {
        "waste": paging_waste(stack, cache),
        "paper": paper(),
        "prefix": prefix,
        "samples": parallel_samples(stack, cache),
        "swap": swap_or_recompute(stack, cache),
        "tier": host_tier(stack, cache, ladder, int(prefix["reused"].value), prefix["saved"]),
        "routing": routing(cache),
        "flags": {f"{i}": flag for i, flag in enumerate(FLAGS)},
    }
