"""Models, described by the fields of their config.json and nothing else."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from ..core.echo import as_json, excerpt, model_name


class ConfigError(ValueError):
    """A config.json that cannot describe a model calc understands; names the field at fault."""

    def __init__(self, field_name: str, problem: str):
        super().__init__(f"{field_name}: {problem}")
        self.field = field_name
        self.problem = problem


@dataclass(frozen=True)
class Model:
    """A decoder-only transformer, with config.json's own field names.

    `head_dim` is read when the config gives it and otherwise derived as
    hidden_size / num_attention_heads, which is what the Llama code does. Biases and extra
    norms that an architecture implies without a config field (Qwen2's q, k and v biases,
    Qwen3's per-head q and k norms) are set from `architectures`.
    """

    name: str
    source: str
    num_hidden_layers: int
    hidden_size: int
    num_attention_heads: int
    num_key_value_heads: int
    intermediate_size: int
    vocab_size: int
    tie_word_embeddings: bool = False
    max_position_embeddings: int = 0
    head_dim_given: int | None = field(default=None, repr=False)
    qkv_bias: bool = False
    output_bias: bool = False
    mlp_bias: bool = False
    qk_norm: bool = False
    num_local_experts: int = 1
    num_experts_per_tok: int = 1
    sliding_window: int | None = None
    architecture: str = "LlamaForCausalLM"
    counted: str = ""
    # Latent attention (DeepSeek-V2/V3, MLA): each layer caches one compressed latent of
    # kv_lora_rank numbers and one decoupled RoPE key of qk_rope_head_dim, shared by every head.
    kv_lora_rank: int | None = None
    q_lora_rank: int | None = None
    qk_rope_head_dim: int = 0
    qk_nope_head_dim: int = 0
    v_head_dim: int = 0
    # DeepSeekMoE: shared experts beside the routed ones, narrower experts, the first layers dense.
    n_shared_experts: int = 0
    moe_intermediate_size: int = 0
    first_k_dense_replace: int = 0
    router_bias: bool = False
    # Hybrid local/global attention (Gemma 2): how many layers use the sliding window; None means
    # every layer does (Mistral), so the window caps the whole cache.
    window_layers: int | None = None
    sandwich_norms: bool = False
    rope_theta: float = 10_000.0
    rope_scaling: tuple[tuple[str, Any], ...] = ()

    @property
    def head_dim(self) -> int:
        if self.head_dim_given is not None:
            return self.head_dim_given
        return self.hidden_size // self.num_attention_heads

    @property
    def rope_scaling_fields(self) -> dict[str, Any]:
        """config.json's rope_scaling as a dict (empty when the config has none); calc.documents.position reads it."""
        return dict(self.rope_scaling)

    @property
    def query_heads_per_kv_head(self) -> int:
        return self.num_attention_heads // self.num_key_value_heads

    @property
    def is_mixture_of_experts(self) -> bool:
        return self.num_local_experts > 1

    @property
    def is_latent(self) -> bool:
        """Multi-head latent attention: the cache holds a latent, not keys and values per head."""
        return self.kv_lora_rank is not None

    @property
    def is_hybrid(self) -> bool:
        """Some layers attend through a sliding window, the others to the whole sequence."""
        return bool(self.sliding_window) and self.window_layers is not None \
            and self.window_layers < self.num_hidden_layers

    def tokens_cached(self, tokens: int) -> int:
        """Tokens whose keys and values a sequence of `tokens` keeps: a sliding window caps them.
        In a hybrid model the full-attention layers keep every token, so the ladder charges the
        full length (what an engine without a hybrid allocator reserves; calc.documents.attention derives
        what the windowed layers save)."""
        if not self.sliding_window or self.is_hybrid:
            return tokens
        return min(tokens, self.sliding_window)

    @classmethod
    def from_config(cls, config: Mapping[str, Any], name: str = "", source: str = "") -> "Model":
        """Build a model from a parsed config.json, checking every field it relies on."""
        if not isinstance(config, Mapping):
            raise ConfigError("config", "expected a JSON object, {\"hidden_size\": …, \"num_hidden_layers\": …}")
        counted = ""
        inner = config.get("text_config")
        if isinstance(inner, Mapping) and "hidden_size" not in config:
            counted = "the language model in text_config"
            towers = [key for key in config if key.endswith("_config") and key != "text_config"
                      and isinstance(config[key], Mapping)]
            if towers:
                counted += f"; not counted: {excerpt(', '.join(towers))}, nor any projector joining it to the language model"
            config = {**inner, "_name_or_path": inner.get("_name_or_path") or config.get("_name_or_path")}
        _refuse_other_attention(config)
        architecture = _architecture(config)
        traits = ARCHITECTURES[architecture]
        if not traits.latent and config.get("kv_lora_rank") not in (None, False):
            raise ConfigError("kv_lora_rank", f"latent attention on {architecture}: calc reads it only in DeepSeek-V2 "
                                              f"and DeepSeek-V3 configs, whose other fields say how the latent is used")
        layers = _whole(config, "num_hidden_layers")
        hidden = _whole(config, "hidden_size")
        heads = _whole(config, "num_attention_heads")
        kv_heads = _whole(config, "num_key_value_heads", default=heads)
        if kv_heads > heads:
            raise ConfigError("num_key_value_heads", f"{kv_heads} is more than num_attention_heads ({heads})")
        if heads % kv_heads:
            raise ConfigError("num_key_value_heads", f"{kv_heads} does not divide num_attention_heads ({heads})")
        head_dim = _whole(config, "head_dim", default=None)
        latent = _latent(config, layers) if traits.latent else {}
        if latent:  # a latent model's query and key heads are qk_nope + qk_rope wide
            head_dim = latent["qk_nope_head_dim"] + latent["qk_rope_head_dim"]
        if head_dim is None and hidden % heads:
            raise ConfigError("hidden_size", f"{hidden} is not a multiple of num_attention_heads ({heads}) and no head_dim is given")
        experts = _whole(config, "num_local_experts", default=None)
        if experts is None:
            experts = _whole(config, "num_experts", default=None)
        if experts is None:
            experts = _whole(config, "n_routed_experts", default=1)
        chosen = _whole(config, "num_experts_per_tok", default=1) if experts > 1 else 1
        if chosen > experts:
            raise ConfigError("num_experts_per_tok", f"{chosen} is more than num_local_experts ({experts})")
        return cls(
            name=name or model_name(str(config.get("_name_or_path") or _first(config.get("architectures")) or "custom model")),
            source=source or "config.json supplied by the reader",
            num_hidden_layers=layers,
            hidden_size=hidden,
            num_attention_heads=heads,
            num_key_value_heads=kv_heads,
            intermediate_size=_whole(config, "intermediate_size"),
            vocab_size=_whole(config, "vocab_size"),
            tie_word_embeddings=_flag(config, "tie_word_embeddings", default=traits.tied),
            max_position_embeddings=_whole(config, "max_position_embeddings", default=0, minimum=0),
            head_dim_given=head_dim,
            qkv_bias=traits.qkv_bias or _flag(config, "attention_bias"),
            output_bias=_flag(config, "attention_bias"),
            mlp_bias=_flag(config, "mlp_bias"),
            qk_norm=traits.qk_norm,
            num_local_experts=experts,
            num_experts_per_tok=chosen,
            sliding_window=_window(config),
            architecture=architecture,
            counted=counted,
            window_layers=_window_layers(config, layers) if traits.alternating else None,
            sandwich_norms=traits.sandwich_norms,
            router_bias=traits.router_bias,
            **latent,
            rope_theta=_rope_theta(config),
            rope_scaling=_rope_scaling(config),
        )


@dataclass(frozen=True)
class Traits:
    """What an architecture implies beyond its config's fields."""

    qkv_bias: bool = False
    qk_norm: bool = False
    latent: bool = False           # DeepSeek's multi-head latent attention and DeepSeekMoE fields
    router_bias: bool = False      # DeepSeek-V3's router keeps a bias per routed expert
    alternating: bool = False      # Gemma 2: sliding-window and full-attention layers alternate
    sandwich_norms: bool = False   # Gemma 2: a norm before and after attention and feed-forward
    tied: bool = False             # Gemma ties its embedding to its output head unless the config says not


ARCHITECTURES: dict[str, Traits] = {
    "LlamaForCausalLM": Traits(),
    "MistralForCausalLM": Traits(),
    "MixtralForCausalLM": Traits(),
    "Qwen2ForCausalLM": Traits(qkv_bias=True),
    "Qwen3ForCausalLM": Traits(qk_norm=True),
    "DeepseekV2ForCausalLM": Traits(latent=True),
    "DeepseekV3ForCausalLM": Traits(latent=True, router_bias=True),
    "Gemma2ForCausalLM": Traits(alternating=True, sandwich_norms=True, tied=True),
}
_MODEL_TYPES = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "mixtral": "MixtralForCausalLM",
                "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM", "deepseek_v2": "DeepseekV2ForCausalLM",
                "deepseek_v3": "DeepseekV3ForCausalLM", "gemma2": "Gemma2ForCausalLM"}
_LARGEST_SENSIBLE = 10 ** 7


def _architecture(config: Mapping[str, Any]) -> str:
    """The config's architecture, if calc knows how to count it; Llama-style when it says nothing."""
    named = config.get("architectures")
    if named is not None:
        if not isinstance(named, list) or not named or not all(isinstance(a, str) for a in named):
            raise ConfigError("architectures", f"expected a list of names such as [\"LlamaForCausalLM\"], got {as_json_excerpt(named)}")
        for name in named:
            if name in ARCHITECTURES:
                return name
        raise ConfigError("architectures", f"{excerpt(', '.join(named))} is not an architecture calc can size "
                                           f"(it knows {', '.join(ARCHITECTURES)})")
    model_type = config.get("model_type")
    if model_type is None:
        return "LlamaForCausalLM"
    if not isinstance(model_type, str) or model_type not in _MODEL_TYPES:
        raise ConfigError("model_type", f"{as_json_excerpt(model_type)} is not an architecture calc can size "
                                        f"(it knows {', '.join(sorted(_MODEL_TYPES))})")
    return _MODEL_TYPES[model_type]


_OTHER_ATTENTION = {
    "multi_query": "Falcon-style attention names its shared heads this way, not with num_key_value_heads",
    "n_head_kv": "Falcon-style attention names its KV heads this way, not with num_key_value_heads",
    "num_kv_heads": "Falcon-style attention names its KV heads this way, not with num_key_value_heads",
}


def _refuse_other_attention(config: Mapping[str, Any]) -> None:
    """A config that describes its attention in fields calc does not read is refused by name, never
    sized as if it were multi-head."""
    for key, why in _OTHER_ATTENTION.items():
        if key in config and config[key] not in (None, False):
            raise ConfigError(key, f"{why}; calc cannot size this attention yet")


def _latent(config: Mapping[str, Any], layers: int) -> dict[str, Any]:
    """DeepSeek-V2/V3's latent attention and DeepSeekMoE fields, each checked."""
    fields = {
        "kv_lora_rank": _whole(config, "kv_lora_rank"),
        "q_lora_rank": _whole(config, "q_lora_rank", default=None),
        "qk_rope_head_dim": _whole(config, "qk_rope_head_dim"),
        "qk_nope_head_dim": _whole(config, "qk_nope_head_dim"),
        "v_head_dim": _whole(config, "v_head_dim"),
        "n_shared_experts": _whole(config, "n_shared_experts", default=0, minimum=0),
        "moe_intermediate_size": _whole(config, "moe_intermediate_size", default=0, minimum=0),
        "first_k_dense_replace": _whole(config, "first_k_dense_replace", default=0, minimum=0),
    }
    if fields["first_k_dense_replace"] > layers:
        raise ConfigError("first_k_dense_replace", f"{fields['first_k_dense_replace']:,} is more than "
                                                   f"num_hidden_layers ({layers:,})")
    if _whole(config, "moe_layer_freq", default=1) != 1:
        raise ConfigError("moe_layer_freq", "calc counts only configs where every layer after the dense ones is "
                                            "a mixture of experts (moe_layer_freq 1)")
    if _whole(config, "n_routed_experts", default=1) > 1 and not fields["moe_intermediate_size"]:
        raise ConfigError("moe_intermediate_size", "missing; calc needs it to count the routed experts")
    return fields


def _window_layers(config: Mapping[str, Any], layers: int) -> int | None:
    """Gemma 2 alternates: even-numbered layers (0, 2, …) use the window, odd ones attend to every
    token. A config's own `layer_types`, when given, says which layers are which."""
    if not _window(config):
        return None
    kinds = config.get("layer_types")
    if kinds is None:
        return (layers + 1) // 2
    if not isinstance(kinds, list) or len(kinds) != layers or not all(
            k in ("sliding_attention", "full_attention") for k in kinds):
        raise ConfigError("layer_types", f"expected one of \"sliding_attention\" or \"full_attention\" for each "
                                         f"of the {layers:,} layers")
    return kinds.count("sliding_attention")


def _window(config: Mapping[str, Any]) -> int | None:
    """Sliding-window attention caps the cache, unless the config switches the window off."""
    if not _flag(config, "use_sliding_window", default=True):
        return None
    return _whole(config, "sliding_window", default=None)


_LARGEST_ROPE_THETA = 10 ** 12


def _rope_theta(config: Mapping[str, Any]) -> float:
    """RoPE's base; absent or null means 10,000, the default of the Llama code and of RoFormer."""
    value = config.get("rope_theta")
    if value is None:
        return 10_000.0
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise ConfigError("rope_theta", f"expected a number such as 500000.0, got {as_json_excerpt(value)}")
    if not 1 < value <= _LARGEST_ROPE_THETA:
        raise ConfigError("rope_theta", f"must be more than 1 and at most {_LARGEST_ROPE_THETA:,}, got {as_json_excerpt(value)}")
    return float(value)


def _rope_scaling(config: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """rope_scaling's plain entries (names, numbers, flags), sorted, so a Model stays hashable; lists such
    as longrope's per-pair factors are dropped, since calc.documents.position refuses that rule by name anyway."""
    value = config.get("rope_scaling")
    if value is None:
        return ()
    if not isinstance(value, Mapping):
        raise ConfigError("rope_scaling", f"expected an object such as {{\"rope_type\": \"llama3\", …}}, got {as_json_excerpt(value)}")
    return tuple(sorted((str(k), v) for k, v in value.items()
                        if v is None or isinstance(v, (str, bool, int, float))))


def _whole(config: Mapping[str, Any], key: str, default: Any = ..., minimum: int = 1) -> Any:
    if key not in config or config[key] is None:
        if default is ...:
            raise ConfigError(key, "missing; calc needs it to size the model")
        return default
    value = config[key]
    if isinstance(value, float) and value != value:
        raise ConfigError(key, "expected a whole number, got NaN")
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        raise ConfigError(key, f"expected a whole number, got {value}")
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != int(value):
        raise ConfigError(key, f"expected a whole number, got {as_json_excerpt(value)}")
    value = int(value)
    shown = f"{value:,}" if abs(value) < 10 ** 15 else f"{float(value):.3g}"
    if value < minimum:
        raise ConfigError(key, f"must be at least {minimum}, got {shown}")
    if value > _LARGEST_SENSIBLE:
        raise ConfigError(key, f"{shown} is larger than any real model uses")
    return value


def _flag(config: Mapping[str, Any], key: str, default: bool = False) -> bool:
    """A true/false field; absent or null means the default, as for every other field."""
    value = config.get(key)
    if value is None:
        return default
    if not isinstance(value, bool):
        raise ConfigError(key, f"expected true or false, got {as_json_excerpt(value)}")
    return value


def as_json_excerpt(value: Any) -> str:
    """A config value as the reader pasted it: strings keep their quotes."""
    return excerpt(as_json(value))


def _first(items: Any) -> Any:
    return items[0] if isinstance(items, list) and items else None


LLAMA_3_1_8B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 131072,
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "rope_scaling": {
        "factor": 8.0,
        "high_freq_factor": 4.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}

LLAMA_3_1_70B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 8192,
    "intermediate_size": 28672,
    "max_position_embeddings": 131072,
    "num_attention_heads": 64,
    "num_hidden_layers": 80,
    "num_key_value_heads": 8,
    "rope_scaling": {
        "factor": 8.0,
        "high_freq_factor": 4.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}

LLAMA_3_1_405B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "hidden_size": 16384,
    "intermediate_size": 53248,
    "max_position_embeddings": 131072,
    "num_attention_heads": 128,
    "num_hidden_layers": 126,
    "num_key_value_heads": 8,
    "rope_scaling": {
        "factor": 8.0,
        "high_freq_factor": 4.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "rope_theta": 500000.0,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}

LLAMA_3_2_1B_CONFIG = {
    "architectures": ["LlamaForCausalLM"],
    "head_dim": 64,
    "hidden_size": 2048,
    "intermediate_size": 8192,
    "max_position_embeddings": 131072,
    "num_attention_heads": 32,
    "num_hidden_layers": 16,
    "num_key_value_heads": 8,
    "rope_scaling": {
        "factor": 32.0,
        "high_freq_factor": 4.0,
        "low_freq_factor": 1.0,
        "original_max_position_embeddings": 8192,
        "rope_type": "llama3",
    },
    "rope_theta": 500000.0,
    "tie_word_embeddings": True,
    "torch_dtype": "bfloat16",
    "vocab_size": 128256,
}

MIXTRAL_8X7B_CONFIG = {
    "architectures": ["MixtralForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "mixtral",
    "num_attention_heads": 32,
    "num_experts_per_tok": 2,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "num_local_experts": 8,
    "rms_norm_eps": 1e-05,
    "rope_theta": 1000000.0,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 32000,
}

_HF = "config.json of meta-llama/{} on the Hugging Face Hub"
MIXTRAL_SOURCE = "https://huggingface.co/mistralai/Mixtral-8x7B-v0.1/blob/main/config.json"

LLAMA_3_1_8B = Model.from_config(LLAMA_3_1_8B_CONFIG, "Llama 3.1 8B Instruct", _HF.format("Llama-3.1-8B-Instruct"))
LLAMA_3_1_70B = Model.from_config(LLAMA_3_1_70B_CONFIG, "Llama 3.1 70B Instruct", _HF.format("Llama-3.1-70B-Instruct"))
LLAMA_3_1_405B = Model.from_config(LLAMA_3_1_405B_CONFIG, "Llama 3.1 405B Instruct", _HF.format("Llama-3.1-405B-Instruct"))
LLAMA_3_2_1B = Model.from_config(LLAMA_3_2_1B_CONFIG, "Llama 3.2 1B Instruct", _HF.format("Llama-3.2-1B-Instruct"))
MIXTRAL_8X7B = Model.from_config(MIXTRAL_8X7B_CONFIG, "Mixtral 8x7B v0.1", MIXTRAL_SOURCE)

CATALOGUE: dict[str, Model] = {
    "llama-3.1-8b": LLAMA_3_1_8B,
    "llama-3.1-70b": LLAMA_3_1_70B,
    "llama-3.1-405b": LLAMA_3_1_405B,
    "llama-3.2-1b": LLAMA_3_2_1B,
    "mixtral-8x7b": MIXTRAL_8X7B,
}


# Models document 07 compares attention on, each from its published config.json (the fields calc
# reads; the rest — rope scaling, routing scores, soft-capping — change no count calc makes).
DEEPSEEK_V2_CONFIG = {
    "architectures": ["DeepseekV2ForCausalLM"],
    "first_k_dense_replace": 1,
    "hidden_size": 5120,
    "intermediate_size": 12288,
    "kv_lora_rank": 512,
    "max_position_embeddings": 163840,
    "model_type": "deepseek_v2",
    "moe_intermediate_size": 1536,
    "moe_layer_freq": 1,
    "n_routed_experts": 160,
    "n_shared_experts": 2,
    "num_attention_heads": 128,
    "num_experts_per_tok": 6,
    "num_hidden_layers": 60,
    "num_key_value_heads": 128,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "v_head_dim": 128,
    "vocab_size": 102400,
}

DEEPSEEK_V3_CONFIG = {
    "architectures": ["DeepseekV3ForCausalLM"],
    "first_k_dense_replace": 3,
    "hidden_size": 7168,
    "intermediate_size": 18432,
    "kv_lora_rank": 512,
    "max_position_embeddings": 163840,
    "model_type": "deepseek_v3",
    "moe_intermediate_size": 2048,
    "moe_layer_freq": 1,
    "n_routed_experts": 256,
    "n_shared_experts": 1,
    "num_attention_heads": 128,
    "num_experts_per_tok": 8,
    "num_hidden_layers": 61,
    "num_key_value_heads": 128,
    "q_lora_rank": 1536,
    "qk_nope_head_dim": 128,
    "qk_rope_head_dim": 64,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "v_head_dim": 128,
    "vocab_size": 129280,
}

MISTRAL_7B_CONFIG = {
    "architectures": ["MistralForCausalLM"],
    "hidden_size": 4096,
    "intermediate_size": 14336,
    "max_position_embeddings": 32768,
    "model_type": "mistral",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 8,
    "rope_theta": 10000.0,
    "sliding_window": 4096,
    "tie_word_embeddings": False,
    "torch_dtype": "bfloat16",
    "vocab_size": 32000,
}

GEMMA_2_9B_CONFIG = {
    "architectures": ["Gemma2ForCausalLM"],
    "cache_implementation": "hybrid",
    "head_dim": 256,
    "hidden_size": 3584,
    "intermediate_size": 14336,
    "max_position_embeddings": 8192,
    "model_type": "gemma2",
    "num_attention_heads": 16,
    "num_hidden_layers": 42,
    "num_key_value_heads": 8,
    "query_pre_attn_scalar": 256,
    "sliding_window": 4096,
    "torch_dtype": "float32",
    "vocab_size": 256000,
}

_HUB = "config.json of {}, https://huggingface.co/{}/blob/main/config.json"

DEEPSEEK_V2 = Model.from_config(DEEPSEEK_V2_CONFIG, "DeepSeek-V2", _HUB.format("deepseek-ai/DeepSeek-V2", "deepseek-ai/DeepSeek-V2"))
DEEPSEEK_V3 = Model.from_config(DEEPSEEK_V3_CONFIG, "DeepSeek-V3", _HUB.format("deepseek-ai/DeepSeek-V3", "deepseek-ai/DeepSeek-V3"))
MISTRAL_7B = Model.from_config(MISTRAL_7B_CONFIG, "Mistral 7B v0.1", _HUB.format("mistralai/Mistral-7B-v0.1", "mistralai/Mistral-7B-v0.1"))
GEMMA_2_9B = Model.from_config(GEMMA_2_9B_CONFIG, "Gemma 2 9B", _HUB.format("google/gemma-2-9b", "google/gemma-2-9b"))

ATTENTION_MODELS: dict[str, Model] = {
    "deepseek-v2": DEEPSEEK_V2,
    "deepseek-v3": DEEPSEEK_V3,
    "mistral-7b": MISTRAL_7B,
    "gemma-2-9b": GEMMA_2_9B,
}


def short_key(key: str, catalogue: dict[str, Model] | None = None) -> str:
    """A catalogue model's name in facts: its size (`8b`, `8x7b`) where no other model in the catalogue
    ends the same way, else its whole key, dashes and dots as underscores (`qwen_3_8b`), so adding a
    model never quietly takes another's place under `family.8b`."""
    catalogue = CATALOGUE if catalogue is None else catalogue
    size = key.split("-")[-1]
    if sum(other.split("-")[-1] == size for other in catalogue) == 1:
        return size
    return key.replace("-", "_").replace(".", "_")
