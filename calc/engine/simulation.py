"""Document 15: a served stream, simulated one engine step at a time.

A small deterministic discrete-event model of continuous (iteration-level) batching on one replica,
built on the time model (calc.engine.timing) and the ladder's cache (calc.engine.kvcache):

- Arrivals are Poisson: exponential gaps from Python's `random.Random(seed)`, the same Mersenne
  Twister in CPython and Pyodide. One unit-rate draw is scaled to each request rate, so every rate
  in a sweep sees the same requests (common random numbers: the curve is smooth, not noisy).
- Lengths are lognormal through the traffic's p50 and p95 (the output's "long" is taken as its
  p95; an output is capped at half the context limit, as a client's max_tokens would be): a named
  assumption; the traffic's p99 prompt is past what a lognormal through p50 and p95 gives. As
  vLLM 0.33.0's API server does, a prompt of the context limit or longer is refused on arrival
  (vllm/v1/engine/input_processor.py, InputProcessor._validate_prompt_len: no room for one output
  token), counting against the promise and taking no card time, and a shorter one whose output
  would pass the limit has its output cut to fit (vllm/entrypoints/serve/utils/api_utils.py,
  get_max_tokens).
- Each iteration is one engine step, scheduled as vLLM V1 does: every running sequence decodes one
  token, unfinished prompts continue in chunks, then waiting requests are admitted in arrival
  order while the step's token budget (`max_num_batched_tokens`), the sequence cap (`max_num_seqs`)
  and the cache's free blocks allow. The step's time is the time model's, from aggregates (sequences,
  tokens held, prompt tokens in the step), so a step costs the same whatever the batch.
- A request is admitted only if the cache has blocks for its whole prompt, as vLLM 0.33.0's scheduler
  does by default (SchedulerConfig.scheduler_reserve_full_isl, vllm/config/scheduler.py), though it
  allocates them chunk by chunk; decoding then grows it a token at a time, and when the pool runs out the newest running request is preempted and
  recomputed later (vLLM V1's policy), its output so far folded into its prompt.
- Each sequence is charged its tokens plus one block for its partly filled last one (an upper bound
  on paging's waste, within a block per sequence).

Each step pays the engine's measured fixed cost (calc.engine.steptime.overhead) on top of its
kernels. What it leaves out: a sliding window's cap on what a long sequence reads (the model is
charged every token), the CPU front end, prefix caching, speculative decoding, and V1's rule that a
step which preempted admits no one (Scheduler.schedule); here a preempted request may rejoin at the
next step if its blocks are free, which the pool that just overflowed seldom has.
"""
from __future__ import annotations

import heapq
import math
import random
from bisect import bisect_left, bisect_right
from collections import deque
from itertools import accumulate
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Callable

from . import kvcache
from ..core import progress
from ..specs.inputs import Stream
from ..specs.stack import Pricing, Stack, Traffic
from . import steptime
from ..specs.release import PINNED
from .timing import prefill_time, timed
from ..core.arith import made_of, term
from ..core.units import COUNT, MS, PERCENT, TOKENS, Result, Unit, given, grouped

RATE = Unit("req/s", 1, "req/s", 2)

Z95 = 1.6448536269514722  # the standard normal's 95th percentile




@dataclass(frozen=True)
class Lengths:
    """The lognormal a length is drawn from: its median and its spread σ (of the logarithm)."""

    median: float
    sigma: float


def lognormal_through(p50: float, p95: float) -> Lengths:
    """The lognormal whose median is p50 and whose 95th percentile is p95: σ = ln(p95 ÷ p50) ÷ z₀.₉₅."""
    return Lengths(p50, max(math.log(p95 / p50), 0.0) / Z95)


def normal_below(z: float) -> float:
    """Φ(z): the standard normal's share below z."""
    return 0.5 * (1 + math.erf(z / math.sqrt(2)))


def capped_moment(lengths: Lengths, cap: float, power: int) -> float:
    """E[min(L, cap)^k] for L lognormal: median^k × e^(k²σ²/2) × Φ((ln(cap ÷ median) − kσ²) ÷ σ)
    + cap^k × (1 − Φ(ln(cap ÷ median) ÷ σ)). Document 14 costs the mean request with it."""
    if lengths.sigma == 0:
        return min(lengths.median, cap) ** power
    sigma, above = lengths.sigma, math.log(cap / lengths.median)
    return (lengths.median ** power * math.exp(power ** 2 * sigma ** 2 / 2)
            * normal_below((above - power * sigma ** 2) / sigma) + cap ** power * (1 - normal_below(above / sigma)))


@dataclass(frozen=True)
class Drawn:
    """The requests of one simulation at unit rate: arrival times (scale them by 1 ÷ rate), prompts
    and outputs."""

    arrivals: tuple[float, ...]
    prompts: tuple[int, ...]
    outputs: tuple[int, ...]


# A simulation's work grows with the tokens it decodes. Long replies would make a recompute in the
# page take tens of seconds, so a stream stops drawing once its replies reach this many tokens (the
# reference stream's are under a million and a quarter), keeping at least FEWEST_REQUESTS: fewer
# requests, noisier percentiles, and a page that still answers in seconds.
OUTPUT_TOKEN_BUDGET = 1_500_000
FEWEST_REQUESTS = 300


@lru_cache(maxsize=64)
def draw(seed: int, count: int, prompt: Lengths, output: Lengths, limit: int) -> Drawn:
    """Up to `count` requests: unit-rate Poisson arrivals and lognormal lengths (outputs capped at half
    the limit), stopping once the outputs drawn would pass OUTPUT_TOKEN_BUDGET."""
    generator = random.Random(seed)
    arrivals, prompts, outputs, clock, replies = [], [], [], 0.0, 0
    for _ in range(count):
        clock += generator.expovariate(1.0)
        wanted_prompt = max(1, round(generator.lognormvariate(math.log(prompt.median), prompt.sigma)))
        wanted_output = max(1, round(generator.lognormvariate(math.log(output.median), output.sigma)))
        out = min(wanted_output, max(limit // 2, 1))
        replies += out
        if replies > OUTPUT_TOKEN_BUDGET and len(arrivals) >= FEWEST_REQUESTS:
            break
        arrivals.append(clock)
        prompts.append(wanted_prompt)
        outputs.append(out)
    return Drawn(tuple(arrivals), tuple(prompts), tuple(outputs))


def drawn_for(stack: Stack, stream: Stream) -> Drawn:
    traffic = stack.traffic
    return draw(stream.seed, stream.requests,
                lognormal_through(traffic.prompt_p50, traffic.prompt_p95),
                lognormal_through(traffic.output_p50, traffic.output_long), stack.context_limit)


def served(prompt: int, output: int, limit: int) -> int:
    """The output a request is served with: cut to what the context limit leaves after its prompt;
    0 for a prompt the server refuses (one of the limit or longer)."""
    return max(0, min(output, limit - prompt))


def served_lengths(stack: Stack, stream: Stream) -> list[tuple[int, int]]:
    """(prompt, output) of the drawn requests the server serves, each output as it is served."""
    drawn, limit = drawn_for(stack, stream), stack.context_limit
    return [(p, served(p, o, limit)) for p, o in zip(drawn.prompts, drawn.outputs) if served(p, o, limit)]


def refused_share(stack: Stack, stream: Stream) -> Result:
    """The share of drawn requests whose prompt alone reaches the context limit, refused on arrival."""
    drawn = drawn_for(stack, stream)
    over = len(drawn.prompts) - len(served_lengths(stack, stream))
    # counts of the drawn sample: numbers of the draw, not results
    return (term(over) / term(len(drawn.prompts))).result(
        PERCENT, "requests whose prompt reaches the context limit ÷ requests drawn")


class StepCosts(steptime.Costs):
    """The time model reduced to what one engine step needs (calc.engine.steptime.Costs), with the
    step as the simulation composes it."""

    def step(self, decoding: int, held: float, prompt_tokens: int, chunks: tuple[tuple[int, int], ...],
             sampled: int) -> float:
        """One step: `decoding` sequences holding `held` tokens in all, `prompt_tokens` tokens of the
        prompt `chunks` (each (tokens, done before)), and `sampled` LM-head rows."""
        attention = self.attention_fixed_s + held * self.per_held_s if decoding else 0.0
        prompts = sum(self.prefill_attention(chunk, done) for chunk, done in chunks)
        return self.blocks(decoding + prompt_tokens) + self.head(sampled) + attention + prompts + self.overhead_s


@lru_cache(maxsize=64)
def step_costs(stack: Stack) -> StepCosts:
    return StepCosts(timed(stack).hardware, stack.model)


def scheduler_caps(stack: Stack) -> tuple[int, int]:
    """max_num_seqs and max_num_batched_tokens as the engine settles them: document 12's launch line's
    where it sets them, vLLM's defaults for the card where it does not, a defaulted sequence cap lowered
    to a smaller token budget (calc.specs.release.Release.scheduler_caps)."""
    serving = stack.serving
    tokens, seqs = PINNED.scheduler_caps(stack.card, stack.context_limit, serving.max_num_batched_tokens,
                                         serving.max_num_seqs)
    return seqs, tokens


def cache_blocks(stack: Stack) -> int:
    """Blocks the ladder's KV budget holds."""
    return int(kvcache.ladder(stack).token_capacity.value) // stack.block_size


class _Request:
    """One request's state as the scheduler sees it. `context`: tokens its current prefill must
    compute (the prompt, and after a preemption the output so far as well); `base` and `started`:
    tokens generated, and the step, when it last began decoding, so that what it holds at any step
    is known without touching it every step."""

    __slots__ = ("arrival", "prompt", "output", "context", "done", "generated", "base", "started", "state",
                 "first", "last", "finish", "epoch")

    def __init__(self, arrival: float, prompt: int, output: int):
        self.arrival, self.prompt, self.output = arrival, prompt, output
        self.context, self.done, self.generated, self.base, self.started = prompt, 0, 0, 0, 0
        self.state = "waiting"
        self.first = self.last = self.finish = math.inf
        self.epoch = 0

    def generated_by(self, step: int) -> int:
        return self.base + step - self.started


@dataclass(frozen=True)
class Run:
    """One simulation at one request rate: per-request times, every inter-token gap (as a value and
    how many tokens waited it) from the measured window, and the first steps' trace of who was where."""

    rate: float
    requests: tuple[_Request, ...]
    measured_from: int
    gaps: tuple[tuple[float, ...], tuple[int, ...]]
    window: tuple[float, float]
    window_tokens: int
    resident_integral: float
    end: float
    preemptions: int
    peak_waiting: int
    trace: tuple[tuple[float, int, int, int], ...]
    steps: int


MAX_STEPS_PER_REQUEST = 400


def simulate(stack: Stack, stream: Stream, rate: float, trace_steps: int = 0) -> Run:
    """Serve the requests `stream` draws for the stack, arriving at `rate` per second, until all have
    finished, or the step budget (generous: forty steps a request) runs out, which only a stream far
    past saturation reaches."""
    drawn = drawn_for(stack, stream)
    max_num_seqs, max_num_batched_tokens = scheduler_caps(stack)
    # Every running sequence decodes a token each step, so no more may run than the step's budget holds.
    running_cap = min(max_num_seqs, max_num_batched_tokens)
    costs = step_costs(stack)
    # The step's constants, unpacked: the loop below runs a few hundred thousand times a sweep.
    per_held_s, attention_fixed_s, overhead_s = costs.per_held_s, costs.attention_fixed_s, costs.overhead_s
    blocks_s, head_s, chunk_s = costs.blocks, costs.head, costs.prefill_attention
    block = stack.block_size
    capacity = cache_blocks(stack)
    requests = [_Request(a / rate, p, o) for a, p, o in zip(drawn.arrivals, drawn.prompts, drawn.outputs)]
    limit = stack.context_limit
    count = len(requests)
    measured_from = min(int(count * stream.warm_up), count - 1)
    window = (requests[measured_from].arrival, requests[-1].arrival)
    waiting: deque[_Request] = deque()
    prefilling: list[_Request] = []
    decoding_order: list[_Request] = []  # by when they began decoding; stale entries skipped lazily
    finishing: list[tuple[int, int, int, _Request]] = []
    decoding = resident = arrived = done = step = ticket = preemptions = peak_waiting = window_tokens = 0
    held = charged = 0.0  # tokens the decoding sequences hold; tokens charged to the pool by all resident
    clock = resident_integral = 0.0
    gap_values: list[float] = []  # inter-token gaps in the measured window, and how many tokens waited each
    gap_tokens: list[int] = []
    trace: list[tuple[float, int, int, int]] = []
    max_steps = MAX_STEPS_PER_REQUEST * count

    while done < count and step < max_steps:
        while arrived < count and requests[arrived].arrival <= clock:
            request = requests[arrived]
            arrived += 1
            request.output = served(request.prompt, request.output, limit)
            if not request.output:  # the API server answers it with an error
                request.state = "refused"
                done += 1
            else:
                waiting.append(request)
        if not waiting and not prefilling and not decoding:
            clock = requests[arrived].arrival
            continue
        budget = max_num_batched_tokens - decoding
        if decoding and not prefilling and not (
                waiting and budget > 0 and resident < running_cap
                and charged / block + resident + math.ceil(waiting[0].context / block) + 1 <= capacity):
            # Steps that only decode, up to the next event (an arrival, a finish, a preemption): a full
            # step's arithmetic with no prompt tokens, without the scheduling around it, which is most
            # of the steps and most of the time a sweep takes.
            next_arrival = requests[arrived].arrival if arrived < count else math.inf
            next_finish = finishing[0][0] if finishing else math.inf
            fixed = blocks_s(decoding) + head_s(decoding) + attention_fixed_s + overhead_s
            present = arrived - done
            peak_waiting = max(peak_waiting, len(waiting))  # nothing joins or leaves the queue until the next event
            # How many steps until the first event: a finish (known by step), the pool overflowing
            # (held grows by `decoding` a step), an arrival (each step lasts at least `fixed`).
            steps = min(next_finish, max_steps) - step
            if decoding > 1:
                overflow = max(1, int(((capacity - resident) * block - charged) // decoding))
                while overflow > 1 and (charged + (overflow - 1) * decoding) / block + resident > capacity:
                    overflow -= 1
                while (charged + overflow * decoding) / block + resident <= capacity:
                    overflow += 1
                steps = min(steps, overflow)
            if next_arrival < math.inf:
                steps = min(steps, int((next_arrival - clock) / fixed) + 2)
            steps = max(steps, 1)
            durations = [fixed + (held + i * decoding) * per_held_s for i in range(steps)]
            clocks = list(accumulate(durations, initial=clock))  # clocks[i]: when step i starts
            if next_arrival < math.inf:
                steps = min(steps, max(1, bisect_left(clocks, next_arrival, 1)))
            if step < trace_steps:
                trace.extend((clocks[i], len(waiting), 0, decoding) for i in range(min(steps, trace_steps - step)))
            first, last = bisect_left(clocks, window[0], 0, steps), bisect_right(clocks, window[1], 0, steps)
            if first < last:  # the steps that start inside the measured window
                resident_integral += present * (clocks[last] - clocks[first])
                gap_values.extend(durations[first:last])
                gap_tokens.extend([decoding] * (last - first))
                window_tokens += decoding * (last - first)
            clock = clocks[steps]
            step += steps
            held += steps * decoding
            charged += steps * decoding
        else:
            prompt_tokens, prompt_attention = 0, 0.0
            completing: list[_Request] = []
            for request in prefilling:
                if budget <= 0:
                    break
                chunk = min(request.context - request.done, budget)
                prompt_attention += chunk_s(chunk, request.done)
                prompt_tokens += chunk
                budget -= chunk
                request.done += chunk
                if request.done == request.context:
                    completing.append(request)
            while waiting and budget > 0 and resident < running_cap \
                    and charged / block + resident + math.ceil(waiting[0].context / block) + 1 <= capacity:
                request = waiting.popleft()
                request.state = "prefill"
                resident += 1
                charged += request.context
                prefilling.append(request)
                chunk = min(request.context, budget)
                prompt_attention += chunk_s(chunk, 0)
                prompt_tokens += chunk
                budget -= chunk
                request.done = chunk
                if chunk == request.context:
                    completing.append(request)
            if waiting and not resident:  # a prompt longer than the whole cache: refused, never served
                refused = waiting.popleft()
                refused.state = "refused"
                done += 1
                continue
            peak_waiting = max(peak_waiting, len(waiting))
            if step < trace_steps:
                trace.append((clock, len(waiting), len(prefilling), decoding))
            # costs.step, inlined
            duration = (blocks_s(decoding + prompt_tokens) + head_s(decoding + len(completing)) + prompt_attention
                        + (attention_fixed_s + held * per_held_s if decoding else 0.0) + overhead_s)
            measured = window[0] <= clock <= window[1]
            if measured:  # requests present (queued or running) × the step's length, over the measured window
                resident_integral += (arrived - done) * duration
            clock += duration
            step += 1
            if decoding:
                if measured:
                    gap_values.append(duration)
                    gap_tokens.append(decoding)
                    window_tokens += decoding
                held += decoding
                charged += decoding
            for request in completing:
                prefilling.remove(request)
                if request.generated and measured:  # prefilled again after a preemption: its next token ends a gap
                    gap_values.append(clock - request.last)
                    gap_tokens.append(1)
                else:
                    request.first = clock
                request.generated += 1
                request.last = clock
                window_tokens += 1 if measured else 0
                if request.generated >= request.output:
                    request.finish, request.state = clock, "done"
                    resident -= 1
                    charged -= request.context
                    done += 1
                    continue
                request.state, request.base, request.started = "decode", request.generated, step
                decoding += 1
                held += request.context + 1
                charged += 1
                ticket += 1
                decoding_order.append(request)
                heapq.heappush(finishing, (step + request.output - request.generated, ticket, request.epoch, request))
        while finishing and finishing[0][0] <= step:
            _, _, epoch, request = heapq.heappop(finishing)
            if epoch != request.epoch:
                continue
            request.generated = request.output
            request.finish = request.last = clock
            request.state = "done"
            decoding -= 1
            resident -= 1
            held -= request.prompt + request.output
            charged -= request.prompt + request.output
            done += 1
        while charged / block + resident > capacity and decoding > 1:
            victim = decoding_order.pop()
            if victim.state != "decode":
                continue
            made = victim.generated_by(step)
            decoding -= 1
            resident -= 1
            held -= victim.prompt + made
            charged -= victim.prompt + made
            victim.epoch += 1
            victim.generated, victim.last = made, clock
            victim.context, victim.done, victim.state = victim.prompt + made, 0, "waiting"
            waiting.appendleft(victim)
            preemptions += 1
        if len(decoding_order) > 2 * decoding + 64:
            decoding_order = [r for r in decoding_order if r.state == "decode"]
    return Run(rate, tuple(requests), measured_from, (tuple(gap_values), tuple(gap_tokens)), window, window_tokens, resident_integral, clock,
               preemptions, peak_waiting, tuple(trace), step)


def weighted_percentiles(values: tuple[float, ...], weights: tuple[int, ...], shares: dict[str, float]) -> dict[str, float]:
    """Nearest-rank percentiles of weighted samples: values[i] stands for weights[i] tokens that
    waited that long. One pass over the samples in order of value, all shares at once."""
    total = sum(weights)
    if not total:
        return {name: 0.0 for name in shares}
    wanted = sorted((max(1, math.ceil(share * total)), name) for name, share in shares.items())
    found, running, next_rank = {}, 0, 0
    for index in sorted(range(len(values)), key=values.__getitem__):
        running += weights[index]
        while next_rank < len(wanted) and running >= wanted[next_rank][0]:
            found[wanted[next_rank][1]] = values[index]
            next_rank += 1
        if next_rank == len(wanted):
            break
    return found


def percentile(values: list[float], share: float) -> float:
    """Nearest rank: the smallest value with at least `share` of the values at or below it."""
    ordered = sorted(values)
    return ordered[max(1, math.ceil(share * len(ordered))) - 1] if ordered else 0.0


@dataclass(frozen=True)
class Outcome:
    """What one simulated rate measured, warm-up discarded: TTFT and ITL percentiles, throughput,
    goodput, and the queue. A request meets the promise when its TTFT is within the TTFT SLO and
    its mean gap between tokens (TPOT, DistServe's per-request measure) within the ITL SLO."""

    rate: float
    ttft: dict[str, float]
    itl: dict[str, float]
    throughput: float
    goodput_requests: float
    goodput_tokens: float
    met: float
    preemptions: int
    peak_waiting: int
    mean_in_system: float
    mean_time_in_system: float
    arrival_rate: float
    refused: int
    unfinished: int
    span: float
    good: int
    measured: int


SHARES = {"p50": 0.50, "p95": 0.95, "p99": 0.99}


def measure(stack: Stack, run: Run) -> Outcome:
    promise = stack.promise
    measured = run.requests[run.measured_from:]
    served = [r for r in measured if r.state != "refused"]
    ttfts = [min(r.first, run.end) - r.arrival for r in served]
    good = [r for r in served if r.first - r.arrival <= promise.ttft_p95_s and r.finish < math.inf
            and (r.output == 1 or (r.finish - r.first) / (r.output - 1) <= promise.itl_p95_s)]
    span = max(run.window[1] - run.window[0], 1e-9)
    # Goodput's tokens: the window's counted tokens, shared among the requests by the time each spent
    # streaming inside the window, so goodput can never exceed throughput.
    streamed = sum(_within(r, run.window) for r in run.requests if r.state != "refused")
    good_share = sum(_within(r, run.window) for r in good) / streamed if streamed else 0.0
    # Little's Law's sides over the measured window, each counted its own way: L from the requests
    # present step by step; λ from the served requests arriving in the window; W their mean time in
    # the system. The window ends with the last arrival, so requests still in the system then are
    # counted in W to their finish and in L only up to the window's end: the two agree only when
    # the queue is steady.
    return Outcome(
        rate=run.rate,
        ttft={k: percentile(ttfts, share) for k, share in SHARES.items()},
        itl=weighted_percentiles(*run.gaps, SHARES),
        throughput=run.window_tokens / span,
        goodput_requests=len(good) / span,
        goodput_tokens=run.window_tokens * good_share / span,
        met=len(good) / max(len(measured), 1),
        preemptions=run.preemptions,
        peak_waiting=run.peak_waiting,
        mean_in_system=run.resident_integral / span,
        mean_time_in_system=sum(min(r.finish, run.end) - r.arrival for r in served) / max(len(served), 1),
        arrival_rate=len(served) / span,
        refused=len(measured) - len(served),
        unfinished=sum(r.state not in ("done", "refused") for r in run.requests),
        span=span,
        good=len(good),
        measured=len(measured),
    )


def _within(request: _Request, window: tuple[float, float]) -> float:
    """The request's tokens produced inside the measured window, taken as spread evenly between its
    first token and its last."""
    if request.finish <= request.first:
        return float(window[0] <= request.first <= window[1])
    overlap = min(request.finish, window[1]) - max(request.first, window[0])
    return request.output * max(overlap, 0.0) / (request.finish - request.first)


@dataclass(frozen=True)
class ClosedForm:
    """The knee without simulating: the time model and Little's Law.

    With λ requests a second, each prefilling its mean prompt in p seconds, the card spends λ·p of
    every second prefilling, and decode steps share the rest. By Little's Law the sequences decoding
    together are B = λ × output × ITL, and each waits a step plus its share of the prefill time:
    ITL = step(B) ÷ (1 − λ·p). Solved together (a fixed point), the largest λ whose ITL stays within
    the SLO is the ITL-bound rate; the rate at which the card is busy all the time,
    λ·p + λ·output·step(B) ÷ B = 1, is saturation."""

    prefill: Result
    mean_prompt: Result
    mean_output: Result
    itl_bound: Result
    saturation: Result
    batch_at_saturation: Result
    step_at_saturation: Result


def _mean_step(costs: StepCosts, batch: float, held: float) -> float:
    """A decode-only step of a fractional mean batch: the matrix multiplies at the whole batch above it."""
    whole = max(math.ceil(batch), 1)
    return costs.step(whole, batch * held, 0, (), whole)


def _itl_at(costs: StepCosts, rate: float, prefill: float, output: float, held: float, cap: float) -> float:
    """The fixed point of B = λ·output·ITL, ITL = step(B) ÷ (1 − λp), reached by iterating from a batch
    of one; infinite where there is none, or where the iteration does not settle."""
    spare = 1 - rate * prefill
    if spare <= 0:
        return math.inf
    itl = _mean_step(costs, 1, held) / spare
    for _ in range(500):
        batch = max(rate * output * itl, 1.0)
        if batch > cap:  # more sequences than the engine runs at once or the cache holds
            return math.inf
        following = _mean_step(costs, batch, held) / spare
        if following > 100 * itl or following > 60:
            return math.inf
        if abs(following - itl) <= 1e-9 * itl:
            return following
        itl = following
    return math.inf  # no settled batch: each step's growth outruns the time it frees


def _bisect(predicate, low: float, high: float) -> float:
    """The largest rate in [low, high] for which `predicate` holds, predicate monotone."""
    for _ in range(40):
        middle = (low + high) / 2
        low, high = (middle, high) if predicate(middle) else (low, middle)
    return low


@lru_cache(maxsize=16)
def closed_form(stack: Stack, stream: Stream) -> ClosedForm:
    costs = step_costs(stack)
    fitting = served_lengths(stack, stream)
    prompt = sum(p for p, _ in fitting) / len(fitting)
    output = sum(o for _, o in fitting) / len(fitting)
    held = prompt + output / 2
    timed_prefill = prefill_time(stack, max(1, round(prompt)))
    prefill = timed_prefill.value
    slo = stack.promise.itl_p95_s
    ceiling = 1 / prefill
    capacity = kvcache.ladder(stack).token_capacity
    capacity_tokens = capacity.value
    seqs, budget = scheduler_caps(stack)
    cap = min(capacity_tokens / (held + stack.block_size), seqs, budget)
    itl_bound = _bisect(lambda rate: _itl_at(costs, rate, prefill, output, held, cap) <= slo, 0.0, ceiling)
    bound_itl = min(_itl_at(costs, itl_bound, prefill, output, held, cap), slo)
    bound_batch = max(itl_bound * output * bound_itl, 1.0)
    bound_step = _mean_step(costs, bound_batch, held)
    # Saturation: the card is busy all the time, at the largest batch the cache admits.
    batch = max(cap, 1.0)
    step = _mean_step(costs, batch, held)
    mean_prompt = given(prompt, TOKENS, "mean prompt of the requests served")
    mean_output = given(output, TOKENS, "mean output of the requests served")
    at_prompt = Result(prefill, MS, formula="prefill time of the mean prompt (the time model)",
                       worked=f"the time model at {TOKENS.show(prompt)}: {MS.show(prefill)}",
                       inputs=made_of(mean_prompt, timed_prefill))
    # the cap is min(…), floored at one sequence where it falls below: a bisection and the time model
    # at a fractional batch are stated in words, each with the results it rests on
    smallest = (f"min({grouped(capacity_tokens)} ÷ ({TOKENS.number(held, 2)} + {stack.block_size}), "
                f"{grouped(seqs)} sequences, {grouped(budget)} tokens)")
    admitted = Result(batch, COUNT, formula="min(token capacity ÷ (mean tokens held + a block), max_num_seqs, "
                                            "max_num_batched_tokens), at least one",
                      worked=f"{smallest if cap >= 1 else f'max({smallest}, 1)'} = {COUNT.number(batch, 2)}",
                      inputs=made_of(capacity, mean_prompt, mean_output))
    at_batch = Result(step, MS, formula="the time model's step at that batch",
                      worked=(f"the time model's step at {COUNT.number(batch, 2)} sequences of {TOKENS.number(held, 2)} "
                              f"tokens: {MS.show(step)}"), inputs=made_of(admitted))
    # 1 ÷ (prefill + output × step ÷ B): the order the per-request time is computed in
    per_request = (term(at_prompt, MS.precise(prefill)) + term(mean_output, TOKENS.number(output, 2))
                   * term(at_batch, MS.precise(step)) / term(admitted, COUNT.number(batch, 2)))
    return ClosedForm(
        prefill=at_prompt,
        mean_prompt=mean_prompt,
        mean_output=mean_output,
        itl_bound=Result(itl_bound, RATE, formula="largest λ with step(B) ÷ (1 − λ × prefill) ≤ ITL SLO, B = λ × output × ITL",
                         worked=(f"{RATE.precise(itl_bound, 7)} × {TOKENS.precise(output, 7)} × {MS.precise(bound_itl, 7)} = "
                                 f"{COUNT.precise(bound_batch)} sequences; "
                                 f"{MS.precise(bound_step, 7)} ÷ (1 − {RATE.precise(itl_bound, 7)} × {MS.precise(prefill, 7)}) = "
                                 f"{MS.show(bound_itl)}"),
                         inputs=made_of(mean_output, at_prompt)),
        saturation=(term(1) / per_request).result(RATE, "1 ÷ (prefill + output × step(B) ÷ B), B the batch the cache admits"),
        batch_at_saturation=admitted,
        step_at_saturation=at_batch,
    )


SWEEP = (0.4, 0.6, 0.75, 0.9, 1.0, 1.15, 1.3, 1.6)  # request rates, as fractions of the closed-form saturation


@dataclass(frozen=True)
class Sweep:
    """The stream simulated at rates either side of saturation, and what it finds: the knee (the
    lowest rate at which a p95 crosses its SLO, interpolated between the rates run) and goodput's peak."""

    outcomes: tuple[Outcome, ...]
    closed: ClosedForm

    @property
    def rates(self) -> list[float]:
        return [o.rate for o in self.outcomes]

    def crossing(self, over) -> tuple[float, float, float, float] | None:
        """Where `over(outcome)` (a p95 ÷ its SLO) first reaches 1: the two rates either side and their
        ratios (the first rate twice if it is already over). None if it never does."""
        previous = None
        for outcome in self.outcomes:
            ratio = over(outcome)
            if ratio >= 1:
                return (*(previous or (outcome.rate, ratio)), outcome.rate, ratio)
            previous = (outcome.rate, ratio)
        return None


def sweep(stack: Stack, stream: Stream) -> Sweep:
    """The sweep for this stack and stream; the fleet's peak rate and the price do not change one
    replica's stream, so they are left out of what the cache is keyed on."""
    return _sweep(replace(stack, traffic=replace(stack.traffic, requests_per_s=Traffic.requests_per_s), price=Pricing()),
                  stream)


@lru_cache(maxsize=16)
def _sweep(stack: Stack, stream: Stream) -> Sweep:
    return sweep_until(stack, stream, lambda outcome: False)


def sweep_until(stack: Stack, stream: Stream, enough: Callable[[Outcome], bool]) -> Sweep:
    """The sweep's rates in order, stopping after the first whose outcome is `enough`: what a search
    for the lowest crossing needs and no more."""
    closed = closed_form(stack, stream)
    outcomes: list[Outcome] = []
    progress.report(0, len(SWEEP), "request rates simulated")
    for fraction in SWEEP:
        outcomes.append(measure(stack, simulate(stack, stream, fraction * closed.saturation.value)))
        progress.report(len(outcomes), len(SWEEP), "request rates simulated")
        if enough(outcomes[-1]):
            break
    return Sweep(tuple(outcomes), closed)


BURST_RATE = 1e9  # requests a second: every request arrives at once, as `vllm bench serve --request-rate inf` sends them


def burst(stack: Stack, stream: Stream) -> Outcome:
    """Every request sent at time zero, the way a benchmark with an infinite request rate sends them."""
    return _burst(replace(stack, traffic=replace(stack.traffic, requests_per_s=Traffic.requests_per_s), price=Pricing()),
                  stream)


@lru_cache(maxsize=16)
def _burst(stack: Stack, stream: Stream) -> Outcome:
    return measure(stack, simulate(stack, stream, BURST_RATE))


@dataclass(frozen=True)
class ClosedLoop:
    """A closed-loop benchmark, as `vllm bench serve --max-concurrency` runs one: `concurrency` requests
    of fixed lengths in flight, each replaced the moment it finishes, until `requests` have finished.
    Times in seconds; `output_rate` is output tokens per second over the whole run."""

    concurrency: int
    prompt: int
    output: int
    requests: int
    duration: float
    mean_ttft: float
    median_ttft: float
    mean_tpot: float
    median_itl: float
    output_rate: float
    request_rate: float


@lru_cache(maxsize=32)
def closed_loop(stack: Stack, concurrency: int, prompt: int, output: int, requests: int) -> ClosedLoop:
    """Every step decodes a token for each running request, then gives what is left of the token budget
    to prompts in arrival order, chunked (vLLM V1's order). A request is admitted only when the cache has
    blocks for its whole prompt and output, so nothing is preempted; a load the cache cannot hold is
    refused with a message."""
    seqs, budget = scheduler_caps(stack)
    block = stack.block_size
    capacity = cache_blocks(stack)
    per_request = -(-(prompt + output) // block)
    if per_request > capacity:
        raise ValueError(f"one request of {grouped(prompt + output)} tokens needs {grouped(per_request)} blocks; "
                         f"the cache holds {grouped(capacity)}")
    costs = step_costs(stack)
    clock, sent, finished, blocks_used, step = 0.0, 0, 0, 0, 0
    waiting: deque[list] = deque()  # [arrival, prompt tokens done]
    prefilling: list[list] = []
    decoding = held = 0  # requests decoding, and the tokens they hold between them
    finishing: dict[int, list[float]] = {}  # the step a request's last token ends: when its first came
    ttfts: list[float] = []
    tpots: list[float] = []
    gaps: list[float] = []  # one a step, standing for as many tokens as were decoding in it
    gap_tokens: list[int] = []
    while finished < requests:
        while sent < requests and sent - finished < concurrency:
            waiting.append([clock, 0])
            sent += 1
        room = budget - decoding
        chunks, completing = [], []
        for request in prefilling:
            if room <= 0:
                break
            chunk = min(prompt - request[1], room)
            chunks.append((chunk, request[1]))
            request[1] += chunk
            room -= chunk
            if request[1] == prompt:
                completing.append(request)
        while waiting and room > 0 and len(prefilling) + decoding < seqs and blocks_used + per_request <= capacity:
            request = waiting.popleft()
            blocks_used += per_request
            chunk = min(prompt, room)
            chunks.append((chunk, 0))
            request[1] = chunk
            room -= chunk
            prefilling.append(request)
            if chunk == prompt:
                completing.append(request)
        duration = costs.step(decoding, held, sum(c for c, _ in chunks), tuple(chunks), decoding + len(completing))
        clock += duration
        step += 1
        if decoding:
            gaps.append(duration)
            gap_tokens.append(decoding)
            held += decoding
        for first in finishing.pop(step, ()):
            tpots.append((clock - first) / (output - 1))
            finished += 1
            blocks_used -= per_request
            decoding -= 1
            held -= prompt + output
        for request in completing:
            prefilling.remove(request)
            ttfts.append(clock - request[0])
            if output == 1:
                tpots.append(0.0)
                finished += 1
                blocks_used -= per_request
            else:
                finishing.setdefault(step + output - 1, []).append(clock)
                decoding += 1
                held += prompt + 1
    median_gap = weighted_percentiles(tuple(gaps), tuple(gap_tokens), {"p50": 0.5})["p50"] if gaps else 0.0
    return ClosedLoop(concurrency, prompt, output, requests, clock, sum(ttfts) / len(ttfts), percentile(ttfts, 0.5),
                      sum(tpots) / len(tpots), median_gap, requests * output / clock, requests / clock)
