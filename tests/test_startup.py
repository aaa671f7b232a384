"""Published start-up logs against the ladder: every figure redone by hand from what the log printed.

Card and model data are read from calc's tables (they could move); the logs' own figures are typed
here as they were printed, since they are the measurements.
"""
from __future__ import annotations

import math

import pytest

from arithmetic import check
from calc import startup
from calc.cards import CARDS, H100_SXM
from calc.facts import facts
from calc.models import LLAMA_3_1_8B_CONFIG
from calc.present import leaves
from calc.stack import REFERENCE
from calc.units import Result

GiB, MiB = 2 ** 30, 2 ** 20
C = LLAMA_3_1_8B_CONFIG
HEAD_DIM = C["hidden_size"] // C["num_attention_heads"]
PER_TOKEN = 2 * C["num_hidden_layers"] * C["num_key_value_heads"] * HEAD_DIM * 2   # bf16 keys and values
PARAMS = (C["vocab_size"] * C["hidden_size"] * 2                                   # embedding and untied head
          + C["num_hidden_layers"] * (2 * C["hidden_size"] ** 2                      # q and o
                                      + 2 * C["hidden_size"] * C["num_key_value_heads"] * HEAD_DIM  # k and v
                                      + 3 * C["hidden_size"] * C["intermediate_size"]              # SwiGLU
                                      + 2 * C["hidden_size"])                                      # two norms
          + C["hidden_size"])                                                      # final norm
BLOCK = 16


@pytest.fixture(scope="module")
def section():
    return facts()["startup"]


def test_the_parameter_count_is_the_eight_billion_the_weights_line_measures():
    assert PARAMS == 8_030_261_248


def test_the_nearest_log_redone_by_hand(section):
    """PR 10511: 79.22 GiB × 0.90, minus 14.96, 1.79 and 1.26 GiB, leaves the 53.29 GiB it printed."""
    pool = 79.22 * 0.90
    assert round(pool, 2) == pytest.approx(71.30) and abs(pool - 71.29) < 0.01  # the log's total was rounded
    assert abs(71.29 - 14.96 - 1.79 - 1.26 - 53.29) < 0.015
    blocks = math.floor(53.29 * GiB / (BLOCK * PER_TOKEN))
    view = section["logs"]["llama3_8b_h100"]
    assert view.blocks.value == blocks == 27_284
    assert view.tokens.value == blocks * BLOCK
    assert view.concurrency.value == pytest.approx(blocks * BLOCK / 8192)
    assert view.reserve.value == pytest.approx((1.79 + 1.26) * GiB)


def test_the_vision_log_prints_one_block_more_than_its_rounded_budget_shows(section):
    """PR 12126: 40 cached layers × 8 KV heads × 128, bf16; 6,001 blocks need 14.6509 GiB, printed 14.65."""
    per_token = 2 * 40 * 8 * 128 * 2
    view = section["logs"]["llama32_11b_vision_h100"]
    assert view.per_token.value == per_token
    assert math.floor(14.65 * GiB / (BLOCK * per_token)) == view.blocks.value == 6000
    need = 6001 * BLOCK * per_token / GiB
    assert round(need, 2) == 14.65, "the logged count fits the logged budget once the budget's rounding is undone"
    assert view.logged_blocks_need.value == 6001 * BLOCK * per_token
    assert abs(71.29 - 19.86 - 0.16 - 36.63 - 14.65) < 0.015


def test_the_llama_31_log_concurrency_is_tokens_over_the_length(section):
    """Issue 10517: 1,952 blocks × 16 = 31,232 tokens; ÷ 20,000 = 1.56x, as printed."""
    view = section["logs"]["llama31_8b_rtx3090"]
    assert view.tokens.value == 1952 * BLOCK == 31_232
    assert round(31_232 / 20_000, 2) == 1.56 == round(view.concurrency.value, 2)
    assert round(1952 * BLOCK * PER_TOKEN / GiB, 2) == 3.81, "1,952 blocks fit the printed 3.81 GiB"
    assert abs(23.58 * 0.90 - 17.06 - 0.35 - 3.81) < 0.015


def test_the_weights_line_is_gibibytes_with_the_rotary_table(section):
    """vLLM's 'GB' is bytes ÷ 2^30: parameters × 2 B + positions × head_dim × 2 B of cos/sin table."""
    rope_31 = C["max_position_embeddings"] * HEAD_DIM * 2
    assert section["rope_31"].value == rope_31 == 32 * MiB
    assert round((PARAMS * 2 + rope_31) / GiB, 4) == 14.9888 == section["weights_31_logged"].value / GiB
    assert section["weights_31"].value == PARAMS * 2 + rope_31
    assert round((PARAMS * 2 + 8192 * HEAD_DIM * 2) / GiB, 2) == 14.96, "Llama 3 8B's 8,192 positions"
    assert round(PARAMS * 2 / 1e9, 2) != 14.99, "not decimal gigabytes"


def test_the_ladder_against_the_nearest_log(section):
    """Each rung: calc's ladder on CUDA's total against what the engine printed, by hand."""
    cuda = H100_SXM.cuda_gib * GiB
    pool = cuda * 0.90
    budget = pool - 2 * PARAMS - REFERENCE.activation_reserve_bytes
    tokens = int(budget // (BLOCK * PER_TOKEN)) * BLOCK
    logged_tokens = math.floor(53.29 * GiB / (BLOCK * PER_TOKEN)) * BLOCK
    near = section["nearest"]
    assert near.total.gap.value == pytest.approx(cuda - 79.22 * GiB)
    assert near.pool.gap.value == pytest.approx(pool - 71.29 * GiB)
    assert near.weights.gap.value == pytest.approx(2 * PARAMS - 14.96 * GiB)
    assert near.reserve.gap.value == pytest.approx(REFERENCE.activation_reserve_bytes - 3.05 * GiB)
    assert near.kv_budget.gap.value == pytest.approx(budget - 53.29 * GiB)
    assert near.tokens.ladder.value == tokens and near.tokens.log.value == logged_tokens
    assert near.tokens.gap.value == tokens - logged_tokens
    assert near.concurrency.gap.value == pytest.approx((tokens - logged_tokens) / 8192)
    # the same whole number of worst-case users either way
    assert tokens // 8192 == logged_tokens // 8192 == section["users_from_log"].value


def test_nvidia_smis_total_overstates_every_rung(section):
    smi = H100_SXM.reported_mib * MiB
    near = section["nearest"]
    assert near.smi_gap.value == pytest.approx(smi - H100_SXM.cuda_gib * GiB)
    assert near.smi_gap_mib.value == near.smi_gap.value
    budget = smi * 0.90 - 2 * PARAMS - REFERENCE.activation_reserve_bytes
    assert near.smi_kv_budget.value == pytest.approx(budget)
    tokens = int(budget // (BLOCK * PER_TOKEN)) * BLOCK
    assert near.smi_tokens.value == tokens
    assert near.smi_tokens_gap.value == tokens - math.floor(53.29 * GiB / (BLOCK * PER_TOKEN)) * BLOCK
    assert section["smi_pool"].value == pytest.approx(smi * 0.90)


def test_the_ladder_multiplies_cudas_total_where_a_log_published_one():
    """Elsewhere nvidia-smi's total less what the driver kept on the H100 SXM, the one card with both."""
    from calc import kvcache
    assert kvcache.ladder(REFERENCE).capacity.value == H100_SXM.cuda_gib * GiB
    driver = H100_SXM.reported_mib * MiB - H100_SXM.cuda_gib * GiB
    assert 0.4 * GiB < driver < 0.45 * GiB
    for key, card in CARDS.items():
        ladder = kvcache.ladder(REFERENCE.__class__(**{**REFERENCE.__dict__, "card": card}))
        expected = card.cuda_gib * GiB if card.cuda_gib else card.reported_mib * MiB - driver
        assert ladder.capacity.value == pytest.approx(expected), key
        assert card.cuda_gib == 0 or card.cuda_source.startswith("vLLM's start-up log"), key


def test_every_log_names_its_source_and_prints_what_it_is_typed_from():
    for log in startup.LOGS:
        assert log.url.startswith("https://github.com/vllm-project/vllm/")
        text = " ".join(log.lines)
        for figure in (log.total_gib, log.kv_gib, log.non_torch_gib):
            assert f"{figure:.2f}" in text, (log.key, figure)
        if log.blocks:
            assert f"{log.blocks}" in text


def test_every_worked_line_adds_up(section):
    checked = 0
    for path, value in leaves({"startup": section}, depth=6):
        if isinstance(value, Result):
            assert check(value.worked) == [], (path, value.worked)
            checked += 1
    assert checked > 40
