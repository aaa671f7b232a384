"""What one token leaves in the KV cache, from the config: the one size every ladder divides by."""
from __future__ import annotations

from functools import lru_cache

from ..specs.models import Model
from ..specs.precision import Precision
from ..core.arith import config_term, term
from ..core.units import KIB_HELD, Result, grouped, plain

FORMULA = "bytes = 2 × layers × kv_heads × head_dim × seq_len × bytes_per_element"


@lru_cache(maxsize=512)
def bytes_per_token(model: Model, kv_precision: Precision) -> Result:
    """2 (a key and a value) × layers × KV heads × head dimension × bytes per element; for latent
    attention, layers × (latent + decoupled RoPE key) × bytes per element."""
    if model.is_latent:
        expr = (config_term(model, "num_hidden_layers")
                * (config_term(model, "kv_lora_rank") + config_term(model, "qk_rope_head_dim"))
                * term(kv_precision.bytes, plain(kv_precision.bytes)))
        return expr.result(KIB_HELD, "layers × (kv_lora_rank + qk_rope_head_dim) × bytes_per_element",
                           shown=f"{grouped(expr.value)} B = {KIB_HELD.show(expr.value)}")
    expr = (term(2) * config_term(model, "num_hidden_layers") * config_term(model, "num_key_value_heads")
            * config_term(model, "head_dim") * term(kv_precision.bytes, plain(kv_precision.bytes)))
    return expr.result(KIB_HELD, "2 × layers × kv_heads × head_dim × bytes_per_element",
                       shown=f"{grouped(expr.value)} B = {KIB_HELD.show(expr.value)}")

