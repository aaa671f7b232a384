"""Document 12's LoRA figures: an adapter beside the base weights, and the cache its reserved slots displace."""
from __future__ import annotations

from dataclasses import replace

from ..engine.kvcache import ladder
from ..model.lora import (LORA_SOURCE, USERS_FINE, WORKED_RANK, WORKED_SLOTS, adapter_bytes,
    sides, slots_reserved, tokens_displaced)
from ..specs.stack import Stack
from ..core.arith import made_of, term, total
from ..core.units import COUNT, SHARE, Result, grouped


def section(stack: Stack) -> dict[str, object]:
    """Document 12's adapters on this stack: one adapter's bytes, the slots vLLM reserves, and the cache they displace."""
    model = stack.model
    base = ladder(stack)
    one = adapter_bytes(model, WORKED_RANK)
    slots = slots_reserved(model, WORKED_RANK, WORKED_SLOTS)
    displaced = tokens_displaced(slots, base.per_token)
    users = (term(displaced, str(displaced)) / term(base.tokens_per_user_paged, str(base.tokens_per_user_paged)))
    fit_formula = "⌊KV budget ÷ one adapter⌋"
    if base.kv_budget.value > 0:
        whole = (term(base.kv_budget, f"{grouped(int(base.kv_budget.value))} B") // term(one, f"{grouped(int(one.value))} B")
                 ).result(COUNT, fit_formula, shown=grouped(int(base.kv_budget.value // one.value)))
        fit = replace(whole, value=int(whole.value))  # a whole number of adapters, as before
    else:
        fit = Result(0, COUNT, formula=fit_formula, worked=f"a KV budget of {base.kv_budget} holds no adapter",
                     inputs=made_of(base.kv_budget, one))
    return {
        "rank": WORKED_RANK,
        "slots": WORKED_SLOTS,
        "per_layer": total(term(WORKED_RANK) * (d_in + d_out) for d_in, d_out in sides(model)).result(
            COUNT, "rank × Σ (d_in + d_out) over q, k, v, o, gate, up, down"),
        "adapter": one,
        "adapter_qv": adapter_bytes(model, WORKED_RANK, "qv"),
        "adapter_share": (term(one, f"{grouped(int(one.value))} B")
                          / term(base.weights, f"{grouped(int(base.weights.value))} B")).result(SHARE, "adapter ÷ base weights"),
        "slot": slots_reserved(model, WORKED_RANK, 1),
        "reserved": slots,
        "tokens": displaced,
        "users": users.result(USERS_FINE, "tokens displaced ÷ tokens per typical user", shown=f"{users.value:,.2f} users"),
        "fit": fit,
        "source": LORA_SOURCE,
    }
