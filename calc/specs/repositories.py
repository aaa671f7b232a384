"""Hugging Face repository ids calc knows the config of, as a launch line or a start-up log names them
(lower-cased), each with the calc model of that architecture and, for a checkpoint stored quantised,
its weights' format."""
from __future__ import annotations

from .models import CATALOGUE, DEEPSEEK_V2, DEEPSEEK_V3, GEMMA_2_9B, MISTRAL_7B, Model
from .precision import FP8, Precision

MODELS: dict[str, tuple[Model, Precision | None]] = {
    **{f"meta-llama/{prefix}llama-3.1-{size}{suffix}": (CATALOGUE[f"llama-3.1-{size}"], None)
       for prefix in ("", "meta-") for size in ("8b", "70b", "405b") for suffix in ("", "-instruct")},
    **{f"meta-llama/llama-3.2-1b{suffix}": (CATALOGUE["llama-3.2-1b"], None) for suffix in ("", "-instruct")},
    **{f"mistralai/mixtral-8x7b{kind}-v0.1": (CATALOGUE["mixtral-8x7b"], None) for kind in ("", "-instruct")},
    **{f"mistralai/mistral-7b{kind}-v0.1": (MISTRAL_7B, None) for kind in ("", "-instruct")},
    **{f"google/gemma-2-9b{kind}": (GEMMA_2_9B, None) for kind in ("", "-it")},
    "deepseek-ai/deepseek-v2": (DEEPSEEK_V2, None),
    # DeepSeek-V3's published checkpoint is fp8, in 128 × 128 blocks with their scales (config.json's
    # quantization_config: "quant_method": "fp8", "weight_block_size": [128, 128]), and vLLM loads it so.
    "deepseek-ai/deepseek-v3": (DEEPSEEK_V3, FP8),
    # Neural Magic's fp8 checkpoint (calc.model.weights.QUANTISED_WEIGHTS_SOURCE)
    "neuralmagic/meta-llama-3.1-8b-instruct-fp8": (CATALOGUE["llama-3.1-8b"], FP8),
    # Llama 3.3 70B has Llama 3.1 70B's config.json shapes; Red Hat's checkpoint stores its linear layers
    # in fp8 with dynamic activation scales (compressed-tensors), its embedding and head in bf16.
    "redhatai/llama-3.3-70b-instruct-fp8-dynamic": (CATALOGUE["llama-3.1-70b"], FP8),
}
KNOWN_MODELS = ("Llama 3.1 8B, 70B and 405B, Llama 3.2 1B, Mistral 7B, Mixtral 8x7B, Gemma 2 9B, "
                "DeepSeek-V2 and V3")
