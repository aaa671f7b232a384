"""Static against continuous batching: the same arrivals through the same slots, step by step.

A slot is one sequence's seat in the batch; a step is one decode pass, which gives every seated
sequence one token. Static batching seats a batch and runs it until its longest member is done;
continuous (iteration-level) batching, as Orca introduced it (Yu et al., OSDI 2022), refills a
slot the step after its sequence finishes. The requests are an example, small enough to draw.
"""
from __future__ import annotations

from dataclasses import dataclass

from collections import Counter

from ..core.arith import term, total
from ..core.units import COUNT, MS, RATIO_FINE, SHARE, Result, Unit, grouped

ORCA_SOURCE = "Yu et al., Orca: A Distributed Serving System for Transformer-Based Generative Models, OSDI 2022"


@dataclass(frozen=True)
class Request:
    name: str
    arrives: int   # the step it arrives before
    tokens: int    # output tokens: steps it holds a slot


EXAMPLE = (Request("A", 0, 6), Request("B", 0, 2), Request("C", 0, 3), Request("D", 0, 8),
           Request("E", 1, 2), Request("F", 2, 4), Request("G", 3, 3), Request("H", 5, 2))
SLOTS = 4
STEPS = Unit("steps", 1, "steps", 0, exact_up_to=3)


@dataclass(frozen=True)
class Schedule:
    """Who holds each slot at each step, and what that costs the requests and the card."""

    policy: str
    grid: tuple[tuple[str, ...], ...]      # grid[slot][step]: a request's name, or "" for an idle slot
    starts: dict[str, int]
    steps: Result
    busy: Result
    utilisation: Result
    waits: dict[str, Result]
    mean_wait: Result
    longest_wait: Result


def static(requests: tuple[Request, ...] = EXAMPLE, slots: int = SLOTS) -> Schedule:
    """Seat up to `slots` waiting requests; run until the batch's longest finishes; repeat."""
    waiting, starts, step = list(requests), {}, 0
    placed: list[tuple[int, int, Request]] = []
    while waiting:
        ready = [r for r in waiting if r.arrives <= step] or [min(waiting, key=lambda r: r.arrives)]
        step = max(step, ready[0].arrives)
        batch = ready[:slots]
        for slot, request in enumerate(batch):
            starts[request.name] = step
            placed.append((slot, step, request))
            waiting.remove(request)
        step += max(r.tokens for r in batch)
    return _schedule("static", requests, slots, placed, starts)


def continuous(requests: tuple[Request, ...] = EXAMPLE, slots: int = SLOTS) -> Schedule:
    """At every step, seat waiting requests in arrival order in the slots freed by the last step."""
    free_at = [0] * slots
    starts: dict[str, int] = {}
    placed = []
    for request in sorted(requests, key=lambda r: r.arrives):
        slot = min(range(slots), key=lambda s: (max(free_at[s], request.arrives), s))
        start = max(free_at[slot], request.arrives)
        starts[request.name] = start
        placed.append((slot, start, request))
        free_at[slot] = start + request.tokens
    return _schedule("continuous", requests, slots, placed, starts)


def _schedule(policy: str, requests, slots: int, placed, starts: dict[str, int]) -> Schedule:
    length = max(start + r.tokens for _, start, r in placed)
    grid = [[""] * length for _ in range(slots)]
    for slot, start, request in placed:
        for step in range(start, start + request.tokens):
            grid[slot][step] = request.name
    busy = total(term(r.tokens, str(r.tokens)) for r in requests).result(
        COUNT, "Σ output tokens: slot-steps that make a token")
    steps = Result(length, STEPS, formula="steps until the last request finishes", worked=f"{length} steps")
    # the example's own numbers: a step and an arrival are data of the example, not results
    waits = {r.name: (term(starts[r.name]) - term(r.arrives)).result(
        STEPS, "first step − arrival", shown=str(starts[r.name] - r.arrives)) for r in requests}
    summed = total(term(w, grouped(w.value)) for w in waits.values())
    if len(waits) == 1:
        summed = term(next(iter(waits.values())), f"({grouped(summed.value)})")
    mean = summed / term(len(requests))
    longest = max(waits.values(), key=lambda w: w.value)
    return Schedule(
        policy=policy,
        grid=tuple(tuple(row) for row in grid),
        starts=starts,
        steps=steps,
        busy=busy,
        utilisation=(term(busy, str(busy.value)) / (term(slots) * term(steps, str(length)))).result(
            SHARE, "busy slot-steps ÷ (slots × steps)"),
        waits=waits,
        mean_wait=mean.result(STEPS, "Σ waits ÷ requests",
                              shown=f"{grouped(summed.value)} ÷ {len(requests)} = {STEPS.show(mean.value)}"),
        longest_wait=longest,
    )


def busy_seats(schedule: Schedule) -> list[int]:
    """Seats making a token at each step."""
    return [sum(1 for row in schedule.grid if row[step]) for step in range(len(schedule.grid[0]))]


def wall_time(schedule: Schedule, stack) -> Result:
    """Σ over steps of the decode step's time at that step's busy seats (document 05's time model),
    each sequence holding the stack's typical conversation."""
    from .timing import decode_step
    counts = sorted(Counter(busy_seats(schedule)).items())
    times = {seats: decode_step(stack, seats, stack.typical_conversation).time for seats, _ in counts}
    # 0 + a + b … is a + b … to the bit
    summed = total(term(n) * term(times[seats], MS.precise(times[seats].value, 5)) for seats, n in counts)
    return summed.result(MS, "Σ steps × the step time at that many busy seats", shown=MS.precise(summed.value, 5))


def section(stack) -> dict[str, object]:
    before, after = static(), continuous()
    slow, fast = wall_time(before, stack), wall_time(after, stack)
    steps = {seats: decode_step_time(stack, seats) for seats in sorted(set(busy_seats(before) + busy_seats(after)))}
    return {
        "slots": Result(SLOTS, COUNT, formula="slots in the batch", worked=f"{SLOTS} slots"),
        "requests": Result(len(EXAMPLE), COUNT, formula="requests in the example", worked=f"{len(EXAMPLE)} requests"),
        "static": before,
        "continuous": after,
        "speedup": _ratio(term(before.steps, str(before.steps.value)) / term(after.steps, str(after.steps.value)),
                          "static steps ÷ continuous steps"),
        "static_time": slow,
        "continuous_time": fast,
        "time_gain": _ratio(term(slow, MS.precise(slow.value, 5)) / term(fast, MS.precise(fast.value, 5)),
                            "static time ÷ continuous time"),
        "step_one": steps[min(steps)],
        "step_full": steps[max(steps)],
        "source": ORCA_SOURCE,
    }


def _ratio(quotient, formula: str) -> Result:
    return quotient.result(RATIO_FINE, formula, shown=f"{quotient.value:.2f}×")


def decode_step_time(stack, seats: int) -> Result:
    from .timing import decode_step
    return decode_step(stack, seats, stack.typical_conversation).time
