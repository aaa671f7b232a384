"""Property tests of every calculator's run in CPython: whatever a reader types or pastes, the answer
is figures or per-field messages, never an exception, a NaN or an infinity, and every worked
line it returns reproduces its result at the precision shown."""
from __future__ import annotations

import json
import math
import re

import pytest

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import build
from arithmetic import check
from calc.calculators import CALCULATORS, CAPACITY, PHASES
from calc.fields import CUSTOM, ChoiceField, NumberField, TextField
from calc.facts import facts
from calc.specs.models import CATALOGUE, LLAMA_3_1_8B_CONFIG
from calc.core.present import leaves

ALWAYS = {"ladder.binds", "model.name", "ladder.users_worst", "ladder.users_paged",
          *(f"levers.{step}.users" for step in ("multi_head", "gqa", "fp8_cache", "paging"))}


def _live_references() -> dict[str, set[str]]:
    """What each calculator's page asks of it: the references inside its `::: live` regions (asking
    every calculator for every fact calc has would run document 15's simulation for each example)."""
    site = build.Site(build.ROOT / "content", build.ROOT / "site", None, build.ROOT / "templates", {})
    build.read(site)
    build.parse(site)
    found: dict[str, set[str]] = {}
    for page in site.pages:
        following: list[str | None] = []
        for token in page.tokens:
            if token.type == "container_component_open":
                following.append(token.meta["args"].strip() if token.meta["name"] == "live" else None)
            elif token.type == "container_component_close":
                following.pop()
            runs = [token.children or []] if token.type == "inline" else [
                token.meta.get(key) or [] for key in ("title_tokens", "tag_tokens") if isinstance(token.meta, dict)]
            for run in runs:
                for child in run:
                    if child.type == "calc_ref" and "ref" in child.meta:
                        for name in filter(None, following):
                            found.setdefault(name, set()).add(child.meta["ref"].partition("|")[0])
    return found


LIVE = _live_references()
EVERY_FACT = [path for path, _ in leaves(facts())]


TEMPLATE_SECTIONS = {found.split(".")[0] for path in (build.ROOT / "templates" / "components").rglob("*.j2")
                     if path.parent.name not in ("notes", "figures")  # a note is its calculator's; figures are drawn once
                     for found in re.findall(r'fact\("([a-z_.]+)', path.read_text(encoding="utf-8"))}


def paths_for(calculator) -> list[str]:
    """Every fact in the sections its page shows, and in those the components' templates draw."""
    sections = {ref.split(".")[0] for ref in LIVE.get(calculator.name, set()) | ALWAYS} | TEMPLATE_SECTIONS
    return sorted({path for path in EVERY_FACT if path.split(".")[0] in sections} | ALWAYS)
LONGEST_MESSAGE = 300

numeric_text = st.one_of(
    st.integers(-10 ** 12, 10 ** 12).map(str),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.floats(0, 2).map(lambda x: f"{x:.3f}"),
    st.integers(1, 10 ** 7).map(lambda n: f"{n:,}"),
    st.sampled_from(["-0", "0,9", "3,5", "1,2,3", "8,192", "1e40", "8192\u200f", "\u200b", " 12 ", "٣", "0x10"]),
)


# Launch lines for document 12's text field: ones that fit every card, and pieces to break them with.
LAUNCH_LINES = [
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len=4k --kv-cache-dtype fp8 --max-num-seqs 64",
    "python -m vllm.entrypoints.openai.api_server --model meta-llama/Llama-3.2-1B-Instruct -tp 2 --block-size 32",
    "vllm serve meta-llama/Llama-3.1-8B-Instruct \\\n  --quantization fp8 --max-model-len 8192 --enable-lora --max-loras 4 --max-lora-rank 64 --port 8000",
]
launch_lines = st.one_of(
    st.sampled_from(LAUNCH_LINES),
    st.lists(st.sampled_from(["--gpu-memory-utilization", "--max-model-len", "--max-num-seqs", "-tp", "--foo", "=",
                              "0.9", "1.5", "8192", "8k", "3", "'", "\\", "\u200b", "--enable-lora", "auto", "-1"]),
             max_size=8).map(lambda words: "vllm serve meta-llama/Llama-3.1-8B-Instruct " + " ".join(words)),
)


def field_values(field) -> st.SearchStrategy:
    if isinstance(field, ChoiceField):
        return st.one_of(st.sampled_from(sorted(field.choices)), st.text(max_size=20))
    if isinstance(field, TextField):
        return st.one_of(launch_lines, st.text(max_size=200))
    assert isinstance(field, NumberField)
    return st.one_of(numeric_text, st.text(max_size=40))


def inputs(calculator) -> st.SearchStrategy:
    return st.fixed_dictionaries({field.name: field_values(field) for field in calculator.fields})


def valid_values(calculator) -> st.SearchStrategy:
    """Values every field accepts: choices, and numbers inside each field's range."""
    strategies = {}
    for field in calculator.fields:
        if isinstance(field, ChoiceField):
            strategies[field.name] = st.sampled_from(sorted(k for k in field.choices if k != CUSTOM))
        elif isinstance(field, TextField):
            strategies[field.name] = st.sampled_from(LAUNCH_LINES)
        elif field.name.startswith("measured_"):
            strategies[field.name] = st.just("")
        elif field.whole:
            strategies[field.name] = st.integers(int(field.minimum), int(min(field.maximum, 10_000_000))).map(str)
        else:
            places = 15 if field.most_places is None else field.most_places  # finer is refused by name, tested per document
            strategies[field.name] = st.floats(field.minimum, field.maximum).map(lambda x, places=places: f"{round(x, places):.4g}")
    return st.fixed_dictionaries(strategies)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=12), children, max_size=4),
    max_leaves=12,
)
field_names = st.sampled_from(sorted(LLAMA_3_1_8B_CONFIG) + [
    "head_dim", "num_local_experts", "num_experts", "num_experts_per_tok", "sliding_window",
    "use_sliding_window", "model_type", "text_config", "attention_bias", "mlp_bias", "_name_or_path"])
mutated_configs = st.dictionaries(field_names, json_values, max_size=5).map(
    lambda changes: json.dumps({**LLAMA_3_1_8B_CONFIG, **changes}))
realistic_changes = st.fixed_dictionaries({}, optional={
    "num_hidden_layers": st.integers(1, 200), "hidden_size": st.sampled_from([512, 2048, 4096, 8192, 16384]),
    "num_attention_heads": st.sampled_from([8, 16, 32, 64, 128]), "num_key_value_heads": st.sampled_from([1, 2, 4, 8]),
    "intermediate_size": st.integers(1, 60_000), "vocab_size": st.integers(1, 300_000),
    "sliding_window": st.one_of(st.none(), st.integers(1, 200_000)), "tie_word_embeddings": st.booleans(),
    "num_local_experts": st.integers(1, 64), "num_experts_per_tok": st.integers(1, 8),
})
realistic_configs = realistic_changes.map(lambda changes: json.dumps({**LLAMA_3_1_8B_CONFIG, **changes}))
configs = st.one_of(st.none(), st.text(max_size=60), json_values.map(json.dumps), mutated_configs, realistic_configs)


def assert_well_formed(answer: dict, calculator) -> None:
    json.dumps(answer, allow_nan=False)  # raises on NaN or infinity anywhere
    if not answer["ok"]:
        assert answer["errors"], "a refusal names at least one field"
        for name, message in answer["errors"].items():
            assert name in {f.name for f in calculator.fields} | {"config"}, name
            assert isinstance(message, str) and message and len(message) <= LONGEST_MESSAGE, message
        return
    for ref, (text, title) in answer["refs"].items():
        for word in ("nan", "inf", "NaN", "None", "undefined"):
            # a pasted config may name its model anything, "NaN" included: the name is the reader's text
            assert ref == "model.name" or word not in text.split(), (ref, text)
        assert check(title) == [], (ref, title)
        assert check(text) == [], ref
    assert all(0 <= width <= 100 for width in answer.get("bars", []))
    for name, chart in answer["curves"].items():
        for curve in chart["curves"]:
            assert all(math.isfinite(y) and y >= 0 for y in curve["y"]), (name, curve)
            if not all(isinstance(x, str) for x in curve["x"]):  # categories, as in the anatomy's shares
                assert all(math.isfinite(x) and x > 0 for x in curve["x"]), (name, curve)
            if name == "cache-share":
                assert all(y <= 100 for y in curve["y"]), "a share is a percentage"
            if name == "roofline":
                assert all(y > 0 for y in curve["y"]), "every point of a log-log chart is positive"
    assert len(answer["refs"]["model.name"][0]) <= 100
    assert len(answer["notes"]["config"]) <= LONGEST_MESSAGE


def ask(calculator, values, config=None) -> dict:
    return calculator.run(values, config, paths_for(calculator), list(calculator.curves), True)


@pytest.mark.parametrize("calculator", CALCULATORS.values(), ids=CALCULATORS.keys())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_field_values_give_figures_or_messages(calculator, data):
    assert_well_formed(ask(calculator, data.draw(inputs(calculator))), calculator)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(configs, st.sampled_from(["1", "2300", "8192", "131072", "10000000"]))
def test_any_pasted_config_gives_figures_or_a_config_message(config, context):
    values = {**CAPACITY.defaults, "model": CUSTOM, "context_limit": context, "conversation": "1"}
    answer = ask(CAPACITY, values, config)
    assert_well_formed(answer, CAPACITY)
    if not answer["ok"]:
        assert set(answer["errors"]) == {"config"}


# Examples per calculator: document 15's runs its simulation for each, so it draws fewer.
EXAMPLES = {"production": 8}


@pytest.mark.parametrize("calculator", CALCULATORS.values(), ids=CALCULATORS.keys())
def test_valid_inputs_show_arithmetic_that_reproduces_every_figure(calculator):
    settings(max_examples=EXAMPLES.get(calculator.name, 50), deadline=None,
             suppress_health_check=[HealthCheck.too_slow])(given(data=st.data())(
        lambda data: valid_inputs_reproduce_their_figures(calculator, data)))()


def valid_inputs_reproduce_their_figures(calculator, data):
    values = data.draw(valid_values(calculator))
    if "conversation" in values and int(values["conversation"]) > int(values["context_limit"]):
        values["conversation"] = values["context_limit"]
    if calculator.name == "journey":  # a request that fits every card; refusals have their own tests
        values["prompt"] = str(1 + int(values["prompt"]) % 8_000)
        values["output"] = str(1 + int(values["output"]) % 2_000)
    if calculator.name == "attention":  # a limit within the chosen model's positions; refusals have their own tests
        from calc.documents.attention import chosen_model
        longest = chosen_model(values["model"]).max_position_embeddings
        from calc.specs.stack import REFERENCE
        limit = max(min(int(values["context_limit"]), longest), REFERENCE.traffic.prompt_p50)  # it must hold the prompt timed
        values["context_limit"] = str(limit)
    if calculator.name == "tokens":  # a prompt within the model's positions; refusals have their own tests
        values["characters"] = str(1 + int(values["characters"]) % 30_000)
    if calculator.name == "position":  # refused rules, odd heads and crossed factors have their own tests
        values["rope_type"] = {"dynamic": "llama3", "yarn": "linear", "longrope": "none"}.get(values["rope_type"],
                                                                                         values["rope_type"])
        values["head_dim"] = str(max(int(values["head_dim"]) // 2 * 2, 2))
        if float(values["low_freq_factor"]) >= float(values["high_freq_factor"]):
            values["low_freq_factor"], values["high_freq_factor"] = "1", "4"
    if calculator.name == "formats" and 0 < abs(float(values["number"])) < 1e-40:  # refused with a message; tested in test_precision
        values["number"] = "0"
    if calculator.name == "cache_ops":  # lengths that fit one another, a model its card can hold; refusals have their own tests
        from calc.engine import kvcache
        from calc.fields import CARD, MODEL
        from calc.specs.stack import REFERENCE
        if not kvcache.ladder(CARD.apply(MODEL.apply(REFERENCE, values["model"]), values["card"])).weights_fit:
            values["model"] = "llama-3.1-8b"
        limit, conversation = int(values["context_limit"]), int(values["conversation"])
        values["prompt"] = str(1 + int(values["prompt"]) % min(limit, conversation))
        values["prefix"] = str(int(values["prefix"]) % (int(values["prompt"]) + 1))
        values["spread"] = str(int(values["spread"]) % max(min(conversation, limit - conversation + 1), 1))
    if calculator.name == "parallel":  # a degree that splits the heads within a node, a limit within the model's positions
        from calc.fields import PARALLEL_MODELS
        values["tensor"] = str((1, 2, 4, 8)[int(values["tensor"]) % 4])
        longest = PARALLEL_MODELS[values["model"]].max_position_embeddings
        from calc.specs.stack import REFERENCE
        limit = max(min(int(values["context_limit"]), longest), REFERENCE.traffic.prompt_p50)  # it must hold the prompt timed
        values["context_limit"] = str(limit)
        if values["batch"]:  # a batch the split's cache admits; a larger one is refused, tested in test_parallel
            from calc.calculators import PARALLEL
            from calc.engine.parallel import plan, sharded
            stack = PARALLEL.stack({**values, "batch": ""})[0]
            admitted = int(plan(sharded(stack), stack.parallel.tensor, stack.parallel.pipeline).users_worst.value)
            values["batch"] = str(1 + int(values["batch"]) % admitted) if admitted else ""
    if calculator.name == "sampling" and float(values["top_p"]) == 0:  # refused with a message; tested in test_decode_loop
        values["top_p"] = "1"
    if calculator.name == "speculative":  # a target its card holds, drafts within its positions; refusals have their own tests
        from calc.engine import kvcache
        from calc.fields import CARD, TARGET, WEIGHTS
        from calc.specs.stack import REFERENCE
        chosen = WEIGHTS.apply(CARD.apply(TARGET.apply(REFERENCE, values["model"]), values["card"]), values["weights"])
        if not kvcache.ladder(chosen).weights_fit:
            values["model"] = "llama-3.1-8b"
            values["card"] = "h100-sxm"
        values["held"] = str(min(int(values["held"]), CATALOGUE["llama-3.1-8b"].max_position_embeddings - 16))
        from calc.calculators import SPECULATIVE, batch_fits_the_cache
        parsed = {f.name: f.parse(values[f.name]) for f in SPECULATIVE.fields}
        if "drafter" in batch_fits_the_cache(parsed):  # a draft whose weights fill the cache: refused, tested in test_decode_loop
            values["drafter"] = parsed["drafter"] = "ngram"
        if "held" in batch_fits_the_cache(parsed):
            values["held"] = "1024"
            parsed["held"] = 1024
        if "held" in batch_fits_the_cache(parsed):  # not one sequence beside the draft: a lookup holds no weights
            values["drafter"] = parsed["drafter"] = "ngram"
        if batch_fits_the_cache(parsed):
            from calc.calculators import stack_of
            from calc.engine.speculative import DRAFTERS, admitted_batch, scheduled_batch
            chosen = stack_of(parsed, (TARGET, CARD, WEIGHTS))
            admitted = min(admitted_batch(chosen, DRAFTERS[parsed["drafter"]], parsed["held"], parsed["drafted"]),
                           scheduled_batch(chosen, parsed["drafted"]))
            values["spec_batch"] = str(1 + int(values["spec_batch"]) % admitted)
    if calculator.name == "planning":  # a model its card holds, ordered percentiles, promises one card can keep; refusals have their own tests
        from calc.engine import kvcache
        from calc.fields import CARD, MODEL, UTILISATION, WEIGHTS
        from calc.specs.stack import REFERENCE
        stack = WEIGHTS.apply(CARD.apply(MODEL.apply(REFERENCE, values["model"]), values["card"]), values["weights"])
        if not kvcache.ladder(UTILISATION.apply(stack, float(values["utilisation"]))).weights_fit:
            values["model"], values["utilisation"] = "llama-3.2-1b", "0.9"
        values["prompt_p50"] = str(1 + int(values["prompt_p50"]) % 8_000)
        values["prompt_p95"] = str(int(values["prompt_p50"]) + int(values["prompt_p95"]) % 8_000)
        values["output_p50"] = str(1 + int(values["output_p50"]) % 2_000)
        values["ttft"], values["itl"] = "600000", str(max(float(values["itl"]), 500))
        typical = int(values["prompt_p50"]) + int(values["output_p50"])  # within the launch line's --max-model-len
        longest = CATALOGUE[values["model"]].max_position_embeddings
        values["context_limit"] = str(min(max(int(values["context_limit"]), typical), longest))
    if calculator.name == "production":  # ordered percentiles, a request within the limit, a promise an idle card keeps
        from calc.calculators import promise_can_be_kept
        values["prompt_p50"] = str(1 + int(values["prompt_p50"]) % 6_000)
        values["output_p50"] = str(1 + int(values["output_p50"]) % 2_000)
        values["prompt_p95"] = str(max(int(values["prompt_p95"]), int(values["prompt_p50"])))
        values["output_p95"] = str(min(max(int(values["output_p95"]), int(values["output_p50"])), 4_096))  # half the limit
        if values["step_tokens"]:  # a budget whose profiled peak leaves the cache a request: larger ones, test_production
            values["step_tokens"] = str(16 + int(values["step_tokens"]) % 32_768)
        parsed = {f.name: f.parse(values[f.name]) for f in calculator.fields}
        if promise_can_be_kept(parsed):
            values.update(model="llama-3.1-8b", card="h100-sxm", weights="bf16", ttft="60000", itl="1000")
    if calculator.name == "start":  # a request within its limit that its card can hold; refusals have their own tests
        from calc.documents import journey
        from calc.calculators import START_FIELDS, stack_of
        cap = max(min(int(values["context_limit"]), 8_000), 2)
        values["context_limit"] = str(max(int(values["context_limit"]), 2))
        values["prompt"] = str(1 + int(values["prompt"]) % (cap - 1))
        values["output"] = str(1 + int(values["output"]) % (cap - int(values["prompt"])))
        parsed = {f.name: f.parse(values[f.name]) for f in START_FIELDS}
        if journey.fits(stack_of(parsed, START_FIELDS), parsed["prompt"], parsed["output"]) or not calculator.run(
                values, None, ["model.name"])["ok"]:  # e.g. a card whose cache holds no request at the limit
            values.update(model="llama-3.1-8b", card="h100-sxm", context_limit=str(min(int(values["context_limit"]), 131_072)))
    if calculator.name in ("phases", "hardware", "tokens"):  # a model its card holds, lengths its cache holds; refusals: own tests
        from calc.calculators import runs_on_the_card
        lengths = {"phases": ("prompt", "output"), "hardware": ("prompt", "held"), "tokens": ()}[calculator.name]
        for name in lengths:
            values[name] = str(1 + int(values[name]) % 8_000)

        def refused() -> dict:
            parsed = {f.name: f.parse(values[f.name]) for f in calculator.fields if f.name in ("model", "card", "weights", "kv")}
            tokens = {"phases": {"prompt": int(values.get("prompt", 1)) + int(values.get("output", 0))},
                      "hardware": {"prompt": int(values.get("prompt", 1)), "held": int(values.get("held", 1))},
                      "tokens": {}}[calculator.name]
            return runs_on_the_card(parsed, tokens)
        if refused():
            values.update(model="llama-3.1-8b", card="h100-sxm")
    if "held" in values and "model" in values:  # no sequence holds more than the chosen model's positions
        values["held"] = str(min(int(values["held"]), CATALOGUE[values["model"]].max_position_embeddings))
    answer = ask(calculator, values)
    assert answer["ok"], answer.get("errors")
    assert_well_formed(answer, calculator)
    users = {path: int(answer["refs"][path][0].replace(",", "")) for path in ("ladder.users_worst", "ladder.users_paged")}
    assert users["ladder.users_paged"] >= users["ladder.users_worst"], "paging never admits fewer than the worst case"
    steps = [int(answer["refs"][f"levers.{step}.users"][0].replace(",", ""))
             for step in ("multi_head", "gqa", "fp8_cache", "paging")]
    assert steps == sorted(steps), "each lever admits at least as many users as the one before"
    assert steps[1] == users["ladder.users_worst"], "the GQA bar is the ladder's own worst case"


@settings(max_examples=100, deadline=None)
@given(st.floats(0.01, 5_000), st.floats(0.01, 500))
def test_calibration_reproduces_the_measured_times(prefill_ms, step_ms):
    values = {**PHASES.defaults, "measured_prefill": f"{prefill_ms:.3f}", "measured_step": f"{step_ms:.3f}"}
    answer = ask(PHASES, values)
    assert_well_formed(answer, PHASES)
    if answer["ok"]:
        stack, _, _ = PHASES.stack(values)
        namespace = facts(stack)
        assert namespace["workload"]["prefill"].value * 1000 == pytest.approx(float(f"{prefill_ms:.3f}"))
        assert namespace["workload"]["step"].time.value * 1000 == pytest.approx(float(f"{step_ms:.3f}"))
    else:
        assert set(answer["errors"]) <= {"measured_prefill", "measured_step"}
        assert all("datasheet" in m or "no longer than" in m or "measured speed" in m or "no compute and memory speeds" in m
                   for m in answer["errors"].values())
