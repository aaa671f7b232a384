"""Document 00: the reference stack carried through every track to one screen of headline figures.

Nothing here is a new model. The cache and the user counts are document 06's ladder, prefill and
the decode step are document 05's time model, the floor and the ridge are document 04's roofline,
and the traffic load is facts.traffic_load. What this module adds is the batch one card actually
decodes (the requests Little's law puts in flight, capped by the cache and by vLLM's max_num_seqs)
and the last lines of the chain: the load rounded up to whole cards, and whole cards at the named
hourly price turned into dollars per million generated tokens. Documents 14 and 15 plan and price
a fleet properly; this is the first look an interviewer expects on a whiteboard, every card busy.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace

from ..engine import kvcache, timing
from . import phases
from ..model import roofline
from ..specs.stack import Stack
from ..core.arith import field, made_of, term
from ..core.units import COUNT, SECONDS, TOKENS, Result, Unit, given, grouped, plain

SECONDS_PER_HOUR = 3_600

DOLLARS_PER_HOUR = Unit("USD per hour", 1, "/h", 2, spaced=False, prefix="$")
DOLLARS_PER_MILLION = Unit("USD per million tokens", 1e-6, "per M tokens", 3, prefix="$")
TOKENS_PER_HOUR = Unit("tokens per hour", 1e6, "M tokens/h", 1)
CARDS = Unit("cards", 1, "cards", 2, significant=3)
REQUESTS = Unit("requests", 1, "", 0, significant=2)  # a quiet rate puts a fraction of a request in flight

# The six formulas document 00 asks a reader to write from memory (the cache formula is kvshape.FORMULA).
WEIGHTS_FORMULA = "bytes = parameters × bytes_per_parameter"
FLOOR_FORMULA = "seconds per step ≥ (weight bytes + cache bytes) ÷ bandwidth"
RIDGE_FORMULA = "ridge (FLOP/byte) = dense peak FLOP/s ÷ bandwidth"
LITTLE_FORMULA = "in flight = arrival rate × time in system"
COST_FORMULA = "$ per M tokens = $ per hour ÷ tokens per hour × 10⁶"


@dataclass(frozen=True)
class Fleet:
    """The traffic carried to cards and dollars: how many requests are in flight, how many whole
    cards the two phases need, and what a million generated tokens costs on them."""

    request: Result
    in_flight: Result
    by_memory: Result
    prefill_cards: Result
    decode_cards: Result
    load: Result
    gpus: Result
    spend: Result
    tokens_per_hour: Result
    per_million: Result


def gpu_count(value: int) -> str:
    return f"{grouped(value)} GPU" if value == 1 else f"{grouped(value)} GPUs"


def sequence_count(value: int) -> str:
    return f"{grouped(value)} sequence" if value == 1 else f"{grouped(value)} sequences"


def _number(value: float | Result) -> float:
    return value.value if isinstance(value, Result) else value


def _rate(rate: float | Result, shown: str = " /s"):
    """The request rate as an operand, `plain` with `shown` after it: the stack's field where given one."""
    return term(rate, f"{plain(_number(rate))}{shown}")


def in_flight(rate: float | Result, request: Result) -> Result:
    """Little's law: requests arriving per second × seconds each spends in the system."""
    flight = _rate(rate) * term(request, SECONDS.precise(request.value))
    return flight.result(REQUESTS, "requests per second × seconds per request (Little's law)",
                         shown=f"{REQUESTS.show(flight.value)} in flight")


def cards_by_memory(in_flight: Result, users_per_card: Result) -> Result:
    """The cards the cache alone asks for: every request in flight resident, at the users one card
    admits at this length. A lower bound, since it charges prefill no time at all."""
    value = max(math.ceil(round(in_flight.value / max(users_per_card.value, 1), 9)), 1)
    return Result(value, COUNT, formula="⌈requests in flight ÷ users one card admits⌉",
                  worked=f"⌈{in_flight.operand} ÷ {users_per_card.number()}⌉ = {gpu_count(value)}",
                  inputs=made_of(in_flight, users_per_card))


def prefill_load(rate: float | Result, prefill: Result) -> Result:
    """Card-seconds per second prefill asks for: every arriving prompt's prefill time."""
    return (_rate(rate) * term(prefill, SECONDS.precise(prefill.value))).result(CARDS, "requests per second × prefill time")


def decode_load(rate: float | Result, output: int, step: timing.DecodeStep) -> Result:
    """Card-seconds per second decode asks for: the tokens the traffic generates after the first,
    at what one card produces decoding its batch."""
    tokens = output - 1
    return (_rate(rate) * term(tokens) / term(step.tokens_per_second)).result(
        CARDS, "requests per second × decode tokens ÷ tokens per second of one card")


def card_load(prefill_cards: Result, decode_cards: Result) -> Result:
    """Card-seconds per second the two phases ask for, added: prefill and decode share the cards."""
    return (term(prefill_cards, CARDS.precise(prefill_cards.value)) + term(decode_cards, CARDS.precise(decode_cards.value))
            ).result(CARDS, "prefill card-seconds per second + decode card-seconds per second")


def whole_cards(load: Result) -> Result:
    """Cards come whole: the load rounded up, and at least one."""
    value = max(math.ceil(round(load.value, 9)), 1)
    return Result(value, COUNT, formula="⌈card load⌉", worked=f"⌈{load.operand}⌉ = {gpu_count(value)}",
                  inputs=made_of(load))


def hourly_spend(gpus: Result, gpu_hour_usd: float | Result) -> Result:
    """What the cards cost for an hour, at the named rental price."""
    return (term(gpus, str(gpus)) * term(gpu_hour_usd, DOLLARS_PER_HOUR.show(_number(gpu_hour_usd)))).result(
        DOLLARS_PER_HOUR, "GPUs × $ per GPU-hour")


def generated_per_hour(rate: float | Result, output: int | Result) -> Result:
    """Tokens the traffic generates in an hour: the tokens a bill per output token counts."""
    tokens = _rate(rate, "") * term(output, grouped(_number(output))) * term(SECONDS_PER_HOUR)
    return tokens.result(TOKENS_PER_HOUR, "requests per second × output tokens × 3,600 s",
                         shown=f"{grouped(round(tokens.value))} tokens/h")


def cost_per_million(spend: Result, tokens_per_hour: Result) -> Result:
    """Dollars per hour ÷ tokens per hour, scaled to a million tokens."""
    value = spend.value / tokens_per_hour.value
    return Result(value, DOLLARS_PER_MILLION, formula=COST_FORMULA,
                  worked=(f"{spend} ÷ {grouped(round(tokens_per_hour.value))} tokens/h × 1,000,000 = "
                          f"{DOLLARS_PER_MILLION.show(value)}"), inputs=made_of(spend, tokens_per_hour))


def decode_batch(stack: Stack, admitted: Result) -> Result:
    """The sequences one card decodes together: the requests Little's law puts in flight at the
    step time of that very batch, capped by what the cache admits and by vLLM's max_num_seqs. The
    request time grows with the batch, so the answer is the smallest batch b the traffic does not
    overflow (rate × request time at b ≤ b), or the cap when the traffic overflows every batch."""
    from ..engine.simulation import scheduler_caps
    rate, chosen = stack.traffic.requests_per_s, stack.workload
    seqs = scheduler_caps(stack)[0]
    per_second = field(stack.traffic, "requests_per_s", COUNT, "requests per second at peak")
    cap = max(min(int(admitted.value), seqs), 1)

    def arriving(batch: int) -> float:
        return rate * timing.request_time(stack, chosen.prompt, chosen.output, batch).value

    low, high = 1, cap
    while low < high:
        middle = (low + high) // 2
        if arriving(middle) <= middle:
            high = middle
        else:
            low = middle + 1
    value = low if arriving(low) <= low else cap
    flight = in_flight(per_second, timing.request_time(stack, chosen.prompt, chosen.output, value))
    return Result(value, COUNT, formula="min(⌈requests in flight⌉, users the cache admits, the sequence cap max_num_seqs)",
                  worked=(f"min(⌈{REQUESTS.precise(flight.value)}⌉ in flight, {grouped(int(admitted.value))} the cache admits, "
                          f"{grouped(seqs)} the sequence cap) = {sequence_count(value)}"),
                  inputs=made_of(flight, admitted, given(seqs, COUNT, "max_num_seqs")))


def fleet(stack: Stack, workload: dict, batch: Result, step: timing.DecodeStep) -> Fleet:
    """The request timed at the batch one card decodes, turned into card load, cards and dollars."""
    rate = field(stack.traffic, "requests_per_s", COUNT, "requests per second at peak")
    request = timing.request_time(stack, stack.workload.prompt, stack.workload.output, int(batch.value))
    flight = in_flight(rate, request)
    prefill_cards = prefill_load(rate, workload["prefill"])
    decode_cards = decode_load(rate, stack.workload.output, step)
    load = card_load(prefill_cards, decode_cards)
    gpus = whole_cards(load)
    spend = hourly_spend(gpus, field(stack.price, "gpu_hour_usd", DOLLARS_PER_HOUR, "$ per GPU-hour"))
    tokens = generated_per_hour(rate, field(stack.workload, "output", TOKENS, "output length"))
    return Fleet(
        request=request,
        in_flight=flight,
        by_memory=cards_by_memory(flight, workload["admitted"]),
        prefill_cards=prefill_cards,
        decode_cards=decode_cards,
        load=load,
        gpus=gpus,
        spend=spend,
        tokens_per_hour=tokens,
        per_million=cost_per_million(spend, tokens),
    )


def decode_floor(stack: Stack, context: int) -> Result:
    """Document 04's floor for one sequence at the request's midpoint: its bytes at full bandwidth."""
    read = roofline.decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1,
                                stack.model.tokens_cached(context))
    return roofline.step_floor(read, stack.card)


def tail_request(stack: Stack) -> Result:
    """The traffic's p95 prompt with a median answer: the request that already meets the context
    limit, so every longer prompt (the p99's among them) is refused before it runs."""
    traffic = stack.traffic
    prompt, output = field(traffic, "prompt_p95", TOKENS), field(traffic, "output_p50", TOKENS)
    return (term(prompt, grouped(prompt.value)) + term(output, grouped(output.value))).result(TOKENS, "p95 prompt + p50 answer")


def one_card_problem(stack: Stack) -> dict[str, str]:
    """Why this page cannot size the stack on single cards, on the field whose change would cure it,
    or {} when it can. vLLM refuses to start when one sequence at the context limit does not fit the
    cache, so a limit past what the cache holds is refused, with the longest one that fits."""
    from ..engine.kvcache import ladder
    rungs = ladder(stack)
    card, model = stack.card.name, stack.model.name
    split = "or split the model across cards (tensor parallelism, document 11), which this page does not size"
    if not rungs.weights_fit:
        return {"model": (f"{model}'s weights in {stack.weight_precision.name} ({rungs.weights}) and the "
                          f"{rungs.reserve} the engine's profile holds back do not fit the {rungs.pool} one {card} "
                          f"gives the engine: choose narrower weights or a larger card, {split}")}
    if rungs.users_worst.value < 1:
        held = int(rungs.token_capacity.value)
        if held < 1:
            return {"model": (f"{model}'s weights leave one {card} no whole block of cache: choose narrower "
                              f"weights or a larger card, {split}")}
        return {"context_limit": (f"one {card} holding {model} has cache for {grouped(held)} tokens, less than one "
                                  f"sequence at this limit, and the engine refuses to start: set the limit to "
                                  f"{grouped(held)} or less, {split}")}
    return {}


@dataclass(frozen=True)
class Serving:
    """The stack served at its request rate: the ladder, the timed workload, the decode batch and its step."""

    ladder: kvcache.Ladder
    workload: dict
    batch: Result
    step: timing.DecodeStep

    @classmethod
    def of(cls, stack: Stack) -> "Serving":
        ladder = kvcache.ladder(stack)
        workload = phases.workload(stack, ladder)
        batch = decode_batch(stack, workload["admitted"])
        return cls(ladder, workload, batch, timing.decode_step(stack, int(batch.value), int(workload["context"].value)))

    def fleet(self, stack: Stack) -> "Fleet":
        return fleet(stack, self.workload, self.batch, self.step)


def section(stack: Stack) -> dict[str, object]:
    """Every track's headline for this stack, each the result of the document that derives it."""
    served = Serving.of(stack)
    ladder, workload, batch, step = served.ladder, served.workload, served.batch, served.step
    return {
        "rate": given(stack.traffic.requests_per_s, COUNT, "requests per second at peak"),
        "context": given(stack.context_limit, TOKENS, "context limit"),
        "p95_request": tail_request(stack),
        "decode_steps": (term(field(stack.workload, "output", TOKENS), grouped(stack.workload.output)) - 1).result(
            COUNT, "output tokens − 1: prefill writes the first"),
        "per_token": ladder.per_token,
        "per_user": ladder.per_user,
        "users_worst": ladder.users_worst,
        "users_paged": workload["admitted"],
        "prefill": workload["prefill"],
        "step": step,
        "batch": batch,
        "floor": decode_floor(stack, int(workload["context"].value)),
        "ridge": timing.ridge_point(stack.card, stack.weight_precision),
        "fleet": served.fleet(stack),
        "formulas": {
            "weights": WEIGHTS_FORMULA,
            "floor": FLOOR_FORMULA,
            "ridge": RIDGE_FORMULA,
            "little": LITTLE_FORMULA,
            "cost": COST_FORMULA,
        },
    }


RATE_MULTIPLES = (0.125, 0.25, 0.5, 1, 2, 4)


def load_curves(stack: Stack) -> list[dict]:
    """At request rates around the stack's own: each phase's card load, the whole cards they round
    up to, and the dollars per million generated tokens those cards cost."""
    rates = [stack.traffic.requests_per_s * m for m in RATE_MULTIPLES]
    at_rates = [replace(stack, traffic=replace(stack.traffic, requests_per_s=r)) for r in rates]
    fleets = [Serving.of(at_rate).fleet(at_rate) for at_rate in at_rates]
    x = [f"{plain(r)}/s" for r in rates]  # categories: the page redraws these as they are
    return [
        {"name": "prefill (card-seconds per second)", "x": x, "y": [round(f.prefill_cards.value, 3) for f in fleets]},
        {"name": "decode (card-seconds per second)", "x": x, "y": [round(f.decode_cards.value, 3) for f in fleets]},
        {"name": "whole GPUs", "x": x, "y": [int(f.gpus.value) for f in fleets]},
        {"name": "$ per M generated tokens", "x": x, "y": [round(f.per_million.value * 1e6, 4) for f in fleets]},
    ]


def load_rows(curves: list[dict]) -> list[list[str]]:
    """The chart's data table: one row per request rate."""
    return [[x, f"{curves[0]['y'][i]:.2f}", f"{curves[1]['y'][i]:.2f}", str(curves[2]['y'][i]),
             f"${curves[3]['y'][i]:.3f}"] for i, x in enumerate(curves[0]["x"])]
