"""Document 07: every setting of the attention dial on the reference model and on published configs,
each derived here by hand from the config's numbers; the configs calc now reads (DeepSeek-V2/V3,
Gemma 2) and the ones it still refuses; the attention calculator in Chromium over file://."""
from __future__ import annotations

import json

import pytest

import by_hand
from arithmetic import check
from calc.model.anatomy import count_parameters
from calc.calculators import ATTENTION, CAPACITY
from calc.facts import facts
from calc.fields import CUSTOM
from calc.specs.models import (DEEPSEEK_V2_CONFIG, DEEPSEEK_V3_CONFIG, GEMMA_2_9B_CONFIG, LLAMA_3_1_8B_CONFIG,
                         MISTRAL_7B_CONFIG, ConfigError, Model)
from calc.core.present import leaves
from calc.core.units import Result
from conftest import Calculator, booted_page

KiB, GiB = 1024, 1024 ** 3
# Llama 3.1 8B, by hand: 32 layers, 32 query heads, 8 KV heads of 128, bf16 (2 bytes).
LAYERS, HEADS, KV_HEADS, WIDTH, BYTES = 32, 32, 8, 128, 2
LIMIT, LONG, BLOCK = 8192, 32768, 16
BUDGET = by_hand.kv_budget()  # document 06's ladder, as vLLM 0.33.0 climbs it on the reference card

PER_TOKEN = {
    "mha": 2 * LAYERS * HEADS * WIDTH * BYTES,                  # 524,288 B
    "gqa": 2 * LAYERS * KV_HEADS * WIDTH * BYTES,               # 131,072 B
    "mqa": 2 * LAYERS * 1 * WIDTH * BYTES,                      # 16,384 B
    "mla": LAYERS * (4 * WIDTH + WIDTH // 2) * BYTES,           # a latent of 512 and a RoPE key of 64 per layer
    "window": 2 * LAYERS * KV_HEADS * WIDTH * BYTES,
    "hybrid": 2 * LAYERS * KV_HEADS * WIDTH * BYTES,
}
LAYER_TOKEN = 2 * KV_HEADS * WIDTH * BYTES                      # one token in one layer, 4,096 B
PER_USER = {
    "mha": PER_TOKEN["mha"] * LIMIT,
    "gqa": PER_TOKEN["gqa"] * LIMIT,
    "mqa": PER_TOKEN["mqa"] * LIMIT,
    "mla": PER_TOKEN["mla"] * LIMIT,
    "window": PER_TOKEN["window"] * 4096,                       # Mistral's window caps every layer
    "hybrid": LAYER_TOKEN * (16 * LIMIT + 16 * 4096),           # Gemma 2's alternation: half the layers windowed
}


@pytest.fixture(scope="module")
def section():
    return facts()["attention"]


def test_the_reference_model_is_read_by_hand(section):
    base = section["base"]
    assert (base.num_hidden_layers, base.num_attention_heads, base.num_key_value_heads, base.head_dim) == \
        (LAYERS, HEADS, KV_HEADS, WIDTH)
    assert section["group"].value == HEADS // KV_HEADS == 4


@pytest.mark.parametrize("key", list(PER_TOKEN))
def test_every_setting_on_the_reference_model(section, key):
    chosen = section["settings"][key]
    assert chosen.per_token.value == PER_TOKEN[key]
    assert chosen.per_user.value == PER_USER[key]
    assert chosen.users.value == int(BUDGET // PER_USER[key])
    assert chosen.versus_multi_head.value == pytest.approx(PER_TOKEN["mha"] * LIMIT / PER_USER[key])


def test_the_settings_in_kib_and_users(section):
    shown = {k: (str(s.per_token), str(s.users)) for k, s in section["settings"].items()}
    sizes = {"mha": "512 KiB", "gqa": "128 KiB", "mqa": "16 KiB", "mla": "36 KiB", "window": "128 KiB", "hybrid": "128 KiB"}
    assert shown == {k: (size, f"{int(BUDGET // PER_USER[k]):,}") for k, size in sizes.items()}
    assert section["settings"]["gqa"].users.value == facts()["ladder"].users_worst.value, "the ladder's own count"


def test_at_the_long_length_windows_stop_growing(section):
    assert section["settings"]["window"].per_user_long.value == PER_TOKEN["window"] * 4096
    assert section["settings"]["hybrid"].per_user_long.value == LAYER_TOKEN * (16 * LONG + 16 * 4096)
    assert section["settings"]["gqa"].per_user_long.value == PER_TOKEN["gqa"] * LONG


def test_deepseek_v3_latent_against_multi_head(section):
    v3 = section["deepseek_v3"]
    assert v3["elements"].value == 512 + 64
    assert v3["per_token"].value == 61 * (512 + 64) * 2 == 70_272
    assert v3["multi_head"].value == 61 * 128 * ((128 + 64) + 128) * 2 == 4_997_120
    assert v3["versus_multi_head"].value == pytest.approx(4_997_120 / 70_272)
    assert str(v3["per_token"]) in ("68.62 KiB", "68.63 KiB") and str(v3["multi_head"]) == "4,880 KiB"


def test_deepseek_v2_latent_against_multi_head(section):
    v2 = section["deepseek_v2"]
    assert v2["per_token"].value == 60 * (512 + 64) * 2 == 69_120
    assert v2["multi_head"].value == 60 * 128 * (192 + 128) * 2
    assert str(v2["per_token"]) == "67.5 KiB"


def test_mistral_window_at_32k(section):
    mistral = section["mistral"]
    assert mistral["length"].value == LONG
    assert mistral["per_token"].value == 2 * 32 * 8 * 128 * 2
    assert mistral["unbounded"].value == 131_072 * LONG
    assert mistral["per_user_long"].value == 131_072 * 4096
    assert mistral["window_saving"].value == LONG / 4096 == 8


def test_gemma_2_hybrid_at_its_limit(section):
    gemma = section["gemma"]
    layer_token = 2 * 8 * 256 * 2                                # 8 KV heads of 256, bf16
    assert gemma["per_token"].value == 42 * layer_token == 344_064
    assert gemma["length"].value == 8192
    assert gemma["per_user_long"].value == layer_token * (21 * 8192 + 21 * 4096)
    assert section["naive"]["window"].value == 42 * layer_token * 4096
    assert section["naive"]["window_off"].value == pytest.approx(1.5)


def test_compute_per_position(section):
    compute = section["compute"]
    assert compute["gqa_ops"].value == 4 * HEADS * WIDTH
    for key, kv_heads in (("mha", HEADS), ("gqa", KV_HEADS), ("mqa", 1)):
        assert compute["gqa_intensity"][key].value == 4 * HEADS * WIDTH / (2 * kv_heads * WIDTH * 2)
    assert compute["latent_ops"].value == 2 * 128 * (512 + 64) + 2 * 128 * 512 == 278_528
    assert compute["multi_head_ops"].value == 2 * 128 * 192 + 2 * 128 * 128 == 81_920
    assert compute["latent_intensity"].value == pytest.approx(278_528 / (576 * 2))


def test_corrections(section):
    naive = section["naive"]
    assert naive["latent"].value == 512 * 2
    assert naive["latent_off"].value == pytest.approx(70_272 / 1024)
    assert section["projection"]["gqa"].value == 4096 * 8 * 128
    assert section["projection"]["multi_head"].value == 4096 * 32 * 128
    assert section["uptraining"].value == 0.05


def test_deepseek_parameters_count_by_hand():
    # DeepSeek-V3: q through a 1,536 bottleneck, kv through a 512 latent plus a 64-wide RoPE key.
    h, heads = 7168, 128
    attn = h * 1536 + 1536 + 1536 * heads * 192 + h * 576 + 512 + 512 * heads * 256 + heads * 128 * h
    expert = 3 * h * 2048
    moe = 257 * expert + 256 * h + 256                            # 256 routed + 1 shared, router and its bias
    dense = 3 * h * 18432
    total = 3 * (attn + dense + 2 * h) + 58 * (attn + moe + 2 * h) + 2 * 129280 * h + h
    assert count_parameters(Model.from_config(DEEPSEEK_V3_CONFIG)).total.value == total == 671_026_419_200
    h = 5120
    attn = h * 1536 + 1536 + 1536 * heads * 192 + h * 576 + 512 + 512 * heads * 256 + heads * 128 * h
    moe = 162 * 3 * h * 1536 + 160 * h
    total = (attn + 3 * h * 12288 + 2 * h) + 59 * (attn + moe + 2 * h) + 2 * 102400 * h + h
    assert count_parameters(Model.from_config(DEEPSEEK_V2_CONFIG)).total.value == total == 235_741_434_880


def test_gemma_2_parameters_count_by_hand():
    h = 3584
    per_layer = h * 4096 + 2 * h * 2048 + 4096 * h + 3 * h * 14336 + 4 * h
    assert count_parameters(Model.from_config(GEMMA_2_9B_CONFIG)).total.value == 42 * per_layer + 256000 * h + h


def test_every_worked_line_adds_up(section):
    for path, value in leaves({"attention": section}, depth=5):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_layer_types_name_the_windowed_layers():
    kinds = ["sliding_attention", "full_attention"] * 21
    model = Model.from_config({**GEMMA_2_9B_CONFIG, "layer_types": kinds[:-1] + ["sliding_attention"]})
    assert model.window_layers == 22
    with pytest.raises(ConfigError, match="^layer_types: "):
        Model.from_config({**GEMMA_2_9B_CONFIG, "layer_types": ["sliding_attention"]})


@pytest.mark.parametrize("change, field", [
    ({"kv_lora_rank": None}, "kv_lora_rank"), ({"qk_rope_head_dim": "64"}, "qk_rope_head_dim"),
    ({"moe_layer_freq": 2}, "moe_layer_freq"), ({"first_k_dense_replace": 99}, "first_k_dense_replace"),
])
def test_a_broken_deepseek_config_names_its_field(change, field):
    with pytest.raises(ConfigError, match=f"^{field}: "):
        Model.from_config({**DEEPSEEK_V3_CONFIG, **change})


def test_the_capacity_calculator_accepts_deepseek_with_its_latent_cache():
    values = {**CAPACITY.defaults, "model": CUSTOM}
    answer = CAPACITY.run(values, json.dumps(DEEPSEEK_V3_CONFIG), ["ladder.per_token", "ladder.users_worst", "ladder.binds"])
    assert answer["ok"], answer
    assert answer["refs"]["ladder.per_token"][1].startswith("61 × (512 + 64) × 2 = 70,272 B")
    assert answer["refs"]["ladder.users_worst"][0] == "0"   # 1.3 TB of bf16 weights fit no single card
    llama_latent = json.dumps({**LLAMA_3_1_8B_CONFIG, "kv_lora_rank": 512})
    assert CAPACITY.run(values, llama_latent, [])["errors"]["config"].startswith("kv_lora_rank: latent attention on")
    falcon = json.dumps({**LLAMA_3_1_8B_CONFIG, "multi_query": True})
    assert CAPACITY.run(values, falcon, [])["errors"]["config"].startswith("multi_query: ")


def test_the_attention_calculator_in_cpython():
    answer = ATTENTION.run({"model": CUSTOM}, json.dumps(MISTRAL_7B_CONFIG), ["attention.chosen.per_user"])
    assert answer["refs"]["attention.chosen.per_user"][0] == "0.50 GiB"   # 4,096 tokens × 128 KiB
    answer = ATTENTION.run({"model": "gemma-2-9b"}, None, ["attention.chosen.per_user", "attention.chosen.users"])
    assert answer["refs"]["attention.chosen.per_user"][1] == "8,192 B × (21 × 8,192 + 21 × 4,096) = 1.97 GiB"


# ---- In Chromium, over file://, with the network blocked.

CALC = Calculator("attention")


@pytest.fixture(scope="module")
def attention_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "07", "attention")


@pytest.mark.parametrize("inputs", [
    {"model": "mla", "card": "h100-sxm", "kv": "bf16", "context_limit": "8192"},
    {"model": "hybrid", "card": "h200-sxm", "kv": "fp8", "context_limit": "32768"},
    {"model": "deepseek-v2", "card": "b200", "kv": "bf16", "context_limit": "4096"},
    {"model": "mqa", "card": "l40s", "kv": "fp8", "context_limit": "100000"},
])
def test_the_calculator_follows_cpython(attention_page, inputs):
    page = attention_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = ATTENTION.run(inputs, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}


def test_pasting_deepseek_v3(attention_page):
    page = attention_page.page
    CALC.set(page, model="gqa", card="h100-sxm", kv="bf16", context_limit="8192")
    page.select_option(f"{CALC.selector} [name=model]", CUSTOM)
    config = json.dumps(DEEPSEEK_V3_CONFIG, indent=2)
    assert CALC.paste(page, config) == "computed"
    shown = CALC.live(page)
    expected = ATTENTION.run({"model": CUSTOM, "card": "h100-sxm", "kv": "bf16", "context_limit": "8192"}, config,
                             list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    assert shown["attention.chosen.per_token|worked"].startswith("61 × (512 + 64) × 2 = 70,272 B")


@pytest.mark.parametrize("field, value", [
    ("context_limit", ""), ("context_limit", "-5"), ("context_limit", "9,5"), ("context_limit", "lots"),
    ("context_limit", "1e40"), ("context_limit", "8192\u200b"),
])
def test_bad_input_gets_a_message(attention_page, field, value):
    page = attention_page.page
    CALC.set(page, model="gqa", card="h100-sxm", kv="bf16", context_limit="8192")
    expected = ATTENTION.run({field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, context_limit="8192")


@pytest.mark.parametrize("config", [
    "{", json.dumps({**LLAMA_3_1_8B_CONFIG, "kv_lora_rank": 512}), json.dumps({**DEEPSEEK_V3_CONFIG, "v_head_dim": -1}),
    json.dumps({**GEMMA_2_9B_CONFIG, "layer_types": "alternate"}),
])
def test_bad_configs_get_a_message(attention_page, config):
    page = attention_page.page
    CALC.set(page, model="gqa", card="h100-sxm", kv="bf16", context_limit="8192")
    page.select_option(f"{CALC.selector} [name=model]", CUSTOM)
    assert CALC.paste(page, config) == "invalid"
    message = page.text_content(f"{CALC.selector} [data-error-for=config]")
    assert message == ATTENTION.run({"model": CUSTOM}, config, [])["errors"]["config"]
    assert "Traceback" not in message
    page.select_option(f"{CALC.selector} [name=model]", "gqa")
    CALC.settle(page)


def test_a_context_limit_past_the_model_s_positions_is_refused():
    from calc.calculators import ATTENTION
    answer = ATTENTION.run({**ATTENTION.defaults, "model": "gemma-2-9b", "context_limit": "131072"}, None, [], [], False)
    assert answer["errors"] == {"context_limit": "Gemma 2 9B reaches at most 8,192 positions; a context limit past "
                                                 "that is one it cannot serve"}


def test_a_card_too_small_for_the_weights_says_so_without_a_negative_budget():
    from calc.calculators import ATTENTION
    answer = ATTENTION.run({**ATTENTION.defaults, "model": "deepseek-v3"}, None,
                           ["attention.chosen.users", "attention.chosen.binds"], [], False)
    users, binds = answer["refs"]["attention.chosen.users"], answer["refs"]["attention.chosen.binds"][0]
    assert users[0] == "0" and "−" not in users[1] and "overflow the pool" in binds
