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
from ..specs.stack import Stack
from ..engine.timing import prefill_time
from ..core.units import (COUNT, GB, MS, PERCENT, RATIO, SECONDS, TOKENS, TOKENS_PER_S, Result, Unit, given, grouped,
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
    """One simulated rate, its figures as Results."""
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
                                     f"{TOKENS_PER_S.show(o.throughput)}")),
        "goodput": Result(o.goodput_tokens, TOKENS_PER_S,
                          formula="tokens, in the measured window, of requests that met both SLOs ÷ its length",
                          worked=(f"{grouped(round(o.goodput_tokens * o.span))} tokens ÷ {SECONDS.precise(o.span)} = "
                                  f"{TOKENS_PER_S.show(o.goodput_tokens)}")),
        "goodput_requests": Result(o.goodput_requests, RATE, formula="requests that met both SLOs ÷ the window's length",
                                   worked=f"{o.good} ÷ {SECONDS.precise(o.span)} = {RATE.show(o.goodput_requests)}"),
        "met": Result(o.met, PERCENT, formula="requests that met both SLOs ÷ requests measured",
                      worked=f"{o.good} ÷ {o.measured} = {PERCENT.show(o.met)}"),
        "preemptions": given(o.preemptions, COUNT, "preemptions"),
        "offered": Result(o.measured / o.span, RATE, formula="requests arriving in the measured window ÷ its length",
                          worked=f"{grouped(o.measured)} ÷ {SECONDS.precise(o.span)} = {RATE.show(o.measured / o.span)}"),
        "refused": given(o.refused, COUNT, "requests in the measured window refused, over the context limit"),
        "in_system": given(o.mean_in_system, REQUESTS, "requests in the system, time-averaged step by step over the measured window"),
        "little": Result(o.arrival_rate * o.mean_time_in_system, REQUESTS,
                         formula="λ × W (Little's Law): served requests arriving in the window ÷ its length × their mean time in the system",
                         worked=(f"{RATE.precise(o.arrival_rate)} × {SECONDS.precise(o.mean_time_in_system)} = "
                                 f"{REQUESTS.show(o.arrival_rate * o.mean_time_in_system)}")),
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
    limits = {
        "TTFT": ("p95 TTFT", SECONDS.show(promise.ttft_p95_s), "p95 TTFT leaves its SLO", run.crossing(over["TTFT"])),
        "ITL": ("p95 ITL", MS.show(promise.itl_p95_s), "p95 ITL leaves its SLO", run.crossing(over["ITL"])),
        "queue": ("λ × W ÷ L", f"{STEADY:.2f}", "the queue stops being steady (λ × W outgrows L): the replica falls behind",
                  run.crossing(over["queue"])),
    }
    last = run.outcomes[-1].rate

    def crossing(found, subject: str, limit: str, scale: float | None = None) -> Result:
        """`scale`: when given, the worked line shows subject itself (q × scale) against the limit,
        for a limit that is a pure number, rather than the ratio q."""
        if found is None:
            return Result(last, RATE, formula=f"{subject} stays within {limit} at every rate simulated",
                          worked=f"{subject} within {limit} up to {RATE.show(last)}, the fastest rate simulated")
        low, low_ratio, high, high_ratio = found
        if low == high:
            return Result(low, RATE, formula=f"{subject} is over {limit} at the slowest rate simulated",
                          worked=f"{subject} over {limit} already at {RATE.show(low)}, the slowest rate simulated")
        value = low + (high - low) * (1 - low_ratio) / (high_ratio - low_ratio)
        rates = f"{RATE.precise(low, 7)} + ({RATE.precise(high, 7)} − {RATE.precise(low, 7)}) × "
        if scale is not None:
            return Result(value, RATE, formula=(f"the rate at which {subject} reaches {limit}, interpolated between the two "
                                                f"rates simulated either side (r₁, r₂), where {subject} is m₁ and m₂: "
                                                f"r₁ + (r₂ − r₁) × ({limit} − m₁) ÷ (m₂ − m₁)"),
                          worked=(rates + f"({limit} − {low_ratio * scale:.6f}) ÷ ({high_ratio * scale:.6f} − "
                                          f"{low_ratio * scale:.6f}) = {RATE.show(value)}"))
        return Result(value, RATE, formula=(f"the rate at which {subject} reaches {limit}, interpolated between the two "
                                            f"rates simulated either side (r₁, r₂), where {subject} ÷ {limit} is q₁ and q₂: "
                                            f"r₁ + (r₂ − r₁) × (1 − q₁) ÷ (q₂ − q₁)"),
                      worked=rates + f"(1 − {low_ratio:.6f}) ÷ ({high_ratio:.6f} − {low_ratio:.6f}) = {RATE.show(value)}")

    found = {name: crossing(reached, subject, limit, STEADY if name == "queue" else None)
             for name, (subject, limit, _, reached) in limits.items()}
    lowest = min(found, key=lambda name: found[name].value)
    reached = limits[lowest][3]
    if all(limit[3] is None for limit in limits.values()):
        binds = "no SLO is reached and the queue stays steady up to the fastest rate simulated (the knee is beyond it)"
    elif reached is not None and reached[0] == reached[2]:
        binds = f"{limits[lowest][2]} already at the slowest rate simulated (the knee is lower still)"
    else:
        binds = limits[lowest][2]
    listed = ", ".join(found[name].operand for name in limits)
    return {
        "ttft": found["TTFT"],
        "itl": found["ITL"],
        "queue": found["queue"],
        "steady": given(STEADY - 1, PERCENT, "how far λ × W may exceed the time-averaged L before the queue counts as growing"),
        "rate": Result(found[lowest].value, RATE, formula="the lowest of the three crossings",
                       worked=f"min({listed}) = {RATE.show(found[lowest].value)}"),
        "binds": binds,
    }


def saturation_cost(stack: Stack) -> Result:
    """Dollars per million generated tokens for a card kept busy at the closed-form saturation rate."""
    closed = closed_form(stack)
    tokens_per_s = closed.saturation.value * closed.mean_output.value
    value = stack.price.gpu_hour_usd / (tokens_per_s * HOUR) * MILLION
    return Result(value, USD_PER_M, formula="$ per GPU-hour ÷ (saturation rate × mean output × 3,600) × 1,000,000",
                  worked=(f"{USD.show(stack.price.gpu_hour_usd)} ÷ ({closed.saturation.operand} × "
                          f"{closed.mean_output.operand} × 3,600 s) × 1,000,000 = {USD_PER_M.show(value)}"))


def levers(stack: Stack, base: Result) -> dict[str, Result]:
    """Cost per million tokens at saturation as one thing changes at a time, and each one's gain."""
    def gain(name: str, changed: Stack) -> dict[str, Result]:
        cost = saturation_cost(changed)
        ratio = base.value / cost.value
        return {"cost": cost, "gain": Result(ratio, RATIO_FINE2, formula=f"reference ÷ {name}",
                                             worked=f"{base.operand} ÷ {cost.operand} = {RATIO_FINE2.show(ratio)}")}
    traffic = stack.traffic
    return {
        "fp8_weights": gain("fp8 weights", replace(stack, weight_precision=FP8)),
        "fp8_cache": gain("fp8 cache", replace(stack, kv_precision=FP8)),
        "longer_output": gain("outputs twice as long",
                              replace(stack, traffic=replace(traffic, output_p50=2 * traffic.output_p50,
                                                             output_long=2 * traffic.output_long))),
    }



def document_14s_terms(stack: Stack, knee_rate: Result) -> dict[str, Result]:
    """This page's knee priced as document 14 prices a fleet: every token (prompt and output), the
    month's average load, N+1 spares, and the cards bought as whole nodes. The knee is already where
    queueing breaks the promise, so document 14's planning target (its stand-in for that limit) is
    not applied on top."""
    closed = closed_form(stack)
    headroom, price = stack.headroom, stack.price.gpu_hour_usd
    tokens = closed.mean_prompt.value + closed.mean_output.value
    per_token = price / (knee_rate.value * tokens * HOUR) * MILLION
    peak = stack.traffic.requests_per_s
    replicas = max(1, math.ceil(peak / knee_rate.value - 1e-9))
    fleet = replicas + headroom.spares
    nodes, bought = planning.whole_nodes(fleet, headroom.node)
    served = peak * headroom.average_load * tokens * HOUR
    average = bought.value * price / served * MILLION
    return {
        "tokens": Result(tokens, TOKENS, formula="mean prompt + mean output",
                         worked=f"{closed.mean_prompt.operand} + {closed.mean_output.operand} = {TOKENS.show(tokens)}"),
        "at_knee": Result(per_token, USD_PER_M, formula="$ per GPU-hour ÷ (knee × (mean prompt + mean output) × 3,600) × 1,000,000",
                          worked=(f"{USD.show(price)} ÷ ({knee_rate.operand} × {TOKENS.precise(tokens)} × 3,600 s) × "
                                  f"1,000,000 = {USD_PER_M.show(per_token)}")),
        "gpus": Result(fleet, COUNT, formula="⌈peak rate ÷ knee⌉ + spares",
                       worked=f"⌈{RATE.precise(peak)} ÷ {knee_rate.operand}⌉ + {headroom.spares} = {replicas} + {headroom.spares} = {fleet}"),
        "nodes": nodes,
        "bought": bought,
        "average": Result(average, USD_PER_M,
                          formula="cards bought × $ per GPU-hour ÷ (peak rate × average load × tokens a request × 3,600) × 1,000,000",
                          worked=(f"{grouped(bought.value)} × {USD.show(price)} ÷ ({RATE.precise(peak)} × {headroom.average_load:.2f} × "
                                  f"{TOKENS.precise(tokens)} × 3,600 s) × 1,000,000 = {USD_PER_M.show(average)}")),
    }


def decode_alone(stack: Stack) -> Result:
    """Tokens a second if the card only decoded, at the batch the cache admits: batch ÷ its step."""
    closed = closed_form(stack)
    value = closed.batch_at_saturation.value / closed.step_at_saturation.value
    return Result(value, TOKENS_PER_S, formula="batch the cache admits ÷ its step time",
                  worked=(f"{COUNT.number(closed.batch_at_saturation.value, 2)} ÷ {closed.step_at_saturation.operand} = "
                          f"{TOKENS_PER_S.show(value)}"))


def cache_share_of_reads(stack: Stack) -> dict[str, object]:
    """One decode step at the batch the pool admits at saturation (whole sequences), each holding the
    stream's mean tokens over its life (mean prompt + half the mean output): the share of its read
    that is cache, and the batch from which the cache is half of every read."""
    closed = closed_form(stack)
    held = round(closed.mean_prompt.value + closed.mean_output.value / 2)
    batch = max(1, int(closed.batch_at_saturation.value))
    step = timing.decode_step(stack, batch, held)
    per_token = step.read.cache.value / (batch * held)
    half = step.read.weights.value / (held * per_token)
    return {
        "batch": given(batch, COUNT, "whole sequences the pool admits at saturation"),
        "held": Result(held, TOKENS, formula="mean prompt + half the mean output, rounded",
                       worked=f"{closed.mean_prompt.operand} + {closed.mean_output.operand} ÷ 2 = {TOKENS.show(held)}"),
        "step": step,
        "half": Result(half, COUNT, formula="weights read ÷ (tokens held × cache bytes per token)",
                       worked=(f"{grouped(step.read.weights.value)} B ÷ ({grouped(held)} × {grouped(per_token)} B) = "
                               f"{COUNT.show(half)}")),
    }


# Fireworks' serverless discounts (https://docs.fireworks.ai/guides/prompt-caching and
# https://docs.fireworks.ai/serverless/overview): cached prompt tokens cost 50% less by default (the
# exact discount varies by model), and batch inference is billed at 50% of the serverless rate.
CACHED_INPUT_DISCOUNT = 0.5
CACHED_SOURCE = "docs.fireworks.ai/guides/prompt-caching: cached prompt tokens, 50% off by default, varying by model"
BATCH_DISCOUNT = 0.5
BATCH_SOURCE = "docs.fireworks.ai/serverless/overview: batch inference at 50% of serverless rates, input and output"


def against_an_api(stack: Stack, fleet_average: Result) -> dict[str, Result]:
    """The monthly check: the fleet's bill per million tokens (document 14's terms: every token, the
    month's average load, whole nodes) against a managed API's price for the same tokens, and the
    average load at which the two are equal (cost per token divides by the load). The API bills
    the shared prefix a hit finds cached at a discount, and batch work at half its price."""
    api = planning.API_PER_MILLION
    load = stack.headroom.average_load

    def even_load(price: float, shown: str, against: str) -> Result:
        """The average load at which the fleet's bill per token falls to `price`."""
        value = load * fleet_average.value / price
        return Result(value, PERCENT, formula=f"average load × the fleet's $ per million tokens ÷ {against}",
                      worked=f"{load:.2f} × {fleet_average.operand} ÷ {shown} = {PERCENT.show(value)}")

    ratio = fleet_average.value / api
    closed = closed_form(stack)
    tokens = closed.mean_prompt.value + closed.mean_output.value
    hit_rate = stack.cache.hit_rate
    reused = cacheops.reusable_tokens(stack.cache.prefix, round(closed.mean_prompt.value), stack.block_size)
    cached_share = hit_rate * reused / tokens
    cached_price = api * (1 - CACHED_INPUT_DISCOUNT * cached_share)
    batch_price = api * (1 - BATCH_DISCOUNT)
    return {
        "price": given(api, USD_PER_M, f"a managed API's price per million tokens, prompt and output alike ({planning.API_SOURCE})"),
        "ratio": Result(ratio, RATIO_FINE2, formula="the fleet's $ per million tokens ÷ the API's",
                        worked=f"{fleet_average.operand} ÷ {USD_PER_M.show(api)} = {RATIO_FINE2.show(ratio)}"),
        "even_load": even_load(api, USD_PER_M.show(api), "the API's"),
        "cached_discount": given(CACHED_INPUT_DISCOUNT, PERCENT, CACHED_SOURCE),
        "cached_share": Result(cached_share, PERCENT, formula="hit rate × prefix tokens a hit reuses ÷ (mean prompt + mean output)",
                               worked=(f"{plain(hit_rate)} × {grouped(reused)} ÷ {TOKENS.precise(tokens)} = "
                                       f"{PERCENT.show(cached_share)} of the tokens")),
        "cached_price": Result(cached_price, USD_PER_M, formula="API price × (1 − cached discount × cached share)",
                               worked=(f"{USD_PER_M.show(api)} × (1 − {plain(CACHED_INPUT_DISCOUNT)} × "
                                       f"{plain(round(cached_share, 4))}) = {USD_PER_M.show(cached_price)}")),
        "cached_even_load": even_load(cached_price, USD_PER_M.precise(cached_price), "the API's with the cached discount"),
        "batch_discount": given(BATCH_DISCOUNT, PERCENT, BATCH_SOURCE),
        "batch_price": Result(batch_price, USD_PER_M, formula="API price × (1 − batch discount)",
                              worked=f"{USD_PER_M.show(api)} × (1 − {plain(BATCH_DISCOUNT)}) = {USD_PER_M.show(batch_price)}"),
        "batch_even_load": even_load(batch_price, USD_PER_M.show(batch_price), "the API's batch price"),
    }


SEEDS = 5  # the reference seed and the next four: how much the knee moves with the draw


def knee_spread(stack: Stack) -> dict[str, Result]:
    """The knee for SEEDS seeds from the stack's own: the lowest and the highest."""
    over = over_limits(stack.promise).values()
    reached = lambda outcome: any(ratio(outcome) >= 1 for ratio in over)  # noqa: E731
    # The knee is the lowest crossing, found between the first rate that reaches a limit and the one
    # below it, so another seed's sweep can stop there.
    knees = [knee(sweep(stack) if k == 0 else sweep_until(replace(stack, stream=replace(stack.stream, seed=stack.stream.seed + k)),
                                                          reached), stack.promise)["rate"]
             for k in range(SEEDS)]
    low, high = min(k.value for k in knees), max(k.value for k in knees)
    listed = ", ".join(RATE.show(k.value) for k in knees)
    return {
        "seeds": given(SEEDS, COUNT, "seeds simulated"),
        "low": Result(low, RATE, formula="the lowest knee over the seeds", worked=f"min({listed}) = {RATE.show(low)}"),
        "high": Result(high, RATE, formula="the highest knee over the seeds", worked=f"max({listed}) = {RATE.show(high)}"),
    }


# vllm bench serve's defaults (https://docs.vllm.ai/en/latest/cli/bench/serve/; vllm/benchmarks/serve.py add_cli_args)
BENCH_PROMPTS = 1_000
BENCH_PERCENTILE = 99
BENCH_SOURCE = ("https://docs.vllm.ai/en/latest/cli/bench/serve/ (--num-prompts default 1000, --dataset-name default "
                "random); vllm/benchmarks/serve.py (--metric-percentiles default \"99\")")


def utilisation_lever(at_knee: Result) -> dict[str, Result]:
    """A GPU-hour costs the same busy or idle: cost per token divides by the share of hours busy."""
    low = at_knee.value / UTILISATION_LOW
    high = at_knee.value / UTILISATION_HIGH
    return {
        "low_share": given(UTILISATION_LOW, PERCENT, "average utilisation, a half-idle fleet (an example)"),
        "high_share": given(UTILISATION_HIGH, PERCENT, "average utilisation, a consolidated fleet (an example)"),
        "low": Result(low, USD_PER_M, formula="cost at the knee ÷ average utilisation",
                      worked=f"{at_knee.operand} ÷ {UTILISATION_LOW:.2f} = {USD_PER_M.show(low)}"),
        "high": Result(high, USD_PER_M, formula="cost at the knee ÷ average utilisation",
                       worked=f"{at_knee.operand} ÷ {UTILISATION_HIGH:.2f} = {USD_PER_M.show(high)}"),
        "gain": Result(low / high, RATIO, formula="utilisation after ÷ before",
                       worked=f"{UTILISATION_HIGH:.2f} ÷ {UTILISATION_LOW:.2f} = {RATIO.show(low / high)}"),
    }


def cold_start(stack: Stack) -> dict[str, Result]:
    """Weights read from storage at the named rate, then the engine's start-up (profiling, compiling,
    CUDA graph capture), a named assumption."""
    rate = stack.stream.storage_gb_per_s * GB
    held = weight_bytes(stack.model, stack.weight_precision)
    reading = held.value / rate
    start = stack.stream.engine_start_s
    quarter = weight_bytes(stack.model, INT4)
    return {
        "storage": given(rate, GB_PER_S_SHOWN, "storage read rate (an assumption)"),
        "engine": given(start, SECONDS, "engine start-up (an assumption)"),
        "weights": held,
        "reading": Result(reading, SECONDS_ROUND, formula="weights ÷ storage read rate",
                          worked=f"{grouped(held.value)} B ÷ {GB_PER_S_SHOWN.show(rate)} = {SECONDS_ROUND.show(reading)}"),
        "total": Result(reading + start, SECONDS_ROUND, formula="reading the weights + engine start-up",
                        worked=f"{SECONDS.precise(reading)} + {SECONDS.show(start)} = {SECONDS_ROUND.show(reading + start)}"),
        "int4_share": Result(quarter.value / held.value, PERCENT, formula="int4 weights ÷ weights at this precision",
                             worked=f"{quarter} ÷ {held} = {PERCENT.show(quarter.value / held.value)}"),
        "int4_reading": Result(quarter.value / rate, SECONDS_ROUND, formula="int4 weights ÷ storage read rate",
                               worked=(f"{grouped(quarter.value)} B ÷ {GB_PER_S_SHOWN.show(rate)} = "
                                       f"{SECONDS_ROUND.show(quarter.value / rate)}")),
    }



def burst(stack: Stack) -> dict[str, Result]:
    """Every request sent at once: what the queue does to TTFT (the window for rates is empty, so only
    the per-request figures mean anything)."""
    outcome = simulation.burst(stack)
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
        return closed_form(self.stack).prefill

    @property
    def knee(self) -> dict[str, Result]:
        seqs = simulation.scheduler_caps(self.stack)[0]
        small = replace(self.stack, serving=replace(self.stack.serving, max_num_batched_tokens=seqs, max_num_seqs=seqs))
        return knee(sweep(small), self.stack.promise)


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


def section(stack: Stack) -> Later:
    """Document 15's facts on one stack."""
    promise = stack.promise
    run = sweep(stack)
    closed = run.closed
    found = knee(run, promise)
    best = max(run.outcomes, key=lambda o: o.goodput_tokens)
    busiest = max(run.outcomes, key=lambda o: o.throughput)
    per_replica = found["rate"]
    peak_rate = stack.traffic.requests_per_s
    gpus = max(1, math.ceil(peak_rate / per_replica.value - 1e-9))
    at_knee_tokens = per_replica.value * closed.mean_output.value
    cost = stack.price.gpu_hour_usd / (at_knee_tokens * HOUR) * MILLION
    at_knee_cost = Result(cost, USD_PER_M, formula="$ per GPU-hour ÷ (knee × mean output × 3,600) × 1,000,000",
                          worked=(f"{USD.show(stack.price.gpu_hour_usd)} ÷ ({per_replica.operand} × "
                                  f"{closed.mean_output.operand} × 3,600 s) × 1,000,000 = {USD_PER_M.show(cost)}"))
    outcomes = {f"{i}": _outcome(o, promise) for i, o in enumerate(run.outcomes)}
    below, at, past = (min(range(len(run.outcomes)), key=lambda i: abs(simulation.SWEEP[i] - f)) for f in (0.5, 1.0, 1.3))
    return Later({
        "closed": lambda: closed,
        "knee": lambda: found,
        "below": lambda: outcomes[f"{below}"],
        "at": lambda: outcomes[f"{at}"],
        "past": lambda: outcomes[f"{past}"],
        "best": lambda: _outcome(best, promise),
        "busiest": lambda: _outcome(busiest, promise),
        "goodput_share": lambda: Result(best.goodput_tokens / busiest.throughput, PERCENT,
                                        formula="goodput's peak ÷ raw throughput's peak",
                                        worked=(f"{TOKENS_PER_S.show(best.goodput_tokens)} ÷ "
                                                f"{TOKENS_PER_S.show(busiest.throughput)} = "
                                                f"{PERCENT.show(best.goodput_tokens / busiest.throughput)}")),
        "peak_rate": lambda: given(peak_rate, RATE, "peak request rate the fleet must carry"),
        "gpus": lambda: Result(gpus, COUNT, formula="⌈peak request rate ÷ knee⌉",
                               worked=(f"⌈{RATE.precise(peak_rate)} ÷ {per_replica.operand}⌉ = {grouped(gpus)}"
                                       + ("; at least that many: the knee is below the slowest rate simulated"
                                          if "lower still" in found["binds"] else ""))),
        "cost": lambda: at_knee_cost,
        "saturation_cost": lambda: saturation_cost(stack),
        "levers": lambda: levers(stack, saturation_cost(stack)),
        "utilisation": lambda: utilisation_lever(at_knee_cost),
        "price": lambda: given(stack.price.gpu_hour_usd, USD, "$ per GPU-hour (an assumption)"),
        "cold": lambda: cold_start(stack),
        "requests": lambda: given(len(simulation.drawn_for(stack).arrivals), COUNT, "requests simulated at each rate"),
        "reply_budget": lambda: given(simulation.OUTPUT_TOKEN_BUDGET, TOKENS,
                                      "output tokens a stream draws at most, to bound a recompute's work"),
        "warm_up": lambda: given(stack.stream.warm_up, PERCENT, "share of requests discarded as warm-up"),
        "seed": lambda: given(stack.stream.seed, COUNT, "the generator's seed"),
        "max_num_seqs": lambda: given(simulation.scheduler_caps(stack)[0], COUNT, "max_num_seqs"),
        "max_num_batched_tokens": lambda: given(simulation.scheduler_caps(stack)[1], TOKENS, "max_num_batched_tokens"),
        "rates": lambda: given(len(run.outcomes), COUNT, "request rates simulated"),
        "claims": lambda: {name: claim.value for name, claim in CLAIMS.items()},
        "burst": lambda: burst(stack),
        "chunked": lambda: Chunking(stack),
        "refused": lambda: simulation.refused_share(stack),
        "document_14": lambda: document_14s_terms(stack, per_replica),
        "decode_alone": lambda: decode_alone(stack),
        "reads": lambda: cache_share_of_reads(stack),
        "api": lambda: against_an_api(stack, document_14s_terms(stack, per_replica)["average"]),
        "spread": lambda: knee_spread(stack),
        "bench": lambda: {"prompts": given(BENCH_PROMPTS, COUNT, f"vllm bench serve --num-prompts default ({BENCH_SOURCE})"),
                          "percentile": given(BENCH_PERCENTILE, COUNT,
                                              f"vllm bench serve --metric-percentiles default ({BENCH_SOURCE})")},
        "prefill_share": lambda: Result(closed.saturation.value * closed.prefill.value, PERCENT,
                                        formula="saturation rate × prefill time of the mean prompt",
                                        worked=(f"{closed.saturation.operand} × {closed.prefill.operand} = "
                                                f"{PERCENT.show(closed.saturation.value * closed.prefill.value)}")),
    })


def latency_curves(stack: Stack) -> dict:
    """p95 TTFT and ITL (ms) against request rate with the two SLOs, and throughput and goodput
    (tokens per second), from the simulated sweep; the rows of the chart's table."""
    run = sweep(stack)
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
