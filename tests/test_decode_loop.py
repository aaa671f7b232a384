"""Document 13: the sampler's filters on a fixed vector and speculative decoding's rule and time model,
each checked against values derived here by hand (softmax and the filters' definitions, the
geometric sum behind tokens per pass, the configs' shapes and the datasheet); both calculators in
CPython and in Chromium over file://, with their bad-input batteries."""
from __future__ import annotations

import math
import random
import re
from dataclasses import replace

import pytest

import by_hand as hand
from arithmetic import check
from calc.engine import kvcache, sampling, speculative
from calc.calculators import SAMPLING, SPECULATIVE
from calc.specs.cards import CARDS
from calc.facts import facts
from calc.specs.models import LLAMA_3_1_8B_CONFIG, LLAMA_3_2_1B_CONFIG
from calc.core.present import leaves
from calc.specs.inputs import REFERENCE_INPUTS, Sampling
from calc.specs.stack import REFERENCE
from calc.core.units import Result
from conftest import Calculator, booted_page

LOGITS = (4.0, 3.5, 3.0, 2.4, 1.8, -0.5)          # the page's six candidates, typed again here
NAMES = ("mat", "floor", "sofa", "bed", "roof", "moon")


def probabilities(logits, keep=None):
    keep = keep or [True] * len(logits)
    weights = [math.exp(x) if k else 0.0 for x, k in zip(logits, keep)]
    return [w / sum(weights) for w in weights]


def nucleus(probs, p):
    """Top-p by its definition: the smallest set of the largest tokens whose probabilities reach p."""
    kept, total = set(), 0.0
    for i in sorted(range(len(probs)), key=lambda i: -probs[i]):
        if probs[i] == 0 or (total >= p and kept):
            break
        kept.add(i)
        total += probs[i]
    return kept


def by_hand(logits, temperature, min_p, top_k, top_p):
    """The kept set after each filter, in vLLM's order, each on the survivors renormalised."""
    tempered = [x / temperature for x in logits]
    probs = probabilities(tempered)
    after_min_p = {i for i, p in enumerate(probs) if p >= min_p * max(probs)}
    ranked = sorted(after_min_p, key=lambda i: -tempered[i])
    after_top_k = after_min_p if top_k == 0 or top_k >= len(ranked) else \
        {i for i in after_min_p if tempered[i] >= tempered[ranked[top_k - 1]]}
    probs = probabilities(tempered, [i in after_top_k for i in range(len(logits))])
    after_top_p = nucleus(probs, top_p)
    return after_min_p, after_top_k, after_top_p, probabilities(tempered, [i in after_top_p for i in range(len(logits))])


def kept(stage):
    return {i for i, x in enumerate(stage.logits) if x != -math.inf}


@pytest.mark.parametrize("temperature, min_p, top_k, top_p", [
    (0.6, 0.02, 4, 0.9), (1.0, 0.0, 0, 1.0), (0.6, 0.0, 0, 0.5), (2.0, 0.1, 2, 0.99), (0.3, 0.5, 6, 0.2), (1.5, 1.0, 0, 0.9),
])
def test_the_filters_on_a_fixed_vector(temperature, min_p, top_k, top_p):
    setting = Sampling(logits=LOGITS, temperature=temperature, top_k=top_k, top_p=top_p, min_p=min_p)
    stages = sampling.sample(setting).stages
    min_set, k_set, p_set, final = by_hand(LOGITS, temperature, min_p, top_k, top_p)
    assert [kept(s) for s in stages[2:]] == [min_set, k_set, p_set]
    assert stages[-1].probabilities == pytest.approx(final)


def test_the_reference_setting_removes_one_token_per_filter():
    stages = sampling.sample(REFERENCE_INPUTS.sampling).stages
    assert [len(kept(s)) for s in stages] == [6, 6, 5, 4, 3]
    tempered = probabilities([x / 0.6 for x in LOGITS])
    assert stages[1].probabilities == pytest.approx(tempered)
    assert tempered[5] < 0.02 * tempered[0] < tempered[4]              # min-p removes “ moon” only
    four = probabilities([x / 0.6 for x in LOGITS], [True] * 4 + [False] * 2)
    assert four[0] + four[1] < 0.9 <= four[0] + four[1] + four[2]      # top-p needs three of the four


def test_the_draw_is_inverse_cdf_on_pythons_generator():
    final = by_hand(LOGITS, 0.6, 0.02, 4, 0.9)[3]
    u = random.Random(42).random()
    running = [sum(final[: i + 1]) for i in range(6)]
    index = next(i for i, total in enumerate(running) if u < total)
    assert NAMES[index] == "floor"
    assert facts()["sampling"]["token"] == "“ floor”"
    for seed in range(50):
        u = random.Random(seed).random()
        index = next(i for i, total in enumerate(running) if u < total)
        assert sampling.sample(replace(REFERENCE_INPUTS.sampling, seed=seed)).index == index


def test_temperature_zero_is_greedy_and_skips_the_filters():
    sampled = sampling.sample(Sampling(logits=(1.0, 7.0, 7.0, 2.0, 0.0, 0.0), temperature=0, top_k=1, top_p=0.01))
    assert sampled.greedy and sampled.index == 1                      # the first of a tie, as argmax takes it
    assert sampled.final.probabilities == pytest.approx([0, 1, 0, 0, 0, 0])


def test_top_k_keeps_ties_at_the_kth():
    assert sampling.top_k_keep((3.0, 2.0, 2.0, 1.0), 2) == [True, True, True, False]


def test_no_setting_filters_every_token():
    draws = random.Random(13)
    for _ in range(500):
        logits = tuple(draws.uniform(-100, 100) for _ in range(6))
        setting = Sampling(logits=logits, temperature=draws.choice([0.0, 1e-6, 0.01, 1.0, 50.0]),
                           top_k=draws.randint(0, 8), top_p=draws.choice([1e-9, 0.3, 1.0]), min_p=draws.choice([0.0, 0.7, 1.0]))
        sampled = sampling.sample(setting)
        assert kept(sampled.final) and math.isclose(sum(sampled.final.probabilities), 1.0)
        assert sampled.final.probabilities[sampled.index] > 0


def test_a_grammar_mask_renormalises_what_it_allows():
    masked = sampling.constrained(REFERENCE_INPUTS.sampling, (" sofa", " roof"))
    sofa = math.exp(3.0 / 0.6) / (math.exp(3.0 / 0.6) + math.exp(1.8 / 0.6))   # min-p, top-k and top-p keep both
    assert masked.final.probabilities == pytest.approx([0, 0, sofa, 0, 1 - sofa, 0])
    assert masked.token == "“ sofa”"


def test_penalties_by_their_definitions():
    # OpenAI: mu[j] − c[j] × α_frequency − 1[c[j] > 0] × α_presence; vLLM's repetition: a positive logit ÷ penalty
    assert sampling.penalised(4.0, False, 3, 1.0, 0.5, 0.5) == 4.0 - 0.5 * 3 - 0.5
    assert sampling.penalised(4.0, True, 0, 1.2, 0.5, 0.5) == pytest.approx(4.0 / 1.2)
    assert sampling.penalised(-2.0, True, 0, 1.2, 0.0, 0.0) == pytest.approx(-2.4)
    assert sampling.penalised(4.0, False, 0, 1.2, 0.5, 0.5) == 4.0      # unseen: untouched


# ---- Speculative decoding

@pytest.mark.parametrize("alpha, gamma", [(0.8, 4), (0.5, 1), (0.9, 10), (0.6, 3), (0.3, 7), (0.99, 16)])
def test_tokens_per_pass_is_a_geometric_sum(alpha, gamma):
    # k drafts survive with probability α^k (1 − α) for k < γ and α^γ for all; each pass adds one token of its own
    expected = sum((k + 1) * alpha ** k * (1 - alpha) for k in range(gamma)) + (gamma + 1) * alpha ** gamma
    assert speculative.expected_tokens(alpha, gamma).value == pytest.approx(expected)


def test_tokens_per_pass_at_the_ends():
    assert speculative.expected_tokens(1.0, 4).value == 5
    assert speculative.expected_tokens(0.0, 4).value == 1


@pytest.mark.parametrize("alpha, gamma, cost", [(0.8, 4, 0.1662), (0.7, 3, 0.05), (0.6, 8, 0.3), (0.9, 5, 0.0)])
def test_the_speedup_rule(alpha, gamma, cost):
    rule = speculative.speedup_rule(alpha, gamma, cost).value
    assert rule == pytest.approx((1 - alpha ** (gamma + 1)) / ((1 - alpha) * (gamma * cost + 1)))


def parameters(config):
    """Weights a model holds, by hand from a config: every block matrix, the norms, and the LM head
    (a tied embedding counted once, as the head)."""
    hidden, layers = config["hidden_size"], config["num_hidden_layers"]
    head_dim = config.get("head_dim", hidden // config["num_attention_heads"])
    q = config["num_attention_heads"] * head_dim
    kv = config["num_key_value_heads"] * head_dim
    block = hidden * q * 2 + hidden * kv * 2 + 3 * hidden * config["intermediate_size"] + 2 * hidden
    return layers * block + hidden + config["vocab_size"] * hidden


HELD = 2150                                                          # the workload's prompt and half its output
TARGET, DRAFT = LLAMA_3_1_8B_CONFIG, LLAMA_3_2_1B_CONFIG
EAGLE_HEAD = {**LLAMA_3_1_8B_CONFIG, "num_hidden_layers": 1}         # one layer of the target's shape and its LM head


def step_by_hand(batch, held=HELD):
    return hand.pass_s(TARGET, batch, 1, held)


def draft_by_hand(config, batch, held=HELD):
    """A draft pass runs inside the engine step that verifies it: its kernels, no fixed cost of its own."""
    return hand.pass_s(config, batch, 1, held, fixed=False)


def verify_by_hand(batch, gamma, held=HELD):
    return hand.pass_s(TARGET, batch, gamma + 1, held)


def test_one_sequence_on_the_time_model():
    target, draft, verify = step_by_hand(1), draft_by_hand(DRAFT, 1), verify_by_hand(1, 4)
    run = facts()["speculative"]["run"]
    assert run.step.value == pytest.approx(target)
    assert run.draft_step.value == pytest.approx(draft)
    assert run.verify.value == pytest.approx(verify)
    assert 1 < verify / target < 1.05, "five positions of one sequence cost little more than one: the weights' reading dominates"
    tokens = (1 - 0.8 ** 5) / 0.2
    assert run.speedup.value == pytest.approx(tokens * target / (4 * draft + verify))
    assert run.speedup.value == pytest.approx(run.rule.value, rel=0.05)


def test_verification_at_the_full_cache():
    section = facts()["speculative"]
    full = section["full"]
    assert full.verify.value == pytest.approx(verify_by_hand(full.batch, 4))
    assert full.verify_ratio.value == pytest.approx(verify_by_hand(full.batch, 4) / step_by_hand(full.batch))
    assert full.verify_ratio.value > 1.4, "past the crossing a pass over five positions costs well over a step"
    assert full.speedup.value < full.rule.value


def test_a_larger_target_makes_the_same_draft_cheaper():
    # the 70B in fp8 reads over four times the bytes of the 8B in bf16, and the same draft costs as much
    # (on an H200, whose cache holds the sequence an H100 could not)
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, "model": "llama-3.1-70b", "weights": "fp8", "card": "h200-sxm"},
                             None, ["speculative.run.cost"])
    assert answer["ok"] and float(answer["refs"]["speculative.run.cost"][0]) < facts()["speculative"]["run"].cost.value / 3


def test_the_break_even_batch_is_where_the_speedup_crosses_one():
    doubtful = facts()["speculative"]["doubtful"]
    stops = int(doubtful.stops.value)
    assert doubtful.at(stops) < 1 <= doubtful.at(stops - 1)


def test_a_free_drafter_gets_the_whole_tokens_per_pass_at_batch_one():
    lookup = facts()["speculative"]["ngram"]
    tokens = (1 - 0.8 ** 5) / 0.2
    assert lookup.draft_step.value == 0
    assert lookup.speedup.value == pytest.approx(tokens * step_by_hand(1) / verify_by_hand(1, 4))


@pytest.mark.parametrize("alpha, gamma", [(0.8, 4), (0.5, 1), (0.9, 10), (0.6, 3), (0.3, 7)])
def test_vllms_acceptance_rate_counts_the_accepted_prefix(alpha, gamma):
    # vLLM counts drafts accepted before the first rejection: j of them with probability α^j (1 − α), all γ with α^γ
    accepted = sum(j * alpha ** j * (1 - alpha) for j in range(gamma)) + gamma * alpha ** gamma
    assert speculative.draft_acceptance_rate(alpha, gamma).value == pytest.approx(accepted / gamma)
    assert speculative.acceptance_length(alpha, gamma).value == pytest.approx(1 + accepted)
    assert speculative.acceptance_length(alpha, gamma).value == pytest.approx(speculative.expected_tokens(alpha, gamma).value)
    assert speculative.alpha_from_rate(accepted / gamma, gamma).value == pytest.approx(alpha, abs=1e-9)
    if gamma > 1:
        assert accepted / gamma < alpha, "the logged rate understates α"


def test_the_logged_rate_typed_in_as_alpha_understates_a_pass():
    run = facts()["speculative"]["run"]
    rate = (0.8 + 0.8 ** 2 + 0.8 ** 3 + 0.8 ** 4) / 4
    assert run.reported_rate.value == pytest.approx(rate)
    assert run.misread.value == pytest.approx((1 - rate ** 5) / (1 - rate))
    assert run.misread.value < run.per_pass.value - 1
    assert facts()["speculative"]["recovered"].value == pytest.approx(0.8)


def speedup_by_hand(alpha, gamma, batch, held=HELD, draft=DRAFT):
    tokens = (1 - alpha ** (gamma + 1)) / (1 - alpha)
    drafting = 0.0 if draft is None else draft_by_hand(draft, batch, held)
    return tokens * step_by_hand(batch, held) / (gamma * drafting + verify_by_hand(batch, gamma, held))


@pytest.mark.parametrize("alpha", [0.8, 0.6])
def test_the_best_gamma_is_chosen_on_the_time_model_at_the_batch(alpha):
    section = facts()["speculative"]
    full = replace(section["full"], alpha=alpha)
    by_hand = {g: speedup_by_hand(alpha, g, full.batch) for g in range(1, 11)}
    best = max(by_hand, key=lambda g: (by_hand[g], -g))
    assert full.best_gamma.value == best
    assert full.best.speedup.value == pytest.approx(by_hand[best])
    assert best < full.rule_gamma.value, "the rule, blind to the batch, drafts more than the full cache can verify"
    assert full.best.speedup.value > 1, "at the full cache some γ still pays on the time model"


def test_the_gamma_chart_is_the_time_model_at_the_readers_batch():
    run = facts()["speculative"]["full"]
    curves = speculative.gamma_curves(run)["curves"]
    assert curves[-1]["y"] == pytest.approx([speedup_by_hand(0.8, g, run.batch) for g in range(1, 11)])


def admitted_by_hand(held=HELD, drafted=4, drafter="llama-3.2-1b"):
    """Sequences of `held` tokens and their drafts the reference card's cache admits, in whole blocks of
    16, beside a draft model's or head's weights and its own cache (a lookup holds neither)."""
    ladder = kvcache.ladder(REFERENCE)
    budget, per_token = ladder.kv_budget.value, hand.cache_per_token(TARGET)
    if drafter != "ngram":
        draft = LLAMA_3_2_1B_CONFIG if drafter == "llama-3.2-1b" else {**LLAMA_3_1_8B_CONFIG, "num_hidden_layers": 1}
        embedding = 0 if draft.get("tie_word_embeddings") else draft["vocab_size"] * draft["hidden_size"]
        budget -= 2 * (parameters(draft) + embedding)                 # bf16 weights, the gathered table included
        per_token += hand.cache_per_token(draft)
    tokens = int(budget // (16 * per_token)) * 16
    pool = tokens // (-(-(held + drafted) // 16) * 16)
    return min(pool, 1024, 8192 // (drafted + 1))  # an H100's max_num_seqs, and its token budget over γ + 1 positions


def ranges_by_hand(speedups):
    """(first, last, pays) for runs of batches 1, 2, … whose speedup is or is not at least 1."""
    found = []
    for batch, speedup in enumerate(speedups, start=1):
        if found and found[-1][2] == (speedup >= 1):
            found[-1] = (found[-1][0], batch, found[-1][2])
        else:
            found.append((batch, batch, speedup >= 1))
    return tuple(found)


def test_the_break_even_per_gamma():
    doubtful = facts()["speculative"]["doubtful"]
    for gamma, phrase in enumerate(doubtful.stops_by_gamma.split("; "), start=1):
        assert phrase.startswith(f"γ {gamma}: ")
        largest = admitted_by_hand(drafted=gamma)
        expected = ranges_by_hand([speedup_by_hand(0.6, gamma, b) for b in range(1, largest + 1)])
        assert replace(doubtful, gamma=gamma).ranges == expected
    assert doubtful.ranges[0][2] and not doubtful.ranges[-1][2], "γ 4 at α 0.6 pays for few sequences, not for many"


def test_speculation_that_loses_for_one_sequence_can_pay_for_more():
    # a head's cost falls against a target step that grows by every sequence's whole cache: the speedup rises first
    values = {"drafter": "eagle", "acceptance": "0.55", "drafted": "16", "held": "8192", "spec_batch": "12"}
    largest = admitted_by_hand(8192, drafted=16, drafter="eagle")
    expected = ranges_by_hand([speedup_by_hand(0.55, 16, b, 8192, EAGLE_HEAD) for b in range(1, largest + 1)])
    assert [pays for _, _, pays in expected] == [False, True], expected
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, **values}, None, ["speculative.run.stops_text", "speculative.run.speedup"],
                             ["speculative-batch"])
    text = answer["refs"]["speculative.run.stops_text"][0]
    (_, last, _), (first, end, _) = expected
    assert text == f"it does not pay at {'1' if last == 1 else f'1–{last}'} sequence{'s' * (last > 1)}, pays at {first}–{end}, " \
                   "the most the pool beside the EAGLE-style head admits"
    assert float(answer["refs"]["speculative.run.speedup"][0].rstrip("×")) > 1
    batches = answer["curves"]["speculative-batch"]["curves"][0]["x"]
    assert batches[-1] == largest and all(b < largest for b in batches[:-1]), "the chart stops at what the pool admits beside the head"


def test_the_scan_prices_every_batch_as_the_worked_lines_do():
    # the scan's numbers (no worked lines) against the speedup built from the steps' groups, at the edges of
    # every range and a spread of batches, on cards measured and borrowed
    for card in ("h100-sxm", "l4", "mi300x"):
        for drafter in ("eagle", "llama-3.2-1b", "ngram"):
            for held, gamma, alpha in ((500, 3, 0.6), (8192, 16, 0.6), (2150, 8, 0.7)):
                run = speculative.Speculative(replace(REFERENCE, card=CARDS[card]), alpha, gamma, speculative.DRAFTERS[drafter], 1, held)
                assert run.ranges == ranges_by_hand([run.at(b) for b in range(1, run.largest + 1)])
                edges = {b for first, last, _ in run.ranges for b in (first, last)}
                for b in sorted(edges | set(range(1, run.largest + 1, max(1, run.largest // 7)))):
                    assert run.at(b) == pytest.approx(replace(run, batch=b).speedup_value, rel=1e-12), (card, drafter, held, b)


def test_the_draft_shares_the_pool():
    section = facts()["speculative"]
    full, ladder = section["full"], kvcache.ladder(REFERENCE)
    budget = ladder.kv_budget.value - 2 * parameters(LLAMA_3_2_1B_CONFIG)
    per_token = hand.cache_per_token(TARGET) + hand.cache_per_token(DRAFT)
    tokens = int(budget // (16 * per_token)) * 16
    charged = -(-HELD // 16) * 16                                    # the tokens held, in whole blocks of 16
    sequences = tokens // charged
    assert full.shared_pool.value == sequences
    assert full.largest == admitted_by_hand() == sequences, "the batch scan stops where the shared pool does"
    assert replace(full, drafter=speculative.DRAFTERS["ngram"]).largest == admitted_by_hand(drafter="ngram") > sequences
    plain = full.batch / step_by_hand(full.batch)
    speculating = sequences * speedup_by_hand(0.8, 4, sequences) / step_by_hand(sequences)
    assert full.shared_gain.value == pytest.approx(speculating / plain)


def test_all_three_penalties_in_vllms_order():
    assert facts()["sampling"]["penalty"].combined.value == pytest.approx(4.0 / 1.2 - 0.5 * 3 - 0.5)


def test_rejection_sampling_recovers_the_target():
    draws = random.Random(5)
    for _ in range(200):
        p = [draws.random() ** 3 for _ in range(6)]
        q = [draws.random() for _ in range(6)]
        p, q = [x / sum(p) for x in p], [x / sum(q) for x in q]
        check_ = speculative.Verification(NAMES, tuple(p), tuple(q))
        alpha = sum(min(a, b) for a, b in zip(p, q))
        residual = [max(0.0, a - b) / sum(max(0.0, a - b) for a, b in zip(p, q)) for a, b in zip(p, q)]
        out = [b * min(1, a / b) + (1 - alpha) * r for a, b, r in zip(p, q, residual)]
        assert check_.acceptance.value == pytest.approx(alpha)
        assert check_.output == pytest.approx(p) and out == pytest.approx(p)


def test_every_worked_line_adds_up():
    namespace = facts()
    for path, value in leaves({"sampling": namespace["sampling"], "speculative": namespace["speculative"]}, depth=5):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


# ---- The calculators in CPython

@pytest.mark.parametrize("values, field", [
    ({"top_p": "0"}, "top_p"), ({"top_p": "1.5"}, "top_p"), ({"top_k": "-1"}, "top_k"), ({"temperature": "-0.5"}, "temperature"),
    ({"logit_3": "abc"}, "logit_3"), ({"logit_0": "1e400"}, "logit_0"), ({"min_p": "2"}, "min_p"), ({"seed": "1.5"}, "seed"),
])
def test_the_sampling_calculator_refuses_nonsense(values, field):
    answer = SAMPLING.run({**SAMPLING.defaults, **values}, None, ["sampling.token"])
    assert not answer["ok"] and field in answer["errors"], answer


@pytest.mark.parametrize("values, field", [
    ({"acceptance": "1.2"}, "acceptance"), ({"drafted": "0"}, "drafted"), ({"drafted": "2.5"}, "drafted"),
    ({"spec_batch": "0"}, "spec_batch"), ({"drafter": "gpt-5"}, "drafter"), ({"held": "131070"}, "held"),
    ({"model": "llama-3.1-70b"}, "model"), ({"model": "mixtral-8x7b"}, "model"),
])
def test_the_speculative_calculator_refuses_nonsense(values, field):
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, **values}, None, ["speculative.run.speedup"])
    assert not answer["ok"] and field in answer["errors"], answer


def test_the_calculators_in_cpython_follow_the_page():
    answer = SAMPLING.run(SAMPLING.defaults, None, ["sampling.token", "sampling.stage.top_p.kept"], ["sampling-filters"])
    assert answer["refs"]["sampling.token"][0] == "“ floor”" and answer["refs"]["sampling.stage.top_p.kept"][0] == "3"
    assert [c["x"] for c in answer["curves"]["sampling-filters"]["curves"]] == [list(NAMES)] * 5
    greedy = SAMPLING.run({**SAMPLING.defaults, "temperature": "0"}, None, ["sampling.token"])
    assert greedy["refs"]["sampling.token"][0] == "“ mat”"
    spec = SPECULATIVE.run({**SPECULATIVE.defaults, "acceptance": "1", "drafter": "ngram"}, None,
                           ["speculative.run.per_pass", "speculative.run.speedup"], ["speculative-speedup", "speculative-batch"])
    every_kept = 5 * step_by_hand(1) / verify_by_hand(1, 4)  # a lookup costs nothing; the pass checks five positions
    assert spec["refs"]["speculative.run.per_pass"][0] == "5 tokens"
    assert spec["refs"]["speculative.run.speedup"][0] == f"{every_kept:.2f}×"
    assert len(spec["curves"]["speculative-speedup"]["curves"]) == 5


# ---- In Chromium, over file://, with the network blocked.

SAMPLER = Calculator("sampling")
SPEC = Calculator("speculative")


@pytest.fixture(scope="module")
def decode_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "13", "sampling")


@pytest.mark.parametrize("inputs", [
    {"logit_0": "1.5", "logit_5": "6", "temperature": "1.3", "min_p": "0", "top_k": "0", "top_p": "0.5", "seed": "7"},
    {"logit_2": "-20", "temperature": "0", "min_p": "0.5", "top_k": "1", "top_p": "1", "seed": "0"},
])
def test_the_sampler_follows_cpython(decode_page, inputs):
    page = decode_page.page
    assert SAMPLER.set(page, **{**SAMPLING.defaults, **inputs}) == "computed"
    shown = SAMPLER.live(page)
    expected = SAMPLING.run({**SAMPLING.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}


@pytest.mark.parametrize("inputs", [
    {"acceptance": "0.6", "drafted": "3", "drafter": "eagle", "spec_batch": "64", "held": "500", "card": "h100-sxm"},
    {"acceptance": "0.95", "drafted": "8", "drafter": "ngram", "spec_batch": "1", "held": "8000", "card": "l4"},
    {"acceptance": "0.7", "drafted": "5", "drafter": "llama-3.2-1b", "spec_batch": "32", "model": "llama-3.1-70b",
     "weights": "fp8", "card": "h200-sxm"},
])
def test_speculation_follows_cpython(decode_page, inputs):  # (a 70B in fp8 on an H100, or the 1B draft on an L4: refused)
    page = decode_page.page
    assert SPEC.set(page, **{**SPECULATIVE.defaults, **inputs}) == "computed"
    shown = SPEC.live(page)
    expected = SPECULATIVE.run({**SPECULATIVE.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}


@pytest.mark.parametrize("calculator, declared, field, value", [
    (SAMPLER, SAMPLING, "top_p", "0"), (SAMPLER, SAMPLING, "top_p", "1.01"), (SAMPLER, SAMPLING, "top_k", "-1"),
    (SAMPLER, SAMPLING, "temperature", "-1"), (SAMPLER, SAMPLING, "logit_1", "3,5"), (SAMPLER, SAMPLING, "seed", ""),
    (SPEC, SPECULATIVE, "acceptance", "1.5"), (SPEC, SPECULATIVE, "drafted", "0"), (SPEC, SPECULATIVE, "spec_batch", "lots"),
    (SPEC, SPECULATIVE, "held", "131072"), (SPEC, SPECULATIVE, "spec_batch", "4096"),
    (SAMPLER, SAMPLING, "temperature", "1e-9"), (SPEC, SPECULATIVE, "acceptance", "0.9999999"),
])
def test_bad_input_gets_a_message(decode_page, calculator, declared, field, value):
    page = decode_page.page
    defaults = declared.defaults
    calculator.set(page, **defaults)
    expected = declared.run({**defaults, field: value}, None, [], [], False)["errors"][field]
    after = calculator.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    calculator.set(page, **{field: defaults[field]})


@pytest.mark.parametrize("values, field, words", [
    ({"spec_batch": "4096"}, "spec_batch", f"cache admits {admitted_by_hand():,} sequences of 2,160 tokens"),
    ({"spec_batch": "4096", "drafter": "ngram"}, "spec_batch", f"cache admits {admitted_by_hand(drafter='ngram'):,} sequences"),
    ({"model": "llama-3.1-70b", "weights": "fp8", "card": "a100-80", "drafter": "ngram", "held": "8000"}, "held",
     "not one sequence of 8,016 tokens fits"),
    ({"model": "llama-3.1-70b", "weights": "fp8", "card": "a100-80"}, "drafter", "Llama 3.2 1B draft model's weights"),
    ({"model": "llama-3.1-70b", "weights": "fp8", "card": "a100-80", "drafter": "eagle"}, "drafter", "EAGLE-style head's weights"),
    ({"model": "llama-3.1-70b", "weights": "fp8"}, "model", "do not fit H100 SXM 80 GB's pool"),
    ({"drafter": "ngram", "held": "100", "spec_batch": "2000"}, "spec_batch", "verifies at most 1,024 sequences in full"),
    ({"drafter": "ngram", "held": "100", "drafted": "16", "spec_batch": "700"}, "spec_batch",
     f"verifies at most {8192 // 17} sequences in full"),                  # the step's 8,192 tokens over 17 each
    ({"model": "llama-3.1-70b", "card": "b200", "held": "131072", "drafted": "1"}, "held", "Llama 3.1 70B Instruct reaches"),
    ({"held": "5.5"}, "held", "Tokens held must be a whole number"),
])
def test_what_the_card_cannot_hold_is_refused_by_name(values, field, words):
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, **values}, None, [])
    assert not answer["ok"] and words in answer["errors"][field]


def test_top_p_of_one_removes_nothing_even_when_a_share_rounds_to_zero():
    from calc.engine.sampling import top_p_keep
    assert top_p_keep((4.0, 3.5, -200.0), 1.0) == [True, True, True]


@pytest.mark.parametrize("calculator, field, value", [
    (SPECULATIVE, "acceptance", "0.9999999"), (SAMPLING, "temperature", "1e-9"), (SAMPLING, "top_p", "0.000000001"),
    (SAMPLING, "min_p", "0.12345678"),
])
def test_a_value_finer_than_a_worked_line_prints_is_refused(calculator, field, value):
    answer = calculator.run({**calculator.defaults, field: value}, None, [])
    assert not answer["ok"] and answer["errors"][field].endswith("takes at most 6 decimal places")


def test_the_finest_values_accepted_print_as_typed():
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, "acceptance": "0.999999"}, None,
                             ["speculative.run.per_pass", "speculative.recovered"], ["speculative-speedup"])
    per_pass, recovered = answer["refs"]["speculative.run.per_pass"][1], answer["refs"]["speculative.recovered"][1]
    assert per_pass.startswith("(1 − 0.999999^5) ÷ (1 − 0.999999)") and check(per_pass) == []
    assert "(0.00000100 × 4)" in recovered and check(recovered) == []
    assert answer["curves"]["speculative-speedup"]["curves"][-1]["name"] == "your α = 0.999999"
    greedy = SAMPLING.run({**SAMPLING.defaults, "temperature": "0.000001"}, None, ["sampling.draw|worked"])
    assert greedy["refs"]["sampling.draw|worked"][0].startswith("temperature 0.000001 is below 0.00001")


@pytest.mark.parametrize("alpha", [0.0015, 0.3, 0.999, 0.999999])
def test_alpha_recovered_from_a_small_or_large_rate(alpha):
    rate = sum(alpha ** k for k in range(1, 5)) / 4
    recovered = speculative.alpha_from_rate(rate, 4)
    assert recovered.value == pytest.approx(alpha, rel=1e-9) and check(recovered.worked) == []


def test_when_no_gamma_pays_the_card_says_so():
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, "acceptance": "0"}, None,
                             ["speculative.run.best_text", "speculative.run.per_pass", "speculative.run.stops_text"])
    refs = {ref: text for ref, (text, _) in answer["refs"].items()}
    assert refs["speculative.run.best_text"].startswith("none; the least slow, γ of 1, gives 0.")
    assert refs["speculative.run.per_pass"] == "1 token"
    assert refs["speculative.run.stops_text"] == f"it does not pay at any batch the pool beside the Llama 3.2 1B draft model admits (1–{admitted_by_hand()} sequences)"


def test_greedy_names_no_min_p_cut_and_the_chart_says_what_it_follows():
    greedy = SAMPLING.run({**SAMPLING.defaults, "temperature": "0"}, None, ["sampling.cut", "sampling.setting"])
    assert greedy["refs"]["sampling.cut"][0] == "none: greedy decoding runs no filter"
    assert greedy["refs"]["sampling.setting"][0] == "the six logits typed, temperature 0, min-p 0.02, top-k 4, top-p 0.9"


def test_the_gamma_chart_reaches_the_readers_gamma_and_alpha_prints_as_typed():
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, "drafted": "16", "acceptance": "1", "drafter": "ngram"}, None,
                             ["speculative.run.best_text", "speculative.alpha"], ["speculative-speedup"])
    assert answer["curves"]["speculative-speedup"]["curves"][-1]["x"] == list(range(1, 17))
    every_kept = 17 * step_by_hand(1) / verify_by_hand(1, 16)         # a free drafter, every draft kept
    assert answer["refs"]["speculative.run.best_text"][0] == f"16, giving {every_kept:.2f}×"
    assert facts()["speculative"]["alpha"].show() == "0.8"


def test_a_dip_below_one_between_two_paying_ranges_is_named_on_both_sides():
    run = speculative.Speculative(REFERENCE, 0.5, 10, speculative.DRAFTERS["eagle"], 1, 500)
    assert [pays for _, _, pays in run.ranges] == [True, False, True, False], run.ranges
    shown = [float(x) for x in re.findall(r"([\d.]+)× at", run.stops.worked)]
    assert [x >= 1 for x in shown] == [True, False, False, True, True, False], run.stops.worked  # each side of 1× as computed


@pytest.mark.parametrize("values", [{}, {"drafted": "16", "held": "8180"}, {"drafter": "eagle", "held": "8180"},
                                    {"card": "l4", "held": "700", "drafted": "9", "drafter": "ngram"}])
def test_the_ranges_end_where_the_batch_check_starts_refusing(values):
    answer = SPECULATIVE.run({**SPECULATIVE.defaults, **values}, None, ["speculative.run.largest", "speculative.run.stops_text"])
    last = int(answer["refs"]["speculative.run.largest"][0].replace(",", ""))
    assert answer["refs"]["speculative.run.stops_text"][0].endswith(
        (f"{last:,} sequences)", f"{last:,}, the most the pool beside the Llama 3.2 1B draft model admits",
         f"{last:,}, the most the pool beside the EAGLE-style head admits"))
    assert SPECULATIVE.run({**SPECULATIVE.defaults, **values, "spec_batch": str(last)}, None, [])["ok"]
    refused = SPECULATIVE.run({**SPECULATIVE.defaults, **values, "spec_batch": str(last + 1)}, None, [])
    assert f"admits {last:,} sequences" in refused["errors"]["spec_batch"]
