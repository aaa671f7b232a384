"""Document 15: the simulated stream and the production figures, checked against arithmetic done here
by hand from the model's config and the card's datasheet, read from calc's tables."""
from __future__ import annotations

import math
import time
from dataclasses import replace

import pytest

from arithmetic import check
from calc.engine import simulation
from calc.calculators import PRODUCTION
from calc.facts import facts
from calc.core.present import leaves
from calc.specs.inputs import REFERENCE_INPUTS
from calc.specs.stack import REFERENCE
from calc.core.units import Result
from conftest import Calculator, booted_page

import by_hand

MODEL, CARD = REFERENCE.model, REFERENCE.card
STREAM = REFERENCE_INPUTS.stream
LAYERS, HIDDEN, KV_HEADS = MODEL.num_hidden_layers, MODEL.hidden_size, MODEL.num_key_value_heads
HEAD_DIM = HIDDEN // MODEL.num_attention_heads
BLOCKS = LAYERS * (2 * HIDDEN * HIDDEN + 2 * HIDDEN * KV_HEADS * HEAD_DIM + 3 * HIDDEN * MODEL.intermediate_size)
TABLE = MODEL.vocab_size * HIDDEN                        # untied: embedding and head each this size
NORMS = LAYERS * 2 * HIDDEN + HIDDEN
PER_TOKEN = 2 * LAYERS * KV_HEADS * HEAD_DIM * 2           # cache bytes per token, bf16
PER_POSITION = 4 * LAYERS * HIDDEN                         # attention operations per attended position
WEIGHTS_READ = 2 * (BLOCKS + TABLE + NORMS)                # every weight but the gathered embedding


@pytest.fixture(scope="module")
def section():
    return facts()["production"]


def test_a_decode_step_is_the_time_models():
    costs = simulation.step_costs(REFERENCE)
    for batch, held in ((1, 2_000), (64, 2_300), (300, 5_000)):
        assert costs.step(batch, batch * held, 0, (), batch) == pytest.approx(by_hand.decode_step_s(batch, held), rel=1e-6)


def test_a_whole_prompt_in_one_step_is_its_prefill():
    costs = simulation.step_costs(REFERENCE)
    prompt = 4_000
    simulated = costs.step(0, 0.0, prompt, ((prompt, 0),), 1)
    assert simulated == pytest.approx(by_hand.prefill_s(prompt), rel=0.005)  # the embedding's write is priced apart


def test_lengths_are_lognormal_through_p50_and_p95():
    fitted = simulation.lognormal_through(2_000, 8_000)
    assert fitted.median == 2_000 and fitted.sigma == pytest.approx(math.log(4) / 1.6448536, rel=1e-6)
    drawn = simulation.drawn_for(REFERENCE, STREAM)
    assert all(o <= REFERENCE.context_limit // 2 for o in drawn.outputs)
    prompts = sorted(drawn.prompts)
    assert 1_500 < prompts[len(prompts) // 2] < 2_600  # the sample's median near p50


def test_the_same_seed_gives_the_same_percentiles():
    rate = 4.0
    first = simulation.measure(REFERENCE, simulation.simulate(REFERENCE, STREAM, rate))
    again = simulation.measure(REFERENCE, simulation.simulate(REFERENCE, STREAM, rate))
    assert (first.ttft, first.itl, first.goodput_tokens) == (again.ttft, again.itl, again.goodput_tokens)
    other = replace(STREAM, seed=STREAM.seed + 1)
    moved = simulation.measure(REFERENCE, simulation.simulate(REFERENCE, other, rate))
    assert moved.ttft != first.ttft


def test_littles_law_holds_where_the_queue_is_steady_and_not_past_saturation():
    saturation = simulation.closed_form(REFERENCE, STREAM).saturation.value
    for outcome in simulation.sweep(REFERENCE, STREAM).outcomes:
        little = outcome.arrival_rate * outcome.mean_time_in_system
        if outcome.rate < 0.95 * saturation:
            assert outcome.mean_in_system == pytest.approx(little, rel=0.03)
        elif outcome.rate > 1.1 * saturation:  # the queue grows through the window: W counts waits L has not seen
            assert little > 1.1 * outcome.mean_in_system


def test_prompts_that_reach_the_limit_are_refused_and_longer_replies_cut():
    """vLLM 0.33.0's API server refuses a prompt of the context limit or more (no output token fits:
    InputProcessor._validate_prompt_len) and cuts a shorter prompt's max_tokens to what the limit leaves
    (get_max_tokens)."""
    drawn, limit = simulation.drawn_for(REFERENCE, STREAM), REFERENCE.context_limit
    refused = [i for i, p in enumerate(drawn.prompts) if p >= limit]
    cut = [i for i, (p, o) in enumerate(zip(drawn.prompts, drawn.outputs)) if p < limit < p + o]
    assert 0 < len(refused) < 0.1 * len(drawn.prompts) and cut  # a lognormal through p50 2,000 and p95 8,000
    run = simulation.simulate(REFERENCE, STREAM, 2.0)
    assert all(run.requests[i].state == "refused" and run.requests[i].first == math.inf for i in refused)
    assert all(run.requests[i].state != "refused" and run.requests[i].output == limit - drawn.prompts[i] for i in cut)
    outcome = simulation.measure(REFERENCE, run)
    assert outcome.refused == sum(i >= run.measured_from for i in refused)
    assert outcome.good <= outcome.measured - outcome.refused
    served = [(p, min(o, limit - p)) for p, o in zip(drawn.prompts, drawn.outputs) if p < limit]
    closed = simulation.closed_form(REFERENCE, STREAM)
    assert closed.mean_prompt.value == pytest.approx(sum(p for p, _ in served) / len(served))
    assert closed.mean_output.value == pytest.approx(sum(o for _, o in served) / len(served))


def test_the_sweep_reports_its_progress_to_the_page():
    import json
    from calc.calculators import run_json
    heard = []
    values = {**PRODUCTION.defaults, "seed": "11"}  # a seed no other test has simulated, so nothing is cached
    answer = json.loads(run_json(json.dumps({"calculator": "production", "values": values,
                                             "paths": ["production.knee.rate"]}), lambda *report: heard.append(report)))
    assert answer["ok"]
    rates = len(simulation.SWEEP)
    assert heard == [(k, rates, "request rates simulated") for k in range(rates + 1)]
    assert json.loads(run_json(json.dumps({"calculator": "production", "values": values,
                                           "paths": ["production.knee.rate"]})))["ok"]  # no listener: no reports


def test_a_budget_below_max_num_seqs_lowers_the_sequence_cap_as_vllm_does():
    """vllm/engine/arg_utils.py, _set_default_max_num_seqs_and_batched_tokens_args: max_num_seqs, left
    unset, becomes min(its default, max_num_batched_tokens)."""
    from calc.engine.launch import default_max_num_seqs
    seqs = default_max_num_seqs(CARD)
    small = replace(REFERENCE, serving=replace(REFERENCE.serving, max_num_batched_tokens=seqs // 2))
    assert simulation.scheduler_caps(small) == (seqs // 2, seqs // 2)
    assert PRODUCTION.run({**PRODUCTION.defaults, "step_tokens": str(seqs // 2)}, None, ["production.knee.rate"])["ok"]


def test_a_budget_whose_profile_leaves_no_cache_is_refused_on_its_field():
    answer = PRODUCTION.run({**PRODUCTION.defaults, "step_tokens": "500000"}, None, ["production.knee.rate"])
    assert not answer["ok"] and "activation peak" in answer["errors"]["step_tokens"]


def test_the_smaller_budget_is_max_num_seqs_and_the_offered_rate_is_counted(section):
    from calc.engine.launch import default_max_num_seqs
    assert section["chunked"].budget.value == default_max_num_seqs(CARD)
    requests = STREAM.requests
    measured = requests - int(requests * STREAM.warm_up)
    for outcome in simulation.sweep(REFERENCE, STREAM).outcomes:
        assert outcome.measured == measured
        assert outcome.measured / outcome.span == pytest.approx(outcome.rate, rel=0.05)  # Poisson: near nominal
    at = next(o for o in simulation.sweep(REFERENCE, STREAM).outcomes if o.rate == section["at"]["rate"].value)
    assert section["at"]["offered"].value == pytest.approx(measured / at.span)


def test_past_saturation_queues_grow_goodput_falls_and_nothing_raises():
    saturation = simulation.closed_form(REFERENCE, STREAM).saturation.value
    outcomes = [simulation.measure(REFERENCE, simulation.simulate(REFERENCE, STREAM, f * saturation)) for f in (0.5, 1.3, 2, 4)]
    waits = [o.peak_waiting for o in outcomes]
    assert waits == sorted(waits) and waits[-1] > 10 * max(waits[0], 1)
    ttfts = [o.ttft["p95"] for o in outcomes]
    assert ttfts == sorted(ttfts)
    best = max(o.goodput_tokens for o in simulation.sweep(REFERENCE, STREAM).outcomes)
    assert outcomes[-1].goodput_tokens < 0.2 * best
    assert all(math.isfinite(o.ttft["p99"]) and math.isfinite(o.itl["p99"]) for o in outcomes)


def test_the_knee_is_where_a_p95_crosses(section):
    run = simulation.sweep(REFERENCE, STREAM)
    knee = section["knee"]["rate"].value
    promise = REFERENCE.promise
    for outcome in run.outcomes:
        if outcome.rate < knee:
            assert outcome.ttft["p95"] <= promise.ttft_p95_s and outcome.itl["p95"] <= promise.itl_p95_s
    beyond = [o for o in run.outcomes if o.rate > knee]
    assert beyond[0].ttft["p95"] > promise.ttft_p95_s or beyond[0].itl["p95"] > promise.itl_p95_s


def test_the_closed_form_by_hand(section):
    closed = section["closed"]
    prompt, output = closed.mean_prompt.value, closed.mean_output.value
    held = prompt + output / 2
    batch = closed.batch_at_saturation.value
    step = by_hand.decode_step_s(batch, held)
    assert closed.saturation.value == pytest.approx(1 / (closed.prefill.value + output * step / batch), rel=1e-6)
    assert closed.itl_bound.value <= closed.saturation.value * (1 + 1e-9)


def test_cost_gpus_and_cold_start_by_hand(section):
    knee = section["knee"]["rate"].value
    output = section["closed"].mean_output.value
    price = REFERENCE.price.gpu_hour_usd
    assert section["cost"].value == pytest.approx(price / (knee * output * 3600) * 1e6, rel=1e-9)
    assert section["gpus"].value == math.ceil(REFERENCE.traffic.requests_per_s / knee)
    held = 2 * (BLOCKS + 2 * TABLE + NORMS)
    assert section["cold"]["reading"].value == pytest.approx(held / (STREAM.storage_gb_per_s * 1e9), rel=1e-9)
    assert section["utilisation"]["gain"].value == pytest.approx(0.5 / 0.2)


def test_every_worked_line_adds_up(section):
    for path, value in leaves({"production": section}, depth=5):
        if isinstance(value, Result) and value.worked:
            assert check(value.worked) == [], path


def test_the_knee_and_goodputs_peak_fall_below_saturation(section):
    saturation = section["closed"].saturation.value
    assert section["knee"]["ttft"].value <= saturation * 1.01 and section["knee"]["rate"].value < saturation
    assert section["best"]["rate"].value < saturation
    spread = section["spread"]
    assert spread["low"].value <= section["knee"]["rate"].value <= spread["high"].value < saturation


def test_document_14s_terms_by_hand(section):
    knee = section["knee"]["rate"].value
    closed = section["closed"]
    tokens = closed.mean_prompt.value + closed.mean_output.value
    price, peak, headroom = REFERENCE.price.gpu_hour_usd, REFERENCE.traffic.requests_per_s, REFERENCE.headroom
    terms = section["document_14"]
    assert terms["at_knee"].value == pytest.approx(price / (knee * tokens * 3600) * 1e6, rel=1e-9)
    fleet = math.ceil(peak / knee) + headroom.spares
    assert terms["gpus"].value == fleet
    bought = math.ceil(fleet / headroom.node) * headroom.node  # cards come by the node, as document 14 buys them
    assert terms["bought"].value == bought
    assert terms["average"].value == pytest.approx(bought * price / (peak * headroom.average_load * tokens * 3600) * 1e6,
                                                   rel=1e-9)


def test_decode_alone_is_the_cache_limited_batch_over_its_step(section):
    closed = section["closed"]
    batch = closed.batch_at_saturation.value
    held = closed.mean_prompt.value + closed.mean_output.value / 2
    step = by_hand.decode_step_s(batch, held)
    assert section["decode_alone"].value == pytest.approx(batch / step, rel=1e-6)


def test_a_loose_promise_puts_the_knee_where_the_queue_stops_being_steady():
    """A minute for the first token and ten seconds a gap: no p95 breaks, but past saturation the
    queue grows through the run, and Little's Law's two sides part."""
    from calc.documents.production import knee
    loose = replace(REFERENCE, promise=replace(REFERENCE.promise, ttft_p95_s=600.0, itl_p95_s=10.0))
    run = simulation.sweep(loose, STREAM)
    growing = [o for o in run.outcomes if o.arrival_rate * o.mean_time_in_system > 1.05 * o.mean_in_system]
    steady = [o for o in run.outcomes if o.rate < growing[0].rate]
    found = knee(run, loose.promise)
    assert steady[-1].rate <= found["rate"].value <= growing[0].rate
    assert found["rate"].value < 1.15 * run.closed.saturation.value and "queue" in found["binds"]


def test_long_replies_draw_fewer_requests_so_a_recompute_stays_bounded():
    long = replace(REFERENCE, traffic=replace(REFERENCE.traffic, output_p50=4_096, output_long=4_096))
    drawn, full = simulation.drawn_for(long, STREAM), simulation.drawn_for(REFERENCE, STREAM)
    assert 300 <= len(drawn.outputs) < STREAM.requests
    assert sum(drawn.outputs) <= 1_500_000 < sum(drawn.outputs) + 4_096
    assert drawn.arrivals == full.arrivals[:len(drawn.arrivals)]  # the same arrivals, cut short
    assert len(full.outputs) == STREAM.requests  # the reference stream is drawn whole
    answer = PRODUCTION.run({**PRODUCTION.defaults, "output_p50": "4096", "output_p95": "4096"}, None,
                            ["production.requests"])
    assert answer["refs"]["production.requests"][0] == f"{len(drawn.outputs):,}"


def test_goodput_never_exceeds_throughput():
    from calc.specs.models import CATALOGUE
    for stack in (REFERENCE, replace(REFERENCE, model=CATALOGUE["llama-3.2-1b"])):
        for outcome in simulation.sweep(stack, STREAM).outcomes:
            assert outcome.goodput_tokens <= outcome.throughput * (1 + 1e-12), (stack.model.name, outcome.rate)


def test_the_caches_share_of_a_step_at_saturation_by_hand(section):
    closed = section["closed"]
    held = round(closed.mean_prompt.value + closed.mean_output.value / 2)
    capacity = facts()["ladder"].token_capacity.value
    batch = int(capacity / (closed.mean_prompt.value + closed.mean_output.value / 2 + REFERENCE.block_size))
    cache = batch * held * PER_TOKEN
    reads = section["reads"]
    assert reads["batch"].value == batch and reads["held"].value == held
    assert reads["step"].read.cache_share.value == pytest.approx(cache / (WEIGHTS_READ + cache), rel=1e-9)
    assert reads["half"].value == pytest.approx(WEIGHTS_READ / (held * PER_TOKEN), rel=1e-9)
    assert reads["half"].value < batch  # the cache outweighs the weights well before saturation


FIREWORKS_UP_TO_16B = 0.20  # USD per million tokens, prompt and output alike: https://fireworks.ai/pricing


def test_the_month_against_an_apis_price_by_hand(section):
    fleet = section["document_14"]["average"].value
    api = section["api"]
    assert api["price"].value == FIREWORKS_UP_TO_16B
    assert api["ratio"].value == pytest.approx(fleet / FIREWORKS_UP_TO_16B, rel=1e-9)
    assert api["even_load"].value == pytest.approx(REFERENCE.headroom.average_load * fleet / FIREWORKS_UP_TO_16B, rel=1e-9)


FIREWORKS_CACHED_OFF = 0.5  # cached prompt tokens, 50% off by default: https://docs.fireworks.ai/guides/prompt-caching
FIREWORKS_BATCH_OFF = 0.5   # batch inference at 50% of serverless rates: https://docs.fireworks.ai/serverless/overview


def test_the_apis_cached_prompt_and_batch_discounts_by_hand(section):
    """The shared prefix a hit reuses (whole 16-token blocks of the 1,000-token system prompt) is
    billed at half; the fleet must then run busier to match the API, and busier still for batch work."""
    fleet = section["document_14"]["average"].value
    closed = section["closed"]
    tokens = closed.mean_prompt.value + closed.mean_output.value
    reused = 1_000 // 16 * 16
    share = 0.80 * reused / tokens
    price = FIREWORKS_UP_TO_16B * (1 - FIREWORKS_CACHED_OFF * share)
    api = section["api"]
    assert api["cached_share"].value == pytest.approx(share, rel=1e-9)
    assert api["cached_price"].value == pytest.approx(price, rel=1e-9)
    assert api["cached_even_load"].value == pytest.approx(REFERENCE.headroom.average_load * fleet / price, rel=1e-9)
    assert api["cached_even_load"].value > api["even_load"].value
    batch = FIREWORKS_UP_TO_16B * (1 - FIREWORKS_BATCH_OFF)
    assert api["batch_even_load"].value == pytest.approx(REFERENCE.headroom.average_load * fleet / batch, rel=1e-9)
    assert api["batch_even_load"].value > api["cached_even_load"].value


def test_a_small_price_keeps_its_digits_and_the_inputs_line_keeps_its_acronyms():
    answer = PRODUCTION.run({**PRODUCTION.defaults, "price": "0.01"}, None, ["production.cost"])
    knee, output = facts()["production"]["knee"]["rate"].value, facts()["production"]["closed"].mean_output.value
    by_hand = 0.01 / (knee * output * 3600) * 1e6
    assert answer["refs"]["production.cost"][0] == f"{by_hand:.2g} USD per million tokens"
    assert "TTFT promise, p95 1,000 ms" in answer["inputs"] and "ITL promise, p95 50 ms" in answer["inputs"]
    assert "token budget per step" in answer["inputs"]


def test_the_right_hand_axis_has_ticks_of_its_own():
    from runbook.charts import build
    layout = build("latency-vs-rate", facts())["layout"]
    assert layout["yaxis2"]["tickmode"] == "auto"  # not Plotly's "sync" to the log axis on the left


def test_one_sweep_is_fast_in_cpython():
    stream = replace(STREAM, seed=STREAM.seed + 7)
    started = time.perf_counter()
    simulation.sweep(REFERENCE, stream)
    assert time.perf_counter() - started < 6.0  # about 1.5 s alone on this machine's core for 8 × 3,000 requests


@pytest.mark.parametrize("values, field", [
    ({"prompt_p95": "1000"}, "prompt_p95"), ({"output_p95": "100"}, "output_p95"), ({"ttft": "100"}, "ttft"),
    ({"itl": "2"}, "itl"), ({"model": "llama-3.1-70b"}, "card"), ({"prompt_p50": "8000"}, "prompt_p50"),
    ({"rate": "0"}, "rate"), ({"seed": "1.5"}, "seed"), ({"step_tokens": "8"}, "step_tokens"), ({"price": "-1"}, "price"),
    ({"output_p95": "5000"}, "output_p95"), ({"output_p50": "4097", "output_p95": "4097"}, "output_p50"),
])
def test_the_calculator_refuses_what_cannot_be(values, field):
    answer = PRODUCTION.run({**PRODUCTION.defaults, **values}, None, ["production.knee.rate"])
    assert not answer["ok"] and field in answer["errors"], answer


def test_the_rate_and_the_price_do_not_resimulate():
    shown = ["production.knee.rate", "production.gpus", "production.cost"]
    base = PRODUCTION.run(PRODUCTION.defaults, None, shown)["refs"]
    moved = PRODUCTION.run({**PRODUCTION.defaults, "rate": "20", "price": "6"}, None, shown)["refs"]
    assert moved["production.knee.rate"] == base["production.knee.rate"]
    assert moved["production.cost"][0] != base["production.cost"][0]


# ---- In Chromium, over file://, with the network blocked.

CALC = Calculator("production")


@pytest.fixture(scope="module")
def production_page(browser, tmp_path_factory):
    yield from booted_page(browser, tmp_path_factory, "15", "production")


@pytest.mark.parametrize("inputs", [
    {"rate": "25", "seed": "3", "step_tokens": "2048"},
    {"model": "llama-3.2-1b", "card": "l40s", "itl": "80", "price": "1.5"},
])
def test_the_calculator_follows_cpython(production_page, inputs):
    page = production_page.page
    assert CALC.set(page, **inputs) == "computed"
    shown = CALC.live(page)
    expected = PRODUCTION.run({**PRODUCTION.defaults, **inputs}, None, list(shown), [], False)
    assert shown == {ref: text for ref, (text, _) in expected["refs"].items()}
    CALC.set(page, **{k: PRODUCTION.defaults[k] for k in inputs})


@pytest.mark.parametrize("field, value", [
    ("rate", ""), ("prompt_p95", "500"), ("ttft", "0,5"), ("itl", "fast"), ("seed", "-1"),
    ("step_tokens", "1e40"), ("price", "3\u200b"),
])
def test_bad_input_gets_a_message(production_page, field, value):
    page = production_page.page
    expected = PRODUCTION.run({**PRODUCTION.defaults, field: value}, None, [], [], False)["errors"][field]
    after = CALC.refuse(page, field, value, expected)
    assert not any("Traceback" in text for text in after.values())
    CALC.set(page, **{field: PRODUCTION.defaults[field]})


def test_the_status_line_counts_the_rates_while_it_simulates(production_page):
    page = production_page.page
    page.evaluate("""() => {
        const status = document.querySelector("[data-calculator=production] .calc-status");
        window.said = [];
        new MutationObserver(() => window.said.push(status.textContent))
            .observe(status, { childList: true, characterData: true, subtree: true });
    }""")
    assert CALC.set(page, seed="12") == "computed"  # a seed nothing has simulated in this page
    said = page.evaluate("window.said")
    rates = len(simulation.SWEEP)
    counted = [f"Computing… {k} of {rates} request rates simulated." for k in range(1, rates + 1)]
    assert [text for text in said if text in counted] == counted, said
    assert said[-1].startswith("Recomputed by calc")
    CALC.set(page, seed=PRODUCTION.defaults["seed"])


def test_a_pasted_config_the_card_cannot_serve_is_refused():
    import json
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 8192,
              "intermediate_size": 28672, "num_hidden_layers": 80, "num_attention_heads": 64, "num_key_value_heads": 8,
              "vocab_size": 128256, "max_position_embeddings": 131072, "tie_word_embeddings": False}
    answer = PRODUCTION.run({**PRODUCTION.defaults, "model": "custom"}, json.dumps(config), ["production.knee.rate"])
    assert not answer["ok"] and "no room for one" in answer["errors"]["card"]  # the pasted model, checked like a listed one


def test_a_pasted_config_with_too_few_positions_is_refused():
    import json
    config = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 4096,
              "intermediate_size": 14336, "num_hidden_layers": 32, "num_attention_heads": 32, "num_key_value_heads": 8,
              "vocab_size": 128256, "max_position_embeddings": 16, "tie_word_embeddings": False}
    answer = PRODUCTION.run({**PRODUCTION.defaults, "model": "custom"}, json.dumps(config), ["production.knee.rate"])
    assert not answer["ok"] and "at most 16 positions" in answer["errors"]["model"]
