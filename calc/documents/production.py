"""Document 15: running the reference stack in production, from the simulated stream (calc.engine.simulation).

The knee, goodput and the GPUs the peak load needs, read off the simulation; cost per million
generated tokens and what moves it; how long a cold replica takes to serve; and the published
claims the document sets beside its own derivations, each with its source.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Callable, Iterator, Mapping

from ..engine import cacheops, simulation, timing
from . import planning
from ..specs.precision import FP8, INT4
from ..model.weights import weight_bytes
from ..engine.launch import VERIFY_ARGS
from ..engine.simulation import RATE, Outcome, Sweep, closed_form, sweep, sweep_until
from ..specs.inputs import CacheOps, Stream
from ..specs.stack import Stack
from ..engine.timing import prefill_time
from ..core.arith import field, made_of, maximum, minimum, term
from ..core.units import (BYTES, COUNT, GB, MS, PERCENT, RATIO, SECONDS, TOKENS, TOKENS_PER_S, Result, Unit, given, grouped,
    plain)

USD = Unit("USD", 1, "USD", 2)
USD_PER_M = Unit("USD/M", 1, "USD per million tokens", 2, significant=2)  # a low price still shows its digits
REQUESTS = Unit("requests", 1, "requests", 1)
RATIO_FINE2 = Unit("ratio", 1, "×", 2, spaced=False)
GB_PER_S_SHOWN = Unit("GB/s", GB, "GB/s", 1)
SECONDS_ROUND = Unit("s", 1, "s", 0)  # cold-start times rest on two assumptions: whole seconds at most
HOUR = 3_600
MILLION = 1_000_000

# Average utilisation, the share of paid GPU-hours spent serving at the knee: two example fleets,
# a half-idle deployment sized for its peak and a consolidated one (assumptions, for the lever).
UTILISATION_LOW = 0.20
UTILISATION_HIGH = 0.50


@dataclass(frozen=True)
class Claim:
    """A figure a paper published, with where."""

    value: Result
    said: str
    source: str


CLAIMS = {
    "distserve_rate": Claim(given(7.4, RATIO), "DistServe serves up to 7.4× more requests within its SLOs than "
                            "colocated systems (Zhong et al., OSDI 2024)", "https://arxiv.org/abs/2401.09670"),
    "distserve_slo": Claim(given(12.6, RATIO), "or meets SLOs 12.6× tighter", "https://arxiv.org/abs/2401.09670"),
    "splitwise_throughput": Claim(given(1.4, RATIO), "Splitwise: up to 1.4× the throughput at 20% lower cost, splitting "
                                  "prompt and token phases across machines (Patel et al., ISCA 2024)",
                                  "https://arxiv.org/abs/2311.18677"),
    "splitwise_cost": Claim(given(0.20, PERCENT), "20% lower cost", "https://arxiv.org/abs/2311.18677"),
    "sarathi_mistral": Claim(given(2.6, RATIO), "Sarathi-Serve: 2.6× the serving capacity of vLLM for Mistral-7B on "
                             "one A100 within its latency SLO, from chunked prefills and stall-free batching "
                             "(Agrawal et al., OSDI 2024)", "https://arxiv.org/abs/2403.02310"),
}


def _outcome(o: Outcome, promise) -> dict[str, Result]:
    """One simulated rate, its figures as Results. The counts the simulation measured stand as givens,
    the inputs of the figures made from them."""
    window = given(o.span, SECONDS, "the measured window's length")
    good = given(o.good, COUNT, "requests in the measured window that met both SLOs")
    measured = given(o.measured, COUNT, "requests measured")
    arrival = given(o.arrival_rate, RATE, "served requests arriving in the measured window ÷ its length")
    staying = given(o.mean_time_in_system, SECONDS, "their mean time in the system")
    little = term(arrival, RATE.precise(o.arrival_rate)) * term(staying, SECONDS.precise(o.mean_time_in_system))
    return {
        "rate": given(o.rate, RATE, "request rate"),
        "ttft_p50": given(o.ttft["p50"], SECONDS, "TTFT p50"),
        "ttft_p95": given(o.ttft["p95"], SECONDS, "TTFT p95"),
        "ttft_p99": given(o.ttft["p99"], SECONDS, "TTFT p99"),
        "itl_p50": given(o.itl["p50"], MS, "ITL p50"),
        "itl_p95": given(o.itl["p95"], MS, "ITL p95"),
        "itl_p99": given(o.itl["p99"], MS, "ITL p99"),
        "throughput": Result(o.throughput, TOKENS_PER_S, formula="tokens generated in the measured window ÷ its length",
                             worked=(f"{grouped(round(o.throughput * o.span))} tokens ÷ {SECONDS.precise(o.span)} = "
                                     f"{TOKENS_PER_S.show(o.throughput)}"),
                             inputs=made_of(given(round(o.throughput * o.span), TOKENS, "tokens generated in the measured window"),
                                            window)),
        "goodput": Result(o.goodput_tokens, TOKENS_PER_S,
                          formula="tokens, in the measured window, of requests that met both SLOs ÷ its length",
                          worked=(f"{grouped(round(o.goodput_tokens * o.span))} tokens ÷ {SECONDS.precise(o.span)} = "
                                  f"{TOKENS_PER_S.show(o.goodput_tokens)}"),
                          inputs=made_of(given(round(o.goodput_tokens * o.span), TOKENS,
                                               "tokens, in the measured window, of requests that met both SLOs"), window)),
        "goodput_requests": Result(o.goodput_requests, RATE, formula="requests that met both SLOs ÷ the window's length",
                                   worked=f"{o.good} ÷ {SECONDS.precise(o.span)} = {RATE.show(o.goodput_requests)}",
                                   inputs=made_of(good, window)),
        "met": Result(o.met, PERCENT, formula="requests that met both SLOs ÷ requests measured",
                      worked=f"{o.good} ÷ {o.measured} = {PERCENT.show(o.met)}", inputs=made_of(good, measured)),
        "preemptions": given(o.preemptions, COUNT, "preemptions"),
        "offered": (term(measured, grouped(o.measured)) / term(window, SECONDS.precise(o.span))).result(
            RATE, "requests arriving in the measured window ÷ its length"),
        "refused": given(o.refused, COUNT, "requests in the measured window refused, over the context limit"),
        "in_system": given(o.mean_in_system, REQUESTS, "requests in the system, time-averaged step by step over the measured window"),
        "little": little.result(REQUESTS, "λ × W (Little's Law): served requests arriving in the window ÷ its length × "
                                          "their mean time in the system"),
    }



# Little's Law's two sides over the measured window agree (within about 1%) wherever the queue is
# steady; past saturation the requests arriving late wait long after the window ends, so λ × W
# outgrows the time-averaged L. A rate whose λ × W exceeds L by more than this is one the replica
# cannot carry, whatever the latency promise says.
STEADY = 1.05


def over_limits(promise) -> dict[str, Callable[[Outcome], float]]:
    """What the knee watches at each rate, each as a share of its limit (1 reaches it): p95 TTFT and
    p95 ITL against their SLOs, and λ × W ÷ L against STEADY."""
    return {
        "TTFT": lambda o: o.ttft["p95"] / promise.ttft_p95_s,
        "ITL": lambda o: o.itl["p95"] / promise.itl_p95_s,
        "queue": lambda o: o.arrival_rate * o.mean_time_in_system / max(o.mean_in_system, 1e-9) / STEADY,
    }


def knee(run: Sweep, promise) -> dict[str, Result]:
    """The lowest rate at which a p95 reaches its SLO (TTFT and ITL separately), or at which the queue
    stops being steady; the knee is the lowest of the three. `binds` says which, in words."""
    over = over_limits(promise)
    promised = {"TTFT": made_of(field(promise, "ttft_p95_s", SECONDS, "TTFT promise, p95")),
                "ITL": made_of(field(promise, "itl_p95_s", MS, "ITL promise, p95")), "queue": ()}
    limits = {
        "TTFT": ("p95 TTFT", SECONDS.show(promise.ttft_p95_s), "p95 TTFT leaves its SLO", run.crossing(over["TTFT"])),
        "ITL": ("p95 ITL", MS.show(promise.itl_p95_s), "p95 ITL leaves its SLO", run.crossing(over["ITL"])),
        "queue": ("λ × W ÷ L", f"{STEADY:.2f}", "the queue stops being steady (λ × W outgrows L): the replica falls behind",
                  run.crossing(over["queue"])),
    }
    last = run.outcomes[-1].rate

    def simulated(rate: float) -> Result:
        return given(rate, RATE, "request rate")

    def crossing(found, subject: str, limit: str, scale: float | None = None, limited: tuple[Result, ...] = ()) -> Result:
        """`scale`: when given, the worked line shows subject itself (q × scale) against the limit,
        for a limit that is a pure number, rather than the ratio q. `limited`: the promise the limit is."""
        if found is None:
            return Result(last, RATE, formula=f"{subject} stays within {limit} at every rate simulated",
                          worked=f"{subject} within {limit} up to {RATE.show(last)}, the fastest rate simulated",
                          inputs=made_of(*limited, simulated(last)))
        low, low_ratio, high, high_ratio = found
        if low == high:
            return Result(low, RATE, formula=f"{subject} is over {limit} at the slowest rate simulated",
                          worked=f"{subject} over {limit} already at {RATE.show(low)}, the slowest rate simulated",
                          inputs=made_of(*limited, simulated(low)))
        between = made_of(simulated(low), simulated(high), *limited)
        value = low + (high - low) * (1 - low_ratio) / (high_ratio - low_ratio)
        rates = f"{RATE.precise(low, 7)} + ({RATE.precise(high, 7)} − {RATE.precise(low, 7)}) × "
        if scale is not None:
            return Result(value, RATE, formula=(f"the rate at which {subject} reaches {limit}, interpolated between the two "
                                                f"rates simulated either side (r₁, r₂), where {subject} is m₁ and m₂: "
                                                f"r₁ + (r₂ − r₁) × ({limit} − m₁) ÷ (m₂ − m₁)"),
                          worked=(rates + f"({limit} − {low_ratio * scale:.6f}) ÷ ({high_ratio * scale:.6f} − "
                                          f"{low_ratio * scale:.6f}) = {RATE.show(value)}"), inputs=between)
        return Result(value, RATE, formula=(f"the rate at which {subject} reaches {limit}, interpolated between the two "
                                            f"rates simulated either side (r₁, r₂), where {subject} ÷ {limit} is q₁ and q₂: "
                                            f"r₁ + (r₂ − r₁) × (1 − q₁) ÷ (q₂ − q₁)"),
                      worked=rates + f"(1 − {low_ratio:.6f}) ÷ ({high_ratio:.6f} − {low_ratio:.6f}) = {RATE.show(value)}",
                      inputs=between)

    found = {name: crossing(reached, subject, limit, STEADY if name == "queue" else None, promised[name])
             for name, (subject, limit, _, reached) in limits.items()}
    lowest = min(found, key=lambda name: found[name].value)
    reached = limits[lowest][3]
    if all(limit[3] is None for limit in limits.values()):
        binds = "no SLO is reached and the queue stays steady up to the fastest rate simulated (the knee is beyond it)"
    elif reached is not None and reached[0] == reached[2]:
        binds = f"{limits[lowest][2]} already at the slowest rate simulated (the knee is lower still)"
    else:
        binds = limits[lowest][2]
    return {
        "ttft": found["TTFT"],
        "itl": found["ITL"],
        "queue": found["queue"],
        "steady": given(STEADY - 1, PERCENT, "how far λ × W may exceed the time-averaged L before the queue counts as growing"),
        "rate": minimum(*(term(found[name]) for name in limits)).result(RATE, "the lowest of the three crossings"),
        "binds": binds,
    }


def saturation_cost(stack: Stack, stream: Stream) -> Result:
    """Dollars per million generated tokens for a card kept busy at the closed-form saturation rate."""
    closed = closed_form(stack, stream)
    return _per_million(stack, closed.saturation, closed.mean_output).result(
        USD_PER_M, "$ per GPU-hour ÷ (saturation rate × mean output × 3,600) × 1,000,000")


def _price(stack: Stack) -> Result:
    return field(stack.price, "gpu_hour_usd", USD, "$ per GPU-hour (an assumption)")


def _per_million(stack: Stack, rate: Result, tokens: Result, tokens_shown: str | None = None):
    """$ per GPU-hour ÷ (rate × tokens a request × 3,600 s) × 1,000,000: a card's hour over the tokens it makes."""
    price = _price(stack)
    return (term(price, USD.show(price.value)) / (term(rate) * term(tokens, tokens_shown) * term(HOUR, "3,600 s"))
            * term(MILLION, "1,000,000"))


def levers(stack: Stack, stream: Stream, base: Result) -> dict[str, Result]:
    """Cost per million tokens at saturation as one thing changes at a time, and each one's gain."""
    def gain(name: str, changed: Stack) -> dict[str, Result]:
        cost = saturation_cost(changed, stream)
        return {"cost": cost, "gain": (term(base) / term(cost)).result(RATIO_FINE2, f"reference ÷ {name}")}
    traffic = stack.traffic
    return {
        "fp8_weights": gain("fp8 weights", replace(stack, weight_precision=FP8)),
        "fp8_cache": gain("fp8 cache", replace(stack, kv_precision=FP8)),
        "longer_output": gain("outputs twice as long",
                              replace(stack, traffic=replace(traffic, output_p50=2 * traffic.output_p50,
                                                             output_long=2 * traffic.output_long))),
    }



def document_14s_terms(stack: Stack, stream: Stream, knee_rate: Result) -> dict[str, Result]:
    """This page's knee priced as document 14 prices a fleet: every token (prompt and output), the
    month's average load, N+1 spares, and the cards bought as whole nodes. The knee is already where
    queueing breaks the promise, so document 14's planning target (its stand-in for that limit) is
    not applied on top."""
    closed = closed_form(stack, stream)
    headroom = stack.headroom
    tokens = _mean_tokens(closed)
    peak = stack.traffic.requests_per_s
    replicas = max(1, math.ceil(peak / knee_rate.value - 1e-9))
    fleet = replicas + headroom.spares
    peak_rate = field(stack.traffic, "requests_per_s", RATE, "peak request rate the fleet must carry")
    gpus = Result(fleet, COUNT, formula="⌈peak rate ÷ knee⌉ + spares",
                  worked=f"⌈{RATE.precise(peak)} ÷ {knee_rate.operand}⌉ + {headroom.spares} = {replicas} + {headroom.spares} = {fleet}",
                  inputs=made_of(peak_rate, knee_rate, field(headroom, "spares", COUNT, "spare replicas")))
    nodes, bought = planning.whole_nodes(gpus, field(headroom, "node", COUNT, "cards per node"))
    price = _price(stack)
    load = field(headroom, "average_load", PERCENT, "average load over peak, a month")
    served = (term(peak_rate, RATE.precise(peak)) * term(load, f"{headroom.average_load:.2f}")
              * term(tokens, TOKENS.precise(tokens.value)) * term(HOUR, "3,600 s"))
    average = term(bought, grouped(bought.value)) * term(price, USD.show(price.value)) / served * term(MILLION, "1,000,000")
    return {
        "tokens": tokens,
        "at_knee": _per_million(stack, knee_rate, tokens, TOKENS.precise(tokens.value)).result(
            USD_PER_M, "$ per GPU-hour ÷ (knee × (mean prompt + mean output) × 3,600) × 1,000,000"),
        "gpus": gpus,
        "nodes": nodes,
        "bought": bought,
        "average": average.result(
            USD_PER_M, "cards bought × $ per GPU-hour ÷ (peak rate × average load × tokens a request × 3,600) × 1,000,000"),
    }


def _mean_tokens(closed) -> Result:
    return (term(closed.mean_prompt) + term(closed.mean_output)).result(TOKENS, "mean prompt + mean output")


def decode_alone(stack: Stack, stream: Stream) -> Result:
    """Tokens a second if the card only decoded, at the batch the cache admits: batch ÷ its step."""
    closed = closed_form(stack, stream)
    batch = closed.batch_at_saturation
    return (term(batch, COUNT.number(batch.value, 2)) / term(closed.step_at_saturation)).result(
        TOKENS_PER_S, "batch the cache admits ÷ its step time")


def cache_share_of_reads(stack: Stack, stream: Stream) -> dict[str, object]:
    """One decode step at the batch the pool admits at saturation (whole sequences), each holding the
    stream's mean tokens over its life (mean prompt + half the mean output): the share of its read
    that is cache, and the batch from which the cache is half of every read."""
    closed = closed_form(stack, stream)
    held = round(closed.mean_prompt.value + closed.mean_output.value / 2)
    batch = max(1, int(closed.batch_at_saturation.value))
    step = timing.decode_step(stack, batch, held)
    sequences = Result(batch, COUNT, formula="whole sequences the pool admits at saturation", worked=COUNT.show(batch),
                       inputs=made_of(closed.batch_at_saturation))
    tokens = Result(held, TOKENS, formula="mean prompt + half the mean output, rounded",
                    worked=f"{closed.mean_prompt.operand} + {closed.mean_output.operand} ÷ 2 = {TOKENS.show(held)}",
                    inputs=made_of(closed.mean_prompt, closed.mean_output))
    per_token = (term(step.read.cache) / (term(sequences) * term(tokens, grouped(held)))).result(
        BYTES, "cache bytes read ÷ (sequences × tokens held)")
    weights = step.read.weights
    return {
        "batch": sequences,
        "held": tokens,
        "step": step,
        "half": (term(weights, f"{grouped(weights.value)} B") / (term(tokens, grouped(held))
                                                                 * term(per_token, f"{grouped(per_token.value)} B"))).result(
            COUNT, "weights read ÷ (tokens held × cache bytes per token)"),
    }


# Fireworks' serverless discounts (https://docs.fireworks.ai/guides/prompt-caching and
# https://docs.fireworks.ai/serverless/overview): cached prompt tokens cost 50% less by default (the
# exact discount varies by model), and batch inference is billed at 50% of the serverless rate.
CACHED_INPUT_DISCOUNT = 0.5
CACHED_SOURCE = "docs.fireworks.ai/guides/prompt-caching: cached prompt tokens, 50% off by default, varying by model"
BATCH_DISCOUNT = 0.5
BATCH_SOURCE = "docs.fireworks.ai/serverless/overview: batch inference at 50% of serverless rates, input and output"


def against_an_api(stack: Stack, stream: Stream, cache: CacheOps, fleet_average: Result) -> dict[str, Result]:
    """The monthly check: the fleet's bill per million tokens (document 14's terms: every token, the
    month's average load, whole nodes) against a managed API's price for the same tokens, and the
    average load at which the two are equal (cost per token divides by the load). The API bills
    the shared prefix a hit finds cached at a discount (document 10's prefix and hit rate, `cache`), and
    batch work at half its price."""
    api = planning.API_PER_MILLION
    load = field(stack.headroom, "average_load", PERCENT, "average load over peak, a month")

    def even_load(price: Result, shown: str, against: str) -> Result:
        """The average load at which the fleet's bill per token falls to `price`."""
        return (term(load, f"{load.value:.2f}") * term(fleet_average) / term(price, shown)).result(
            PERCENT, f"average load × the fleet's $ per million tokens ÷ {against}")

    price = given(api, USD_PER_M, f"a managed API's price per million tokens, prompt and output alike ({planning.API_SOURCE})")
    listed = term(price, USD_PER_M.show(api))
    closed = closed_form(stack, stream)
    tokens = _mean_tokens(closed)
    hit_rate = field(cache, "hit_rate", PERCENT, "share of requests that find the prefix cached")
    reused = cacheops.reusable_tokens(cache.prefix, round(closed.mean_prompt.value), stack.block_size)
    share = term(hit_rate, plain(hit_rate.value)) * term(reused) / term(tokens, TOKENS.precise(tokens.value))
    cached_share = share.result(PERCENT, "hit rate × prefix tokens a hit reuses ÷ (mean prompt + mean output)",
                                shown=f"{PERCENT.show(share.value)} of the tokens")
    cached_discount = given(CACHED_INPUT_DISCOUNT, PERCENT, CACHED_SOURCE)
    cached_price = (listed * (1 - term(cached_discount, plain(CACHED_INPUT_DISCOUNT))
                              * term(cached_share, plain(round(cached_share.value, 4))))).result(
        USD_PER_M, "API price × (1 − cached discount × cached share)")
    batch_discount = given(BATCH_DISCOUNT, PERCENT, BATCH_SOURCE)
    batch_price = (listed * (1 - term(batch_discount, plain(BATCH_DISCOUNT)))).result(
        USD_PER_M, "API price × (1 − batch discount)")
    return {
        "price": price,
        "ratio": (term(fleet_average) / listed).result(RATIO_FINE2, "the fleet's $ per million tokens ÷ the API's"),
        "even_load": even_load(price, USD_PER_M.show(api), "the API's"),
        "cached_discount": cached_discount,
        "cached_share": cached_share,
        "cached_price": cached_price,
        "cached_even_load": even_load(cached_price, USD_PER_M.precise(cached_price.value), "the API's with the cached discount"),
        "batch_discount": batch_discount,
        "batch_price": batch_price,
        "batch_even_load": even_load(batch_price, USD_PER_M.show(batch_price.value), "the API's batch price"),
    }


SEEDS = 5  # the reference seed and the next four: how much the knee moves with the draw


def knee_spread(stack: Stack, stream: Stream) -> dict[str, Result]:
    """The knee for SEEDS seeds from the stream's own: the lowest and the highest."""
    over = over_limits(stack.promise).values()
    reached = lambda outcome: any(ratio(outcome) >= 1 for ratio in over)  # noqa: E731
    # The knee is the lowest crossing, found between the first rate that reaches a limit and the one
    # below it, so another seed's sweep can stop there.
    knees = [knee(sweep(stack, stream) if k == 0 else sweep_until(stack, replace(stream, seed=stream.seed + k), reached),
                  stack.promise)["rate"]
             for k in range(SEEDS)]
    listed = [term(k, RATE.show(k.value)) for k in knees]
    return {
        "seeds": given(SEEDS, COUNT, "seeds simulated"),
        "low": minimum(*listed).result(RATE, "the lowest knee over the seeds"),
        "high": maximum(*listed).result(RATE, "the highest knee over the seeds"),
    }


# vllm bench serve's defaults (https://docs.vllm.ai/en/latest/cli/bench/serve/; vllm/benchmarks/serve.py add_cli_args)
BENCH_PROMPTS = 1_000
BENCH_PERCENTILE = 99
BENCH_SOURCE = ("https://docs.vllm.ai/en/latest/cli/bench/serve/ (--num-prompts default 1000, --dataset-name default "
                "random); vllm/benchmarks/serve.py (--metric-percentiles default \"99\")")


def utilisation_lever(at_knee: Result) -> dict[str, Result]:
    """A GPU-hour costs the same busy or idle: cost per token divides by the share of hours busy."""
    low_share = given(UTILISATION_LOW, PERCENT, "average utilisation, a half-idle fleet (an example)")
    high_share = given(UTILISATION_HIGH, PERCENT, "average utilisation, a consolidated fleet (an example)")
    low = (term(at_knee) / term(low_share, f"{UTILISATION_LOW:.2f}")).result(USD_PER_M, "cost at the knee ÷ average utilisation")
    high = (term(at_knee) / term(high_share, f"{UTILISATION_HIGH:.2f}")).result(USD_PER_M, "cost at the knee ÷ average utilisation")
    return {
        "low_share": low_share,
        "high_share": high_share,
        "low": low,
        "high": high,
        # the line divides the shares; the value is the two costs' ratio, equal but for the last bit
        "gain": Result(low.value / high.value, RATIO, formula="utilisation after ÷ before",
                       worked=f"{UTILISATION_HIGH:.2f} ÷ {UTILISATION_LOW:.2f} = {RATIO.show(low.value / high.value)}",
                       inputs=made_of(high_share, low_share)),
    }


def cold_start(stack: Stack, stream: Stream) -> dict[str, Result]:
    """Weights read from storage at the named rate, then the engine's start-up (profiling, compiling,
    CUDA graph capture), a named assumption."""
    rate = stream.storage_gb_per_s * GB
    held = weight_bytes(stack.model, stack.weight_precision)
    start = stream.engine_start_s
    quarter = weight_bytes(stack.model, INT4)
    storage = given(rate, GB_PER_S_SHOWN, "storage read rate (an assumption)")
    engine = given(start, SECONDS, "engine start-up (an assumption)")
    read_rate = term(storage, GB_PER_S_SHOWN.show(rate))
    reading = (term(held, f"{grouped(held.value)} B") / read_rate).result(SECONDS_ROUND, "weights ÷ storage read rate")
    return {
        "storage": storage,
        "engine": engine,
        "weights": held,
        "reading": reading,
        "total": (term(reading, SECONDS.precise(reading.value)) + term(engine, SECONDS.show(start))).result(
            SECONDS_ROUND, "reading the weights + engine start-up"),
        "int4_share": (term(quarter, str(quarter)) / term(held, str(held))).result(
            PERCENT, "int4 weights ÷ weights at this precision"),
        "int4_reading": (term(quarter, f"{grouped(quarter.value)} B") / read_rate).result(
            SECONDS_ROUND, "int4 weights ÷ storage read rate"),
    }



def burst(stack: Stack, stream: Stream) -> dict[str, Result]:
    """Every request sent at once: what the queue does to TTFT (the window for rates is empty, so only
    the per-request figures mean anything)."""
    outcome = simulation.burst(stack, stream)
    return {
        "ttft_p50": given(outcome.ttft["p50"], SECONDS, "TTFT p50, every request sent at once"),
        "ttft_p95": given(outcome.ttft["p95"], SECONDS, "TTFT p95, every request sent at once"),
        "preemptions": given(outcome.preemptions, COUNT, "preemptions"),
    }


@dataclass(frozen=True)
class Chunking:
    """The same stream with a smaller token budget per step: prompts prefilled in chunks of at most
    the budget, so no step stalls the decoders for long, and a prompt takes more steps. The budget
    is max_num_seqs, the smallest that keeps the card's sequence cap: with --max-num-seqs left unset
    vLLM lowers the cap to a smaller budget, and with both set it refuses one below the cap
    (VERIFY_ARGS).
    Computed only when a page asks for it."""

    stack: Stack
    stream: Stream

    @property
    def budget(self) -> Result:
        seqs = simulation.scheduler_caps(self.stack)[0]
        return given(seqs, TOKENS, f"max_num_batched_tokens set to max_num_seqs, the smallest budget that keeps the "
                                   f"card's sequence cap ({VERIFY_ARGS})")

    @property
    def stall(self) -> Result:
        """The time model's prefill of one chunk of the budget: what a step carrying it adds."""
        return prefill_time(self.stack, int(self.budget.value))

    @property
    def default_stall(self) -> Result:
        """The same for the mean prompt in one step, as the default budget lets it."""
        return closed_form(self.stack, self.stream).prefill

    @property
    def knee(self) -> dict[str, Result]:
        seqs = simulation.scheduler_caps(self.stack)[0]
        small = replace(self.stack, serving=replace(self.stack.serving, max_num_batched_tokens=seqs, max_num_seqs=seqs))
        return knee(sweep(small, self.stream), self.stack.promise)


class Later(Mapping[str, object]):
    """Figures made when a page first asks for them: a recompute pays only for what its page shows
    (the burst and the levers each simulate or solve again)."""

    def __init__(self, makers: dict[str, Callable[[], object]]):
        self._makers = makers
        self._made: dict[str, object] = {}

    def __getitem__(self, key: str) -> object:
        if key not in self._made:
            self._made[key] = self._makers[key]()
        return self._made[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._makers)

    def __len__(self) -> int:
        return len(self._makers)


def section(stack: Stack, stream: Stream, cache: CacheOps) -> Later:
    """Document 15's facts on one stack, from the simulated `stream`; a managed API's price for the
    same tokens discounts document 10's shared prefix (`cache`)."""
    promise = stack.promise
    run = sweep(stack, stream)
    closed = run.closed
    found = knee(run, promise)
    best = max(run.outcomes, key=lambda o: o.goodput_tokens)
    busiest = max(run.outcomes, key=lambda o: o.throughput)
    per_replica = found["rate"]
    peak_rate = stack.traffic.requests_per_s
    peak = field(stack.traffic, "requests_per_s", RATE, "peak request rate the fleet must carry")
    gpus = max(1, math.ceil(peak_rate / per_replica.value - 1e-9))
    at_knee_cost = _per_million(stack, per_replica, closed.mean_output).result(
        USD_PER_M, "$ per GPU-hour ÷ (knee × mean output × 3,600) × 1,000,000")
    outcomes = {f"{i}": _outcome(o, promise) for i, o in enumerate(run.outcomes)}
    below, at, past = (min(range(len(run.outcomes)), key=lambda i: abs(simulation.SWEEP[i] - f)) for f in (0.5, 1.0, 1.3))
    later = Later({
        "closed": lambda: closed,
        "knee": lambda: found,
        "below": lambda: outcomes[f"{below}"],
        "at": lambda: outcomes[f"{at}"],
        "past": lambda: outcomes[f"{past}"],
        "best": lambda: _outcome(best, promise),
        "busiest": lambda: _outcome(busiest, promise),
        "goodput_share": lambda: _peak_share(later["best"]["goodput"], later["busiest"]["throughput"]),
        "peak_rate": lambda: peak,
        "gpus": lambda: Result(gpus, COUNT, formula="⌈peak request rate ÷ knee⌉",
                               worked=(f"⌈{RATE.precise(peak_rate)} ÷ {per_replica.operand}⌉ = {grouped(gpus)}"
                                       + ("; at least that many: the knee is below the slowest rate simulated"
                                          if "lower still" in found["binds"] else "")),
                               inputs=made_of(peak, per_replica)),
        "cost": lambda: at_knee_cost,
        "saturation_cost": lambda: saturation_cost(stack, stream),
        "levers": lambda: levers(stack, stream, saturation_cost(stack, stream)),
        "utilisation": lambda: utilisation_lever(at_knee_cost),
        "price": lambda: given(stack.price.gpu_hour_usd, USD, "$ per GPU-hour (an assumption)"),
        "cold": lambda: cold_start(stack, stream),
        "requests": lambda: given(len(simulation.drawn_for(stack, stream).arrivals), COUNT, "requests simulated at each rate"),
        "reply_budget": lambda: given(simulation.OUTPUT_TOKEN_BUDGET, TOKENS,
                                      "output tokens a stream draws at most, to bound a recompute's work"),
        "warm_up": lambda: given(stream.warm_up, PERCENT, "share of requests discarded as warm-up"),
        "seed": lambda: given(stream.seed, COUNT, "the generator's seed"),
        "max_num_seqs": lambda: given(simulation.scheduler_caps(stack)[0], COUNT, "max_num_seqs"),
        "max_num_batched_tokens": lambda: given(simulation.scheduler_caps(stack)[1], TOKENS, "max_num_batched_tokens"),
        "rates": lambda: given(len(run.outcomes), COUNT, "request rates simulated"),
        "claims": lambda: {name: claim.value for name, claim in CLAIMS.items()},
        "burst": lambda: burst(stack, stream),
        "chunked": lambda: Chunking(stack, stream),
        "refused": lambda: simulation.refused_share(stack, stream),
        "document_14": lambda: document_14s_terms(stack, stream, per_replica),
        "decode_alone": lambda: decode_alone(stack, stream),
        "reads": lambda: cache_share_of_reads(stack, stream),
        "api": lambda: against_an_api(stack, stream, cache, later["document_14"]["average"]),
        "spread": lambda: knee_spread(stack, stream),
        "bench": lambda: {"prompts": given(BENCH_PROMPTS, COUNT, f"vllm bench serve --num-prompts default ({BENCH_SOURCE})"),
                          "percentile": given(BENCH_PERCENTILE, COUNT,
                                              f"vllm bench serve --metric-percentiles default ({BENCH_SOURCE})")},
        "prefill_share": lambda: (term(closed.saturation) * term(closed.prefill)).result(
            PERCENT, "saturation rate × prefill time of the mean prompt"),
    })
    return later


def _peak_share(goodput: Result, throughput: Result) -> Result:
    """Goodput's peak ÷ raw throughput's peak, each as it prints."""
    return (term(goodput, TOKENS_PER_S.show(goodput.value)) / term(throughput, TOKENS_PER_S.show(throughput.value))).result(
        PERCENT, "goodput's peak ÷ raw throughput's peak")


def latency_curves(stack: Stack, stream: Stream) -> dict:
    """p95 TTFT and ITL (ms) against request rate with the two SLOs, and throughput and goodput
    (tokens per second), from the simulated sweep; the rows of the chart's table."""
    run = sweep(stack, stream)
    rates = [round(o.rate, 3) for o in run.outcomes]
    ttft = [1000 * o.ttft["p95"] for o in run.outcomes]
    itl = [1000 * o.itl["p95"] for o in run.outcomes]
    ends = [rates[0], rates[-1]]
    curves = [
        {"name": "p95 TTFT", "x": rates, "y": ttft},
        {"name": "p95 ITL", "x": rates, "y": itl},
        {"name": "TTFT SLO", "x": ends, "y": [1000 * stack.promise.ttft_p95_s] * 2},
        {"name": "ITL SLO", "x": ends, "y": [1000 * stack.promise.itl_p95_s] * 2},
        {"name": "throughput", "x": rates, "y": [o.throughput for o in run.outcomes]},
        {"name": "goodput", "x": rates, "y": [o.goodput_tokens for o in run.outcomes]},
    ]
    rows = [[f"{o.rate:.2f}", f"{ttft[i]:,.0f}", f"{itl[i]:,.1f}", f"{o.throughput:,.0f}", f"{o.goodput_tokens:,.0f}",
             f"{100 * o.met:.0f}%", grouped(o.preemptions)] for i, o in enumerate(run.outcomes)]
    return {"curves": curves, "rows": rows}
