"""Every calculator in the runbook, declared: content writes `@calculator NAME` and the page's
generic script does the rest. Adding one is a declaration here and a section of content."""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any, Mapping

from .engine import kvcache, timing
from .core import progress
from .model.anatomy import itemised
from .calculator import Calculator
from .facts import Facts, facts
from .fields import (ALL_REDUCE_LATENCY, ALL_REDUCE_TIMING, PARALLEL_BATCH, PARALLEL_LIMIT, PARALLEL_MODEL, PIPELINE,
    RING, TENSOR)
from .fields import (CUSTOM, PASTED, COMMAND, TOKEN_BUDGET, ATTENTION_LIMIT, ATTENTION_SETTING, BANDWIDTH_SCALE,
    BATCH, BLOCK_SIZE, CARD, CHARACTERS, CONTEXT_LIMIT, CONVERSATION, HEAD_DIM, HELD, HIGH_FREQ, HIT_RATE, KV, LINK,
    LOW_FREQ, COMPUTE_SCALE, MODEL, NUMBER, ORIGINAL, OUTPUT, PREFIX, PROMPT, REACH, ROPE_FACTOR, ROPE_THETA,
    ROPE_TYPE, SPREAD, TEXT_KIND, UTILISATION, WEIGHTS, NumberField, beyond_positions)
from .fields import ACCEPTANCE, DRAFTED, DRAFTER, LOGITS, MIN_P, SEED, SPEC_BATCH, TARGET, TEMPERATURE, TOP_K, TOP_P
from .fields import AVERAGE_LOAD, BUSIEST, ITL, OUTPUT_P50, PRICE, PROMPT_P50, PROMPT_P95, RATE, SPARES, TTFT
from .fields import LOG_CARD, OUTPUT_P95, STARTUP_LOG, STEP_TOKENS, STREAM_SEED
from .model.roofline import cache_share_curves, chart_rows
from .specs.stack import REFERENCE, Stack
from .core.units import MS, PERCENT, grouped


def conversation_within_limit(parsed: Mapping[str, Any]) -> dict[str, str]:
    if "conversation" in parsed and "context_limit" in parsed and parsed["conversation"] > parsed["context_limit"]:
        return {"conversation": f"Typical conversation is longer than the context limit "
                                f"({parsed['context_limit']:,} tokens)"}
    return {}


def _by_bound(step: timing.Step | timing.DecodeStep) -> tuple[float, float, float]:
    """(kernels waiting on arithmetic, kernels waiting on memory, the rest) of a step priced at scale 1: its
    time at scales c and b is the first ÷ c + the second ÷ b + the rest."""
    computing = sum(g.time.value * g.scale for g in step.groups if g.bound == "computing")
    reading = sum(g.time.value * g.scale for g in step.groups if g.bound == "reading")
    return computing, reading, step.overhead.value


def _too_short(milliseconds: float, rest: float) -> ValueError:
    return ValueError(f"{milliseconds:,.10g} ms is no longer than the step's fixed cost and its other kernels "
                      f"({MS.show(rest)}); time one whole engine step on the card, not a part of it")


def _check_scale(scale: float) -> float:
    if scale < SLOWEST_SCALE:
        raise ValueError(f"that would run the kernels at {scale:.2%} of their measured speed, below the "
                         f"{SLOWEST_SCALE:.0%} the speed fields take: time one engine step, not a whole request or a batch "
                         f"of them")
    return scale


def _solve_scale(step: timing.Step | timing.DecodeStep, milliseconds: float, bound: str, stack: Stack) -> float:
    """The scale on the `bound` kernels that makes the step take `milliseconds`, the others as they are:
    measured = Σ their time ÷ scale + the rest + the fixed cost."""
    scaled = sum(g.time.value * g.scale for g in step.groups if g.bound == bound)
    rest = sum(g.time.value for g in step.groups if g.bound != bound) + step.overhead.value
    left = milliseconds / 1000 - rest
    if scaled <= 0 or left <= 0:
        raise _too_short(milliseconds, rest)
    return _check_scale(scaled / left)


def _solve_both(prefill: timing.Step, prefill_s: float, step: timing.DecodeStep, step_s: float) -> tuple[float, float]:
    """(compute, bandwidth) scales that make both measured times come out: with x = 1 ÷ compute and
    y = 1 ÷ bandwidth, each time is linear, computing × x + reading × y + rest."""
    pc, pr, po = _by_bound(prefill)
    sc, sr, so = _by_bound(step)
    for measured, rest in ((prefill_s, po), (step_s, so)):
        if measured <= rest:
            raise _too_short(measured * 1000, rest)
    determinant = pc * sr - pr * sc
    x = ((prefill_s - po) * sr - pr * (step_s - so)) / determinant if determinant else 0.0
    y = (pc * (step_s - so) - sc * (prefill_s - po)) / determinant if determinant else 0.0
    if x <= 0 or y <= 0:
        raise ValueError(f"no compute and memory speeds give both a {prefill_s * 1000:,.10g} ms prefill and a "
                         f"{step_s * 1000:,.10g} ms step on this card: the prefill's memory-bound kernels and the step's "
                         f"compute-bound ones tie the two together, so time both on the same engine and card")
    return _check_scale(1 / x), _check_scale(1 / y)


SLOWEST_SCALE = 0.01  # the speed fields' least value: slower than this is a timing of something else


def _check_datasheet(stack: Stack) -> Stack:
    """No kernel may beat the datasheet: every measured share × its scale at most 1."""
    fastest = max(timing.compute_share(stack).value, timing.bandwidth_share(stack).value)
    if fastest > 1:
        raise ValueError(f"that would run {stack.card.name}'s kernels at {PERCENT.show(fastest)} of its datasheet; "
                         f"no card beats its datasheet")
    return stack


def _calibrate_compute(stack: Stack, milliseconds: float) -> Stack:
    """A measured prefill of the workload's prompt scales the kernels that wait on arithmetic."""
    step = timing.prefill_step(replace(stack, efficiency=replace(stack.efficiency, compute=1.0)), stack.workload.prompt)
    scale = _solve_scale(step, milliseconds, "computing", stack)
    return _check_datasheet(replace(stack, efficiency=replace(stack.efficiency, compute=scale,
                                                              prefill_target_s=milliseconds / 1000)))


def _calibrate_bandwidth(stack: Stack, milliseconds: float) -> Stack:
    """A measured decode step of the workload scales the kernels that wait on memory; with a measured
    prefill too, both speeds are solved together, since each time has kernels of both kinds."""
    batch = int(facts(stack)["workload"]["batch"].value)
    context = stack.workload.prompt + stack.workload.output // 2
    target = stack.efficiency.prefill_target_s
    plain = replace(stack, efficiency=replace(stack.efficiency, bandwidth=1.0, compute=1.0 if target else
                                              stack.efficiency.compute))
    step = timing.decode_step(plain, batch, context)
    if target:
        compute, bandwidth = _solve_both(timing.prefill_step(plain, stack.workload.prompt), target, step,
                                         milliseconds / 1000)
        return _check_datasheet(replace(stack, efficiency=replace(stack.efficiency, compute=compute, bandwidth=bandwidth)))
    scale = _solve_scale(step, milliseconds, "reading", stack)
    return _check_datasheet(replace(stack, efficiency=replace(stack.efficiency, bandwidth=scale)))


MEASURED_PREFILL = NumberField("measured_prefill", "Measured prefill", 0.001, 10_000_000, False, "ms", optional=True,
                               current=lambda s: 0, apply=_calibrate_compute,
                               hint="your prompt's prefill, timed: sets the compute speed")
MEASURED_STEP = NumberField("measured_step", "Measured step", 0.001, 10_000_000, False, "ms", optional=True,
                            current=lambda s: 0, apply=_calibrate_bandwidth,
                            hint="one decode step at your batch, timed: sets the memory speed")


def cache_share(namespace: Facts) -> dict:
    """The cache-share chart's curves and the rows of its data table."""
    stack = namespace.stack
    curves = cache_share_curves(stack.model, stack.weight_precision, stack.kv_precision)
    return {"curves": curves, "rows": chart_rows(curves, 1, "%")}


def step_vs_batch(namespace: Facts) -> dict:
    """Decode step time and throughput against batch at the workload's length."""
    run = namespace["workload"]
    return timing.step_against_batch(namespace.stack, int(run["context"].value), int(run["admitted"].value))


CAPACITY = Calculator(
    name="capacity",
    label="Capacity calculator",
    fields=(MODEL, CARD, WEIGHTS, KV, CONTEXT_LIMIT, UTILISATION, TOKEN_BUDGET, CONVERSATION),
    checks=(conversation_within_limit,),
    curves={"cache-share": cache_share},
    bars=lambda namespace: namespace["levers"].bar_widths,
    results="components/calculators/capacity.html.j2",
)

def runs_on_the_card(parsed: Mapping[str, Any], lengths: dict[str, int]) -> dict[str, str]:
    """A time is priced only for what the engine would serve: the weights must leave the card a cache,
    and each length (field → tokens of one sequence) must fit the model's positions and, in whole
    blocks, the cache."""
    stack = stack_of(parsed, (MODEL, CARD, WEIGHTS, KV))
    if stack is None:
        return {}
    rungs = kvcache.ladder(stack)
    if not rungs.weights_fit:
        return {"model": (f"{stack.model.name}'s weights ({rungs.weights}) and what the engine's profile holds back "
                          f"({rungs.reserve}) do not fit {stack.card.name}'s pool ({rungs.pool}): the engine would not "
                          f"start, so there is no time to give")}
    for name, tokens in lengths.items():
        beyond = beyond_positions(stack.model, tokens)
        if beyond:
            return {name: f"{beyond}; a sequence cannot hold more tokens than that"}
        held = kvcache.blocks_for(stack.model.tokens_cached(tokens), stack.block_size) * stack.block_size
        if held > rungs.accounting.blocks.value * stack.block_size:
            return {name: (f"one sequence of {tokens:,} tokens needs {held:,} tokens of blocks; {stack.card.name}'s "
                           f"cache holds {rungs.token_capacity} after the weights")}
    return {}


def phases_run(parsed: Mapping[str, Any]) -> dict[str, str]:
    if not {"prompt", "output"} <= parsed.keys():
        return {}
    return runs_on_the_card(parsed, {"prompt": parsed["prompt"] + parsed["output"]})


PHASES = Calculator(
    name="phases",
    label="Prefill and decode timer",
    fields=(MODEL, CARD, WEIGHTS, KV, PROMPT, OUTPUT, BATCH, COMPUTE_SCALE, BANDWIDTH_SCALE, MEASURED_PREFILL,
            MEASURED_STEP),
    checks=(phases_run,),
    curves={"step-vs-batch": step_vs_batch},
)

JOURNEY_FIELDS = (PROMPT, OUTPUT, CARD, WEIGHTS, KV)


def stack_of(parsed: Mapping[str, Any], fields: tuple) -> Stack | None:
    """The reference stack with every one of `fields` that sets the system applied (a document input's
    value is read from `parsed`), and the reader's pasted model if they chose one; None while any of
    them is invalid (a pasted config that could not be read included)."""
    if any(f.name not in parsed for f in fields):
        return None
    if parsed.get("model") == CUSTOM and PASTED not in parsed:
        return None
    stack = replace(REFERENCE, model=parsed[PASTED]) if PASTED in parsed else REFERENCE
    for f in fields:
        if not f.document_input:
            stack = f.apply(stack, parsed[f.name])
    return stack


def request_fits(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The request must fit the model's positions and, with its cache, the card."""
    stack = stack_of(parsed, JOURNEY_FIELDS)
    if stack is None:
        return {}
    from .documents import journey
    problem = journey.fits(stack, parsed["prompt"], parsed["output"])
    return {"prompt": problem} if problem else {}


def journey_shares(namespace: Facts) -> dict:
    """Each phase's share of the wall clock against output length, and the rows of its data table."""
    stack = namespace.stack
    from .documents import journey
    curves = journey.share_curves(stack, stack.workload.prompt)
    return {"curves": curves, "rows": chart_rows(curves, 1, "%")}


JOURNEY = Calculator(
    name="journey",
    label="Request stopwatch",
    fields=JOURNEY_FIELDS,
    checks=(request_fits,),
    curves={"journey-shares": journey_shares},
    bars=lambda namespace: namespace["journey"].bar_widths,
    results="components/calculators/journey.html.j2",
)

def _roofline(namespace: Facts) -> dict:
    from .documents import hardware
    return hardware.roofline_curves(namespace)


def hardware_runs(parsed: Mapping[str, Any]) -> dict[str, str]:
    if not {"prompt", "held"} <= parsed.keys():
        return {}
    return runs_on_the_card(parsed, {"prompt": parsed["prompt"], "held": parsed["held"]})


HARDWARE = Calculator(
    name="hardware",
    label="Roofline calculator",
    fields=(MODEL, CARD, WEIGHTS, KV, PROMPT, HELD, BATCH, COMPUTE_SCALE, BANDWIDTH_SCALE),
    checks=(hardware_runs,),
    curves={"roofline": _roofline},
    results="components/calculators/hardware.html.j2",
)

def vocabulary_share(namespace: Facts) -> dict:
    """The embedding and head's share of the model's parameters against vocabulary size."""
    from .documents.tokens import vocabulary_share_curves
    curves = vocabulary_share_curves(namespace.stack.model)
    return {"curves": curves, "rows": chart_rows(curves, 1, "%")}


TOKENS_FIELDS = (CHARACTERS, TEXT_KIND, MODEL, CARD, WEIGHTS, KV)


def prompt_fits(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The prompt, in tokens, must fit the model's positions."""
    stack = stack_of(parsed, TOKENS_FIELDS)
    if stack is None:
        return {}
    from .documents.tokens import samples, tokens_for_characters
    count = tokens_for_characters(parsed["characters"], samples()[parsed["kind"]])
    beyond = beyond_positions(stack.model, int(count.value))
    return {"characters": f"that is about {count} at this rate; {beyond}"} if beyond else {}


def tokens_model_loads(parsed: Mapping[str, Any]) -> dict[str, str]:
    return runs_on_the_card(parsed, {})


TOKENS = Calculator(
    name="tokens",
    label="What a prompt costs in tokens",
    fields=TOKENS_FIELDS,
    checks=(prompt_fits, tokens_model_loads),
    curves={"vocabulary-share": vocabulary_share},
)



def anatomy_shares(namespace: Facts) -> dict:
    """Each part's share of the parameters held and of those one token multiplies."""
    from .model import forward
    return forward.share_curves(namespace.stack.model)


ANATOMY = Calculator(
    name="anatomy",
    label="Anatomy calculator",
    fields=(MODEL, HELD),
    curves={"anatomy-shares": anatomy_shares},
    results="components/calculators/anatomy.html.j2",
    model_check=itemised,
)


def attention_dial(namespace: Facts) -> dict:
    """Cache per user against tokens held, one curve per setting of the dial, and the table's rows."""
    from .documents.attention import curves
    drawn = curves(namespace.stack)
    return {"curves": drawn, "rows": chart_rows(drawn, 2, " GiB")}


ATTENTION = Calculator(
    name="attention",
    label="Attention dial",
    fields=(ATTENTION_SETTING, CARD, KV, ATTENTION_LIMIT),
    curves={"attention-dial": attention_dial},
)


def frequency_factors_in_order(parsed: Mapping[str, Any]) -> dict[str, str]:
    """llama3's blend divides by high_freq_factor − low_freq_factor: the high one must be the larger."""
    if parsed.get("rope_type") == "llama3" and "low_freq_factor" in parsed and "high_freq_factor" in parsed \
            and parsed["low_freq_factor"] >= parsed["high_freq_factor"]:
        return {"high_freq_factor": f"high_freq_factor must be above low_freq_factor ({parsed['low_freq_factor']:g}): "
                                    f"the blend divides by their difference"}
    return {}


def rope_wavelengths(namespace: Facts) -> dict:
    """Every RoPE pair's wavelength before and after the model's scaling rule, and the two lengths marked."""
    from .documents.position import wavelength_curves
    curves = wavelength_curves(namespace.stack, namespace.inputs.priced_context)
    rows = [[str(x)] + [f"{curve['y'][i]:,.0f}" for curve in curves[:2]] for i, x in enumerate(curves[0]["x"])] if curves else []
    return {"curves": curves, "rows": rows}


POSITION = Calculator(
    name="position",
    label="RoPE wavelengths and the cost of a long context",
    fields=(ROPE_THETA, HEAD_DIM, ROPE_TYPE, ROPE_FACTOR, LOW_FREQ, HIGH_FREQ, ORIGINAL, REACH),
    checks=(frequency_factors_in_order,),
    curves={"rope-wavelengths": rope_wavelengths},
)

NUMBER_FORMATS = Calculator(
    name="formats",
    label="One number in every format",
    fields=(NUMBER,),
)


def precision_grid(namespace: Facts) -> dict:
    """Users and the decode floor at every weight × cache precision, for the chosen model and card."""
    from .documents.quantisation import curves, rows
    drawn = curves(namespace.stack)
    return {"curves": drawn, "rows": rows(drawn)}


PRECISION = Calculator(
    name="precision",
    label="Model, precision and card",
    fields=(MODEL, CARD, WEIGHTS, KV),
    curves={"precision-grid": precision_grid},
)



CACHE_OPS_FIELDS = (MODEL, CARD, KV, BLOCK_SIZE, CONTEXT_LIMIT, CONVERSATION, SPREAD, PROMPT, PREFIX, HIT_RATE, LINK)


def lengths_fit(parsed: Mapping[str, Any]) -> dict[str, str]:
    """Document 10's lengths: the spread stays above zero and within the limit; the shared prefix and
    the prompt fit what holds them."""
    errors = conversation_within_limit(parsed)
    if {"spread", "conversation"} <= parsed.keys() and parsed["spread"] >= parsed["conversation"]:
        errors["spread"] = (f"Length spread must be below the typical conversation ({parsed['conversation']:,} "
                            f"tokens): no sequence is shorter than one token")
    elif {"spread", "conversation", "context_limit"} <= parsed.keys() \
            and parsed["conversation"] + parsed["spread"] > parsed["context_limit"]:
        errors["spread"] = (f"the longest length, {parsed['conversation'] + parsed['spread']:,} tokens, is over the "
                            f"context limit ({parsed['context_limit']:,} tokens)")
    if {"prompt", "context_limit"} <= parsed.keys() and parsed["prompt"] > parsed["context_limit"]:
        errors["prompt"] = f"Prompt is longer than the context limit ({parsed['context_limit']:,} tokens)"
    if {"conversation", "prompt"} <= parsed.keys() and parsed["conversation"] < parsed["prompt"] \
            and "conversation" not in errors:
        errors["conversation"] = (f"Typical conversation is shorter than the prompt ({parsed['prompt']:,} tokens) "
                                  f"it starts with")
    if {"prefix", "prompt"} <= parsed.keys() and parsed["prefix"] > parsed["prompt"]:
        errors["prefix"] = f"Shared prefix is longer than the prompt ({parsed['prompt']:,} tokens) it begins"
    return errors


def swap_vs_recompute(namespace: Facts) -> dict:
    """Swap and recompute times against tokens held, with the break-even marked where there is one."""
    from .engine.cacheops import swap_curves
    return swap_curves(namespace.stack, namespace.inputs.cache)


def weights_fit_the_card(parsed: Mapping[str, Any]) -> dict[str, str]:
    """Cache operations need a cache: the model's weights must leave the card a KV pool."""
    stack = stack_of(parsed, (MODEL, CARD))
    if stack is None:
        return {}
    ladder = kvcache.ladder(stack)
    if ladder.weights_fit:
        return {}
    return {"card": (f"{stack.model.name}'s weights ({ladder.weights}) and what the engine's profile holds back ({ladder.reserve}) do not fit "
                     f"{stack.card.name}'s pool ({ladder.pool}): there is no KV cache to page, share or swap")}


CACHE_OPS = Calculator(
    name="cache_ops",
    label="Cache operations: paging waste, prefix reuse, swap or recompute",
    fields=CACHE_OPS_FIELDS,
    checks=(lengths_fit, weights_fit_the_card),
    curves={"swap-vs-recompute": swap_vs_recompute},
)

PARALLEL_FIELDS = (PARALLEL_MODEL, CARD, WEIGHTS, KV, TENSOR, PIPELINE, PARALLEL_LIMIT, PARALLEL_BATCH,
                   ALL_REDUCE_TIMING, RING, ALL_REDUCE_LATENCY)


def split_is_possible(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The tensor-parallel degree must split the heads whole and stay within a node; a stage needs a layer."""
    stack = stack_of(parsed, (PARALLEL_MODEL, TENSOR, PIPELINE))
    if stack is None:
        return {}
    from .engine.parallel import refusal
    problem = refusal(stack.parallel.model, stack.parallel.tensor, stack.parallel.pipeline)
    if not problem:
        return {}
    return {"pipeline" if problem.endswith("at least one") else "tensor": problem}


def split_serves(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The context limit must fit the model's positions and hold the typical prompt the page times;
    a typed batch must fit the cache the split leaves at that limit. Each at fault is named at once."""
    errors: dict[str, str] = {}
    stack = stack_of(parsed, (PARALLEL_MODEL, PARALLEL_LIMIT))
    if stack is not None:
        beyond = beyond_positions(stack.parallel.model, stack.context_limit)
        prompt = stack.traffic.prompt_p50
        if beyond:
            errors["context_limit"] = f"{beyond}; a context limit past that is one it cannot serve"
        elif stack.context_limit < prompt:
            errors["context_limit"] = (f"Context limit must hold the {prompt:,}-token prompt the page times "
                                       f"(its prefill and a sequence holding it)")
    stack = stack_of(parsed, PARALLEL_FIELDS)
    if stack is None or errors or not parsed["batch"]:
        return errors
    from .engine.parallel import plan, refusal, sharded
    if refusal(stack.parallel.model, stack.parallel.tensor, stack.parallel.pipeline):
        return errors
    split = plan(sharded(stack), stack.parallel.tensor, stack.parallel.pipeline)
    admitted = int(split.users_worst.value)
    if split.kv_budget.value > 0 and parsed["batch"] > admitted:
        errors["batch"] = (f"Batch of {parsed['batch']:,} is more than this split's cache admits at the "
                           f"{stack.context_limit:,}-token limit: {admitted:,} at most")
    return errors


def tp_scaling(namespace: Facts) -> dict:
    """Users and step time against the tensor-parallel degree, for the calculator's model and card."""
    from .engine.parallel import curves
    return curves(namespace.stack)


PARALLEL = Calculator(
    name="parallel",
    label="Many GPUs: the per-GPU ladder and what the split costs",
    fields=PARALLEL_FIELDS,
    checks=(split_is_possible, split_serves),
    curves={"tp-scaling": tp_scaling},
)


PLANNING_FIELDS = (RATE, PROMPT_P50, PROMPT_P95, OUTPUT_P50, TTFT, ITL, MODEL, CARD, WEIGHTS, KV, UTILISATION, BUSIEST,
                   SPARES, AVERAGE_LOAD, PRICE, ATTENTION_LIMIT)


def plan_possible(parsed: Mapping[str, Any]) -> dict[str, str]:
    """Document 14 plans one replica per card: calc.documents.planning.why_not says when it cannot."""
    if {"prompt_p50", "prompt_p95"} <= parsed.keys() and parsed["prompt_p95"] < parsed["prompt_p50"]:
        return {"prompt_p95": f"Prompt p95 is below the p50 ({parsed['prompt_p50']:,} tokens): a percentile "
                              f"cannot fall as it rises"}
    try:
        stack = stack_of(parsed, PLANNING_FIELDS)
    except ValueError as err:  # only the context limit's own apply refuses: past the model's positions
        return {"context_limit": str(err)}
    if stack is None:
        return {}
    beyond = beyond_positions(stack.model, stack.context_limit)
    if beyond:
        return {"context_limit": f"{beyond}; the engine refuses a --max-model-len of {stack.context_limit:,}"}
    from .documents import planning
    return planning.why_not(stack)


def gpus_vs_rate(namespace: Facts) -> dict:
    from .documents.planning import gpus_against_rate
    return gpus_against_rate(namespace.stack)


PLANNING = Calculator(
    name="planning",
    label="Capacity planner and its note",
    fields=PLANNING_FIELDS,
    checks=(plan_possible,),
    curves={"gpus-vs-rate": gpus_vs_rate},
)


def users_vs_utilisation(namespace: Facts) -> dict:
    """Users a launch line admits against --gpu-memory-utilization, and the rows of its data table."""
    from .engine.launch import utilisation_curve
    curves = utilisation_curve(namespace.stack)
    rows = [[f"{x:.2f}"] + [grouped(curve["y"][i]) for curve in curves] for i, x in enumerate(curves[0]["x"])]
    return {"curves": curves, "rows": rows}


LAUNCH = Calculator(
    name="launch",
    label="What a vLLM launch line reserves",
    fields=(CARD, COMMAND),
    curves={"users-vs-utilisation": users_vs_utilisation},
)


STARTUP = Calculator(
    name="startup",
    label="Your vLLM start-up log beside the model",
    fields=(LOG_CARD, STARTUP_LOG),
)


def sampling_filters(namespace: Facts) -> dict:
    """The candidates' probabilities after each step of the sampler, and the rows of its table."""
    from .engine.sampling import chart, sample
    return chart(sample(namespace.inputs.sampling))


SAMPLING = Calculator(
    name="sampling",
    label="Sampling explorer: logits to one token",
    fields=(*LOGITS, TEMPERATURE, MIN_P, TOP_K, TOP_P, SEED),
    curves={"sampling-filters": sampling_filters},
)


def speculative_speedup(namespace: Facts) -> dict:
    """Speedup against γ for several acceptance rates, at the chosen drafter's cost."""
    from .engine.speculative import gamma_curves
    return gamma_curves(namespace["speculative"]["run"])


def speculative_batch(namespace: Facts) -> dict:
    """Speedup against batch on the time model, beside the rule that ignores the batch."""
    from .engine.speculative import batch_curves
    return batch_curves(namespace["speculative"]["run"])


def held_within_positions(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The tokens each sequence holds must fit the chosen target's positions, drafts included."""
    stack = stack_of(parsed, (TARGET,))
    if stack is None or "held" not in parsed or "drafted" not in parsed:
        return {}
    beyond = beyond_positions(stack.model, parsed["held"] + parsed["drafted"])
    return {"held": f"{beyond}, and the drafts come on top of the tokens held"} if beyond else {}


def batch_fits_the_cache(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The batch verified together must fit the cache at the tokens each sequence holds (drafts
    included), beside the drafter's weights and cache when it holds them: the refusal starts where
    the speculative scan ends."""
    from .engine.simulation import scheduler_caps
    from .engine.speculative import DRAFTERS, admitted_batch, draft_weight_bytes, scheduled_batch
    stack = stack_of(parsed, (TARGET, CARD, WEIGHTS))
    if stack is None or not {"held", "drafted", "spec_batch", "drafter"} <= parsed.keys():
        return {}
    if not kvcache.ladder(stack).weights_fit:
        return {}
    drafter = DRAFTERS[parsed["drafter"]]
    each = kvcache.blocks_for(parsed["held"] + parsed["drafted"], stack.block_size) * stack.block_size
    admitted = admitted_batch(stack, drafter, parsed["held"], parsed["drafted"])
    scheduled = scheduled_batch(stack, parsed["drafted"])
    if parsed["spec_batch"] <= min(admitted, scheduled):
        return {}
    if admitted > scheduled:
        seqs, budget = scheduler_caps(stack)
        return {"spec_batch": (f"one engine step on {stack.card.name} verifies at most {scheduled:,} sequences in full, not "
                               f"{parsed['spec_batch']:,}: vLLM's defaults there are max_num_seqs {seqs:,} and a budget of "
                               f"{budget:,} tokens a step, {parsed['drafted'] + 1} a sequence with its drafts")}
    beside = "" if drafter.shape(stack.model) is None else f" beside the {drafter.name}"
    draft_weights = draft_weight_bytes(stack, drafter)
    if draft_weights is not None and draft_weights.value >= kvcache.ladder(stack).kv_budget.value:
        return {"drafter": (f"the {drafter.name}'s weights ({draft_weights}) fill what {stack.card.name} leaves for the "
                            f"cache ({kvcache.ladder(stack).kv_budget}): no sequence fits beside them")}
    if admitted == 0:
        return {"held": (f"{stack.card.name}'s cache{beside} has too little room for {stack.model.name}: "
                         f"not one sequence of {each:,} tokens fits")}
    return {"spec_batch": (f"{stack.card.name}'s cache admits {admitted:,} sequence{'' if admitted == 1 else 's'} of {each:,} tokens "
                           f"for {stack.model.name}{beside}, not {parsed['spec_batch']:,}")}


def target_fits_the_card(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The time model prices a model the card serves: its weights must leave room for a cache."""
    stack = stack_of(parsed, (TARGET, CARD, WEIGHTS))
    if stack is None:
        return {}
    ladder = kvcache.ladder(stack)
    if ladder.weights_fit:
        return {}
    return {"model": (f"{stack.model.name}'s weights ({ladder.weights}) and what the engine's profile holds back ({ladder.reserve}) do not fit "
                      f"{stack.card.name}'s pool ({ladder.pool}): choose a larger card or a smaller precision")}


SPECULATIVE = Calculator(
    name="speculative",
    label="Speculative decoding: tokens per pass, speedup, and the batch where it stops paying",
    fields=(ACCEPTANCE, DRAFTED, DRAFTER, SPEC_BATCH, HELD, TARGET, CARD, WEIGHTS),
    checks=(held_within_positions, target_fits_the_card, batch_fits_the_cache),
    curves={"speculative-speedup": speculative_speedup, "speculative-batch": speculative_batch},
)


def _room_for_a_request(stack: Stack) -> str:
    """Why the card cannot serve one request at the context limit beside the weights ("" when it can)."""
    ladder = kvcache.ladder(stack)
    if ladder.weights_fit and ladder.token_capacity.value >= stack.context_limit:
        return ""
    return (f"{stack.model.name} at {stack.weight_precision.name} leaves {stack.card.name} no room for "
            f"one {stack.context_limit:,}-token request's cache (KV budget {ladder.kv_budget})")


def _weights_leaving_a_cache(stack: Stack, key: str) -> Stack:
    """The weight precision, applied after the model and the card: a pasted config the card cannot
    serve is refused here, since the checks across fields run before a config is read."""
    stack = WEIGHTS.apply(stack, key)
    problem = _room_for_a_request(stack)
    if problem:
        raise ValueError(problem)
    return stack


PRODUCTION_WEIGHTS = replace(WEIGHTS, apply=_weights_leaving_a_cache)
PRODUCTION_FIELDS = (RATE, PROMPT_P50, PROMPT_P95, OUTPUT_P50, OUTPUT_P95, TTFT, ITL, MODEL, CARD,
                     PRODUCTION_WEIGHTS, PRICE, STEP_TOKENS, STREAM_SEED)


def traffic_in_order(parsed: Mapping[str, Any]) -> dict[str, str]:
    """Each p95 at least its p50, and a typical request within the context limit."""
    errors = {}
    for p50, p95, what in (("prompt_p50", "prompt_p95", "Prompt"), ("output_p50", "output_p95", "Output")):
        if {p50, p95} <= parsed.keys() and parsed[p95] < parsed[p50]:
            errors[p95] = f"{what} p95 must be at least its p50 ({parsed[p50]:,} tokens)"
    limit = REFERENCE.context_limit
    for name, what in (("output_p50", "Output p50"), ("output_p95", "Output p95")):
        if name in parsed and parsed[name] > limit // 2:
            errors.setdefault(name, f"{what} must be at most {limit // 2:,} tokens, half the context limit: the simulation "
                                    f"caps a reply there, as a client's max_tokens would")
    if {"prompt_p50", "output_p50"} <= parsed.keys() and parsed["prompt_p50"] + parsed["output_p50"] > limit:
        errors.setdefault("prompt_p50", f"a typical request (prompt p50 + output p50 = "
                                        f"{parsed['prompt_p50'] + parsed['output_p50']:,} tokens) is over the context "
                                        f"limit ({limit:,} tokens)")
    return errors


def promise_can_be_kept(parsed: Mapping[str, Any]) -> dict[str, str]:
    """The card must hold the weights and one request at the limit, and an idle card must keep the promise."""
    stack = stack_of(parsed, tuple(WEIGHTS if f is PRODUCTION_WEIGHTS else f for f in PRODUCTION_FIELDS))
    if stack is None:
        return {}
    beyond = beyond_positions(stack.model, stack.context_limit)
    if beyond:
        return {"model": f"{beyond}; this page serves requests up to its {stack.context_limit:,}-token context limit"}
    problem = _room_for_a_request(stack)
    if problem:
        budget = stack.serving.max_num_batched_tokens
        defaulted = replace(stack, serving=replace(stack.serving, max_num_batched_tokens=None))
        if budget and not _room_for_a_request(defaulted):
            peak = kvcache.ladder(stack).activation
            return {"step_tokens": (f"a budget of {budget:,} tokens a step makes the start-up profile's activation peak "
                                    f"{peak}, which leaves {stack.card.name} no cache for one {stack.context_limit:,}-token "
                                    f"request; a smaller budget, or vLLM's default, leaves room")}
        return {"card": problem}
    longest = min(stack.traffic.prompt_p95, stack.context_limit - 1)
    alone = timing.prefill_time(stack, longest)
    if alone.value > stack.promise.ttft_p95_s:
        return {"ttft": (f"a lone p95 prompt ({longest:,} tokens) takes {alone} to prefill on {stack.card.name}: "
                             f"no request rate keeps p95 TTFT within {stack.promise.ttft_p95_s:g} s")}
    step = timing.decode_step(stack, 1, min(stack.traffic.prompt_p50 + stack.traffic.output_p50, stack.context_limit))
    if step.time.value > stack.promise.itl_p95_s:
        return {"itl": (f"one sequence alone takes {step.time} a step on {stack.card.name}: no request rate keeps "
                            f"p95 ITL within {1000 * stack.promise.itl_p95_s:g} ms")}
    return {}


def latency_vs_rate(namespace: Facts) -> dict:
    """p95 TTFT and ITL, throughput and goodput against request rate, from the simulated stream."""
    from .documents.production import latency_curves
    return latency_curves(namespace.stack, namespace.inputs.stream)


PRODUCTION = Calculator(
    name="production",
    label="Goodput, the knee and the bill",
    fields=PRODUCTION_FIELDS,
    checks=(traffic_in_order, promise_can_be_kept),
    curves={"latency-vs-rate": latency_vs_rate},
)


def _output_sets_conversation(stack: Stack, output: int) -> Stack:
    """Document 00 sizes the paged case on the request it times: its conversation is prompt + output."""
    stack = OUTPUT.apply(stack, output)
    return replace(stack, typical_conversation=stack.workload.prompt + output)


START_FIELDS = (MODEL, CARD, WEIGHTS, KV, CONTEXT_LIMIT, RATE, PROMPT,
                replace(OUTPUT, apply=_output_sets_conversation))


def request_runs(parsed: Mapping[str, Any]) -> dict[str, str]:
    """Document 00's request must fit the context limit, the limit the model's positions, and the
    model the card: each refusal is put on the field whose change would cure it."""
    if {"prompt", "output", "context_limit"} <= parsed.keys() \
            and parsed["prompt"] + parsed["output"] > parsed["context_limit"]:
        request = parsed["prompt"] + parsed["output"]  # either side may be the one the reader just changed
        return {"output": f"prompt + output is {request:,} tokens, more than the context limit of {parsed['context_limit']:,}",
                "context_limit": f"Context limit of {parsed['context_limit']:,} is less than prompt + output, {request:,} tokens"}
    stack = stack_of(parsed, START_FIELDS)
    if stack is None:
        return {}
    beyond = beyond_positions(stack.model, stack.context_limit)
    if beyond:
        return {"context_limit": f"{beyond}; the engine refuses a --max-model-len of {stack.context_limit:,}"}
    from .documents.start import one_card_problem
    problem = one_card_problem(stack)
    if problem:
        return problem
    from .documents import journey
    problem = journey.fits(stack, parsed["prompt"], parsed["output"])
    return {"prompt": problem} if problem else {}


def start_load(namespace: Facts) -> dict:
    """Each phase's card load, whole GPUs and $ per M tokens at request rates around the stack's own."""
    from .documents.start import load_curves, load_rows
    curves = load_curves(namespace.stack)
    return {"curves": curves, "rows": load_rows(curves)}


START = Calculator(
    name="start",
    label="The reference stack, every track on one screen",
    fields=START_FIELDS,
    checks=(request_runs,),
    curves={"start-load": start_load},
)

CALCULATORS: dict[str, Calculator] = {c.name: c for c in (CAPACITY, PHASES, JOURNEY, HARDWARE, TOKENS, ANATOMY,
                                                           ATTENTION, POSITION, NUMBER_FORMATS, PRECISION, CACHE_OPS,
                                                           LAUNCH, STARTUP, SAMPLING, SPECULATIVE, PLANNING,
                                                           PARALLEL, PRODUCTION, START)}


def run_json(request: str, listener: progress.Listener | None = None) -> str:
    """The browser's entry point: a JSON request in, a JSON answer out; `listener(done, total, what)`
    hears a long computation's progress as it runs (calc.core.progress)."""
    try:
        asked = json.loads(request)
        chosen = CALCULATORS.get(asked.get("calculator", ""))
        if chosen is None:
            answer = {"ok": False, "errors": {"calculator": f"no calculator named {asked.get('calculator')!r}"}}
        else:
            with progress.listening(listener):
                answer = chosen.run(asked.get("values", {}), asked.get("config"), asked.get("paths", []),
                                    asked.get("charts", []), bool(asked.get("bars")), asked.get("explain", [])[:50])
    except Exception as err:  # the page must get an answer, whatever went wrong
        answer = {"ok": False, "errors": {"calculator": f"could not compute: {type(err).__name__}: {err}"}}
    return json.dumps(answer, ensure_ascii=False, allow_nan=False)
