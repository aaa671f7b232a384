"""Document 14: from a traffic forecast to a purchase order.

Little's Law turns the forecast's rate into the requests resident at once; the cache path divides
them by what one replica's cache admits. Separately, the time model prices the card time the rate
asks for, prefill and decode each on its own; the larger count binds. Headroom, spares and the
purchasing unit turn that load into a fleet, and the price turns the fleet into a bill. Every
assumption is a named input of the stack (Traffic, Promise, Efficiency, Pricing, Headroom).

Conventions, stated once: a fleet carries hundreds of requests at once, so it is costed at the
MEAN request, the expectation over the prompt-length distribution (the lognormal through p50 and
p95 that document 15 draws from, capped at the context limit); the promise is checked at its own
percentile (a p95 prompt's prefill against the p95 TTFT). Decode is priced at the batch the plan
actually runs (its residents over its cards, never more than the cache admits or the ITL promise
allows), and a request spends the step time of that batch per token; that batch, the residents
and the cards depend on each other, so they are iterated until the batch is stable.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from ..engine import kvcache, timing
from ..model import operations
from ..specs.release import PINNED
from ..specs.precision import FP8
from ..engine.launch import VERIFY_ARGS
from .phases import traffic_load
from ..engine.simulation import capped_moment, lognormal_through, normal_below
from ..specs.stack import Stack, Workload
from ..core.arith import field, made_of, term
from ..core.units import (COUNT, GFLOP, GIB_HELD, MS, PERCENT, RATIO, SECONDS, TFLOP, TOKENS, Result, Unit, given,
    grouped, plain)

HOURS_PER_YEAR = 365 * 24
USD = Unit("USD", 1, "", 0)
USD_CENTS = Unit("USD", 1, "", 2, significant=2)
BILLIONS = Unit("billion", 1e9, "billion", 1, significant=2)
CARDS = Unit("cards", 1, "cards", 2, significant=2)
PLAIN = Unit("number", 1, "", 1, significant=2)
RESIDENTS = Unit("requests", 1, "", 0, significant=2)
REQUESTS_PER_S = Unit("req/s", 1, "", 0, exact_up_to=3, significant=1)
# Where the reference stack's price comes from (calc.specs.stack.Pricing): the low end of what clouds list.
PRICE_SOURCE = "Mercatus GPU Index, mercatus-ai.com/blog/cloud-gpu-pricing, May 2026"
# What a serverless API charges for a model of this class, prompt and output alike: Fireworks'
# serverless price for base models up to 16B parameters (the break-even the note sets a plan against).
API_PER_MILLION = 0.20
API_SOURCE = "fireworks.ai/pricing, serverless, base models up to 16B parameters"
# A prefill chunk budget that keeps a step carrying one near the ITL promise: set with
# --max-num-batched-tokens (an assumption; vLLM's default on this class of card is calc.engine.launch's),
# raised to --max-num-seqs when the plan's batch cap is larger, since vLLM refuses a smaller one.
CHUNK_TOKENS = 512
# Two average loads to show that the bill per token follows utilisation (an illustration).
QUIET_LOAD, BUSY_LOAD = 0.20, 0.50
# The running batch climbs one fixed-point pass at a time; it settles in a few.
MOST_PASSES = 64


def dollars(value: float, unit: Unit = USD) -> str:
    """Dollars in a worked line: the currency as a word after the number, so the line reads as arithmetic."""
    return unit.show(value) + " USD"


def _batch_worked(residents: float, cards: int, batch: int) -> str:
    """The running batch's arithmetic: the residents its own step makes, shared over the cards. A step's
    time is not quite monotone in the batch (measured kernels are not), so a smaller batch can need more
    than it runs while this one needs less; the line then says so."""
    needed = max(1, ceiling(residents / cards))
    line = f"⌈{PLAIN.precise(residents)} ÷ {grouped(cards)}⌉ = {grouped(needed)}"
    if needed == batch:
        return line
    return f"{line}; the least batch whose step leaves no more residents per card than it runs is {grouped(batch)}"


def ceiling(value: float) -> int:
    """Whole cards: a count a hair over a whole number from rounding in the float is that number."""
    return math.ceil(round(value, 9))


def cards_word(count: float) -> str:
    return f"{grouped(count)} card" + ("" if count == 1 else "s")


def prompt_cap(stack: Stack) -> int:
    """The longest prompt the engine admits beside a median output: --max-model-len − output p50."""
    return stack.context_limit - stack.traffic.output_p50


def mean_prompt(stack: Stack) -> Result:
    """The mean prompt: the lognormal through p50 and p95, capped at the context limit."""
    traffic, cap = stack.traffic, prompt_cap(stack)
    lengths = lognormal_through(traffic.prompt_p50, traffic.prompt_p95)
    value = capped_moment(lengths, cap, 1)
    if lengths.sigma == 0:
        worked = f"min({grouped(traffic.prompt_p50)}, {grouped(cap)}) = {TOKENS.show(value)}"
    else:
        above = math.log(cap / lengths.median)
        growth, below = math.exp(lengths.sigma ** 2 / 2), normal_below((above - lengths.sigma ** 2) / lengths.sigma)
        tail = 1 - normal_below(above / lengths.sigma)
        worked = (f"σ is ln({grouped(traffic.prompt_p95)} ÷ {grouped(traffic.prompt_p50)}) ÷ 1.645, {lengths.sigma:.4f}; "
                  f"{grouped(traffic.prompt_p50)} × {PLAIN.precise(growth)} × {PLAIN.precise(below)} + {grouped(cap)} × "
                  f"{PLAIN.precise(tail)} = "
                  f"{TOKENS.show(value)}")
    return Result(value, TOKENS, formula="p50 × e^(σ²/2) × Φ((ln(cap ÷ p50) − σ²) ÷ σ) + cap × (1 − Φ(ln(cap ÷ p50) ÷ σ)), "
                                         "σ = ln(p95 ÷ p50) ÷ 1.645, cap = context limit − output p50", worked=worked,
                  inputs=_lengths(stack))


def _lengths(stack: Stack) -> tuple[Result, ...]:
    """What the prompt-length distribution and its cap rest on: p95 and p50, the context limit and output p50."""
    traffic = stack.traffic
    return made_of(field(traffic, "prompt_p95", TOKENS), field(traffic, "prompt_p50", TOKENS),
                   field(stack, "context_limit", TOKENS), field(traffic, "output_p50", TOKENS))


def mean_positions(stack: Stack) -> Result:
    """The mean causal positions a prompt's attention covers, Σ min(t, window), from the same
    distribution's first two moments: exact for the lognormal, not an approximation of it."""
    traffic, cap, model = stack.traffic, prompt_cap(stack), stack.model
    lengths = lognormal_through(traffic.prompt_p50, traffic.prompt_p95)
    window = model.sliding_window if model.sliding_window and model.sliding_window < cap else None
    first, second = capped_moment(lengths, cap, 1), capped_moment(lengths, cap, 2)
    if window is None:
        value = (second + first) / 2
        worked = f"({PLAIN.precise(second)} + {PLAIN.precise(first)}) ÷ 2 = {PLAIN.precise(value)}"
    else:
        near_first, near_second = capped_moment(lengths, window, 1), capped_moment(lengths, window, 2)
        value = (near_second + near_first) / 2 + window * (first - near_first)
        worked = (f"({PLAIN.precise(near_second)} + {PLAIN.precise(near_first)}) ÷ 2 + {grouped(window)} × "
                  f"({PLAIN.precise(first)} − {PLAIN.precise(near_first)}) = {PLAIN.precise(value)}")
    formula = ("(mean square prompt + mean prompt) ÷ 2" if window is None else
               "(mean square + mean of the prompt capped at the window) ÷ 2 + window × (mean prompt − mean capped prompt)")
    window_field = () if window is None else (field(model, "sliding_window", TOKENS),)
    return Result(value, COUNT, formula=formula, worked=worked, inputs=made_of(*_lengths(stack), *window_field))


def mean_prefill(stack: Stack, prompt: Result, positions: Result) -> Result:
    """The mean prompt's prefill: the mean of the operations (linear in N, plus attention over the
    mean positions) at the rate the engine's prefill of the typical prompt achieves."""
    model = stack.model
    blocks, head = operations.block_parameters(model), operations.head_parameters(model)
    attention = operations.attention_ops_per_position(model)
    per_position = attention.value
    ops = 2 * blocks * prompt.value + 2 * head + per_position * positions.value
    rate = timing.prefill_rate(stack)
    value = ops / rate.value
    return Result(value, MS, formula="mean prefill operations ÷ the typical prompt's prefill rate",
                  worked=(f"(2 × {grouped(blocks)} × {PLAIN.precise(prompt.value)} + 2 × {grouped(head)} + "
                          f"{grouped(per_position)} × {PLAIN.precise(positions.value)}) = {TFLOP.precise(ops)}; "
                          f"{TFLOP.precise(ops)} ÷ {rate.operand} = {MS.show(value)}"),
                  inputs=made_of(prompt, attention, positions, rate))


def time_in_system(prefill: Result, output: int, step: Result, prefill_share: float | Result) -> Result:
    """The mean prefill + the rest of the output at the step time the plan's batch runs, stretched
    by the share of each card's time that prefill takes (its chunks ride in the same steps)."""
    share = prefill_share.value if isinstance(prefill_share, Result) else prefill_share
    return (term(prefill, MS.precise(prefill.value)) + term(output - 1) * term(step, MS.precise(step.value))
            / (1 - term(prefill_share, PLAIN.precise(share, 4)))).result(
        SECONDS, "mean prefill + (output p50 − 1) × running step ÷ (1 − prefill's share of the cards)")


def resident_requests(rate: float | Result, in_system: Result) -> Result:
    """Little's Law: requests in the system = arrival rate × time each spends there."""
    per_second = rate.value if isinstance(rate, Result) else rate
    residents = term(rate, f"{plain(per_second)} /s") * term(in_system)
    return residents.result(RESIDENTS, "arrival rate × time in system (Little's Law)", shown=PLAIN.precise(residents.value))


def card_count(demand: float, per_card: float, target: float, what: str, shown: str,
               inputs: tuple[Result, ...] = ()) -> Result:
    """`inputs`: the results the demand, the per-card figure and the target were read off."""
    value = ceiling(demand / (per_card * target))
    return Result(value, COUNT, formula=f"⌈{what} ÷ (per card × target)⌉",
                  worked=f"⌈{shown} ÷ {plain(target)}⌉ = ⌈{PLAIN.precise(demand / (per_card * target))}⌉ = {grouped(value)}",
                  inputs=inputs)


def in_cards(share: Result) -> Result:
    """Card-seconds per second, which is a number of cards kept busy."""
    arithmetic = share.worked.rpartition(" = ")[0]
    return Result(share.value, CARDS, formula=share.formula, worked=f"{arithmetic} = {CARDS.show(share.value)}",
                  inputs=share.inputs or made_of(share))


def mean_requests_per_replica(stack: Stack, prompt: Result) -> tuple[Result, Result, Result]:
    """A mean request (mean prompt + output p50, the whole request: its blocks are needed before it
    finishes) in whole blocks, its cache, and how many of them one replica's KV budget admits."""
    held = stack.model.tokens_cached(round(prompt.value) + stack.traffic.output_p50)
    ladder = kvcache.ladder(stack)
    tokens = kvcache.tokens_in_blocks(held, stack.block_size)
    per_replica = kvcache.users_by_tokens(ladder.token_capacity, tokens)
    per_replica = replace(per_replica, worked=per_replica.worked.replace(" users", " requests"))
    return tokens, kvcache.bytes_paged(ladder.per_token, held, stack.block_size), per_replica


def batch_within_promise(stack: Stack, admitted: int, context: int) -> int:
    """The largest batch up to `admitted` whose decode step meets the ITL promise (0 if none does).
    A step is max(weights' read, batch × matrix work) + batch × the longer of one sequence's cache
    read and attention work, so the bound is solved in closed form from one sequence's step, then
    confirmed against the time model's own step at the edge."""
    promise = stack.promise.itl_p95_s
    one = timing.decode_step(stack, 1, context)
    weights, matrix = one.matmuls.reading.value, one.matmuls.computing.value
    per_sequence = max(one.attention.reading.value, one.attention.computing.value)
    read_bound = (promise - weights) / per_sequence
    batch = read_bound if read_bound * matrix <= weights else promise / (matrix + per_sequence)
    batch = max(0, min(admitted, math.floor(batch)))

    def meets(size: int) -> bool:
        return timing.decode_step(stack, size, context).time.value <= promise

    while batch > 0 and not meets(batch):
        batch -= 1
    while batch < admitted and meets(batch + 1):
        batch += 1
    return batch


@dataclass(frozen=True)
class CapacityPlan:
    """The chain from a forecast to a fleet for one stack, every link a Result."""

    mean_prompt: Result
    mean_positions: Result
    over_limit: Result
    in_system: Result
    residents: Result
    request_tokens: Result
    per_request: Result
    resident_cache: Result
    per_replica: Result
    memory_gpus: Result
    batch_cap: Result
    batch: Result
    step: timing.DecodeStep
    running_step: timing.DecodeStep
    prefill: Result
    prefill_cards: Result
    decode_cards: Result
    busy_cards: Result
    decode_as_flops: Result
    understated: Result
    compute_gpus: Result
    load: Result
    binding: str
    fleet: Result
    nodes: Result
    bought: Result
    cost_hour: Result
    cost_month: Result
    tokens_month: Result
    per_million: Result
    chunk_budget: Result
    chunk_step: Result
    default_chunk_step: Result
    ttft_p95: Result
    ttft_met: bool
    itl_met: bool


def step_with_chunk(stack: Stack, step: Result, chunk: int) -> Result:
    """A decode step that also carries `chunk` prompt tokens: the step, plus the chunk's operations
    at the engine's prefill rate (the weights are read once for both)."""
    ops = operations.prefill_ops(stack.model, chunk)
    rate = timing.prefill_rate(stack)
    return (term(step, MS.precise(step.value)) + term(ops) / term(rate)).result(
        MS, "running step + chunk's prefill operations ÷ the prefill rate")


def whole_nodes(fleet: float | Result, node: int | Result) -> tuple[Result, Result]:
    """Cards are bought by the node: the nodes a fleet needs, and the cards those nodes hold. Either may
    be given as the result it was read off, to be recorded as an input."""
    fleet_value = fleet.value if isinstance(fleet, Result) else fleet
    node_value = node.value if isinstance(node, Result) else node
    nodes_value = ceiling(fleet_value / node_value)
    nodes = Result(nodes_value, COUNT, formula="⌈fleet ÷ cards per node⌉",
                   worked=f"⌈{grouped(fleet_value)} ÷ {grouped(node_value)}⌉ = {grouped(nodes_value)}",
                   inputs=made_of(fleet, node))
    bought = (term(nodes, grouped(nodes_value)) * term(node, grouped(node_value))).result(COUNT, "nodes × cards per node")
    return nodes, bought


def why_not(stack: Stack) -> dict[str, str]:
    """Why no plan exists for this stack ({field: reason}), or {} when one does: one replica per card
    must hold the weights and a mean request, a median request must fit the engine's context limit,
    and no number of cards rescues a promise one card breaks alone."""
    traffic = stack.traffic
    if traffic.prompt_p50 + traffic.output_p50 > stack.context_limit:
        return {"prompt_p50": (f"a median request (prompt p50 + output p50 = {traffic.prompt_p50 + traffic.output_p50:,} "
                               f"tokens) is over the engine's --max-model-len ({stack.context_limit:,} tokens), "
                               f"which refuses it")}
    ladder = kvcache.ladder(stack)
    if not ladder.weights_fit:
        return {"card": (f"{stack.model.name}'s weights ({ladder.weights}) and what the engine's profile holds back ({ladder.reserve}) do not fit "
                         f"{stack.card.name}'s pool ({ladder.pool}); this plan puts one replica on one card "
                         f"(document 11 splits a model across cards)")}
    prompt = mean_prompt(stack)
    tokens, per_request, per_replica = mean_requests_per_replica(stack, prompt)
    if per_replica.value < 1:
        return {"prompt_p50": (f"a mean request ({tokens}) needs {per_request} of cache, more "
                               f"than one replica's KV budget ({ladder.kv_budget})")}
    context = round(prompt.value) + traffic.output_p50 // 2
    if batch_within_promise(stack, int(per_replica.value), context) < 1:
        one = timing.decode_step(stack, 1, context).time
        return {"itl": (f"one sequence's decode step alone takes {one} on {stack.card.name}: no batch meets an ITL "
                        f"of {stack.promise.itl_p95_s * 1000:g} ms")}
    longest = timing.prefill_time(stack, min(traffic.prompt_p95, prompt_cap(stack)))
    if longest.value > stack.promise.ttft_p95_s:
        return {"ttft": (f"prefill of a p95 prompt alone takes {longest} on {stack.card.name}: more cards "
                         f"do not shorten it (chunked or split prefill, document 15)")}
    return {}


@lru_cache(maxsize=64)
def plan(stack: Stack) -> CapacityPlan:
    """The plan; call `why_not` first, since a stack with no plan has no answer here."""
    traffic, headroom = stack.traffic, stack.headroom
    rate, target, output = traffic.requests_per_s, headroom.target, traffic.output_p50
    prompt, positions = mean_prompt(stack), mean_positions(stack)
    lengths = lognormal_through(traffic.prompt_p50, traffic.prompt_p95)
    over = 0.0 if lengths.sigma == 0 else 1 - normal_below(math.log(prompt_cap(stack) / lengths.median) / lengths.sigma)
    over_limit = Result(over, PERCENT, formula="prompts over the cap: 1 − Φ(ln(cap ÷ p50) ÷ σ)",
                        worked=f"1 − {1 - over:.4f} = {PERCENT.show(over)}", inputs=_lengths(stack))
    tokens, per_request, per_replica = mean_requests_per_replica(stack, prompt)
    context = round(prompt.value) + output // 2
    cap = batch_within_promise(stack, int(per_replica.value), context)
    prefill = mean_prefill(stack, prompt, positions)

    step = timing.decode_step(stack, cap, context)
    load_cards = traffic_load(replace(stack, workload=Workload(traffic.prompt_p50, output, cap)), prefill, step)
    prefill_cards, decode_cards = in_cards(load_cards["prefill_cards"]), in_cards(load_cards["decode_cards"])
    busy_cards = (term(prefill_cards) + term(decode_cards)).result(
        CARDS, "prefill card-seconds per second + decode card-seconds per second")
    busy = busy_cards.value
    target_share = field(headroom, "target", PERCENT, "the busiest any resource is planned to be")
    compute = card_count(busy, 1, target, "busy cards", PLAIN.precise(busy), inputs=made_of(busy_cards, target_share))

    def residents_at(batch: int, cards: int) -> float:
        decoding = 1 - prefill_cards.value / cards
        return rate * (prefill.value + (output - 1) * timing.decode_step(stack, batch, context).time.value / decoding)

    def running_batch(cards: int) -> int | None:
        """The batch each of `cards` runs: residents ÷ cards, where the residents depend on the step
        that batch takes; the least such batch, climbing from one (None past the cap)."""
        batch = 1
        for _ in range(MOST_PASSES):
            needed = max(1, math.ceil(round(residents_at(batch, cards) / cards, 9)))
            if needed <= batch:
                return batch
            if needed > cap:
                return None
            batch = needed
        return batch

    def memory_path(residents: float) -> int:
        return ceiling(residents / (per_replica.value * target))

    cards = compute.value
    for _ in range(MOST_PASSES):
        batch = running_batch(cards)
        if batch is None:
            cards = max(cards + 1, ceiling(residents_at(cap, cards) / cap))
            continue
        if memory_path(residents_at(batch, cards)) <= cards:
            break
        cards = memory_path(residents_at(batch, cards))
    running = timing.decode_step(stack, batch, context)
    share = (term(prefill_cards) / term(cards)).result(PLAIN, "prefill's share of the cards")
    in_system = time_in_system(prefill, output, running.time, share)
    per_second = field(traffic, "requests_per_s", REQUESTS_PER_S, "requests per second at peak")
    residents = resident_requests(per_second, in_system)
    memory = card_count(residents.value, per_replica.value, target, "resident requests",
                        f"({PLAIN.precise(residents.value)} ÷ {grouped(per_replica.value)})",
                        inputs=made_of(residents, per_replica, target_share))
    resident_cache = (term(residents, PLAIN.precise(residents.value)) * term(per_request)).result(
        GIB_HELD, "resident requests × cache per request")
    memory = replace(memory, formula="⌈resident requests ÷ (requests one replica's cache admits × target)⌉")
    compute = replace(compute, formula="⌈(prefill + decode card-seconds per second) ÷ target⌉")
    per_token = (term(step.ops) / term(step.read.batch)).result(GFLOP, "operations per token at the batch's step")
    achieved = timing.achieved_compute(stack)
    flops = (term(per_second, plain(rate)) * term(output - 1) * term(per_token, GFLOP.precise(per_token.value))
             / term(achieved))
    decode_as_flops = flops.result(CARDS, "requests per second × decode tokens × operations per token ÷ achieved compute")
    flop_value = decode_as_flops.value
    understated = ((term(decode_cards) / term(decode_as_flops)).result(RATIO, "decode card time ÷ decode costed as operations")
                   if flop_value else
                   Result(0.0, RATIO, formula="decode card time ÷ decode costed as operations",
                          worked="no decode tokens beyond the first: nothing to compare", inputs=made_of(decode_as_flops)))

    load_value = max(memory.value, compute.value, cards)
    binding = ("both paths, equally" if memory.value == compute.value
               else "the cache (memory)" if memory.value > compute.value else "card time (compute)")
    load = Result(load_value, COUNT, formula="the larger of the two paths",
                  worked=f"max({cards_word(memory.value)}, {cards_word(compute.value)}) = {cards_word(load_value)}",
                  inputs=made_of(memory, compute))
    spares = field(headroom, "spares", COUNT, "spare replicas")
    fleet = (term(load, grouped(load_value)) + term(spares, grouped(headroom.spares))).result(COUNT, "load + spares")
    nodes, bought = whole_nodes(fleet, field(headroom, "node", COUNT, "cards per node"))
    bought_value = bought.value
    price = stack.price.gpu_hour_usd
    per_hour = field(stack.price, "gpu_hour_usd", USD_CENTS, "one card on demand for an hour")
    hourly = term(bought, grouped(bought_value)) * term(per_hour, f"{plain(price)} USD")
    cost_hour = hourly.result(USD_CENTS, "cards bought × price per GPU-hour", shown=dollars(hourly.value, USD_CENTS))
    hour = cost_hour.value
    month_hours = HOURS_PER_YEAR / 12
    monthly = term(cost_hour, f"{USD_CENTS.precise(hour, 9)} USD") * term(hours_in_a_month(), grouped(month_hours))
    cost_month = monthly.result(USD, "per hour × hours in a month (8,760 ÷ 12)", shown=dollars(monthly.value))
    month = cost_month.value
    request = prompt.value + output
    average_load = field(headroom, "average_load", PERCENT, "average load over peak, a month")
    tokens_month_value = rate * headroom.average_load * request * month_hours * 3600
    tokens_month = Result(tokens_month_value, BILLIONS,
                          formula="rate × average load × mean tokens per request × seconds in a month",
                          worked=(f"{plain(rate)} × {plain(headroom.average_load)} × "
                                  f"({PLAIN.precise(prompt.value)} + {grouped(output)}) × {grouped(month_hours * 3600)} = "
                                  f"{grouped(tokens_month_value)} tokens"),
                          inputs=made_of(per_second, average_load, prompt, field(traffic, "output_p50", TOKENS),
                                         hours_in_a_month()))
    cost_per_token = (term(cost_month, f"{USD_CENTS.precise(month, 9)} USD")
                      / term(tokens_month, f"{grouped(tokens_month_value)} tokens") * term(1e6, "1,000,000"))
    per_million = cost_per_token.result(USD_CENTS, "monthly cost ÷ tokens a month × 1,000,000",
                                        shown=dollars(cost_per_token.value, USD_CENTS))
    ttft_p95 = timing.prefill_time(stack, min(traffic.prompt_p95, prompt_cap(stack)))
    from ..engine.launch import default_max_num_batched_tokens
    engine_chunk = min(default_max_num_batched_tokens(stack.card), round(prompt.value))
    chunk = max(CHUNK_TOKENS, cap)  # vLLM refuses a token budget below --max-num-seqs, which the plan sets to the cap
    batch_cap = Result(cap, COUNT, formula="the most sequences one card decodes within the ITL promise and its cache",
                       worked=COUNT.show(cap),
                       inputs=made_of(per_replica, field(stack.promise, "itl_p95_s", MS, "ITL promise, p95")))
    return CapacityPlan(
        mean_prompt=prompt, mean_positions=positions, over_limit=over_limit,
        in_system=in_system, residents=residents, request_tokens=tokens, per_request=per_request,
        resident_cache=resident_cache, per_replica=per_replica, memory_gpus=memory,
        batch_cap=batch_cap,
        batch=Result(batch, COUNT, formula="the least batch B with ⌈residents at B's step ÷ cards⌉ ≤ B",
                     worked=_batch_worked(residents.value, cards, batch), inputs=made_of(residents)),
        step=step, running_step=running, prefill=prefill, prefill_cards=prefill_cards, decode_cards=decode_cards, busy_cards=busy_cards,
        decode_as_flops=decode_as_flops, understated=understated,
        compute_gpus=compute, load=load, binding=binding, fleet=fleet, nodes=nodes, bought=bought,
        cost_hour=cost_hour, cost_month=cost_month, tokens_month=tokens_month, per_million=per_million,
        chunk_budget=Result(chunk, TOKENS, formula=("prefill tokens a step may carry (--max-num-batched-tokens), at least "
                                                    f"--max-num-seqs, the cap ({VERIFY_ARGS})"),
                            worked=TOKENS.show(chunk), inputs=made_of(batch_cap)),
        chunk_step=step_with_chunk(stack, running.time, chunk),
        default_chunk_step=step_with_chunk(stack, running.time, engine_chunk),
        ttft_p95=ttft_p95, ttft_met=ttft_p95.value <= stack.promise.ttft_p95_s, itl_met=running.time.value <= stack.promise.itl_p95_s,
    )


@dataclass(frozen=True)
class Sensitivity:
    """One change to the forecast or the stack, and the fleet it would need, or why none plans."""

    change: str
    fleet: str
    binding: str


def sensitivity(change: str, stack: Stack) -> Sensitivity:
    refused = why_not(stack)
    if refused:
        return Sensitivity(change, "no plan", next(iter(refused.values())))
    moved = plan(stack)
    return Sensitivity(change, cards_word(moved.fleet.value), moved.binding)


def sensitivities(stack: Stack) -> dict[str, Sensitivity]:
    """What would change the answer: the moves a forecast, a price or the stack plausibly makes."""
    traffic = stack.traffic
    return {
        "long_prompts": sensitivity(f"prompts double (p50 {grouped(2 * traffic.prompt_p50)} tokens, p95 with it)",
                                    replace(stack, traffic=replace(traffic, prompt_p50=2 * traffic.prompt_p50,
                                                                   prompt_p95=2 * traffic.prompt_p95))),
        "double_rate": sensitivity(f"peak rate doubles ({REQUESTS_PER_S.show(2 * traffic.requests_per_s)} req/s)",
                                   replace(stack, traffic=replace(traffic, requests_per_s=2 * traffic.requests_per_s))),
        "fp8_cache": sensitivity("an fp8 KV cache", replace(stack, kv_precision=FP8)),
        "card_time": sensitivity("card time 10% above the model (a measured step)",
                                 replace(stack, efficiency=replace(stack.efficiency, compute=stack.efficiency.compute / 1.1,
                                                                   bandwidth=stack.efficiency.bandwidth / 1.1))),
    }


def utilisation_lever(stack: Stack, made: CapacityPlan) -> dict[str, Result]:
    """The same fixed bill spread over the tokens of a quiet month and of a busy one."""
    quiet = given(QUIET_LOAD, PERCENT, "average load, a quiet month")
    busy = given(BUSY_LOAD, PERCENT, "average load, a busy month")
    average = stack.headroom.average_load
    spread = (term(made.per_million, f"{made.per_million.operand} USD")
              * term(field(stack.headroom, "average_load", PERCENT, "average load over peak, a month"), plain(average)))

    def at(load: Result, what: str) -> Result:
        cost = spread / term(load, plain(load.value))
        return cost.result(USD_CENTS, f"$ per M tokens × average load ÷ {what} load", shown=dollars(cost.value, USD_CENTS))
    return {
        "quiet": quiet,
        "busy": busy,
        "quiet_per_million": at(quiet, "quiet"),
        "busy_per_million": at(busy, "busy"),
        "gain": (term(busy, PERCENT.show(BUSY_LOAD)) / term(quiet, PERCENT.show(QUIET_LOAD))).result(
            RATIO, "busy load ÷ quiet load"),
    }


RATE_STEPS = 32


def gpus_against_rate(stack: Stack) -> dict:
    """GPUs each path needs, and the fleet, against request rate, up to twice the forecast; with the
    forecast marked. The batch a fleet runs moves with the rate, so every point is a plan of its
    own. Curves, and the rows of the chart's table."""
    traffic = stack.traffic
    top = 2 * traffic.requests_per_s
    rates = [top * i / RATE_STEPS for i in range(1, RATE_STEPS + 1)]
    plans = [plan(replace(stack, traffic=replace(traffic, requests_per_s=r))) for r in rates]
    memory = [p.memory_gpus.value for p in plans]
    compute = [p.compute_gpus.value for p in plans]
    fleet = [p.fleet.value for p in plans]
    curves = [
        {"name": "memory path: resident requests ÷ what one cache admits", "x": rates, "y": memory},
        {"name": "compute path: prefill + decode card time", "x": rates, "y": compute},
        {"name": "the plan: the larger, plus spares", "x": rates, "y": fleet},
        {"name": "the forecast", "x": [traffic.requests_per_s] * 2, "y": [0, max(fleet)]},
    ]
    rows = [[REQUESTS_PER_S.show(r), grouped(m), grouped(c), grouped(f)] for r, m, c, f in zip(rates, memory, compute, fleet)]
    return {"curves": curves, "rows": rows}


def api_break_even(stack: Stack, made: CapacityPlan) -> dict[str, Result | str]:
    """The serverless price per million tokens, and the average load at which the fixed fleet's
    bill per token falls to it."""
    price = Result(API_PER_MILLION, USD_CENTS, formula="serverless price per million tokens",
                   worked=f"{dollars(API_PER_MILLION, USD_CENTS)} ({API_SOURCE})")
    api = term(price, f"{USD_CENTS.show(API_PER_MILLION)} USD")
    plan_cost = term(made.per_million, f"{made.per_million.operand} USD")
    average = field(stack.headroom, "average_load", PERCENT, "average load over peak, a month")
    doubled = 2 * plan_cost
    return {
        "price": price,
        "load": (term(average, plain(average.value)) * plan_cost / api).result(
            PERCENT, "average load × plan's $ per M tokens ÷ API's $ per M tokens"),
        "doubled": doubled.result(USD_CENTS, "plan's $ per M tokens at twice the GPU-hour price",
                                  shown=dollars(doubled.value, USD_CENTS)),
        "ratio": (term(made.per_million, f"{USD_CENTS.precise(made.per_million.value)} USD") / api).result(
            RATIO, "plan's $ per M tokens ÷ API's"),
        "source": API_SOURCE,
    }


def hours_in_a_month() -> Result:
    """8,760 hours in a year ÷ 12: constants, so nothing to record."""
    return (term(365) * term(24) / term(12)).result(COUNT, "hours in a year ÷ 12")


def stated(value: float, default: float, source: str) -> str:
    """Where an input came from: its source when it is the reference stack's own, else the reader."""
    return source if math.isclose(value, default) else "your input"


def section(stack: Stack) -> dict[str, object]:
    """Document 14's facts on one stack."""
    from ..specs.stack import REFERENCE
    made = plan(stack)
    headroom = stack.headroom
    return {
        "chain": made,
        "rate": Result(stack.traffic.requests_per_s, REQUESTS_PER_S, formula="requests per second at peak",
                       worked=REQUESTS_PER_S.show(stack.traffic.requests_per_s)),
        "target": given(headroom.target, PERCENT, "the busiest any resource is planned to be"),
        "spares": given(headroom.spares, COUNT, "spare replicas"),
        "node": given(headroom.node, COUNT, "cards per node"),
        "average_load": given(headroom.average_load, PERCENT, "average load over peak, a month"),
        "price": Result(stack.price.gpu_hour_usd, USD_CENTS, formula="one card on demand for an hour",
                        worked=dollars(stack.price.gpu_hour_usd, USD_CENTS)),
        "price_source": stated(stack.price.gpu_hour_usd, REFERENCE.price.gpu_hour_usd, PRICE_SOURCE),
        "utilisation_source": stated(stack.gpu_memory_utilization, REFERENCE.gpu_memory_utilization,
                                     f"the reference stack's, below {PINNED.name}'s default of {PINNED.gpu_memory_utilization:g}"),
        "context_limit": given(stack.context_limit, TOKENS, "the engine's --max-model-len"),
        "flags": (f"--max-model-len {stack.context_limit} --max-num-seqs {made.batch_cap.value} "
                  f"--max-num-batched-tokens {made.chunk_budget.value} --gpu-memory-utilization {plain(stack.gpu_memory_utilization)}"),
        "month_hours": hours_in_a_month(),
        "binding": made.binding,
        "ttft_verdict": "met" if made.ttft_met else "broken by prefill alone",
        "nodes_word": "node" if made.nodes.value == 1 else "nodes",
        "changes": sensitivities(stack),
        "lever": utilisation_lever(stack, made),
        "api": api_break_even(stack, made),
    }
