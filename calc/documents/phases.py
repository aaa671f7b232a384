"""Documents 04 to 06's own figures: what each phase of serving reads, computes and waits for on one
stack, and the workload that the later documents price."""
from __future__ import annotations

from dataclasses import dataclass, replace

from ..engine import kvcache, measured, timing
from ..model import kvshape, operations, roofline
from ..engine import steptime
from ..model.anatomy import count_parameters
from ..specs.models import Model
from ..specs.precision import BF16, FP8, INT4
from ..model.weights import weight_bytes
from ..specs.stack import Stack
from ..core.arith import field, made_of, term
from ..core.units import (COUNT, GB_MOVED, MS, MS_WHOLE, PERCENT, RATIO, RATIO_FINE, TFLOP, TOKENS, TOKENS_PER_S,
    Result, given, grouped, plain)

SHORT_CHAT = 500


@dataclass(frozen=True)
class ModelCache:
    """One catalogue model's cache, for comparisons across the family."""

    model: Model
    per_token: Result
    per_user: Result
    per_user_at_max: Result
    versus_stack: Result


@dataclass(frozen=True)
class LongContext:
    """The stack with its context limit raised to the model's maximum position."""

    tokens: Result
    per_user: Result
    users_worst: Result
    read_growth: Result


def model_cache(model: Model, stack: Stack) -> ModelCache:
    per_token = kvcache.bytes_per_token(model, stack.kv_precision)
    own = kvcache.bytes_per_token(stack.model, stack.kv_precision)
    return ModelCache(
        model=model,
        per_token=per_token,
        per_user=kvcache.bytes_for_tokens(per_token, model.tokens_cached(stack.context_limit)),
        per_user_at_max=kvcache.bytes_for_tokens(per_token, model.tokens_cached(model.max_position_embeddings)),
        versus_stack=(term(per_token, f"{grouped(per_token.value)} B") / term(own, f"{grouped(own.value)} B")).result(
            RATIO, "this model's cache per token ÷ the stack model's"),
    )


def in_gigabytes(held: Result) -> Result:
    """The same bytes in decimal gigabytes, as bandwidth and bytes moved are quoted."""
    return Result(held.value, GB_MOVED, formula="bytes ÷ 1,000³",
                  worked=(f"{grouped(held.value)} B = {GB_MOVED.show(held.value)}; "
                          f"{grouped(held.value)} B = {held}"), inputs=made_of(held))


def long_context(stack: Stack) -> LongContext:
    longest = max(stack.model.max_position_embeddings, stack.context_limit)
    stretched = kvcache.ladder(replace(stack, context_limit=longest))
    read = _read(stack, 1, longest)
    return LongContext(
        tokens=Result(longest, TOKENS, formula="max_position_embeddings", worked=TOKENS.show(longest),
                      inputs=made_of(field(stack.model, "max_position_embeddings", TOKENS),
                                     field(stack, "context_limit", TOKENS))),
        per_user=stretched.per_user,
        users_worst=stretched.users_worst,
        read_growth=roofline.read_growth(read, _read(stack, 1, stack.context_limit)),
    )


def _read(stack: Stack, batch: int, tokens: int) -> roofline.DecodeRead:
    """One decode step with `batch` sequences `tokens` long (as far as a sliding window lets them hold)."""
    held = stack.model.tokens_cached(tokens)
    return roofline.decode_read(stack.model, stack.weight_precision, stack.kv_precision, batch, held)


def busy_batch(ladder: kvcache.Ladder) -> int:
    """The busiest decode the ladder admits at the context limit: every worst-case user resident
    (one, if not even one fits, so the read stays defined)."""
    return max(int(ladder.users_worst.value), 1)


def floors(stack: Stack, ladder: kvcache.Ladder) -> dict[str, Result]:
    """The bandwidth floor on a decode step, and how much of the ITL promise the busy one uses."""
    short = roofline.step_floor(_read(stack, 1, stack.traffic.prompt_p50), stack.card)
    busy = roofline.step_floor(_read(stack, busy_batch(ladder), stack.context_limit), stack.card)
    promise = field(stack.promise, "itl_p95_s", MS_WHOLE, "ITL promise, p95")
    return {
        "short": short,
        "busy": busy,
        "busy_of_promise": (term(busy, str(busy)) / term(promise, MS_WHOLE.show(promise.value))).result(
            PERCENT, "busy step floor ÷ ITL promise"),
    }


@dataclass(frozen=True)
class Crossings:
    """Whether decode turns compute-bound, at a short, a typical and the longest admitted length."""

    short: timing.Crossing
    typical: timing.Crossing
    at_limit: timing.Crossing


SHORT_SEQUENCE = 128
CHUNK = 512  # an example prefill chunk, to show the TTFT/ITL trade; engines let you choose it


def times(stack: Stack, ladder: kvcache.Ladder) -> dict[str, object]:
    """The time model on this stack: rates, the ridge, prefill, decode steps, and what they make."""
    traffic = stack.traffic
    peak = timing.peak_compute(stack.card, stack.weight_precision)
    typical_context = traffic.prompt_p50 + traffic.output_p50 // 2
    single = timing.decode_step(stack, 1, typical_context)
    busy = timing.decode_step(stack, busy_batch(ladder), stack.context_limit)
    return {
        "peak": peak,
        "ridge": timing.ridge_point(stack.card, stack.weight_precision),
        "effective_ridge": timing.effective_ridge(stack),
        "compute_share": timing.compute_share(stack),
        "bandwidth_share": timing.bandwidth_share(stack),
        "achieved_compute": timing.achieved_compute(stack),
        "achieved_bandwidth": timing.achieved_bandwidth(stack),
        "prefill_mfu": timing.prefill_mfu(stack, traffic.prompt_p50),
        "prefill_step": timing.prefill_step(stack, traffic.prompt_p50),
        "overhead": steptime.overhead(),
        "kernels": kernels_measured(stack),
        "fp8": fp8_measured(stack),
        "ops_per_token": operations.linear_ops_per_token(stack.model),
        "multiplied": operations.multiplied_parameters(stack.model),
        "attention_per_position": operations.attention_ops_per_position(stack.model),
        "attention_crossover": operations.attention_crossover(stack.model),
        "prefill_formula": operations.PREFILL_FORMULA,
        "prefill_ops": operations.prefill_ops(stack.model, traffic.prompt_p50),
        "prefill": timing.prefill_time(stack, traffic.prompt_p50),
        "prefill_long": timing.prefill_time(stack, traffic.prompt_p95),
        "prefill_intensity": timing.prefill_intensity(stack, traffic.prompt_p50),
        "typical_context": Result(typical_context, TOKENS, formula="prompt p50 + half the output p50",
                                  worked=TOKENS.show(typical_context),
                                  inputs=made_of(field(traffic, "prompt_p50", TOKENS), field(traffic, "output_p50", TOKENS))),
        "single": single,
        "busy": busy,
        "request": timing.request_time(stack, traffic.prompt_p50, traffic.output_p50, 1),
        "naive": naive_claims(stack),
        "matmul_crossing": timing.matmul_crossing(stack),
        "prefill_floor": timing.prefill_floor_tokens(stack),
        "attention_intensity": timing.attention_intensity(stack),
        "crossing": Crossings(
            short=timing.compute_bound_batch(stack, SHORT_SEQUENCE),
            typical=timing.compute_bound_batch(stack, traffic.prompt_p50),
            at_limit=timing.compute_bound_batch(stack, stack.context_limit),
        ),
    }


def kernels_measured(stack: Stack) -> dict[str, object]:
    """What the time model's shares rest on for this card: its own measurements or another card's."""
    from ..engine import kernels
    table = kernels.measured(stack.card)
    return {"provenance": table.provenance, "own": table.own, "measured_on": table.measured_on.name,
            "release": table.release, "decode_share": kernels.decode_share(stack.card),
            "decode_floor": kernels.decode_floor(stack.card), "source": kernels.SOURCE}


def fp8_measured(stack: Stack) -> dict[str, object]:
    """What fp8 weights (W8A8) buy on this card as measured: the fp8 matrix multiplies' shares of their
    own roofline, and the step and prefill against bf16 weights."""
    from ..engine import kernels
    traffic = stack.traffic
    context = traffic.prompt_p50 + traffic.output_p50 // 2
    bf16, fp8 = replace(stack, weight_precision=BF16), replace(stack, weight_precision=FP8)

    def gain(what: str, slow: Result, fast: Result) -> Result:
        return (term(slow) / term(fast)).result(RATIO_FINE, f"{what} with bf16 weights ÷ with fp8 weights")
    return {"read_share": kernels.gemm_efficiency(stack.card, FP8, 1),
            "compute_share": kernels.gemm_efficiency(stack.card, FP8, traffic.prompt_p50),
            "bf16_read_share": kernels.gemm_efficiency(stack.card, BF16, 1),
            "bf16_compute_share": kernels.gemm_efficiency(stack.card, BF16, traffic.prompt_p50),
            "step_gain": gain("one sequence's step", timing.decode_step(bf16, 1, context).time,
                              timing.decode_step(fp8, 1, context).time),
            "prefill_gain": gain("the prompt's prefill", timing.prefill_time(bf16, traffic.prompt_p50),
                                 timing.prefill_time(fp8, traffic.prompt_p50))}


def workload(stack: Stack, ladder: kvcache.Ladder) -> dict[str, object]:
    """The stack's workload timed: one prompt's prefill, and a decode step of its batch at the
    output's midpoint. Without a batch, every resident the cache admits at the full request length."""
    chosen = stack.workload
    full = stack.model.tokens_cached(chosen.prompt + chosen.output)
    admitted = kvcache.users_by_tokens(ladder.token_capacity, kvcache.tokens_in_blocks(full, stack.block_size))
    batch = chosen.batch or max(int(admitted.value), 1)
    context = chosen.prompt + chosen.output // 2
    step = timing.decode_step(stack, batch, context)
    prompt, output = given(chosen.prompt, TOKENS, "prompt length"), given(chosen.output, TOKENS, "output length")
    return {
        "prompt": prompt,
        "output": output,
        "batch": (given(batch, COUNT, "sequences decoding together") if chosen.batch else
                  Result(batch, COUNT, formula="sequences decoding together", worked=COUNT.show(batch),
                         inputs=made_of(admitted))),
        "context": (term(prompt, grouped(chosen.prompt)) + term(output, grouped(chosen.output)) // 2).result(
            TOKENS, "prompt + half the output, in whole tokens"),
        "admitted": admitted,
        "over_admitted": batch > admitted.value,
        "prefill": timing.prefill_time(stack, chosen.prompt),
        "prefill_ops": operations.prefill_ops(stack.model, chosen.prompt),
        "prefill_intensity": timing.prefill_intensity(stack, chosen.prompt),
        "step": step,
        "request": timing.request_time(stack, chosen.prompt, chosen.output, batch),
        "crossing": timing.compute_bound_batch(stack, context),
        "effective_ridge": timing.effective_ridge(stack),
        "load": traffic_load(stack, timing.prefill_time(stack, chosen.prompt), step),
        "chunked": timing.chunked_prefill(stack, chosen.prompt, CHUNK, batch, context),
    }


def traffic_load(stack: Stack, prefill: Result, step: timing.DecodeStep) -> dict[str, Result]:
    """Card-seconds per second the stack's request rate asks of each phase: a first look at the
    GPU count document 14 plans properly."""
    rate = field(stack.traffic, "requests_per_s", COUNT, "requests per second at peak")
    tokens = stack.workload.output - 1
    per_second = term(rate, plain(rate.value))
    produced = step.tokens_per_second
    return {
        "rate": rate,
        "prefill_cards": (per_second * term(prefill, MS.precise(prefill.value))).result(
            RATIO, "requests per second × prefill time"),
        "decode_cards": (per_second * term(tokens) / term(produced, TOKENS_PER_S.precise(produced.value))).result(
            RATIO, "requests per second × decode tokens ÷ tokens per second of a full card"),
    }


def naive_claims(stack: Stack) -> dict[str, Result]:
    """The common shortcuts, computed exactly as they are usually stated, for the corrections."""
    model, prompt = stack.model, stack.traffic.prompt_p50
    total = count_parameters(model).total
    params = term(total, grouped(total.value))
    held = weight_bytes(model, stack.weight_precision)
    layers, hidden = field(model, "num_hidden_layers"), field(model, "hidden_size")
    bandwidth = stack.card.bandwidth
    return {
        "prefill_ops": (2 * params * term(field(stack.traffic, "prompt_p50", TOKENS), grouped(prompt))).result(
            TFLOP, "2 × all parameters × N"),
        "crossover": (params / (2 * term(layers, f"{model.num_hidden_layers}") * term(hidden, grouped(model.hidden_size)))).result(
            TOKENS, "all parameters ÷ (2 × layers × hidden), attention taken as N²"),
        "tokens_per_second": (term(bandwidth, str(bandwidth)) / term(held, f"{grouped(held.value)} B")).result(
            TOKENS_PER_S, "bandwidth ÷ weights held"),
    }


def measurements(stack: Stack) -> dict[str, object]:
    """Published measurements of the reference stack beside the model on this stack."""
    return measured.section(stack)


def weights(stack: Stack) -> dict[str, Result]:
    """The stack model's weights in each storage format."""
    bf16 = weight_bytes(stack.model, BF16)
    return {
        "bf16": bf16,
        "bf16_decimal": in_gigabytes(bf16),
        "fp8": weight_bytes(stack.model, FP8),
        "int4": weight_bytes(stack.model, INT4),
    }


def kv(stack: Stack, ladder: kvcache.Ladder) -> dict[str, object]:
    """The cache's shape on this stack: per token, per user, per block."""
    return {
        "formula": kvshape.FORMULA,
        "per_token": ladder.per_token,
        "per_user": ladder.per_user,
        "per_token_fp8": kvcache.bytes_per_token(stack.model, FP8),
        "key_width": kvcache.key_width(stack.model),
        "short_chat": given(SHORT_CHAT, TOKENS),
        "short_chat_blocks": kvcache.blocks_for(SHORT_CHAT, stack.block_size),
        "block_size": stack.block_size,
    }


def reads(stack: Stack, ladder: kvcache.Ladder) -> dict[str, roofline.DecodeRead]:
    """One decode step's bytes read: short, at the limit, at the model's maximum, and at the busy batch."""
    traffic = stack.traffic
    return {
        "short": _read(stack, 1, traffic.prompt_p50),
        "at_limit": _read(stack, 1, stack.context_limit),
        "at_max": _read(stack, 1, max(stack.model.max_position_embeddings, 1)),
        "busy": _read(stack, busy_batch(ladder), stack.context_limit),
    }
