"""Document 09's facts: a number in every format, the formats' ranges and steps, what each block
format costs per weight, and what the bytes do to the reference stack: weights against cache, the
users each pairing admits, the decode floor as the bytes fall, and a 70B squeezed onto one card."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..specs import formats
from ..engine import kvcache
from ..model import roofline
from ..specs.cards import CARDS, Card
from ..specs.inputs import DocumentInputs
from ..specs.models import LLAMA_3_1_70B
from ..specs.precision import BF16, FP8, INT4, KV_PRECISIONS, PRECISIONS
from ..model.weights import weight_bytes
from ..specs.stack import Stack
from ..core.arith import made_of, term
from ..core.present import Cell, Table
from ..core.units import GIB_HELD, RATIO, RATIO_FINE, Result, given, grouped, plain

SMALLEST_SHOWN = 1e-40


def number(x: float) -> dict[str, object]:
    """The number `x` in every format, float and integer."""
    encoded = {key: formats.encode(x, fmt) for key, fmt in {**formats.FLOATS, **formats.INTS}.items()}
    return {"given": given(x, formats.VALUE, "the number typed"), **encoded}


def format_facts() -> dict[str, object]:
    return {**formats.FLOATS, **formats.INTS, "e4m3fnuz": formats.E4M3_FNUZ, "blocks": formats.BLOCKS,
            "bf16_coarser": _shown(formats.BF16.step_at_one, formats.FP16.step_at_one).result(
                RATIO, "bf16's step at one ÷ fp16's"),
            "fnuz_short": _shown(formats.E4M3.largest, formats.E4M3_FNUZ.largest).result(
                RATIO, "OCP E4M3's largest ÷ FNUZ's largest")}


def _shown(a: Result, b: Result):
    """a ÷ b, each as it prints."""
    return term(a, str(a)) / term(b, str(b))


@dataclass(frozen=True)
class Pairing:
    """One weight precision with one cache precision on the stack: what is held, who fits, how fast
    a lone sequence can decode."""

    weights: Result
    kv_budget: Result
    per_token: Result
    users_worst: Result
    users_paged: Result
    read: Result
    floor: Result
    fits: str


def pairing(stack: Stack) -> Pairing:
    ladder = kvcache.ladder(stack)
    held = stack.model.tokens_cached(stack.traffic.prompt_p50)
    read = roofline.decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1, held)
    return Pairing(
        weights=ladder.weights, kv_budget=ladder.kv_budget, per_token=ladder.per_token,
        users_worst=ladder.users_worst, users_paged=ladder.users_paged, read=read.total,
        floor=roofline.step_floor(read, stack.card),
        fits=verdict(ladder),
    )


def verdict(ladder: kvcache.Ladder) -> str:
    """Whether the model loads and serves, in a clause: short by how much, or how many it holds."""
    if not ladder.weights_fit:
        return (f"does not fit: the weights and what the engine's profile holds back alone overflow the pool by "
                f"{GIB_HELD.show(-ladder.kv_budget.value)}")
    if ladder.users_worst.value < 1:
        return ("loads, but not one sequence at the full context limit fits: an engine would refuse "
                "to start at this limit")
    return "fits, and what binds is the KV budget: cache memory, not compute"


def grid(stack: Stack) -> dict[str, Pairing]:
    """Every weight precision × every cache precision on the stack's model and card."""
    return {f"{w}_{kv}": pairing(replace(stack, weight_precision=PRECISIONS[w], kv_precision=KV_PRECISIONS[kv]))
            for w in PRECISIONS for kv in KV_PRECISIONS}


def gain(before: Result, after: Result, what: str) -> Result:
    if after.value <= 0:
        return Result(0.0, RATIO, formula=what, worked=f"no ratio: the second figure is {after}", inputs=made_of(after))
    return (term(before) / term(after)).result(RATIO, what)


@dataclass(frozen=True)
class TensorCores:
    card: Card
    fp8: str
    fp4: str
    fp8_dense: Result


FP8_SUPPORT = {"": "no: fp8 weights are widened to bf16 to multiply",
               "FNUZ": "yes, in the FNUZ encodings (E4M3 up to 240)",
               "OCP": "yes, OCP E4M3 and E5M2"}


def tensor_cores(card: Card) -> TensorCores:
    """What the datasheet says each card multiplies natively (dense figures)."""
    return TensorCores(card, FP8_SUPPORT[card.fp8_encoding], f"yes: {card.fp4_formats}" if card.fp4_formats else "no",
                       card.fp8_dense if card.fp8_dense_tflops > 0 else card.bf16_dense)


def tensor_core_table() -> Table:
    """Every card's tensor cores, one row a card."""
    def row(key: str, card: Card) -> tuple[str | Cell, ...]:
        view = f"cards.{key.replace('-', '_')}"
        # The rate is marked where it could be misread: bf16's on a card without fp8, fp8's (not fp4's) on one with fp4.
        rate = " (bf16)" if card.fp8_dense_tflops <= 0 else " (fp8)" if card.fp4_formats else ""
        return Cell(f"{view}.card.name"), Cell(f"{view}.fp8"), Cell(f"{view}.fp4"), Cell(f"{view}.fp8_dense", after=rate)
    return Table(("card", "fp8 tensor cores", "fp4 tensor cores", "dense rate at fp8 (bf16 where there is no fp8)"),
                 tuple(row(key, card) for key, card in CARDS.items()))


def naive(stack: Stack, pairs: dict[str, Pairing]) -> dict[str, Result]:
    """The claims this page corrects, computed exactly as they are usually made."""
    model = stack.model
    bf16 = weight_bytes(model, BF16)
    halved = (term(bf16) / 2).result(GIB_HELD, "bf16 weights ÷ 2")
    from ..model.anatomy import count_parameters
    total = count_parameters(model).total
    flat_int4 = (term(total, grouped(total.value)) * term(0.5, "0.5 B")).result(GIB_HELD, "parameters × 4 bits ÷ 8")
    fp8, int4 = weight_bytes(model, FP8), weight_bytes(model, INT4)
    return {
        "fp8_halved": halved,
        "fp8_off": (term(fp8) / term(halved)).result(RATIO_FINE, "true fp8 weights ÷ the claim"),
        "int4_flat": flat_int4,
        "int4_off": (term(int4) / term(flat_int4)).result(RATIO_FINE, "true int4 weights ÷ the claim"),
    }


def section(stack: Stack) -> dict[str, object]:
    """Document 09 on a stack: the grid, what decode gains, the 70B on this card, the cards' tensor cores."""
    pairs = grid(stack)
    big = {f"{w}_{kv}": pairing(replace(stack, model=LLAMA_3_1_70B, weight_precision=PRECISIONS[w],
                                        kv_precision=KV_PRECISIONS[kv]))
           for w, kv in (("bf16", "bf16"), ("fp8", "bf16"), ("fp8", "fp8"))}
    base, fp8_only, int4_only = pairs["bf16_bf16"], pairs["fp8_bf16"], pairs["int4_bf16"]
    return {
        "grid": pairs,
        "chosen": pairing(stack),
        "big": big,
        "big_model": LLAMA_3_1_70B,
        "speedup_fp8": gain(base.floor, fp8_only.floor, "bf16 floor ÷ fp8 weights' floor"),
        "speedup_int4": gain(base.floor, int4_only.floor, "bf16 floor ÷ int4 weights' floor"),
        "users_fp8_cache": gain(pairs["bf16_fp8"].users_worst, base.users_worst, "users with an fp8 cache ÷ with bf16"),
        "cards": {key.replace("-", "_"): tensor_cores(card) for key, card in CARDS.items()},
        "tensor_core_table": tensor_core_table(),
        "naive": naive(stack, pairs),
        "int4_bits": given(INT4.bits, formats.BITS, INT4.note),
    }


def curves(stack: Stack) -> list[dict]:
    """Users (worst case and paged) and the lone sequence's decode floor for every pairing."""
    pairs = grid(stack)
    names = [f"{w} weights, {kv} cache" for w in PRECISIONS for kv in KV_PRECISIONS]
    return [
        {"name": "users, worst case", "x": names, "y": [p.users_worst.value for p in pairs.values()]},
        {"name": "users, paged", "x": names, "y": [p.users_paged.value for p in pairs.values()]},
        {"name": "decode floor, one sequence (ms)", "x": names, "y": [1000 * p.floor.value for p in pairs.values()]},
    ]


def rows(curves_: list[dict]) -> list[list[str]]:
    return [[x, grouped(curves_[0]["y"][i]), grouped(curves_[1]["y"][i]), f"{curves_[2]['y'][i]:.2f}"]
            for i, x in enumerate(curves_[0]["x"])]


def with_number(inputs: DocumentInputs, value: float) -> DocumentInputs:
    """The number field's apply: refuses what no format here can show but as zero."""
    if value and abs(value) < SMALLEST_SHOWN:
        raise ValueError(f"a number that small (under 10^−40) is zero in every format here but fp32; "
                         f"try one nearer {plain(0.001)}")
    return replace(inputs, stored_number=value)
