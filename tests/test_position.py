"""Document 08: RoPE's frequencies and wavelengths for Llama 3.1, recomputed here independently from
Meta's `apply_scaling` and transformers' `_compute_llama3_parameters`; the counts of pairs per regime;
rules calc does not implement, refused by name; what the span costs; the position calculator in
Chromium, offline, with its bad-input battery."""
from __future__ import annotations

import json
import math
import struct

import pytest

from arithmetic import check
from calc.engine import kvcache, timing
from calc.documents import position
from calc.calculators import POSITION
from calc.facts import facts
from calc.specs.models import CATALOGUE, LLAMA_3_1_8B_CONFIG, ConfigError, Model
from calc.core.present import leaves
from calc.specs.stack import REFERENCE
from calc.core.units import Result
from conftest import Calculator, booted_page

# Llama 3.1 8B Instruct's published config.json (huggingface.co/meta-llama/Llama-3.1-8B-Instruct).
THETA, HEAD_DIM = 500_000.0, 128
FACTOR, LOW, HIGH, ORIGINAL = 8.0, 1.0, 4.0, 8192


def meta_apply_scaling(freqs: list[float]) -> list[float]:
    """llama-models, models/llama3/reference_impl/model.py, apply_scaling, one element at a time."""
    low_freq_wavelen = ORIGINAL / LOW
    high_freq_wavelen = ORIGINAL / HIGH
    out = []
    for freq in freqs:
        wavelen = 2 * math.pi / freq
        new = freq / FACTOR if wavelen > low_freq_wavelen else freq
        smooth = (ORIGINAL / wavelen - LOW) / (HIGH - LOW)
        if high_freq_wavelen <= wavelen <= low_freq_wavelen:
            new = (1 - smooth) * new / FACTOR + smooth * new
        out.append(new)
    return out


def default_inv_freq(to=float) -> list[float]:
    """transformers' _compute_default_rope_parameters: 1 / base ** (arange(0, dim, 2) / dim)."""
    return [to(1.0 / to(to(THETA) ** to(to(j) / HEAD_DIM))) for j in range(0, HEAD_DIM, 2)]


def float32(x: float) -> float:
    return struct.unpack("f", struct.pack("f", x))[0]


def test_the_model_reads_its_rope_fields_from_config():
    model = CATALOGUE["llama-3.1-8b"]
    assert model.rope_theta == THETA
    assert model.rope_scaling_fields == LLAMA_3_1_8B_CONFIG["rope_scaling"] == {
        "factor": 8.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192, "rope_type": "llama3"}
    assert model.max_position_embeddings == 131_072
    assert CATALOGUE["llama-3.2-1b"].rope_scaling_fields["factor"] == 32.0
    assert Model.from_config({k: v for k, v in LLAMA_3_1_8B_CONFIG.items() if k != "rope_theta"}).rope_theta == 10_000.0
    for bad in ("fast", -1, 1, 10 ** 13, True):
        with pytest.raises(ConfigError, match="rope_theta"):
            Model.from_config({**LLAMA_3_1_8B_CONFIG, "rope_theta": bad})
    with pytest.raises(ConfigError, match="rope_scaling"):
        Model.from_config({**LLAMA_3_1_8B_CONFIG, "rope_scaling": [8]})


def test_llama31_wavelengths_follow_the_published_rule():
    expected = meta_apply_scaling(default_inv_freq())
    table = position.pairs(THETA, HEAD_DIM, position.rule_of(CATALOGUE["llama-3.1-8b"]))
    assert len(table) == HEAD_DIM // 2 == 64
    for pair, before, after in zip(table, default_inv_freq(), expected, strict=True):
        assert pair.frequency == pytest.approx(before, rel=1e-12)
        assert pair.scaled_frequency == pytest.approx(after, rel=1e-12)
        assert pair.scaled_wavelength == pytest.approx(2 * math.pi / after, rel=1e-12)


def test_the_counts_of_pairs_in_each_regime():
    wavelengths = [2 * math.pi / f for f in default_inv_freq()]
    kept = sum(1 for w in wavelengths if w < ORIGINAL / HIGH)
    divided = sum(1 for w in wavelengths if w > ORIGINAL / LOW)
    assert (kept, 64 - kept - divided, divided) == (29, 6, 29)
    # in float32, as torch computes inv_freq, the boundaries fall in the same places
    single = [2 * math.pi / f for f in default_inv_freq(float32)]
    assert sum(1 for w in single if w < ORIGINAL / HIGH) == kept
    assert sum(1 for w in single if w > ORIGINAL / LOW) == divided
    counts = facts()["position"]["counts"]
    assert [counts[k].value for k in ("unchanged", "blended", "divided")] == [29, 6, 29]


def test_the_page_figures():
    section = facts()["position"]
    last = 2 * math.pi * THETA ** (126 / 128)
    assert section["longest_before"].value == pytest.approx(last)
    assert section["longest_after"].value == pytest.approx(last * FACTOR)
    assert section["fastest"].value == pytest.approx(2 * math.pi)
    assert section["high_wavelength"].value == 2048 and section["low_wavelength"].value == 8192
    assert section["factor_reach"].value == 65_536 and section["claimed_multiple"].value == 16
    assert section["ntk_longest"].value == pytest.approx(last * FACTOR), "NTK slows the last pair by the factor"
    assert section["llama2_longest"].value == pytest.approx(2 * math.pi * 10_000 ** (126 / 128))


def test_linear_and_no_scaling():
    model = CATALOGUE["llama-3.1-8b"]
    linear = position.pairs(THETA, HEAD_DIM, position.rule_of(position.choose_rule(model, "linear")))
    assert all(p.regime == "divided" and p.scaled_frequency == pytest.approx(p.frequency / FACTOR) for p in linear)
    plain = position.pairs(THETA, HEAD_DIM, position.rule_of(position.choose_rule(model, "none")))
    assert all(p.regime == "unchanged" and p.scaled_frequency == p.frequency for p in plain)


@pytest.mark.parametrize("kind", ["yarn", "dynamic", "longrope", "ntk", "something-new"])
def test_rules_calc_does_not_implement_are_named_not_guessed(kind):
    config = {**LLAMA_3_1_8B_CONFIG, "rope_scaling": {"rope_type": kind, "factor": 4.0,
                                                      "long_factor": [1.0, 2.0], "short_factor": [1.0, 1.0]}}
    model = Model.from_config(config)
    with pytest.raises(position.UnsupportedScaling, match=kind):
        position.rule_of(model)
    section = position.section(REFERENCE.__class__(**{**REFERENCE.__dict__, "model": model}))
    assert kind in section["message"] and "counts" not in section
    assert position.wavelength_curves(REFERENCE.__class__(**{**REFERENCE.__dict__, "model": model})) == []


def test_the_span_is_priced_with_the_cache_formula_and_the_time_model():
    section = facts()["position"]
    stack = REFERENCE
    assert section["at_reach"]["cache"].value == 131_072 * kvcache.bytes_per_token(stack.model, stack.kv_precision).value
    assert section["at_reach"]["cache"].value == 16 * 1024 ** 3
    assert section["at_reach"]["prefill"].value == timing.prefill_time(stack, 131_072).value
    assert section["prefill_growth"].value > section["cache_growth"].value == 16


def test_every_worked_line_adds_up_and_a_wrong_power_is_caught():
    for path, value in leaves({"position": facts()["position"]}):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], (path, value.worked)
    assert check("2 × π × 500,000^(126 ÷ 128) = 2,559,196 tokens") == []
    assert check("2 × π × 500,000^(126 ÷ 128) = 2,600,000 tokens") != []


def test_the_calculator_refuses_bad_input_in_cpython():
    base = POSITION.defaults
    cases = {"factor": "0", "low_freq_factor": "4", "rope_theta": "-5", "head_dim": "127",
             "context": "1e12", "rope_type": "yarn"}
    for name, value in cases.items():
        answer = POSITION.run({**base, name: value}, None, ["position.counts.unchanged"], [], False)
        assert not answer["ok"], (name, value)
        field = "high_freq_factor" if name == "low_freq_factor" else name
        assert answer["errors"][field], (name, answer)
    json.dumps(POSITION.run({**base, "rope_theta": "10000000000", "head_dim": "1024", "factor": "1000"},
                            None, ["position.longest_after"], ["rope-wavelengths"], False), allow_nan=False)


# ---- In Chromium, over file://, with the network blocked.

@pytest.fixture(scope="module")
def position_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "08", "position")


CALC = Calculator("position")


@pytest.mark.parametrize("inputs", [
    {"rope_type": "llama3", "factor": "32", "context": "65536"},
    {"rope_theta": "10000", "head_dim": "64", "rope_type": "linear", "factor": "4"},
    {"rope_type": "none", "context": "8192"},
])
def test_the_position_calculator_follows_cpython(position_page, inputs):
    page = position_page.page
    CALC.set(page, **POSITION.defaults)
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = POSITION.run({**POSITION.defaults, **inputs}, None, list(shown), [], False)
    for ref, text in shown.items():
        assert text == expected["refs"][ref][0], ref


@pytest.mark.parametrize("field, value", [
    ("factor", "0"), ("rope_theta", "-500000"), ("rope_theta", "500000,5"), ("rope_theta", "1e99"),
    ("head_dim", "129"), ("context", "99999999999"), ("rope_type", "yarn"), ("rope_type", "longrope"),
])
def test_bad_input_gets_a_message(position_page, field, value):
    page = position_page.page
    CALC.set(page, **POSITION.defaults)
    expected = POSITION.run({**POSITION.defaults, field: value}, None, [], [], False)["errors"][field]
    CALC.refuse(page, field, value, expected)
    CALC.set(page, **POSITION.defaults)


def test_crossed_frequency_factors_are_refused_on_the_high_one(position_page):
    page = position_page.page
    CALC.set(page, **POSITION.defaults)
    before = CALC.live(page)
    assert CALC.set(page, low_freq_factor="4", high_freq_factor="4") == "invalid"
    message = page.text_content(f"{CALC.selector} [data-error-for=high_freq_factor]")
    assert "above low_freq_factor" in message
    assert CALC.live(page) == before
    CALC.set(page, **POSITION.defaults)


def test_the_figure_steps_and_the_chart_redraws(position_page):
    page = position_page.page
    assert page.locator("figure.anim .rope-arrow[data-step]").count() == 3 * position.FIGURE_POSITIONS
    CALC.set(page, **POSITION.defaults)
    CALC.set(page, rope_type="none")
    page.wait_for_function("() => { const c = document.querySelector('[data-chart=\"rope-wavelengths\"]');"
                           " return c && c.textContent.includes('no rule in the config'); }", timeout=20_000)
    CALC.set(page, **POSITION.defaults)
