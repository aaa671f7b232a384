"""Document 02: the parameter count of each model derived independently here, term by term from its
config, Mixtral's total against its active count, operations per token, and the anatomy calculator
in Chromium over file:// against CPython, bad input included, with the network blocked."""
from __future__ import annotations

import json
import re

import pytest

from arithmetic import check
from calc.model import operations
from calc.model.anatomy import breakdown, count_parameters, mixture, rule_of_thumb, tying
from calc.calculators import ANATOMY
from calc.facts import facts
from calc.fields import parse_config
from calc.model.forward import multiplied_by_group, share_curves
from calc.engine.kvcache import ladder
from calc.specs.models import (CATALOGUE, LLAMA_3_1_8B_CONFIG, LLAMA_3_2_1B, MIXTRAL_8X7B, MIXTRAL_8X7B_CONFIG)
from calc.specs.precision import BF16
from calc.model.weights import weight_bytes
from calc.core.present import leaves
from calc.specs.stack import REFERENCE
from conftest import Calculator, booted_page

DOC = "02-anatomy.html"


def llama_count(layers, hidden, heads, kv_heads, intermediate, vocab, head_dim=None, tied=False,
                experts=1, chosen=1) -> tuple[int, int]:
    """Total and active parameters of a Llama-style decoder, written out without calc: q and o are
    hidden × query width, k and v hidden × KV width, each expert three hidden × intermediate matrices,
    a router of hidden × experts when there are several, two norms a layer, and the tables."""
    head_dim = head_dim or hidden // heads
    q, kv = heads * head_dim, kv_heads * head_dim
    attention = hidden * q + hidden * kv + hidden * kv + q * hidden
    expert = hidden * intermediate + hidden * intermediate + intermediate * hidden
    router = hidden * experts if experts > 1 else 0
    layer = attention + experts * expert + router + hidden + hidden
    tables = vocab * hidden * (1 if tied else 2)
    total = layers * layer + tables + hidden
    return total, total - layers * (experts - chosen) * expert


SHAPES = {
    "llama-3.1-8b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, intermediate=14336, vocab=128256),
    "llama-3.1-70b": dict(layers=80, hidden=8192, heads=64, kv_heads=8, intermediate=28672, vocab=128256),
    "llama-3.1-405b": dict(layers=126, hidden=16384, heads=128, kv_heads=8, intermediate=53248, vocab=128256),
    "llama-3.2-1b": dict(layers=16, hidden=2048, heads=32, kv_heads=8, intermediate=8192, vocab=128256,
                         head_dim=64, tied=True),
    "mixtral-8x7b": dict(layers=32, hidden=4096, heads=32, kv_heads=8, intermediate=14336, vocab=32000,
                         experts=8, chosen=2),
}


@pytest.mark.parametrize("key, expected", [
    ("llama-3.1-8b", 8_030_261_248),
    ("llama-3.1-70b", 70_553_706_496),
    ("llama-3.1-405b", 405_853_388_800),
    ("llama-3.2-1b", 1_235_814_400),
    ("mixtral-8x7b", 46_702_792_704),
])
def test_the_breakdown_adds_up_to_the_count_derived_by_hand(key, expected):
    total, _ = llama_count(**SHAPES[key])
    assert total == expected
    model = CATALOGUE[key]
    parts = breakdown(model)
    assert parts.total.value == count_parameters(model).total.value == expected
    assert sum(c.count.value for c in parts.components) == expected
    assert parts.layers.value == expected - parts["embedding"].count.value - parts["head"].count.value - model.hidden_size
    shape = SHAPES[key]
    layers, hidden = shape["layers"], shape["hidden"]
    head_dim = shape.get("head_dim") or hidden // shape["heads"]
    assert parts["q"].count.value == parts["o"].count.value == layers * hidden * shape["heads"] * head_dim
    assert parts["k"].count.value == parts["v"].count.value == layers * hidden * shape["kv_heads"] * head_dim
    assert parts["gate"].count.value == layers * shape.get("experts", 1) * hidden * shape["intermediate"]
    assert parts["norms"].count.value == layers * 2 * hidden
    assert sum(c.share.value for c in parts.components) == pytest.approx(1)
    assert sum(c.of_layers.value for c in parts.components if c.of_layers) == pytest.approx(1)
    for component in parts.components:
        assert check(component.count.worked) == [] and check(component.share.worked) == [], component.key


def test_the_eight_b_in_numbers():
    section = facts()["anatomy"]
    assert str(section["total"]) == "8,030,261,248"
    assert section["feed_forward"].count.value == 32 * 3 * 4096 * 14336
    assert str(section["feed_forward"].share) == "70.2%" and str(section["feed_forward"].of_layers) == "80.8%"
    assert str(section["attention"].share) == "16.7%" and str(section["vocabulary"].share) == "13.1%"
    assert section["q"].shape == "4,096 × 4,096" and section["k"].shape == "4,096 × 1,024"
    assert section["down"].shape == "14,336 × 4,096" and section["head"].shape == "4,096 × 128,256"


def test_mixtral_holds_its_total_and_multiplies_its_active_count():
    total, active = llama_count(**SHAPES["mixtral-8x7b"])
    assert (total, active) == (46_702_792_704, 12_879_925_248)
    assert round(total / 1e9, 1) == 46.7 and round(active / 1e9, 1) == 12.9
    counted = mixture(MIXTRAL_8X7B)
    assert counted.total.value == total and counted.active.value == active
    assert counted.dense_sibling.value == llama_count(**{**SHAPES["mixtral-8x7b"], "experts": 1, "chosen": 1})[0]
    assert counted.name_arithmetic.value == 8 * counted.dense_sibling.value > 56e9
    # A token multiplies the shared attention, the router, two experts and the head; never the embedding.
    multiplied = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 4096 * 8 + 2 * 3 * 4096 * 14336) + 32000 * 4096
    assert operations.multiplied_parameters(MIXTRAL_8X7B).value == multiplied
    assert facts()["mixtral"]["flops"]["linear"].value == 2 * multiplied
    assert weight_bytes(MIXTRAL_8X7B, BF16).value == 2 * total > ladder(REFERENCE).capacity.value, "saves operations, not memory"


def test_mixtral_comes_from_its_published_config():
    config = MIXTRAL_8X7B_CONFIG
    expected = {"hidden_size": 4096, "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32,
                "num_key_value_heads": 8, "vocab_size": 32000, "num_local_experts": 8, "num_experts_per_tok": 2,
                "tie_word_embeddings": False, "max_position_embeddings": 32768, "rope_theta": 1e6, "rms_norm_eps": 1e-5}
    assert {k: config[k] for k in expected} == expected
    assert MIXTRAL_8X7B.source == "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json"
    pasted = parse_config(json.dumps(config))
    assert count_parameters(pasted).total.value == count_parameters(MIXTRAL_8X7B).total.value
    assert pasted.architecture == "MixtralForCausalLM" and pasted.sliding_window is None


def test_tying_saves_one_table_of_memory_and_no_arithmetic():
    total, _ = llama_count(**SHAPES["llama-3.2-1b"])
    table = 128256 * 2048
    saved = tying(LLAMA_3_2_1B)
    assert saved.table.value == table and saved.tied_total.value == total
    assert saved.untied_total.value == llama_count(**{**SHAPES["llama-3.2-1b"], "tied": False})[0] == total + table
    assert saved.saving_share.value == pytest.approx(table / (total + table))
    assert saved.saving_bytes.value == 2 * table
    untied = CATALOGUE["llama-3.1-8b"]
    assert operations.multiplied_parameters(LLAMA_3_2_1B).value == total - 16 * 2 * 2048 - 2048, \
        "the tied table is multiplied whole as the head"
    assert tying(untied).tied_total.value == 8_030_261_248 - 128256 * 4096


@pytest.mark.parametrize("key", CATALOGUE)
def test_the_groups_a_token_multiplies_are_the_operations_count(key):
    model = CATALOGUE[key]
    groups = multiplied_by_group(model)
    assert sum(groups.values()) == operations.multiplied_parameters(model).value
    assert groups["embedding"] == groups["norms"] == 0
    chart = share_curves(model)
    held, used = chart["curves"]
    assert sum(held["y"]) == pytest.approx(100) and sum(used["y"]) == pytest.approx(100)
    assert len(chart["rows"]) == len(held["x"]) and held["x"] == used["x"]
    assert ("router" in held["x"]) == model.is_mixture_of_experts


def test_operations_per_token_leave_out_the_embedding_and_add_attention():
    section = facts()["anatomy"]["flops"]
    multiplied = 8_030_261_248 - 128256 * 4096 - (32 * 2 + 1) * 4096
    assert section["linear"].value == 2 * multiplied
    assert section["naive"].value - section["linear"].value == section["unmultiplied"].value == 2 * (128256 * 4096 + 65 * 4096)
    held = REFERENCE.workload.tokens_held
    assert section["at_held"].value == 2 * multiplied + 4 * 32 * 32 * 128 * held
    assert section["at_max"].value == 2 * multiplied + 4 * 32 * 32 * 128 * 131072
    assert section["at_max"].value > 2 * section["linear"].value, "at the full context attention dominates"


def test_the_rule_of_thumb_against_the_count():
    eight = rule_of_thumb(CATALOGUE["llama-3.1-8b"])
    assert eight.estimate.value == 12 * 32 * 4096 ** 2
    assert eight.coefficient.value == 13, "GQA's 2.5 hidden² of attention and SwiGLU's 10.5 of feed-forward"
    assert eight.short_of_total.value == pytest.approx((8_030_261_248 - 12 * 32 * 4096 ** 2) / 8_030_261_248)
    big = rule_of_thumb(CATALOGUE["llama-3.1-405b"])
    assert big.coefficient.value == 11.875 and abs(big.short_of_total.value) < 1e-4, "right by coincidence"


@pytest.mark.parametrize("section", ["anatomy", "mixtral", "tied", "sizes"])
def test_every_worked_line_of_the_page_reproduces_its_figure(section):
    for path, value in leaves({section: facts()[section]}):
        if hasattr(value, "worked"):
            assert check(value.worked) == [], (path, value.worked)


def test_the_page_carries_the_figure_the_chart_the_table_and_the_calculator(site):
    html = (site / DOC).read_text(encoding="utf-8")
    assert 'class="anim-picture pass-picture"' in html and 'data-steps="7"' in html
    assert 'data-chart="anatomy-shares"' in html and 'data-calculator="anatomy"' in html
    assert ">8,030,261,248<" in html and ">46,702,792,704<" in html and ">12,879,925,248<" in html
    assert "32 × 4,096 × 14,336 = 1,879,048,192" in html
    body = re.sub(r"<script\b.*?</script>", "", html, flags=re.S)
    for name, least in {"card question": 6, "fast-answer": 8, "worked": 2, "tile": 3}.items():
        assert body.count(f'class="{name}"') >= least, name


# ---- In Chromium, from file://, offline.

DRIVER = Calculator("anatomy")
CALC = DRIVER.selector
DEFAULTS = ANATOMY.defaults


@pytest.fixture(scope="module")
def anatomy_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "02", DOC)


def reset(page) -> None:
    DRIVER.set(page, **DEFAULTS)


def cpython(values: dict, config=None, paths=(), charts=()) -> dict:
    return ANATOMY.run({**DEFAULTS, **values}, config, list(paths), list(charts))


def agrees_with_cpython(page, values: dict, config=None) -> None:
    shown = DRIVER.live(page)
    expected = cpython(values, config, paths=list(shown), charts=["anatomy-shares"])
    assert expected["ok"], expected
    assert shown == {path: figure[0] for path, figure in expected["refs"].items()}
    chart = expected["curves"]["anatomy-shares"]
    curves = None
    for _ in range(50):
        curves = page.eval_on_selector("[data-chart=anatomy-shares]",
                                       "node => node.data.map(t => ({name: t.name, x: t.x, y: t.y}))")
        if curves == chart["curves"]:
            break
        page.wait_for_timeout(100)
    assert curves == chart["curves"]
    rows = page.eval_on_selector_all("[data-chart-table='anatomy-shares'] tr",
                                     "rows => rows.map(r => Array.from(r.cells).map(c => c.textContent))")
    assert rows == chart["rows"]


def test_figures_before_and_after_python_starts_are_identical(watched):
    page = watched.page
    page.goto(watched.url_of(DOC))
    before = DRIVER.live(page)
    assert before["anatomy.total"] == "8,030,261,248"
    page.evaluate("() => window.runbookCalculator.recompute('anatomy')")
    assert DRIVER.settle(page) == "computed"
    assert DRIVER.live(page) == before
    assert watched.network() == [] and watched.problems == []


@pytest.mark.parametrize("values", [
    {},
    {"model": "mixtral-8x7b"},
    {"model": "llama-3.1-405b", "held": "131072"},
    {"model": "llama-3.2-1b", "held": "1"},
    {"model": "llama-3.1-70b", "held": "8,192"},
])
def test_the_calculator_agrees_with_cpython(anatomy_page, values):
    page = anatomy_page.page
    reset(page)
    assert DRIVER.set(page, **values) == "computed"
    agrees_with_cpython(page, {k: v.replace(",", "") for k, v in values.items()})


QWEN_LIKE = {**LLAMA_3_1_8B_CONFIG, "architectures": ["Qwen2ForCausalLM"], "tie_word_embeddings": True,
             "_name_or_path": "example/qwen-like"}


@pytest.mark.parametrize("config", [MIXTRAL_8X7B_CONFIG, QWEN_LIKE, {**LLAMA_3_1_8B_CONFIG, "mlp_bias": True}],
                         ids=["mixtral", "qwen2-tied", "mlp-bias"])
def test_a_pasted_config_gets_the_whole_breakdown(anatomy_page, config):
    page = anatomy_page.page
    reset(page)
    text = json.dumps(config)
    assert DRIVER.paste(page, text) == "computed"
    agrees_with_cpython(page, {"model": "custom"}, text)
    parts = breakdown(parse_config(text))
    assert DRIVER.live(page)["anatomy.total"] == str(parts.total)


@pytest.mark.parametrize("field, value", [
    ("held", ""), ("held", "0"), ("held", "-5"), ("held", "lots"), ("held", "1e40"), ("held", "2150.5"),
    ("held", "200000"), ("held", "2,150.5"), ("held", "21,50"), ("held", "2150\u200b"), ("held", "NaN"),
    ("held", "9" * 5_000),
], ids=lambda value: value if len(value) < 20 else f"{len(value)} characters")
def test_bad_input_gets_a_message_naming_the_field(anatomy_page, field, value):
    page = anatomy_page.page
    reset(page)
    sent = value[:1000]  # the page sends at most a thousand characters of any field
    after = DRIVER.refuse(page, field, value, cpython({field: sent})["errors"][field])
    assert not any("Traceback" in text for text in after.values())


@pytest.mark.parametrize("text, says", [
    ("{ not json", "not valid JSON"),
    ("[1, 2, 3]", "expected a JSON object"),
    (json.dumps({**LLAMA_3_1_8B_CONFIG, "architectures": ["GPT2LMHeadModel"]}), "is not an architecture calc can size"),
    (json.dumps({**LLAMA_3_1_8B_CONFIG, "kv_lora_rank": 512}), "latent attention"),
    (json.dumps({k: v for k, v in LLAMA_3_1_8B_CONFIG.items() if k != "intermediate_size"}), "intermediate_size: missing"),
    (json.dumps({**LLAMA_3_1_8B_CONFIG, "padding": "x" * 300_000}), "over 200,000 characters"),
    ("[" * 5_000 + "]" * 5_000, "levels deep"),
    (json.dumps({**MIXTRAL_8X7B_CONFIG, "num_experts_per_tok": 9}), "more than num_local_experts"),
], ids=["garbage", "not-an-object", "unknown-architecture", "latent-attention", "missing-field", "huge-paste",
        "deep-nesting", "too-many-chosen"])
def test_a_bad_config_is_refused_inline_and_the_figures_stay(anatomy_page, text, says):
    page = anatomy_page.page
    reset(page)
    assert DRIVER.paste(page, json.dumps(QWEN_LIKE)) == "computed"
    before = DRIVER.live(page)
    assert DRIVER.paste(page, text) == "invalid"
    message = page.text_content(f"{CALC} [data-error-for=config]")
    assert says in message and message == cpython({"model": "custom"}, text)["errors"]["config"]
    assert "Traceback" not in message and len(message) < 300
    assert DRIVER.live(page) == before
    assert DRIVER.paste(page, json.dumps(MIXTRAL_8X7B_CONFIG)) == "computed", "Python survives"
    assert DRIVER.live(page)["anatomy.total"] == "46,702,792,704"


def test_a_config_the_table_cannot_itemise_is_refused_by_name():
    import json
    from calc.calculators import ANATOMY
    from calc.fields import CUSTOM
    from calc.specs.models import DEEPSEEK_V3_CONFIG, GEMMA_2_9B_CONFIG
    refused = ANATOMY.run({**ANATOMY.defaults, "model": CUSTOM}, json.dumps(DEEPSEEK_V3_CONFIG), [], [], False)
    assert "latent attention" in refused["errors"]["config"] and "671,026,419,200" in refused["errors"]["config"]
    drawn = ANATOMY.run({**ANATOMY.defaults, "model": CUSTOM}, json.dumps(GEMMA_2_9B_CONFIG), ["anatomy.total"], [], False)
    assert drawn["ok"] and drawn["refs"]["anatomy.total"][0] == "9,241,705,984"
