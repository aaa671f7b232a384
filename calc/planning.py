"""Document 14: from a traffic forecast to a purchase order.

Little's Law turns the forecast's rate into the requests resident at once; the cache path divides
them by what one replica's cache admits. Separately, the time model prices the card time the rate
asks for, prefill and decode each on its own; the larger count binds. Headroom, spares and the
purchasing unit turn that load into a fleet, and the price turns the fleet into a bill. Every
assumption is a named input of the stack (Traffic, Promise, Efficiency, Pricing, Headroom).

Conventions, stated once: the cache is sized at the median request (prompt p50 + output p50,
charged in whole blocks), since hundreds of residents average out; the promise is checked at its
own percentile (a p95 prompt's prefill against the p95 TTFT); a request is taken to stream at the
ITL the promise allows, since an engine batches up to its promise and slower streaming holds
each request longer.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import lru_cache

from . import kvcache, timing
from .precision import FP8
from .stack import Stack, Workload
from .units import COUNT, GFLOP, GIB_HELD, MS, MS_WHOLE, PERCENT, RATIO, SECONDS, TIMES, TOKENS, Result, Unit, given, grouped, plain

HOURS_PER_YEAR = 365 * 24
USD = Unit("USD", 1, "", 0)
USD_CENTS = Unit("USD", 1, "", 2, significant=2)
BILLIONS = Unit("billion", 1e9, "billion", 1)
CARDS = Unit("cards", 1, "cards", 2, significant=2)
PLAIN = Unit("number", 1, "", 1)
# Two average loads to show that the bill per token follows utilisation (an illustration).
QUIET_LOAD, BUSY_LOAD = 0.20, 0.50


def dollars(value: float, unit: Unit = USD) -> str:
    """Dollars in a worked line: the currency as a word after the number, so the line reads as arithmetic."""
    return unit.show(value) + " USD"


def ceiling(value: float) -> int:
    """Whole cards: a count a hair over a whole number from rounding in the float is that number."""
    return math.ceil(round(value, 9))


def time_in_system(stack: Stack) -> Result:
    """TTFT (the time model's prefill of the median prompt) + the rest of the median output at the
    promised inter-token latency."""
    traffic, promise = stack.traffic, stack.promise
    ttft = timing.prefill_time(stack, traffic.prompt_p50)
    value = ttft.value + (traffic.output_p50 - 1) * promise.itl_p95_s
    return Result(value, SECONDS, formula="TTFT + (output p50 − 1) × ITL promised",
                  worked=(f"{MS.precise(ttft.value)} + {grouped(traffic.output_p50 - 1)} × "
                          f"{MS.precise(promise.itl_p95_s)} = {SECONDS.show(value)}"))


def resident_requests(rate: float, in_system: Result) -> Result:
    """Little's Law: requests in the system = arrival rate × time each spends there."""
    value = rate * in_system.value
    return Result(value, COUNT, formula="arrival rate × time in system (Little's Law)",
                  worked=f"{plain(rate)} /s × {in_system.operand} = {PLAIN.precise(value)}")


def card_count(demand: float, per_card: float, target: float, what: str, shown: str) -> Result:
    value = ceiling(demand / (per_card * target))
    return Result(value, COUNT, formula=f"⌈{what} ÷ (per card × target)⌉",
                  worked=f"⌈{shown} ÷ {plain(target)}⌉ = ⌈{PLAIN.precise(demand / (per_card * target))}⌉ = {value}")


def in_cards(share: Result) -> Result:
    """Card-seconds per second, which is a number of cards kept busy."""
    arithmetic = share.worked.rpartition(" = ")[0]
    return Result(share.value, CARDS, formula=share.formula, worked=f"{arithmetic} = {CARDS.show(share.value)}")


def median_requests_per_replica(stack: Stack) -> tuple[Result, Result, Result]:
    """A median request (prompt p50 + output p50) in whole blocks, its cache, and how many of them one
    replica's KV budget admits: what Little's Law's residents are set against."""
    held = stack.model.tokens_cached(stack.traffic.prompt_p50 + stack.traffic.output_p50)
    ladder = kvcache.ladder(stack)
    tokens = kvcache.tokens_in_blocks(held, stack.block_size)
    return (tokens, kvcache.bytes_paged(ladder.per_token, held, stack.block_size),
            kvcache.users_by_tokens(ladder.token_capacity, tokens))


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

    in_system: Result
    residents: Result
    request_tokens: Result
    per_request: Result
    resident_cache: Result
    per_replica: Result
    memory_gpus: Result
    batch: Result
    step: timing.DecodeStep
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
    ttft_p95: Result
    ttft_met: bool
    itl_met: bool


@lru_cache(maxsize=64)
def plan(stack: Stack) -> CapacityPlan:
    traffic, headroom = stack.traffic, stack.headroom
    rate, target = traffic.requests_per_s, headroom.target
    in_system = time_in_system(stack)
    residents = resident_requests(rate, in_system)
    tokens, per_request, per_replica = median_requests_per_replica(stack)
    resident_cache = Result(residents.value * per_request.value, GIB_HELD, formula="resident requests × cache per request",
                            worked=f"{PLAIN.precise(residents.value)} × {per_request.operand} = "
                                   f"{GIB_HELD.show(residents.value * per_request.value)}")
    memory = card_count(residents.value, per_replica.value, target, "resident requests",
                        f"({PLAIN.precise(residents.value)} ÷ {grouped(per_replica.value)})")
    memory = replace(memory, formula="⌈resident requests ÷ (requests one replica's cache admits × target)⌉")

    context = traffic.prompt_p50 + traffic.output_p50 // 2
    batch = batch_within_promise(stack, int(per_replica.value), context)
    step = timing.decode_step(stack, max(batch, 1), context)
    prefill = timing.prefill_time(stack, traffic.prompt_p50)
    from .facts import traffic_load
    load_cards = traffic_load(replace(stack, workload=Workload(traffic.prompt_p50, traffic.output_p50, batch)),
                              prefill, step)
    prefill_cards, decode_cards = (in_cards(load_cards["prefill_cards"]), in_cards(load_cards["decode_cards"]))
    busy = prefill_cards.value + decode_cards.value
    busy_cards = Result(busy, CARDS, formula="prefill card-seconds per second + decode card-seconds per second",
                        worked=f"{prefill_cards.operand} + {decode_cards.operand} = {CARDS.show(busy)}")
    per_token_ops = step.ops.value / step.read.batch
    flop_value = rate * (traffic.output_p50 - 1) * per_token_ops / step.compute.value
    decode_as_flops = Result(flop_value, CARDS, formula="requests per second × decode tokens × operations per token ÷ achieved compute",
                             worked=(f"{plain(rate)} × {grouped(traffic.output_p50 - 1)} × "
                                     f"{GFLOP.precise(per_token_ops)} ÷ {step.compute.operand} = {CARDS.show(flop_value)}"))
    understated = Result(decode_cards.value / flop_value, RATIO, formula="decode card time ÷ decode costed as operations",
                         worked=f"{decode_cards.operand} ÷ {decode_as_flops.operand} = {RATIO.show(decode_cards.value / flop_value)}")
    compute = card_count(busy, 1, target, "busy cards", PLAIN.precise(busy))
    compute = replace(compute, formula="⌈(prefill + decode card-seconds per second) ÷ target⌉")

    load_value = max(memory.value, compute.value)
    binding = ("both paths, equally" if memory.value == compute.value
               else "the cache (memory)" if memory.value > compute.value else "card time (compute)")
    load = Result(load_value, COUNT, formula="the larger of the two paths",
                  worked=(f"max({grouped(memory.value)} cards, {grouped(compute.value)} cards) = "
                          f"{grouped(load_value)} cards"))
    fleet_value = load_value + headroom.spares
    fleet = Result(fleet_value, COUNT, formula="load + spares",
                   worked=f"{grouped(load_value)} + {headroom.spares} = {grouped(fleet_value)}")
    nodes_value = ceiling(fleet_value / headroom.node)
    nodes = Result(nodes_value, COUNT, formula="⌈fleet ÷ cards per node⌉",
                   worked=f"⌈{grouped(fleet_value)} ÷ {headroom.node}⌉ = {grouped(nodes_value)}")
    bought_value = nodes_value * headroom.node
    bought = Result(bought_value, COUNT, formula="nodes × cards per node",
                    worked=f"{grouped(nodes_value)} × {headroom.node} = {grouped(bought_value)}")
    price = stack.price.gpu_hour_usd
    hour = bought_value * price
    cost_hour = Result(hour, USD_CENTS, formula="cards bought × price per GPU-hour",
                       worked=f"{grouped(bought_value)} × {plain(price)} USD = {dollars(hour, USD_CENTS)}")
    month_hours = HOURS_PER_YEAR / 12
    month = hour * month_hours
    cost_month = Result(month, USD, formula="per hour × hours in a month (8,760 ÷ 12)",
                        worked=f"{USD_CENTS.precise(hour, 9)} USD × {grouped(month_hours)} = {dollars(month)}")
    request = traffic.prompt_p50 + traffic.output_p50
    tokens_month_value = rate * headroom.average_load * request * month_hours * 3600
    tokens_month = Result(tokens_month_value, BILLIONS,
                          formula="rate × average load × tokens per request × seconds in a month",
                          worked=(f"{plain(rate)} × {plain(headroom.average_load)} × "
                                  f"{grouped(request)} × {grouped(month_hours * 3600)} = {grouped(tokens_month_value)} tokens"))
    per_million_value = month / tokens_month_value * 1e6
    per_million = Result(per_million_value, USD_CENTS, formula="monthly cost ÷ tokens a month × 1,000,000",
                         worked=f"{USD_CENTS.precise(month, 9)} USD ÷ {grouped(tokens_month_value)} tokens × 1,000,000 = "
                                f"{dollars(per_million_value, USD_CENTS)}")
    ttft_p95 = timing.prefill_time(stack, traffic.prompt_p95)
    return CapacityPlan(
        in_system=in_system, residents=residents, request_tokens=tokens, per_request=per_request,
        resident_cache=resident_cache, per_replica=per_replica, memory_gpus=memory,
        batch=given(batch, COUNT, "sequences decoding on one card within the ITL promise"), step=step,
        prefill=prefill, prefill_cards=prefill_cards, decode_cards=decode_cards, busy_cards=busy_cards,
        decode_as_flops=decode_as_flops, understated=understated,
        compute_gpus=compute, load=load, binding=binding, fleet=fleet, nodes=nodes, bought=bought,
        cost_hour=cost_hour, cost_month=cost_month, tokens_month=tokens_month, per_million=per_million,
        ttft_p95=ttft_p95, ttft_met=ttft_p95.value <= stack.promise.ttft_p95_s, itl_met=batch >= 1,
    )


@dataclass(frozen=True)
class Sensitivity:
    """One change to the forecast or the stack, and the fleet it would need."""

    change: str
    load: Result
    binding: str
    fleet: Result


def sensitivity(change: str, stack: Stack) -> Sensitivity:
    moved = plan(stack)
    return Sensitivity(change, moved.load, moved.binding, moved.fleet)


def sensitivities(stack: Stack) -> dict[str, Sensitivity]:
    """What would change the answer: the two or three moves a forecast or a promise plausibly makes."""
    traffic, promise = stack.traffic, stack.promise
    return {
        "long_prompts": sensitivity(f"median prompt reaches today's p95 ({grouped(traffic.prompt_p95)} tokens)",
                                    replace(stack, traffic=replace(traffic, prompt_p50=traffic.prompt_p95))),
        "double_rate": sensitivity(f"peak rate doubles ({grouped(2 * traffic.requests_per_s, 1).removesuffix('.0')} req/s)",
                                   replace(stack, traffic=replace(traffic, requests_per_s=2 * traffic.requests_per_s))),
        "looser_itl": sensitivity(f"ITL promise doubles ({MS_WHOLE.show(2 * promise.itl_p95_s)})",
                                  replace(stack, promise=replace(promise, itl_p95_s=2 * promise.itl_p95_s))),
        "fp8_cache": sensitivity("an fp8 KV cache", replace(stack, kv_precision=FP8)),
    }


def utilisation_lever(stack: Stack, made: CapacityPlan) -> dict[str, Result]:
    """The same fixed bill spread over the tokens of a quiet month and of a busy one."""
    quiet = made.per_million.value * stack.headroom.average_load / QUIET_LOAD
    busy = made.per_million.value * stack.headroom.average_load / BUSY_LOAD
    return {
        "quiet": given(QUIET_LOAD, PERCENT, "average load, a quiet month"),
        "busy": given(BUSY_LOAD, PERCENT, "average load, a busy month"),
        "quiet_per_million": Result(quiet, USD_CENTS, formula="$ per M tokens × average load ÷ quiet load",
                                    worked=f"{made.per_million.operand} USD × "
                                           f"{plain(stack.headroom.average_load)} ÷ {plain(QUIET_LOAD)} = "
                                           f"{dollars(quiet, USD_CENTS)}"),
        "busy_per_million": Result(busy, USD_CENTS, formula="$ per M tokens × average load ÷ busy load",
                                   worked=f"{made.per_million.operand} USD × "
                                          f"{plain(stack.headroom.average_load)} ÷ {plain(BUSY_LOAD)} = "
                                          f"{dollars(busy, USD_CENTS)}"),
        "gain": Result(BUSY_LOAD / QUIET_LOAD, RATIO, formula="busy load ÷ quiet load",
                       worked=f"{PERCENT.show(BUSY_LOAD)} ÷ {PERCENT.show(QUIET_LOAD)} = {RATIO.show(BUSY_LOAD / QUIET_LOAD)}"),
    }


RATE_STEPS = 32


def gpus_against_rate(stack: Stack) -> dict:
    """GPUs each path needs, and the fleet, against request rate, up to twice the forecast; with the
    forecast marked. Both paths grow in proportion to the rate (the time in system, the batch and
    the step do not depend on it), so one plan gives every point. Curves, and the rows of the
    chart's table."""
    made, traffic, headroom = plan(stack), stack.traffic, stack.headroom
    top = 2 * traffic.requests_per_s
    rates = [top * i / RATE_STEPS for i in range(1, RATE_STEPS + 1)]
    per_request_cards = made.busy_cards.value / traffic.requests_per_s
    memory = [ceiling(r * made.in_system.value / (made.per_replica.value * headroom.target)) for r in rates]
    compute = [ceiling(r * per_request_cards / headroom.target) for r in rates]
    fleet = [max(m, c) + headroom.spares for m, c in zip(memory, compute)]
    curves = [
        {"name": "memory path: resident requests ÷ what one cache admits", "x": rates, "y": memory},
        {"name": "compute path: prefill + decode card time", "x": rates, "y": compute},
        {"name": "the plan: the larger, plus spares", "x": rates, "y": fleet},
        {"name": "the forecast", "x": [traffic.requests_per_s] * 2, "y": [0, max(fleet)]},
    ]
    rows = [[grouped(r, 1), grouped(m), grouped(c), grouped(f)] for r, m, c, f in zip(rates, memory, compute, fleet)]
    return {"curves": curves, "rows": rows}


def section(stack: Stack) -> dict[str, object]:
    """Document 14's facts on one stack."""
    made = plan(stack)
    headroom = stack.headroom
    return {
        "chain": made,
        "rate": given(stack.traffic.requests_per_s, COUNT, "requests per second at peak"),
        "target": given(headroom.target, PERCENT, "the busiest any resource is planned to be"),
        "spares": given(headroom.spares, COUNT, "spare replicas"),
        "node": given(headroom.node, COUNT, "cards per node"),
        "average_load": given(headroom.average_load, PERCENT, "average load over peak, a month"),
        "price": Result(stack.price.gpu_hour_usd, USD_CENTS, formula="one card on demand for an hour",
                        worked=dollars(stack.price.gpu_hour_usd, USD_CENTS)),
        "month_hours": Result(HOURS_PER_YEAR / 12, COUNT, formula="hours in a year ÷ 12",
                              worked=f"365 × 24 ÷ 12 = {grouped(HOURS_PER_YEAR / 12)}"),
        "binding": made.binding,
        "ttft_verdict": "met" if made.ttft_met else "broken by prefill alone",
        "changes": sensitivities(stack),
        "lever": utilisation_lever(stack, made),
    }
