"""What one token leaves in the KV cache, from the config: the one size every ladder divides by."""
from __future__ import annotations

import math
from functools import lru_cache

from ..specs.models import Model
from ..specs.precision import Precision
from ..core.units import KIB_HELD, Result, grouped, plain

FORMULA = "bytes = 2 × layers × kv_heads × head_dim × seq_len × bytes_per_element"


@lru_cache(maxsize=512)
def bytes_per_token(model: Model, kv_precision: Precision) -> Result:
    """2 (a key and a value) × layers × KV heads × head dimension × bytes per element; for latent
    attention, layers × (latent + decoupled RoPE key) × bytes per element."""
    if model.is_latent:
        width = model.kv_lora_rank + model.qk_rope_head_dim
        value = model.num_hidden_layers * width * kv_precision.bytes
        return Result(value, KIB_HELD, formula="layers × (kv_lora_rank + qk_rope_head_dim) × bytes_per_element",
                      worked=(f"{model.num_hidden_layers} × ({grouped(model.kv_lora_rank)} + {model.qk_rope_head_dim}) × "
                              f"{plain(kv_precision.bytes)} = {grouped(value)} B = {KIB_HELD.show(value)}"))
    factors = (2, model.num_hidden_layers, model.num_key_value_heads, model.head_dim)
    value = math.prod(factors) * kv_precision.bytes
    shown = " × ".join(grouped(f) for f in factors) + f" × {plain(kv_precision.bytes)}"
    return Result(
        value,
        KIB_HELD,
        formula="2 × layers × kv_heads × head_dim × bytes_per_element",
        worked=f"{shown} = {grouped(value)} B = {KIB_HELD.show(value)}",
    )
