"""Every named number the documents refer to, computed from one stack.

Content writes `{{ ladder.kv_budget }}`; the build looks the path up in `facts(stack)`.
The calculators call the same function with the reader's inputs, so a number on the
page and the number a calculator shows come from one computation.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from . import kvcache, roofline
from .anatomy import count_parameters
from .models import CATALOGUE, Model
from .precision import BF16, FP8, INT4, weight_bytes
from .stack import REFERENCE, Stack
from .units import MS_WHOLE, PERCENT, RATIO, SECONDS, TOKENS, Result, given

BUSY_BATCH = 64
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
        versus_stack=Result(per_token.value / own.value, RATIO, formula="this model's cache per token ÷ the stack model's",
                            worked=f"{per_token} ÷ {own} = {RATIO.show(per_token.value / own.value)}"),
    )


def long_context(stack: Stack) -> LongContext:
    longest = max(stack.model.max_position_embeddings, stack.context_limit)
    stretched = kvcache.ladder(replace(stack, context_limit=longest))
    read = _read(stack, 1, longest)
    return LongContext(
        tokens=given(longest, TOKENS, "max_position_embeddings"),
        per_user=stretched.per_user,
        users_worst=stretched.users_worst,
        read_growth=roofline.read_growth(read, _read(stack, 1, stack.context_limit)),
    )


def _read(stack: Stack, batch: int, tokens: int) -> roofline.DecodeRead:
    """One decode step with `batch` sequences `tokens` long (as far as a sliding window lets them hold)."""
    held = stack.model.tokens_cached(tokens)
    return roofline.decode_read(stack.model, stack.weight_precision, stack.kv_precision, batch, held)


def floors(stack: Stack) -> dict[str, Result]:
    """The bandwidth floor on a decode step, and how much of the ITL promise the busy one uses."""
    short = roofline.step_floor(_read(stack, 1, stack.traffic.prompt_p50), stack.card)
    busy = roofline.step_floor(_read(stack, BUSY_BATCH, stack.context_limit), stack.card)
    promise = stack.promise.itl_p95_s
    share = busy.value / promise
    return {
        "short": short,
        "busy": busy,
        "busy_of_promise": Result(share, PERCENT, formula="busy step floor ÷ ITL promise",
                                  worked=f"{busy} ÷ {MS_WHOLE.show(promise)} = {PERCENT.show(share)}"),
    }


def facts(stack: Stack = REFERENCE) -> dict[str, object]:
    """The namespace a document's references resolve in."""
    traffic = stack.traffic
    ladder = kvcache.ladder(stack)
    return {
        "stack": stack,
        "model": stack.model,
        "card": stack.card,
        "traffic": traffic,
        "params": count_parameters(stack.model),
        "weights": {
            "bf16": weight_bytes(stack.model, BF16),
            "fp8": weight_bytes(stack.model, FP8),
            "int4": weight_bytes(stack.model, INT4),
        },
        "kv": {
            "formula": kvcache.FORMULA,
            "per_token": ladder.per_token,
            "per_user": ladder.per_user,
            "per_token_fp8": kvcache.bytes_per_token(stack.model, FP8),
            "key_width": kvcache.key_width(stack.model),
            "short_chat": given(SHORT_CHAT, TOKENS),
            "short_chat_blocks": kvcache.blocks_for(SHORT_CHAT, stack.block_size),
            "block_size": stack.block_size,
        },
        "ladder": ladder,
        "levers": kvcache.stacked_levers(stack),
        "family": {key.split("-")[-1]: model_cache(model, stack) for key, model in CATALOGUE.items()},
        "recompute": {
            "typical": kvcache.recompute_cost_ratio(traffic.prompt_p50, traffic.output_p50),
            "long": kvcache.recompute_cost_ratio(traffic.prompt_p95, traffic.output_long),
        },
        "read": {
            "short": _read(stack, 1, traffic.prompt_p50),
            "at_limit": _read(stack, 1, stack.context_limit),
            "at_max": _read(stack, 1, max(stack.model.max_position_embeddings, 1)),
            "busy": _read(stack, BUSY_BATCH, stack.context_limit),
        },
        "promise": {
            "ttft": given(stack.promise.ttft_p95_s, SECONDS, "time to first token, p95"),
            "itl": given(stack.promise.itl_p95_s, MS_WHOLE, "inter-token latency, p95"),
        },
        "floor": floors(stack),
        "long_context": long_context(stack),
    }
