"""Models, described by the fields of their config.json and nothing else."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from .echo import as_json, excerpt, model_name


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
    rope_theta: float = 10_000.0
    rope_scaling: tuple[tuple[str, Any], ...] = ()

    @property
    def head_dim(self) -> int:
        if self.head_dim_given is not None:
            return self.head_dim_given
        return self.hidden_size // self.num_attention_heads

    @property
    def rope_scaling_fields(self) -> dict[str, Any]:
        """config.json's rope_scaling as a dict (empty when the config has none); calc.position reads it."""
        return dict(self.rope_scaling)

    @property
    def query_heads_per_kv_head(self) -> int:
        return self.num_attention_heads // self.num_key_value_heads

    @property
    def is_mixture_of_experts(self) -> bool:
        return self.num_local_experts > 1

    def tokens_cached(self, tokens: int) -> int:
        """Tokens whose keys and values a sequence of `tokens` keeps: a sliding window caps them."""
        return min(tokens, self.sliding_window) if self.sliding_window else tokens

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
        layers = _whole(config, "num_hidden_layers")
        hidden = _whole(config, "hidden_size")
        heads = _whole(config, "num_attention_heads")
        kv_heads = _whole(config, "num_key_value_heads", default=heads)
        if kv_heads > heads:
            raise ConfigError("num_key_value_heads", f"{kv_heads} is more than num_attention_heads ({heads})")
        if heads % kv_heads:
            raise ConfigError("num_key_value_heads", f"{kv_heads} does not divide num_attention_heads ({heads})")
        head_dim = _whole(config, "head_dim", default=None)
        if head_dim is None and hidden % heads:
            raise ConfigError("hidden_size", f"{hidden} is not a multiple of num_attention_heads ({heads}) and no head_dim is given")
        experts = _whole(config, "num_local_experts", default=None)
        if experts is None:
            experts = _whole(config, "num_experts", default=1)
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
            tie_word_embeddings=_flag(config, "tie_word_embeddings"),
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
            rope_theta=_rope_theta(config),
            rope_scaling=_rope_scaling(config),
        )


@dataclass(frozen=True)
class Traits:
    """What an architecture implies beyond its config's fields."""

    qkv_bias: bool = False
    qk_norm: bool = False


ARCHITECTURES: dict[str, Traits] = {
    "LlamaForCausalLM": Traits(),
    "MistralForCausalLM": Traits(),
    "MixtralForCausalLM": Traits(),
    "Qwen2ForCausalLM": Traits(qkv_bias=True),
    "Qwen3ForCausalLM": Traits(qk_norm=True),
}
_MODEL_TYPES = {"llama": "LlamaForCausalLM", "mistral": "MistralForCausalLM", "mixtral": "MixtralForCausalLM",
                "qwen2": "Qwen2ForCausalLM", "qwen3": "Qwen3ForCausalLM"}
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
    "kv_lora_rank": "latent attention (MLA): the cache holds a compressed latent per token and layer, not "
                    "num_key_value_heads keys and values, so the KV head count it declares does not size it",
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
    as longrope's per-pair factors are dropped, since calc.position refuses that rule by name anyway."""
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

_HF = "config.json of meta-llama/{} on the Hugging Face Hub"

LLAMA_3_1_8B = Model.from_config(LLAMA_3_1_8B_CONFIG, "Llama 3.1 8B Instruct", _HF.format("Llama-3.1-8B-Instruct"))
LLAMA_3_1_70B = Model.from_config(LLAMA_3_1_70B_CONFIG, "Llama 3.1 70B Instruct", _HF.format("Llama-3.1-70B-Instruct"))
LLAMA_3_1_405B = Model.from_config(LLAMA_3_1_405B_CONFIG, "Llama 3.1 405B Instruct", _HF.format("Llama-3.1-405B-Instruct"))
LLAMA_3_2_1B = Model.from_config(LLAMA_3_2_1B_CONFIG, "Llama 3.2 1B Instruct", _HF.format("Llama-3.2-1B-Instruct"))

CATALOGUE: dict[str, Model] = {
    "llama-3.1-8b": LLAMA_3_1_8B,
    "llama-3.1-70b": LLAMA_3_1_70B,
    "llama-3.1-405b": LLAMA_3_1_405B,
    "llama-3.2-1b": LLAMA_3_2_1B,
}
