"""Document 12's LoRA figures: an adapter beside the base weights, and the cache its reserved slots displace."""
from __future__ import annotations

from ..engine.kvcache import ladder
from ..model.lora import (LORA_SOURCE, USERS_FINE, WORKED_RANK, WORKED_SLOTS, adapter_bytes, parameters_per_layer,
    projections, slots_reserved, tokens_displaced)
from ..specs.stack import Stack
from ..core.units import COUNT, SHARE, Result, grouped


def section(stack: Stack) -> dict[str, object]:
    """Document 12's adapters on this stack: one adapter's bytes, the slots vLLM reserves, and the cache they displace."""
    model = stack.model
    base = ladder(stack)
    one = adapter_bytes(model, WORKED_RANK)
    slots = slots_reserved(model, WORKED_RANK, WORKED_SLOTS)
    displaced = tokens_displaced(slots, base.per_token)
    users = displaced.value / base.tokens_per_user_paged.value
    fit = int(base.kv_budget.value // one.value) if base.kv_budget.value > 0 else 0
    return {
        "rank": WORKED_RANK,
        "slots": WORKED_SLOTS,
        "per_layer": Result(parameters_per_layer(model, WORKED_RANK), COUNT,
                            formula="rank × Σ (d_in + d_out) over q, k, v, o, gate, up, down",
                            worked=" + ".join(f"{WORKED_RANK} × ({grouped(p.d_in)} + {grouped(p.d_out)})"
                                              for p in projections(model)) +
                            f" = {grouped(parameters_per_layer(model, WORKED_RANK))}"),
        "adapter": one,
        "adapter_qv": adapter_bytes(model, WORKED_RANK, "qv"),
        "adapter_share": Result(one.value / base.weights.value, SHARE, formula="adapter ÷ base weights",
                                worked=f"{grouped(int(one.value))} B ÷ {grouped(int(base.weights.value))} B = "
                                       f"{SHARE.show(one.value / base.weights.value)}"),
        "slot": slots_reserved(model, WORKED_RANK, 1),
        "reserved": slots,
        "tokens": displaced,
        "users": Result(users, USERS_FINE, formula="tokens displaced ÷ tokens per typical user",
                        worked=f"{displaced} ÷ {base.tokens_per_user_paged} = {users:,.2f} users"),
        "fit": Result(fit, COUNT, formula="⌊KV budget ÷ one adapter⌋",
                      worked=(f"⌊{grouped(int(base.kv_budget.value))} B ÷ {grouped(int(one.value))} B⌋ = {grouped(fit)}"
                              if base.kv_budget.value > 0 else f"a KV budget of {base.kv_budget} holds no adapter")),
        "source": LORA_SOURCE,
    }
