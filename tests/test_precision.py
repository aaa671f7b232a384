"""Document 09: the encoder against Python's struct (fp16 'e', fp32 'f') and against the OCP fp8
extremes; block formats' bits per weight counted by hand from their layouts; the precision grid of
the reference stack rung by rung; the 70B on one H100; both calculators in Chromium, offline, with
their bad-input batteries."""
from __future__ import annotations

import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import by_hand as hand
from arithmetic import check
from calc.specs import formats
from calc.specs.models import LLAMA_3_1_8B_CONFIG
from calc.calculators import NUMBER_FORMATS, PRECISION
from calc.specs.cards import H100_SXM
from calc.facts import facts
from calc.specs.formats import BF16, E2M1, E4M3, E4M3_FNUZ, E5M2, FP16, FP32, INT4, INT8, decode, encode
from calc.core.present import leaves
from calc.core.units import Result
from conftest import Calculator, booted_page

GiB = 1024 ** 3


def via_struct(x: float, code: str) -> float:
    return struct.unpack(code, struct.pack(code, x))[0]


# ---- The encoder against struct

def test_every_fp16_pattern_decodes_and_reencodes_as_struct_does():
    for pattern in range(2 ** 16):
        expected = struct.unpack("<e", struct.pack("<H", pattern))[0]
        ours = decode(FP16, pattern)
        if math.isnan(expected):
            assert math.isnan(ours), pattern
            continue
        assert ours == expected and math.copysign(1, ours) == math.copysign(1, expected), pattern
        if math.isfinite(expected):
            stored = encode(expected, FP16)
            assert stored.stored.value == expected, pattern
            assert int(stored.bits.replace(" ", ""), 2) == pattern, pattern


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_fp16_rounding_matches_struct(x):
    try:
        expected = via_struct(x, "e")
    except OverflowError:  # struct refuses what rounds past 65,504; IEEE says infinity
        assert encode(x, FP16).stored.value == math.copysign(math.inf, x)
        return
    assert encode(x, FP16).stored.value == expected


@settings(max_examples=2000, deadline=None)
@given(st.floats(allow_nan=False, allow_infinity=False, width=64))
def test_fp32_rounding_matches_struct(x):
    try:
        expected = via_struct(x, "f")
    except OverflowError:
        assert encode(x, FP32).stored.value == math.copysign(math.inf, x)
        return
    got = encode(x, FP32)
    assert got.stored.value == expected
    assert got.below <= x <= got.above if x >= 0 and got.above is not None else True


@settings(max_examples=1000, deadline=None)
@given(st.floats(-1e6, 1e6))
def test_bf16_is_fp32_with_the_low_half_rounded_away(x):
    bits = struct.unpack("<I", struct.pack("<f", via_struct(x, "f")))[0]
    # bf16 of the double directly, against bf16 of its fp32 rounding: equal except where double
    # rounding could differ, so compare against the exact rule on the fp32 value only when exact
    if via_struct(x, "f") == x:
        upper, lower = bits >> 16, bits & 0xFFFF
        rounded = upper + (lower > 0x8000 or (lower == 0x8000 and upper & 1))
        expected = struct.unpack("<f", struct.pack("<I", rounded << 16))[0]
        assert encode(x, BF16).stored.value == expected


def test_the_fp8_extremes_are_the_ocp_specs():
    assert E4M3.largest.value == 448 and E4M3.smallest_normal.value == 2 ** -6 and E4M3.smallest_subnormal.value == 2 ** -9
    assert E5M2.largest.value == 57344 and E5M2.smallest_normal.value == 2 ** -14 and E5M2.smallest_subnormal.value == 2 ** -16
    assert E4M3_FNUZ.largest.value == 240
    assert E2M1.largest.value == 6 and E2M1.smallest_subnormal.value == 0.5
    assert FP16.largest.value == 65504 and BF16.largest.value == float((2 - 2 ** -7) * 2 ** 127)


def test_every_fp8_pattern_is_what_the_spec_says():
    e4m3 = [decode(E4M3, p) for p in range(256)]
    assert sum(math.isnan(v) for v in e4m3) == 2, "one NaN pattern per sign, S.1111.111"
    assert max(v for v in e4m3 if not math.isnan(v)) == 448 and not any(math.isinf(v) for v in e4m3)
    e5m2 = [decode(E5M2, p) for p in range(256)]
    assert sum(math.isinf(v) for v in e5m2) == 2 and sum(math.isnan(v) for v in e5m2) == 6
    assert max(v for v in e5m2 if math.isfinite(v)) == 57344
    fnuz = [decode(E4M3_FNUZ, p) for p in range(256)]
    assert sum(math.isnan(v) for v in fnuz) == 1 and max(v for v in fnuz if not math.isnan(v)) == 240
    # every finite pattern round-trips through the encoder
    for fmt, values in ((E4M3, e4m3), (E5M2, e5m2), (E2M1, [decode(E2M1, p) for p in range(16)])):
        for v in values:
            if math.isfinite(v):
                assert encode(v, fmt).stored.value == v


@pytest.mark.parametrize("x, e4m3, e5m2", [
    (448, 448, 448), (463.99, 448, 448), (464, 448, 448), (480, 448, 512), (1e6, 448, math.inf),
    (61439, 448, 57344), (61440, 448, math.inf), (2 ** -9, 2 ** -9, 2 ** -9), (2 ** -10, 0, 2 ** -10),
    (2 ** -17, 0, 0), (3 * 2 ** -18, 0, 2 ** -16), (-500, -448, -512), (0.1, 0.1015625, 0.09375),
])
def test_fp8_rounding_saturation_and_overflow(x, e4m3, e5m2):
    assert encode(x, E4M3).stored.value == e4m3
    assert encode(x, E5M2).stored.value == e5m2


def test_integers_round_half_to_even_and_saturate():
    assert [encode(v, INT8).stored.value for v in (2.5, 3.5, -2.5, 127.4, 300, -300)] == [2, 4, -2, 127, 127, -128]
    assert [encode(v, INT4).stored.value for v in (7.6, -8.4, 0.5, 1.5)] == [7, -8, 0, 2]
    assert encode(-1, INT8).bits == "11111111"


def test_the_neighbours_bracket_the_number():
    e = encode(0.1, FP16)
    assert e.below < 0.1 < e.above and e.stored.value in (e.below, e.above)
    assert encode(448, E4M3).neighbours == "448 exactly"
    assert encode(1000, E4M3).above is None and encode(1000, E4M3).below == 448


# ---- Block formats, counted by hand from the layouts

def test_block_formats_bits_per_weight():
    by_hand = {
        "int4_g128": (128 * 4 + 16 + 16) / 128,      # 4.25: calc.specs.precision's INT4
        "awq": (128 * 4 + 16 + 4) / 128,
        "q4_0": (2 + 16) * 8 / 32,                   # block_q4_0: ggml_half d; uint8_t qs[16]
        "q4_k": (2 + 2 + 12 + 128) * 8 / 256,        # block_q4_K: 144 bytes per 256 weights
        "q6_k": (128 + 64 + 16 + 2) * 8 / 256,       # block_q6_K: 210 bytes
        "q8_0": (2 + 32) * 8 / 32,
        "mxfp4": (32 * 4 + 8) / 32,
        "nvfp4": (16 * 4 + 8) / 16,
    }
    assert {k: b.bits_per_weight.value for k, b in formats.BLOCKS.items()} == by_hand
    assert formats.BLOCKS["q4_k"].bytes_per_block.value == 144
    assert facts()["precision"]["int4_bits"].value == by_hand["int4_g128"]


# ---- The precision grid of the reference stack

PARAMS, EMBEDDING = 8_030_261_248, 128_256 * 4096
BLOCK_MATRICES = PARAMS - 2 * EMBEDDING - (2 * 32 + 1) * 4096
POOL = H100_SXM.cuda_gib * 2 ** 30 * 0.90  # CUDA's total, the one vLLM multiplies
PER_TOKEN = 2 * 32 * 8 * 128                       # elements; × bytes per element


def test_the_grid_by_hand():
    grid = facts()["precision"]["grid"]
    rotary = 131_072 * 128 * 2                         # the rotary table every GPU keeps, loaded with the weights
    weights = {"bf16": 2 * PARAMS, "fp8": BLOCK_MATRICES + 2 * (PARAMS - BLOCK_MATRICES),
               "int4": BLOCK_MATRICES * 4.25 / 8 + 2 * (PARAMS - BLOCK_MATRICES)}
    reserve = hand.profile_reserve(LLAMA_3_1_8B_CONFIG)  # activation, non-torch, runner state, graphs
    for w, held in weights.items():
        for kv, size in (("bf16", 2), ("fp8", 1)):
            pair = grid[f"{w}_{kv}"]
            assert pair.weights.value == pytest.approx(held + rotary)
            budget = math.ceil(POOL) - held - rotary - reserve
            assert pair.kv_budget.value == pytest.approx(budget)
            blocks = int(budget // (16 * PER_TOKEN * size))
            assert pair.users_worst.value == blocks * 16 // 8192
            assert pair.users_paged.value == blocks * 16 // 2304
    shown = {k: (str(p.users_worst), str(p.users_paged)) for k, p in grid.items()}
    capacity = hand.token_capacity(hand.kv_budget())
    assert shown["bf16_bf16"] == (str(capacity // 8192), str(capacity // 2304))
    floor = grid["bf16_bf16"].floor.value
    assert floor == pytest.approx((2 * PARAMS - 2 * EMBEDDING + 2000 * PER_TOKEN * 2) / 3.35e12)


def test_the_70b_in_fp8_does_not_start_on_one_h100():
    """Its weights fit the pool, but with the profile's reserve taken too nothing is left for a cache,
    and vLLM refuses to start (the reserve: calc.engine.memory, set beside published logs in test_engine)."""
    big = facts()["precision"]["big"]
    assert big["bf16_bf16"].fits.startswith("does not fit")
    fp8 = big["fp8_bf16"]
    from calc.specs.models import LLAMA_3_1_70B_CONFIG
    held = big["fp8_bf16"].weights.value
    assert held < math.ceil(POOL)
    assert fp8.kv_budget.value == pytest.approx(math.ceil(POOL) - held - hand.profile_reserve(LLAMA_3_1_70B_CONFIG))
    assert fp8.kv_budget.value < 0 and fp8.fits.startswith("does not fit")
    assert fp8.users_worst.value == fp8.users_paged.value == big["fp8_fp8"].users_paged.value == 0


def test_cards_with_fp8_and_fp4_tensor_cores():
    cards = facts()["precision"]["cards"]
    no_fp8 = {k for k, c in cards.items() if c.fp8.startswith("no")}
    assert no_fp8 == {"a100_80", "a100_40"}
    assert {k for k, c in cards.items() if c.fp4 != "no"} == {"b200"}
    assert "FNUZ" in cards["mi300x"].fp8


def test_every_worked_line_adds_up():
    namespace = facts()
    checked = 0
    for section in ("formats", "number", "precision"):
        for path, value in leaves({section: namespace[section]}, depth=5):
            if isinstance(value, Result):
                assert check(value.worked) == [], (path, value.worked)
                checked += 1
    assert checked > 200
    assert check("(1 + 6 ÷ 2^3) × 2^8 = 480") != [], "a wrong maximum is caught"


@settings(max_examples=300, deadline=None)
@given(st.floats(-1e9, 1e9).filter(lambda x: x == 0 or abs(x) >= 1e-40))
def test_any_number_shows_arithmetic_that_adds_up(x):
    answer = NUMBER_FORMATS.run({"number": repr(x)}, None,
                                [f"number.{k}.{f}" for k in ("fp32", "fp16", "bf16", "e4m3", "e5m2", "e2m1", "int8", "int4")
                                 for f in ("stored", "error", "relative", "bits", "neighbours")], [], False)
    assert answer["ok"], answer
    json.dumps(answer, allow_nan=False)
    for ref, (text, title) in answer["refs"].items():
        assert check(title) == [] and "inf" not in text.split() and "nan" not in text.split(), (ref, text, title)


BAD_NUMBERS = ["nan", "inf", "1e400", "0,5", "twelve", "", "1e-300", "2e9"]


@pytest.mark.parametrize("value", BAD_NUMBERS)
def test_the_number_calculator_refuses_bad_input_in_cpython(value):
    answer = NUMBER_FORMATS.run({"number": value}, None, [], [], False)
    assert not answer["ok"] and answer["errors"]["number"]


# ---- In Chromium, over file://, with the network blocked.

@pytest.fixture(scope="module")
def precision_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "09", "formats")


FORMATS = Calculator("formats")
PAIRS = Calculator("precision")


@pytest.mark.parametrize("number", ["0.1", "-3.14159", "65520", "0.0001", "448"])
def test_the_number_calculator_follows_cpython(precision_page, number):
    page = precision_page.page
    assert FORMATS.set(page, number=number) == "computed"
    shown = FORMATS.live(page)
    expected = NUMBER_FORMATS.run({"number": number}, None, list(shown), [], False)
    assert shown and all(text == expected["refs"][ref][0] for ref, text in shown.items())
    FORMATS.set(page, **NUMBER_FORMATS.defaults)


@pytest.mark.parametrize("value", ["nan", "inf", "1e400", "0,5", "twelve", "1e-300"])
def test_the_number_calculator_refuses_bad_input(precision_page, value):
    page = precision_page.page
    FORMATS.set(page, **NUMBER_FORMATS.defaults)
    expected = NUMBER_FORMATS.run({"number": value}, None, [], [], False)["errors"]["number"]
    FORMATS.refuse(page, "number", value, expected)
    FORMATS.set(page, **NUMBER_FORMATS.defaults)


@pytest.mark.parametrize("inputs", [
    {"model": "llama-3.1-70b", "weights": "fp8", "kv": "fp8"},
    {"card": "a100-40", "weights": "int4"},
    {"model": "llama-3.1-70b", "card": "b200", "weights": "bf16"},
])
def test_the_precision_calculator_follows_cpython(precision_page, inputs):
    page = precision_page.page
    PAIRS.set(page, **PRECISION.defaults)
    assert PAIRS.set(page, **inputs) == "computed"
    shown = PAIRS.live(page)
    expected = PRECISION.run({**PRECISION.defaults, **inputs}, None, list(shown), [], False)
    assert shown and all(text == expected["refs"][ref][0] for ref, text in shown.items())
    PAIRS.set(page, **PRECISION.defaults)


def test_the_bits_in_the_figure_follow_the_number(precision_page):
    page = precision_page.page
    FORMATS.set(page, **NUMBER_FORMATS.defaults)
    FORMATS.set(page, number="-2")
    page.wait_for_function("() => { const n = document.querySelector('figure.anim [data-ref=\"number.fp16.exponent\"]');"
                           " return n && n.textContent === '10000'; }", timeout=20_000)
    assert page.text_content('figure.anim [data-ref="number.fp16.sign"]') == "1"
    FORMATS.set(page, **NUMBER_FORMATS.defaults)


def test_minus_zero_keeps_its_sign_bit():
    from calc.calculators import NUMBER_FORMATS
    answer = NUMBER_FORMATS.run({"number": "-0"}, None, ["number.fp16.sign", "number.bf16.sign"], [], False)
    assert answer["refs"]["number.fp16.sign"][0] == "1" and answer["refs"]["number.bf16.sign"][0] == "1"
