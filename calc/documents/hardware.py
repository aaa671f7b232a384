"""Document 04: a datasheet read properly, and the nine cards compared on the axis each phase
cares about.

Prefill multiplies a whole prompt by each weight it reads, so it wants dense compute; decode
multiplies one token per sequence by every weight it reads, so it wants bandwidth and, to batch,
capacity. Everything here is the time model of calc.engine.timing applied card by card, plus the
datasheet figures people misread: the 2:4 sparsity figure quoted as peak, and a marketed "GB"
converted as if it were decimal.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine import kvcache, timing
from ..model import operations
from ..engine import kernels
from ..specs.cards import CARDS, Card
from ..specs.precision import BF16, FP8, INT4
from ..model.weights import weight_bytes
from ..model.roofline import decode_read, step_floor, weights_read
from ..specs.stack import Stack
from ..core.arith import field, made_of, term
from ..core.present import Cell, Table
from ..core.units import (COUNT, FLOP_PER_BYTE, GB, GB_MOVED, GIB_HELD, MS, RATIO, RATIO_FINE, TFLOPS, TOKENS,
    TOKENS_PER_S, Result, given, grouped)

FORMULA = "attainable FLOP/s = min(dense peak, intensity × bandwidth)"
SHORT_PROMPT = 128  # a one-line question: the prompt that shows prefill can be memory-bound too


def marketed_in_gib(card: Card) -> Result:
    """The marketed figure read as decimal gigabytes and converted: what a hasty conversion gives."""
    value = card.marketed_gb * GB
    # a conversion stated as equalities, not an expression: the line kept, the datasheet field recorded
    return Result(value, GIB_HELD, formula="marketed GB × 1,000,000,000 B, in GiB",
                  worked=f"{card.marketed_gb} GB = {grouped(int(value))} B = {GIB_HELD.show(value)}",
                  inputs=made_of(field(card, "marketed_gb", COUNT, "marketed capacity, GB")))


def sparse_ratio(card: Card) -> Result:
    return (term(card.bf16_sparse, str(card.bf16_sparse)) / term(card.bf16_dense, str(card.bf16_dense))).result(
        RATIO_FINE, "2:4 sparse figure ÷ dense figure")


def sparse_ridge(card: Card) -> Result:
    """The ridge a reader gets by dividing the sparsity figure by the bandwidth."""
    return (term(card.bf16_sparse, str(card.bf16_sparse)) / term(card.bandwidth, str(card.bandwidth))).result(
        FLOP_PER_BYTE, "2:4 sparse bf16 figure ÷ memory bandwidth")


@dataclass(frozen=True)
class Prefill:
    """One prompt through the model: it must both compute and read. The roofline takes the longer of
    the two at the rates the kernels achieve; the time is the engine's step, every kernel measured."""

    prompt: int
    ops: Result
    intensity: Result
    compute_time: Result
    memory_time: Result
    time: Result

    @property
    def bound(self) -> str:
        return "compute" if self.compute_time.value >= self.memory_time.value else "memory bandwidth"

    @property
    def rate(self) -> Result:
        """The operations per second the model predicts this prefill achieves."""
        return (term(self.ops) / term(self.time, MS.precise(self.time.value))).result(TFLOPS, "prefill operations ÷ prefill time")


def computing_time(stack: Stack, ops: Result) -> Result:
    """A prefill's arithmetic alone, at the achieved compute: set against its reading time."""
    rate = timing.achieved_compute(stack)
    return (term(ops) / term(rate)).result(MS, "prefill operations ÷ achieved compute")


def prefill(stack: Stack, prompt: int) -> Prefill:
    ops = operations.prefill_ops(stack.model, prompt)
    written = decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1,
                          stack.model.tokens_cached(prompt)).cache
    moved = (term(weights_read(stack.model, stack.weight_precision)) + term(written)).result(
        GB_MOVED, "weights read + cache written")
    bandwidth = timing.achieved_bandwidth(stack)
    return Prefill(
        prompt=prompt,
        ops=ops,
        intensity=timing.prefill_intensity(stack, prompt),
        compute_time=computing_time(stack, ops),
        memory_time=(term(moved, GB_MOVED.precise(moved.value)) / term(bandwidth)).result(
            MS, "(weights read + cache written) ÷ achieved bandwidth"),
        time=timing.prefill_time(stack, prompt),
    )


def step_rate(step: timing.DecodeStep) -> Result:
    """The operations per second the model predicts a decode step achieves: where it sits on the roofline."""
    return (term(step.ops) / term(step.time, MS.precise(step.time.value))).result(TFLOPS, "step operations ÷ step time")


def weights_floor(read: Result, card: Card) -> Result:
    """The shortest a decode step can be with no cache at all: the weights at full bandwidth."""
    return (term(read) / term(card.bandwidth, str(card.bandwidth))).result(MS, "weights read ÷ memory bandwidth")


def ceiling(bytes_per_step: Result, card: Card, what: str) -> Result:
    """Tokens per second one sequence could reach if each step read `bytes_per_step` at full bandwidth."""
    return (term(card.bandwidth, str(card.bandwidth)) / term(bytes_per_step)).result(TOKENS_PER_S, f"memory bandwidth ÷ {what}")


@dataclass(frozen=True)
class CardView:
    """One card running the stack's model: datasheet figures and what each phase gets from them."""

    card: Card
    name: str
    capacity: Result
    marketed_gib: Result
    bandwidth: Result
    dense: Result
    sparse: Result
    peak: Result
    ridge: Result
    floor: Result
    ceiling: Result
    prefill: Result
    prefill_bound: str
    kv_budget: Result
    users: Result
    fits: str


def card_view(stack: Stack, card: Card) -> CardView:
    on_card = replace(stack, card=card)
    ladder = kvcache.ladder(on_card)
    read = weights_read(stack.model, stack.weight_precision)
    pass_ = prefill(on_card, stack.workload.prompt)
    return CardView(
        card=card,
        name=card.name,
        capacity=card.reported_capacity,
        marketed_gib=marketed_in_gib(card),
        bandwidth=card.bandwidth,
        dense=card.bf16_dense,
        sparse=card.bf16_sparse,
        peak=timing.peak_compute(card, stack.weight_precision),
        ridge=timing.ridge_point(card, stack.weight_precision),
        floor=weights_floor(read, card),
        ceiling=ceiling(read, card, "weights read per step"),
        prefill=pass_.time,
        prefill_bound=pass_.bound,
        kv_budget=ladder.kv_budget,
        users=ladder.users_worst,
        fits="yes" if ladder.weights_fit else "no: the weights and what the profile holds overflow the pool",
    )


@dataclass(frozen=True)
class Datasheet:
    """The chosen card's datasheet, read properly."""

    sparse: Result
    sparse_ratio: Result
    sparse_ridge: Result
    marketed_gib: Result
    reported: Result
    conversion_gap: Result


def datasheet(card: Card) -> Datasheet:
    marketed = marketed_in_gib(card)
    reported = card.reported_capacity
    return Datasheet(
        sparse=card.bf16_sparse,
        sparse_ratio=sparse_ratio(card),
        sparse_ridge=sparse_ridge(card),
        marketed_gib=marketed,
        reported=reported,
        conversion_gap=(term(reported, str(reported)) - term(marketed, str(marketed))).result(
            GIB_HELD, "reported capacity − marketed GB converted as decimal"),
    )


def view_key(key: str) -> str:
    """A card's key as `hardware.cards` names it: h100-sxm → h100_sxm."""
    return key.replace("-", "_")


def datasheet_table() -> Table:
    """Every card's datasheet figures, one row a card."""
    def row(key: str, card: Card) -> tuple[str | Cell, ...]:
        view = f"cards.{view_key(key)}"
        fp8 = Cell(f"{view}.card.fp8_dense") if card.fp8_dense_tflops > 0 else "none"
        return (Cell(f"{view}.name"), Cell(f"{view}.capacity"), Cell(f"{view}.bandwidth"), Cell(f"{view}.dense"),
                Cell(f"{view}.sparse"), fp8, Cell(f"{view}.card.power_w", after=" W"), Cell(f"{view}.card.link_bandwidth"))
    return Table(("card", "reported", "bandwidth", "dense bf16", "bf16 with 2:4 sparsity", "dense fp8", "power", "link"),
                 tuple(row(key, card) for key, card in CARDS.items()))


def phase_table() -> Table:
    """Every card running the stack's model, on the axis each phase uses, one row a card."""
    columns = ("card", "ridge", "decode floor, weights ÷ bandwidth", "one sequence at most",
               Cell("prompt", before="prefill of "), "KV budget", "users, worst case")
    fields = ("name", "ridge", "floor", "ceiling", "prefill", "kv_budget", "users")
    return Table(columns, tuple(tuple(Cell(f"cards.{view_key(key)}.{field}") for field in fields) for key in CARDS))


def crossing_text(crossing: timing.Crossing) -> str:
    """Where decode turns compute-bound, said precisely: only its matrix multiplies ever do."""
    if crossing.happens:
        return (f"in its matrix multiplies at a batch of about {crossing.batch}, which the cache admits at this "
                f"length ({crossing.admitted} fit); attention, reading each sequence's cache, never does")
    return (f"nowhere the cache allows: its matrix multiplies would need about {crossing.batch} sequences and only "
            f"{crossing.admitted} of this length fit, and attention never turns compute-bound")


def room_text(batch: int, admitted: Result, fits: bool) -> str:
    if not fits:
        return "unable to run: the weights and what the profile holds alone overflow this card's pool"
    if batch <= admitted.value:
        return f"within the {admitted} sequences of this length the cache admits"
    return (f"more than the {admitted} sequences of this length the cache admits: the step cannot run on one "
            f"card as set")


def ratio_of(numerator: Result, denominator: Result, formula: str, unit=RATIO) -> Result:
    return (term(numerator) / term(denominator)).result(unit, formula)


def rule_of_thumb(stack: Stack) -> dict[str, timing.Crossing]:
    """Where decode really turns compute-bound on a short sequence, for each weight precision."""
    return {p.name: timing.compute_bound_batch(replace(stack, weight_precision=p), SHORT_PROMPT)
            for p in (BF16, FP8, INT4)}


def section(stack: Stack, ladder: kvcache.Ladder) -> dict[str, object]:
    """Everything document 04 and its calculator show, for one stack."""
    card, model = stack.card, stack.model
    tokens = stack.workload.tokens_held
    held = model.tokens_cached(tokens)
    admitted = kvcache.users_by_tokens(ladder.token_capacity, kvcache.tokens_in_blocks(held, stack.block_size))
    batch = stack.workload.batch or max(int(admitted.value), 1)
    step = timing.decode_step(stack, batch, tokens)
    single = timing.decode_step(stack, 1, tokens)
    ridge = timing.ridge_point(card, stack.weight_precision)
    effective = timing.effective_ridge(stack)
    read = weights_read(model, stack.weight_precision)
    held_weights = weight_bytes(model, stack.weight_precision)
    held_decimal = term(held_weights, f"{grouped(int(held_weights.value))} B").result(GB_MOVED, "weights held, in decimal GB")
    crossing = timing.compute_bound_batch(stack, tokens)
    pass_ = prefill(stack, stack.workload.prompt)
    short = prefill(stack, SHORT_PROMPT)
    peak = timing.peak_compute(card, stack.weight_precision)
    return {
        "datasheet": datasheet(card),
        "cards": {view_key(key): card_view(stack, c) for key, c in CARDS.items()},
        "datasheet_table": datasheet_table(),
        "phase_table": phase_table(),
        "peak": peak,
        "formula": FORMULA,
        "ridge": ridge,
        "ridge_fp8": timing.ridge_point(card, FP8),
        "effective_ridge": effective,
        "prompt": given(stack.workload.prompt, TOKENS, "prompt length"),
        "held": Result(held, TOKENS, formula="tokens each sequence holds (a sliding window caps them)",
                       worked=TOKENS.show(held)),
        "batch": given(batch, COUNT, "sequences decoding together"),
        "admitted": admitted,
        "room": room_text(batch, admitted, ladder.weights_fit),
        "step": step,
        "single": single,
        "step_rate": step_rate(step),
        "single_rate": step_rate(single),
        "binds": step.bound,
        "headroom": ratio_of(effective, step.intensity, "effective ridge ÷ step intensity"),
        "single_headroom": ratio_of(effective, single.intensity, "effective ridge ÷ step intensity"),
        "weights_read": read,
        "weights_held": held_decimal,
        "floor": weights_floor(read, card),
        "step_floor": step_floor(step.read, card),
        "ceiling": ceiling(read, card, "weights read per step"),
        "held_ceiling": ceiling(held_decimal, card, "weights held"),
        "limit": timing.decode_intensity_limit(stack, tokens),
        "crossing": crossing,
        "crossing_text": crossing_text(crossing),
        "rule": rule_of_thumb(stack),
        "prefill": pass_,
        "prefill_short": short,
        "prefill_mfu": timing.implied_mfu(pass_.ops, pass_.time, peak),
        "compute_share": timing.compute_share(stack),
        "bandwidth_share": timing.bandwidth_share(stack),
        "kernels": kernels.measured(card).provenance,
    }


CURVE_FLOOR = 0.25     # FLOP/B: the roofline's left edge, below batch-1 decode of any precision
CURVE_CEILING = 20_000  # FLOP/B: its right edge, past a long prefill


def roofline_curves(namespace) -> dict:
    """The chosen card's roof, then every card's roof (attainable TFLOP/s against FLOP/B: the lesser
    of dense peak and intensity × bandwidth), then the stack's prefill and two decode steps where the
    time model puts them (operations ÷ modelled time)."""
    hw = namespace["hardware"]
    stack = namespace.stack
    points = [
        (f"prefill · {grouped(hw['prefill'].prompt)} tokens", hw["prefill"].intensity.value, hw["prefill"].rate.value),
        ("decode · batch 1", hw["single"].intensity.value, hw["single_rate"].value),
        (f"decode · batch {grouped(int(hw['batch'].value))}", hw["step"].intensity.value, hw["step_rate"].value),
    ]
    left = min([CURVE_FLOOR] + [x / 2 for _, x, _ in points])
    right = max([CURVE_CEILING] + [x * 2 for _, x, _ in points])
    curves, rows = [], []
    chosen_key = view_key(next(k for k, c in CARDS.items() if c == stack.card))
    views = [hw["cards"][chosen_key]] + list(hw["cards"].values())  # the chosen card first: drawn beneath
    for i, view in enumerate(views):
        bandwidth, peak, ridge = view.bandwidth.value, view.peak.value, view.ridge.value
        curves.append({"name": f"{view.name} · chosen" if i == 0 else view.name,
                       "x": [left, ridge, right], "y": [left * bandwidth / 1e12, peak / 1e12, peak / 1e12]})
        if i:
            rows.append([view.name, FLOP_PER_BYTE.number(ridge), TFLOPS.number(peak), "roof: ridge and dense peak"])
    for name, x, y in points:
        curves.append({"name": name, "x": [x], "y": [y / 1e12]})
        rows.append([name, FLOP_PER_BYTE.number(x, 2 if x < 10 else 0), TFLOPS.number(y, 2 if y < 10e12 else 1),
                     "modelled: intensity, and the rate achieved"])
    return {"curves": curves, "rows": rows}
