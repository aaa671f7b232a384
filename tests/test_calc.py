"""calc against the reference stack: every figure the runbook quotes, from configs and datasheets."""
from __future__ import annotations

import math

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

import by_hand

from calc.engine import kvcache

from calc.model import roofline
from calc.model.anatomy import count_parameters
from calc.specs.cards import H100_SXM
from calc.facts import facts
from calc.specs.models import CATALOGUE, LLAMA_3_1_8B, ConfigError, Model
from calc.specs.precision import BF16, FP8
from calc.model.weights import weight_bytes
from calc.core.present import UnknownFact, resolve, show
from calc.specs.stack import REFERENCE
from calc.core.units import GiB, KiB


@pytest.mark.parametrize("key, expected", [
    ("llama-3.1-8b", 8_030_261_248),
    ("llama-3.1-70b", 70_553_706_496),
    ("llama-3.1-405b", 405_853_388_800),
])
def test_parameter_count_is_derived_from_the_config(key, expected):
    assert count_parameters(CATALOGUE[key]).total.value == expected


def test_parameter_count_shows_its_arithmetic():
    total = count_parameters(LLAMA_3_1_8B).total
    assert total.worked == ("32 × 218,112,000 + 525,336,576 embedding + 525,336,576 output head + 4,096 "
                            "= 8,030,261,248")


def test_cache_per_token_and_per_user():
    per_token = kvcache.bytes_per_token(LLAMA_3_1_8B, BF16)
    assert per_token.value == 131_072 == 128 * KiB
    assert str(per_token) == "128 KiB"
    assert per_token.worked == "2 × 32 × 8 × 128 × 2 = 131,072 B = 128 KiB"
    per_user = kvcache.bytes_for_tokens(per_token, 8_192)
    assert per_user.value == 1 * GiB
    assert str(per_user) == "1.00 GiB"


def test_the_reference_ladder():
    ladder = kvcache.ladder(REFERENCE)
    # The first rung is CUDA's total as vLLM logs it on an H100 (79.19 GiB), not nvidia-smi's 81,559 MiB.
    assert str(ladder.capacity) == "79.19 GiB"
    assert str(ladder.pool) == "71.27 GiB"
    assert str(ladder.weights) == "14.99 GiB"
    assert (str(ladder.activation), str(ladder.non_torch), str(ladder.graphs)) == ("1.89 GiB", "0.25 GiB", "0.84 GiB")
    assert str(ladder.runner_state) == "0.50 GiB"            # 1,024 × (128,256 + 4,008) int32s, V2's penalty state
    assert str(ladder.kv_budget) == "52.80 GiB"
    assert str(ladder.per_token) == "128 KiB"
    assert str(ladder.per_user) == "1.00 GiB"
    budget = by_hand.kv_budget()
    tokens = by_hand.token_capacity(budget)
    assert ladder.kv_budget.value == pytest.approx(budget)
    assert ladder.token_capacity.value == tokens
    assert ladder.users_worst.value == tokens // 8_192
    assert ladder.users_paged.value == tokens // (144 * 16)
    assert str(ladder.paging_gain) == "3.6×"
    assert ladder.kv_budget.worked == "71.27 GiB − 14.99 GiB − 1.89 GiB − 0.25 GiB − 0.50 GiB − 0.84 GiB = 52.80 GiB"


def test_rounding_happens_once_at_display():
    ladder = kvcache.ladder(REFERENCE)
    exact_pool = math.ceil(79.19 * 1024 ** 3 * 0.90)
    assert ladder.pool.value == exact_pool
    # nvidia-smi's total shows the point: 71.68, not the 71.69 an already-rounded 79.65 GiB gives
    assert f"{81_559 * 1024 ** 2 * 0.90 / 1024 ** 3:.2f}" == "71.68"
    assert str(ladder.pool) == "71.27 GiB"


def test_paged_users_count_whole_blocks():
    ladder = kvcache.ladder(REFERENCE)
    assert kvcache.blocks_for(2_300, 16) == 144
    assert ladder.per_user_paged.value == 144 * 16 * 131_072
    assert kvcache.blocks_for(500, 16) == 32
    assert kvcache.blocks_for(16, 16) == 1


def test_stacked_levers_floor_the_exact_quotient():
    levers = kvcache.stacked_levers(REFERENCE)
    budget = by_hand.kv_budget()
    per_token = [4 * 131_072, 131_072, 65_536, 65_536]
    charged = [8_192, 8_192, 8_192, 2_304]
    assert [step.users.value for step in levers.steps] == [
        int(budget // (16 * p)) * 16 // t for p, t in zip(per_token, charged)]
    assert str(levers.gqa_factor) == "4×"
    assert str(levers.fp8_factor) == "2×"
    # fp8 weights: (52.80 + 14.99 − 8.49) ÷ 52.80 − 1, with the embedding and head kept in bf16
    assert str(levers.fp8_weights_budget_gain) == "12%"


def test_recompute_ratio_is_quadratic():
    assert str(kvcache.recompute_cost_ratio(2_000, 300)) == "280×"
    assert str(kvcache.recompute_cost_ratio(8_000, 1_000)) == "944×"
    assert kvcache.recompute_cost_ratio(1, 1).value == 1


def test_cache_share_of_the_decode_read():
    # A step reads the matrices it multiplies by: 16,060,522,496 B held less the
    # 128,256 × 4,096 × 2 B embedding table, which is gathered a row per token.
    busy = roofline.decode_read(LLAMA_3_1_8B, BF16, BF16, 53, 8_192)
    assert busy.weights.value == 16_060_522_496 - 128_256 * 4_096 * 2 == 15_009_849_344
    assert str(busy.cache) == "56.91 GB"
    assert str(busy.weights) == "15.01 GB"
    assert str(busy.cache_share) == "79%"
    at_max = roofline.decode_read(LLAMA_3_1_8B, BF16, BF16, 1, 131_072)
    assert str(at_max.cache_share) == "53%"
    short = roofline.decode_read(LLAMA_3_1_8B, BF16, BF16, 1, 2_000)
    assert short.cache_share.show(1) == "1.7%"


def test_the_busy_read_is_a_batch_the_ladder_admits():
    namespace = facts()
    busy = namespace["read"]["busy"]
    assert busy.batch == namespace["ladder"].users_worst.value == by_hand.token_capacity(by_hand.kv_budget()) // 8_192
    assert busy.cache.value <= namespace["ladder"].kv_budget.value
    users = namespace["ladder"].users_worst.value
    assert str(namespace["floor"]["busy"]) == f"{(15_009_849_344 + users * 8_192 * 131_072) / 3.35e12 * 1000:.1f} ms"


def test_quantised_weights_keep_the_embedding_and_head_in_bf16():
    count = count_parameters(LLAMA_3_1_8B)
    converted = 32 * (count.attention_per_layer + count.feed_forward_per_layer)
    assert converted == 6_979_321_856
    kept = 8_030_261_248 - converted  # embedding + head + norms
    assert weight_bytes(LLAMA_3_1_8B, FP8).value == converted * 1 + kept * 2 == 9_081_200_640
    assert str(weight_bytes(LLAMA_3_1_8B, FP8)) == "8.46 GiB"
    assert weight_bytes(LLAMA_3_1_8B, BF16).value == 8_030_261_248 * 2


def test_a_tied_embedding_is_read_whole():
    tied = replace(LLAMA_3_1_8B, tie_word_embeddings=True)
    assert roofline.weights_read(tied, BF16).value == weight_bytes(tied, BF16).value


def test_the_ladder_passes_through_the_token_capacity():
    ladder = kvcache.ladder(REFERENCE)
    # ⌊52.80 GiB ÷ (16 × 128 KiB)⌋ = 27,032 blocks of 16 tokens
    assert ladder.token_capacity.value == 27_032 * 16 == 432_512 == by_hand.token_capacity(by_hand.kv_budget())
    assert ladder.tokens_per_user.value == 8_192
    assert ladder.users_worst.worked == "432,512 tokens ÷ 8,192 tokens = 52.80 → 52 users"
    assert ladder.users_paged.worked == "432,512 tokens ÷ 2,304 tokens = 187.72 → 187 users"


def test_the_worst_case_is_charged_in_whole_blocks():
    tiny = kvcache.ladder(replace(REFERENCE, context_limit=1, typical_conversation=1))
    assert tiny.tokens_per_user.value == 16
    assert tiny.users_paged.value == tiny.users_worst.value
    assert str(tiny.paging_gain) == "1.0×"


@pytest.mark.parametrize("field, config", [
    ("kv_lora_rank", {"architectures": ["LlamaForCausalLM"], "kv_lora_rank": 512, "num_key_value_heads": 128}),
    ("multi_query", {"multi_query": True}),
    ("n_head_kv", {"n_head_kv": 8}),
])
def test_attention_calc_cannot_read_is_refused_by_name(field, config):
    base = {"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8, "intermediate_size": 128,
            "vocab_size": 10}
    with pytest.raises(ConfigError, match=f"^{field}: "):
        Model.from_config({**base, **config})


def test_fp8_halves_the_cache():
    assert kvcache.bytes_per_token(LLAMA_3_1_8B, FP8).value == 65_536


def test_card_figures_are_dense():
    assert H100_SXM.bf16_dense_tflops < 1_000
    assert "sparsity" in H100_SXM.source


def test_model_from_config_rejects_bad_fields():
    with pytest.raises(ConfigError, match="num_hidden_layers: missing"):
        Model.from_config({"hidden_size": 4096})
    with pytest.raises(ConfigError, match="num_key_value_heads"):
        Model.from_config({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8,
                           "num_key_value_heads": 3, "intermediate_size": 128, "vocab_size": 10})
    with pytest.raises(ConfigError, match="num_experts_per_tok: 20 is more than num_local_experts"):
        Model.from_config({"num_hidden_layers": 2, "hidden_size": 64, "num_attention_heads": 8,
                           "intermediate_size": 128, "vocab_size": 10, "num_local_experts": 8,
                           "num_experts_per_tok": 20})
    with pytest.raises(ConfigError, match="expected a whole number"):
        Model.from_config({"num_hidden_layers": "many", "hidden_size": 64, "num_attention_heads": 8,
                           "intermediate_size": 128, "vocab_size": 10})


def test_facts_resolve_and_show():
    namespace = facts()
    assert show(resolve(namespace, "ladder.kv_budget")) == "52.80 GiB"
    assert show(resolve(namespace, "ladder.kv_budget"), "number") == "52.80"
    assert show(resolve(namespace, "model.num_key_value_heads")) == "8"
    assert show(resolve(namespace, "long_context.users_worst")) == "3"
    with pytest.raises(UnknownFact) as err:
        resolve(namespace, "ladder.kv_budgt")
    assert "ladder.kv_budget" in err.value.known


@pytest.mark.parametrize("config, expected", [
    ({"architectures": ["MistralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "sliding_window": 4096,
      "vocab_size": 32000}, 7_241_732_096),
    ({"architectures": ["MixtralForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336,
      "num_attention_heads": 32, "num_hidden_layers": 32, "num_key_value_heads": 8, "num_local_experts": 8,
      "num_experts_per_tok": 2, "vocab_size": 32000}, 46_702_792_704),
    ({"architectures": ["Qwen2ForCausalLM"], "hidden_size": 3584, "intermediate_size": 18944,
      "num_attention_heads": 28, "num_hidden_layers": 28, "num_key_value_heads": 4, "vocab_size": 152064,
      "use_sliding_window": False, "sliding_window": 131072}, 7_615_616_512),
    ({"architectures": ["Qwen3ForCausalLM"], "hidden_size": 4096, "intermediate_size": 12288, "head_dim": 128,
      "num_attention_heads": 32, "num_hidden_layers": 36, "num_key_value_heads": 8, "vocab_size": 151936},
     8_190_735_360),
])
def test_other_families_count_exactly(config, expected):
    assert count_parameters(Model.from_config(config)).total.value == expected


def test_a_sliding_window_caps_the_cache():
    mistral = Model.from_config({"architectures": ["MistralForCausalLM"], "hidden_size": 4096,
                                 "intermediate_size": 14336, "num_attention_heads": 32, "num_hidden_layers": 32,
                                 "num_key_value_heads": 8, "sliding_window": 4096, "vocab_size": 32000})
    ladder = kvcache.ladder(replace(REFERENCE, model=mistral))
    assert ladder.per_user.value == 4096 * 131_072


def test_a_budget_near_zero_shows_terms_a_reader_can_subtract():
    """Found by hypothesis: A100 40 GB, fp8 weights, utilisation 0.05 — the B200's budget is a hair
    below zero, and its terms rounded to two places would not subtract to it."""
    from arithmetic import check
    from calc.calculators import CAPACITY
    values = {"card": "a100-40", "weights": "fp8", "utilisation": "0.05", "token_budget": "512"}
    text, worked = CAPACITY.run(values, None, ["hardware.cards.b200.kv_budget"], [], False)["refs"]["hardware.cards.b200.kv_budget"]
    assert check(worked) == [], worked
    assert CAPACITY.run({}, None, ["ladder.kv_budget"], [], False)["refs"]["ladder.kv_budget"][1] == \
        "71.27 GiB − 14.99 GiB − 1.89 GiB − 0.25 GiB − 0.50 GiB − 0.84 GiB = 52.80 GiB"


def test_a_model_past_a_thousand_gib_is_laddered_not_crashed():
    """Found by a hostile reader: DeepSeek-V3's bf16 weights print as 1,249.88 GiB, and the ladder
    once parsed that printed number back."""
    import json
    from calc.calculators import CAPACITY
    from calc.specs.models import DEEPSEEK_V3_CONFIG
    answer = CAPACITY.run({"model": "custom"}, json.dumps(DEEPSEEK_V3_CONFIG), ["ladder.kv_budget", "ladder.users_worst"], [], False)
    assert answer["ok"] and answer["refs"]["ladder.users_worst"][0] == "0"


def test_every_calc_module_imports_first():
    """The page's worker may import any module of calc before the others: no import cycle may
    depend on the order CPython happens to use here (each module first, in a fresh interpreter)."""
    root = Path(__file__).resolve().parent.parent
    script = ("import importlib, sys\nfailed = []\nfor name in sys.argv[1:]:\n"
              "    for loaded in [n for n in sys.modules if n == 'calc' or n.startswith('calc.')]:\n"
              "        del sys.modules[loaded]\n"
              "    try:\n        importlib.import_module('calc.' + name)\n"
              "    except ImportError as error:\n        failed.append(f'{name}: {error}')\n"
              "print('\\n'.join(failed))\n")
    names = sorted(".".join(path.relative_to(root / "calc").with_suffix("").parts)
                   for path in (root / "calc").rglob("*.py") if path.stem not in ("__init__", "__main__"))
    result = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, cwd=root)
    assert result.returncode == 0 and result.stdout.strip() == "", result.stdout + result.stderr
