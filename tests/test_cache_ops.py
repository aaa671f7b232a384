"""Document 10: paging waste, prefix savings, copy-on-write and swap against recompute, each checked
against values derived here by hand from the config's numbers and the datasheet; the cache_ops
calculator in CPython and in Chromium over file://, with its bad-input battery."""
from __future__ import annotations

import math
from dataclasses import replace

import pytest

from arithmetic import check
from calc.engine import cacheops
from calc.calculators import CACHE_OPS
from calc.facts import facts
from calc.core.present import leaves
from calc.specs.inputs import REFERENCE_INPUTS
from calc.specs.stack import REFERENCE
from calc.core.units import Result
from conftest import Calculator, booted_page

import by_hand

# Llama 3.1 8B by hand: 32 layers of q, k, v, o (4,096 × 4,096, two of 4,096 × 1,024) and a SwiGLU
# of three 4,096 × 14,336 matrices; a 128,256-token head; 8 KV heads of 128, bf16.
BLOCKS = 32 * (2 * 4096 * 4096 + 2 * 4096 * 1024 + 3 * 4096 * 14336)
HEAD = 128_256 * 4096
PER_POSITION = 4 * 32 * 4096                       # attention operations per attended position
PER_TOKEN = 2 * 32 * 8 * 128 * 2                   # cache bytes per token
BLOCK, TYPICAL, LIMIT, PROMPT, OUTPUT = 16, 2300, 8192, 2000, 300
CAPACITY = by_hand.token_capacity(by_hand.kv_budget())  # document 06's ladder


def prefill(tokens: int, cached: int = 0) -> float:
    return by_hand.prefill_s(tokens, cached)


@pytest.fixture(scope="module")
def section():
    return facts()["cacheops"]


def test_the_model_is_read_by_hand():
    assert BLOCKS == 6_979_321_856
    assert facts()["ladder"].token_capacity.value == CAPACITY
    assert facts()["ladder"].per_token.value == PER_TOKEN


def test_the_last_block_of_one_sequence(section):
    assert section["waste"]["one"].value == 2304 - 2300 == 4


def test_expected_waste_over_the_spread(section):
    lengths = range(1300, 3301)
    empty = [math.ceil(n / BLOCK) * BLOCK - n for n in lengths]
    waste = section["waste"]
    assert waste["expected"].value == pytest.approx(sum(empty) / len(empty))
    assert str(waste["expected"]) == "7.50 tokens"
    assert waste["uniform"].value == (BLOCK - 1) / 2
    assert waste["share"].value == pytest.approx(waste["expected"].value / (TYPICAL + waste["expected"].value))


@pytest.mark.parametrize("lowest, highest, block", [(1, 1, 16), (1300, 3300, 16), (5, 200, 7), (17, 17, 16), (1, 1000, 1)])
def test_waste_summed_by_cycles_matches_counting(lowest, highest, block):
    assert cacheops.wasted_in_range(lowest, highest, block) == sum(-n % block for n in range(lowest, highest + 1))


def test_contiguous_reservation_against_paging(section):
    waste = section["waste"]
    assert waste["reserved"].value == LIMIT - TYPICAL == 5892
    assert waste["reserved_share"].value == pytest.approx(5892 / 8192)
    assert waste["pool_contiguous"].value == CAPACITY // LIMIT * 5892 * PER_TOKEN
    users = int(CAPACITY // (TYPICAL + waste["expected"].value))
    assert waste["users"].value == users
    assert waste["pool_paged"].value == pytest.approx(users * waste["expected"].value * PER_TOKEN)


def test_the_papers_figures(section):
    paper = section["paper"]
    assert (paper["tokens_low"].value, paper["tokens_high"].value) == (0.204, 0.382)
    assert paper["waste_high"].value == pytest.approx(0.796)


def test_prefix_shares_only_full_blocks(section):
    prefix = section["prefix"]
    assert prefix["blocks"].value == 1000 // 16 == 62
    assert prefix["reused"].value == 992 and prefix["tail"].value == 8


def test_prefill_saved_on_a_hit(section):
    prefix = section["prefix"]
    full = prefill(PROMPT)
    skipped = full - prefill(PROMPT, 992)
    assert prefix["full"].value == pytest.approx(full)
    assert prefix["hit"].value == pytest.approx(full - skipped)
    assert prefix["saved"].value == pytest.approx(skipped)
    assert prefix["ttft_saved"].value == pytest.approx(0.8 * skipped)
    assert prefix["expected"].value == pytest.approx(0.8 * (full - skipped) + 0.2 * full)
    assert prefix["cards_saved"].value == pytest.approx(40 * 0.8 * skipped)


def test_users_with_the_prefix_held_once(section):
    per_user = 2304 - 0.8 * 992
    assert section["prefix"]["per_user"].value == pytest.approx(per_user)
    assert section["prefix"]["users"].value == int((CAPACITY - 992) // per_user)


def test_a_hit_never_covers_the_prompts_last_token():
    assert cacheops.reusable_tokens(2000, 2000, 16) == 1984      # 124 blocks: the 125th holds the last token
    assert cacheops.reusable_tokens(15, 2000, 16) == 0
    assert cacheops.reusable_tokens(1000, 1, 16) == 0


def test_parallel_samples_share_their_prompt(section):
    samples = section["samples"]
    # a prefix-cache hit stops a token short of the prompt, so each child computes the prompt's last block
    each, prompt_blocks = math.ceil((PROMPT + OUTPUT) / BLOCK), (PROMPT - 1) // BLOCK
    assert (each, prompt_blocks) == (144, 124)
    assert samples["separate"].value == 4 * 144 * BLOCK * PER_TOKEN
    assert samples["shared"].value == (124 + 4 * 20) * BLOCK * PER_TOKEN
    assert samples["saving"].value == pytest.approx(1 - 204 / 576)


def test_swap_against_recompute(section):
    swap = section["swap"]
    moved = TYPICAL * PER_TOKEN
    rate = 64e9 * 0.55                         # host to device, the slower direction, both ways
    copies = -(-TYPICAL // 16) * 32 * 2        # a copy per block, per layer, for keys and for values
    fixed = copies * 2.5e-6
    assert copies == 9_216
    assert swap["bytes"].value == moved
    assert swap["rate"].value == pytest.approx(rate)
    assert swap["one_way"].value == pytest.approx(moved / rate + fixed)
    assert swap["round_trip"].value == pytest.approx(2 * (moved / rate + fixed))
    assert swap["recompute"].value == pytest.approx(prefill(TYPICAL))
    assert swap["tie_rate"].value == pytest.approx(2 * moved / (prefill(TYPICAL) - 2 * fixed))
    assert swap["ratio"].value == pytest.approx(prefill(TYPICAL) / (2 * (moved / rate + fixed)))
    # today's kernels prefill a typical conversation faster than the host link brings it back: V1 recomputes
    assert swap["cheaper"] == "recompute" and swap["ratio"].value < 1
    for n in swap["crossings"]:  # where the two trade places, by hand
        trip = lambda k: 2 * (k * PER_TOKEN / rate + -(-k // 16) * 32 * 2 * 2.5e-6)  # noqa: E731
        assert (trip(n - 1) <= prefill(n - 1)) != (trip(n) <= prefill(n))


def test_a_slow_link_finds_the_break_even():
    slow = replace(REFERENCE_INPUTS.cache, link_fraction=0.01)
    rate = 64e9 * 0.01

    def round_trip(n: int) -> float:  # by hand: the bytes at the rate, and 2.5 µs for each of the copies
        return 2 * (n * PER_TOKEN / rate + -(-n // 16) * 32 * 2 * 2.5e-6)

    found = cacheops.crossings(REFERENCE, slow, 131_072)
    assert found, "at 0.64 GB/s the round trip passes the prefill floor"
    n = found[0]
    assert round_trip(n - 1) <= prefill(n - 1) and round_trip(n) > prefill(n)


def test_the_host_tier(section):
    tier = section["tier"]
    assert tier["tokens"].value == 2 * CAPACITY
    assert tier["restore"].value == pytest.approx(992 * PER_TOKEN / (64e9 * 0.55)), "SGLang's pages move by their bytes"
    assert tier["saved"] == section["prefix"]["saved"]
    assert tier["restore"].value < tier["saved"].value


def test_routing_without_affinity(section):
    assert section["routing"]["random"].value == 0.25


def test_every_card_records_its_host_link():
    from calc.specs.cards import CARDS
    for key, card in CARDS.items():
        assert card.host_link.startswith("PCIe Gen") and card.host_gb_per_s in (32, 64) and card.host_source, key


def test_every_worked_line_adds_up(section):
    for path, value in leaves({"cacheops": section}, depth=5):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_every_flag_names_its_source():
    assert all(flag.source.startswith("https://") for flag in cacheops.FLAGS)
    assert any(flag.flag == "--block-size" and flag.default.startswith("16") for flag in cacheops.FLAGS)


@pytest.mark.parametrize("values, field", [
    ({"prefix": "2001"}, "prefix"), ({"spread": "2300"}, "spread"), ({"spread": "6000", "conversation": "7000"}, "spread"),
    ({"prompt": "9000"}, "prompt"), ({"conversation": "9000"}, "conversation"), ({"block_size": "0"}, "block_size"),
    ({"hit_rate": "101"}, "hit_rate"), ({"link": "0"}, "link"), ({"block_size": "8.5"}, "block_size"),
])
def test_the_calculator_refuses_what_cannot_be(values, field):
    answer = CACHE_OPS.run({**CACHE_OPS.defaults, **values}, None, ["cacheops.waste.expected"])
    assert not answer["ok"] and field in answer["errors"], answer


def test_the_calculator_in_cpython_follows_the_page():
    answer = CACHE_OPS.run(CACHE_OPS.defaults, None, ["cacheops.waste.expected", "cacheops.swap.round_trip"],
                           ["swap-vs-recompute"])
    assert answer["refs"]["cacheops.waste.expected"][0] == "7.50 tokens"
    curves = answer["curves"]["swap-vs-recompute"]["curves"]
    rate, trip = 64e9 * 0.55, lambda k: 2 * (k * PER_TOKEN / rate + -(-k // 16) * 32 * 2 * 2.5e-6)  # noqa: E731
    first = next(n for n in range(2, 131_072) if (trip(n - 1) <= prefill(n - 1)) != (trip(n) <= prefill(n)))
    assert [c["name"] for c in curves][-1] == "break-even" and curves[-1]["x"] == [first, first]
    big = CACHE_OPS.run({**CACHE_OPS.defaults, "block_size": "1024"}, None, ["cacheops.prefix.reused", "cacheops.waste.uniform"])
    assert big["refs"]["cacheops.prefix.reused"][0] == "0 tokens"       # the prefix never fills a block
    assert big["refs"]["cacheops.waste.uniform"][0] == "511.5 tokens"


# ---- In Chromium, over file://, with the network blocked.

CALC = Calculator("cache_ops")


@pytest.fixture(scope="module")
def cache_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "10", "cache_ops")


@pytest.mark.parametrize("inputs", [
    {"block_size": "32", "spread": "0", "prefix": "1000", "hit_rate": "50", "link": "80", "card": "h100-sxm"},
    {"block_size": "16", "spread": "2000", "prefix": "1999", "hit_rate": "100", "link": "10", "card": "l4"},
    {"block_size": "1", "spread": "500", "prefix": "0", "hit_rate": "0", "link": "1", "card": "a100-40", "kv": "fp8"},
])
def test_the_calculator_follows_cpython(cache_page, inputs):
    page = cache_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = CACHE_OPS.run({**CACHE_OPS.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}


@pytest.mark.parametrize("field, value", [
    ("block_size", ""), ("block_size", "-5"), ("spread", "9,5"), ("prefix", "lots"), ("hit_rate", "1e40"),
    ("link", "80\u200b"), ("prefix", "5000"), ("spread", "2300"),
])
def test_bad_input_gets_a_message(cache_page, field, value):
    page = cache_page.page
    defaults = CACHE_OPS.defaults
    CALC.set(page, **{k: defaults[k] for k in ("block_size", "spread", "prefix", "hit_rate", "link", "card", "kv")})
    expected = CACHE_OPS.run({**defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: defaults[field]})


def test_a_conversation_shorter_than_its_prompt_is_refused():
    answer = CACHE_OPS.run({**CACHE_OPS.defaults, "conversation": "800", "spread": "0"}, None, [], [], False)
    assert answer["errors"] == {"conversation": "Typical conversation is shorter than the prompt (2,000 tokens) it starts with"}


def test_no_tie_is_said_in_words_not_as_zero():
    answer = CACHE_OPS.run({**CACHE_OPS.defaults, "block_size": "1"}, None, ["cacheops.swap.tie"], [], False)
    assert answer["refs"]["cacheops.swap.tie"][0].startswith("no link rate makes the swap cheaper")


def test_a_model_its_card_cannot_hold_is_refused_by_name():
    answer = CACHE_OPS.run({**CACHE_OPS.defaults, "model": "llama-3.1-70b"}, None, [], [], False)
    assert "there is no KV cache to page, share or swap" in answer["errors"]["card"]
