"""A vLLM launch line read as capacity: which flags set which rung of the ladder, and the users
the line admits on each GPU of its tensor-parallel group.

Every flag calc reads is data below, with its default and the source the default was checked in.
A line is read the way a POSIX shell and vLLM's argument parser read it: quotes, backslash-newline
continuations, `--flag value` and `--flag=value`, the last of a repeated flag winning. Anything
calc cannot read or cannot honour comes back as a message naming it, never as a guess.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace

from . import kvcache
from . import memory, steptime
from ..specs.release import PINNED
from ..specs.cards import Card
from ..core.echo import excerpt
from ..specs.models import Model
from ..specs.repositories import KNOWN_MODELS, MODELS
from ..specs.precision import BF16, FP8, Precision
from ..specs.stack import Serving, Stack
from ..core.arith import field, made_of, term
from ..core.units import COUNT, FRACTION, GIB_HELD, TOKENS, Result, GiB, Unit, given, grouped

VLLM_SERVE_DOCS = "https://docs.vllm.ai/en/stable/cli/serve/"
ARG_UTILS = PINNED.cite("vllm/engine/arg_utils.py", "EngineArgs")
CACHE_CONFIG = PINNED.cite("vllm/config/cache.py", "CacheConfig")
SCHEDULER_CONFIG = PINNED.cite("vllm/config/scheduler.py", "SchedulerConfig")
PARALLEL_CONFIG = PINNED.cite("vllm/config/parallel.py", "ParallelConfig")
MODEL_CONFIG = PINNED.cite("vllm/config/model.py", "ModelConfig")
LORA_CONFIG = PINNED.cite("vllm/config/lora.py", "LoRAConfig")
OFFLOAD_CONFIG = PINNED.cite("vllm/config/offload.py", "UVAOffloadConfig")

LONGEST_COMMAND = 4_000
LONGEST_COUNT = 16  # digits and a suffix: more than any count a flag takes
LARGEST_COUNT = 10 ** 12  # above any count a flag takes (a terabyte of cache), and exact in a float
MAX_LORA_RANKS = (1, 8, 16, 32, 64, 128, 256, 320, 512)  # vllm/config/lora.py, MaxLoRARanks
# vllm/config/cache.py, CacheConfig.block_size takes any whole number above 0; the attention backend
# then insists: FlashAttention on blocks that are a multiple of 16 (vllm/v1/attention/backends/flash_attn.py,
# FlashAttentionBackend.get_supported_kernel_block_sizes), FlashInfer MLA on 32 or 64.
BLOCK_MULTIPLE = 16
FLASHINFER_MLA_BLOCKS = (32, 64)
FRACTION_SHORT = Unit("fraction", 1, "", 1, exact_up_to=6)  # 0.9 as vLLM writes it, 0.92 in full
GIB_WHOLE = Unit("GiB", GiB, "GiB", 0)
DEFAULT_UTILISATION = PINNED.gpu_memory_utilization

# vLLM's refusal of a token budget below the sequence cap when both are set (left unset, the cap is
# lowered to the budget instead: vllm/engine/arg_utils.py, _set_default_max_num_seqs_and_batched_tokens_args).
VERIFY_ARGS = ("vllm/config/scheduler.py, SchedulerConfig.verify_max_model_len (vLLM 0.33.0): “max_num_batched_tokens (…) "
               "must be greater than or equal to max_num_seqs (…)”")


@dataclass(frozen=True)
class Flag:
    """One vLLM flag: its default as vLLM states it, what it does, whether calc models it, and where
    the default was read."""

    name: str
    default: str
    does: str
    modelled: bool
    source: str
    takes_value: bool = True
    many: bool = False  # takes one or more values, as argparse's nargs='+'


_LARGEST, _LARGE, _SMALL = PINNED.batch_tiers
FLAGS: tuple[Flag, ...] = (
    Flag("--gpu-memory-utilization", f"{DEFAULT_UTILISATION:g}", "the share of the card's memory this engine may hold: "
         "the pool", True, f"{CACHE_CONFIG}.gpu_memory_utilization = {DEFAULT_UTILISATION:g}"),
    Flag("--max-model-len", "the model's max_position_embeddings",
         "the longest sequence, prompt and output, the engine accepts: the worst case one user is charged",
         True, f"{MODEL_CONFIG}.max_model_len (None: derived from the model's config; -1 or auto: the longest the "
               f"cache holds); accepts 8k (8,000) or 8K (8,192)"),
    Flag("--max-num-seqs", f"{_LARGE.seqs} on a card of {_LARGE.from_gib} GiB or more that is not an A100, {_SMALL.seqs} "
         "on other GPUs",
         "the most sequences one step may hold: a cap on admitted users that memory never lifts, and the rows of the "
         "sampler's profile", True, PINNED.batch_source),
    Flag("--max-num-batched-tokens", f"{_LARGE.tokens_serve} under vllm serve on a card of {_LARGE.from_gib} to "
         f"{_LARGEST.from_gib} GiB that is not an A100, {_LARGEST.tokens_serve} from {_LARGEST.from_gib} GiB, "
         f"{_SMALL.tokens_serve} on other GPUs",
         "the tokens one step processes: the prefill chunk, and the forward pass the activation peak is profiled on",
         True, PINNED.batch_source),
    Flag("--kv-cache-dtype", "auto (the model's dtype)", "the cache's bytes per element", True,
         f"{CACHE_CONFIG}.cache_dtype"),
    Flag("--enable-prefix-caching", "on", "shares full blocks of a common prefix (document 10); the pool is the same",
         False, PINNED.cite("vllm/engine/arg_utils.py", "_set_default_chunked_prefill_and_prefix_caching_args"),
         takes_value=False),
    Flag("--no-enable-prefix-caching", "", "turns prefix caching off; the pool is the same", False,
         f"{CACHE_CONFIG} (argparse BooleanOptionalAction)", takes_value=False),
    Flag("--tensor-parallel-size", "1", "splits every layer's heads and matrices across this many GPUs", True,
         f"{PARALLEL_CONFIG}.tensor_parallel_size = 1"),
    Flag("--pipeline-parallel-size", "1", "splits the layers across this many GPUs in stages", True,
         f"{PARALLEL_CONFIG}.pipeline_parallel_size = 1"),
    Flag("--data-parallel-size", "1", "runs this many whole copies of the engine, each on its own GPUs with the "
         "ladder shown here, so users multiply by it", False, f"{PARALLEL_CONFIG}.data_parallel_size = 1"),
    Flag("--quantization", "None (as the checkpoint says)", "the weights' format", True,
         f"{MODEL_CONFIG}.quantization"),
    Flag("--dtype", "auto (bf16 for these checkpoints)", "the weights' and activations' 16-bit type", True,
         f"{MODEL_CONFIG}.dtype"),
    Flag("--block-size", "16, or what the attention backend needs", "tokens per cache block", True,
         f"{CACHE_CONFIG}.DEFAULT_BLOCK_SIZE = 16; any whole number above 0 that the attention backend takes "
         "(FlashAttention: a multiple of 16)"),
    Flag("--kv-cache-memory-bytes", "None (sized from the utilisation)",
         "the KV cache per GPU in bytes; when set, the utilisation is ignored", True,
         f"{CACHE_CONFIG}.kv_cache_memory_bytes"),
    Flag("--enforce-eager", "off", "skips CUDA graph capture: no graph estimate is taken from the pool, and small "
         "steps launch every kernel from the host", True, f"{MODEL_CONFIG}.enforce_eager = False",
         takes_value=False),
    Flag("--enable-lora", "off", "holds LoRA adapter slots on each GPU", True, f"{ARG_UTILS}.enable_lora",
         takes_value=False),
    Flag("--max-loras", "1", "LoRA adapters one batch may use: the slots held on each GPU", True,
         f"{LORA_CONFIG}.max_loras = 1"),
    Flag("--max-lora-rank", "16", "the rank every slot is sized for", True,
         f"{LORA_CONFIG}.max_lora_rank = 16, one of 1, 8, 16, 32, 64, 128, 256, 320, 512"),
    Flag("--max-cpu-loras", "max-loras", "adapters kept in host memory, ready to load; beyond it they are "
         "read from disk again", False, f"{LORA_CONFIG}.max_cpu_loras"),
    Flag("--lora-modules", "none", "names adapters to serve; each takes a GPU slot while a request uses it", False,
         "vllm/entrypoints/openai/cli_args.py (nargs='+')", many=True),
    Flag("--fully-sharded-loras", "off", "shards the LoRA matrices fully across tensor-parallel GPUs, which on "
         "one GPU changes nothing", False, f"{LORA_CONFIG}.fully_sharded_loras = False", takes_value=False),
    Flag("--cpu-offload-gb", "0", "GiB of weights per GPU kept in host memory and streamed in each pass", True,
         f"{OFFLOAD_CONFIG}.cpu_offload_gb = 0"),
    Flag("--enable-chunked-prefill", "on", "splits long prompts into steps of max-num-batched-tokens", False,
         f"{SCHEDULER_CONFIG}.enable_chunked_prefill = True", takes_value=False),
    Flag("--model", "", "the model, in the api_server form", True, MODEL_CONFIG),
    *(Flag(name, "", "serving, naming or logging only", False, VLLM_SERVE_DOCS)
      for name in ("--host", "--port", "--api-key", "--download-dir", "--seed", "--tokenizer",
                   "--revision", "--chat-template", "--generation-config", "--uvicorn-log-level", "--max-log-len",
                   "--tool-call-parser", "--root-path")),
    Flag("--served-model-name", "", "serving, naming or logging only", False, f"{VLLM_SERVE_DOCS} (nargs='+')",
         many=True),
    *(Flag(name, "", "serving, naming or logging only", False, VLLM_SERVE_DOCS, takes_value=False)
      for name in ("--trust-remote-code", "--disable-log-requests", "--disable-log-stats", "--enable-auto-tool-choice")),
)
BY_NAME = {f.name: f for f in FLAGS}
# Flags of older releases that vLLM 0.33.0's parser no longer has, so a line with one fails to start.
REMOVED = {
    "--swap-space": ("V1 preempts by recomputing, never by swapping blocks to host memory, and the flag went with "
                     "V0's swap (" + PINNED.cite("vllm/v1/core/sched/scheduler.py", "Scheduler._preempt_request") + ")"),
    "--preemption-mode": "V1 has one preemption policy, recompute, and the flag went with V0",
}
ALIASES = {"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size", "-dp": "--data-parallel-size",
           "-q": "--quantization"}

QUANTIZATIONS = {"fp8": FP8}  # the one method vLLM applies to a 16-bit checkpoint as it loads
PRE_QUANTISED = ("awq", "awq_marlin", "gptq", "gptq_marlin")  # these read a checkpoint already in the format
KV_DTYPES = {"auto": None, "bfloat16": BF16, "float16": BF16, "fp8": FP8, "fp8_e4m3": FP8, "fp8_e5m2": FP8}
SIXTEEN_BIT = ("auto", "bfloat16", "float16", "half")
DASHES = "\u2012\u2013\u2014\u2015\u2212"  # figure, en and em dashes, the horizontal bar, minus
_HUMAN = re.compile(r"(\d+(?:\.\d+)?)([kKmMgG]?)")
_DECIMAL = {"": 1, "k": 10 ** 3, "m": 10 ** 6, "g": 10 ** 9}
_BINARY = {"K": 2 ** 10, "M": 2 ** 20, "G": 2 ** 30}


class LaunchError(ValueError):
    """A launch line calc cannot read or cannot honour, with the reason in words."""


def tokens_of(text: str) -> list[str]:
    """The words a POSIX shell would pass: quotes removed, backslash escapes and continuations read.
    shlex.split would do nearly the same, but Pyodide's trimmed standard library has no shlex, and
    shlex keeps a backslash before a line break where a shell joins the lines."""
    text = text.replace("\r\n", "\n").strip()
    words: list[str] = []
    word: list[str] = []
    started, quote, at = False, "", 0
    while at < len(text):
        char = text[at]
        if quote == "'":
            quote, word = ("", word) if char == "'" else (quote, word + [char])
        elif quote == '"':
            if char == '"':
                quote = ""
            elif char == "\\" and text[at + 1:at + 2] in ('"', "\\", "$", "`", "\n") and at + 1 < len(text):
                at += 1
                word += [] if text[at] == "\n" else [text[at]]
            else:
                word.append(char)
        elif char in "'\"":
            quote, started = char, True
        elif char == "#" and not started:  # a shell comment runs to the end of its line
            while at + 1 < len(text) and text[at + 1] != "\n":
                at += 1
        elif char == "\\":
            if at + 1 == len(text):
                raise LaunchError("the line cannot be split into words: it ends with a lone backslash")
            if re.match(r"[ \t]+\n", text[at + 1:]):
                raise LaunchError("a backslash is followed by spaces before the line break, so the shell does "
                                  "not continue the line: delete the spaces after the backslash")
            at += 1
            if text[at] != "\n":  # a backslash before a line break continues the line
                word.append(text[at])
                started = True
        elif char == "\n":
            raise LaunchError("the line breaks without a backslash at the end: join it, or end each line with \\")
        elif char.isspace():
            if started:
                words.append("".join(word))
            word, started = [], False
        else:
            word.append(char)
            started = True
        at += 1
    if quote:
        raise LaunchError("the line cannot be split into words: a quotation mark is never closed")
    if started:
        words.append("".join(word))
    if not words:
        raise LaunchError("paste a vllm serve command line")
    return words


def _whole(flag: str, text: str, human: bool = False) -> int:
    if len(text) > LONGEST_COUNT:
        raise LaunchError(f"{flag} {excerpt(text, 16)} is too long to be a count")
    match = _HUMAN.fullmatch(text) if human else None
    if match and match.group(2):
        number, suffix = match.groups()
        if suffix in _BINARY and "." in number:
            raise LaunchError(f"{flag} {text}: a binary suffix ({suffix}) takes a whole number; "
                              f"did you mean {number}{suffix.lower()}?")
        value = int(float(number) * (_DECIMAL.get(suffix) or _BINARY[suffix]))
    elif re.fullmatch(r"\d+", text):
        value = int(text)
    else:
        raise LaunchError(f"{flag} takes a whole number, not “{excerpt(text, 24)}”")
    if value > LARGEST_COUNT:
        raise LaunchError(f"{flag} {excerpt(text, 16)} is beyond any count vLLM takes "
                          f"(calc reads counts up to {grouped(LARGEST_COUNT)})")
    return value


def _number(flag: str, text: str, example: str) -> float:
    """A decimal number as written on a command line; Python's float() would also take 1_5, inf or nan."""
    if not re.fullmatch(r"\d+(\.\d*)?|\.\d+", text):
        raise LaunchError(f"{flag} takes a number such as {example}, not “{excerpt(text, 24)}”")
    return float(text)


def _fraction(flag: str, text: str) -> float:
    value = _number(flag, text, "0.9")
    if not 0 < value <= 1:
        hint = f"; {text} reads as a percentage, write {value / 100:g}" if 1 < value <= 100 else ""
        raise LaunchError(f"{flag} must be above 0 and at most 1 (a fraction of the card){hint}")
    return value


def _model(name: str) -> tuple[Model, Precision | None]:
    key = name.strip().lower().rstrip("/")
    if key not in MODELS:
        raise LaunchError(f"“{excerpt(name, 32)}” is not a model calc has the config of: name one by its Hugging Face "
                          f"id, such as meta-llama/Llama-3.1-8B-Instruct ({KNOWN_MODELS})")
    return MODELS[key]


def _flags(words: list[str]) -> tuple[str, list[tuple[str, str | None]]]:
    """The model named and the flags in order, after the command itself."""
    while words and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", words[0]):
        words = words[1:]  # VAR=value before a command sets the command's environment
    if words[:2] == ["vllm", "serve"]:
        rest = words[2:]
    elif len(words) >= 3 and re.fullmatch(r"python[0-9.]*", words[0]) and words[1] == "-m" \
            and words[2] == "vllm.entrypoints.openai.api_server":
        rest = words[3:]
    else:
        raise LaunchError("start the line with vllm serve MODEL, or python -m vllm.entrypoints.openai.api_server "
                          "--model MODEL (environment settings such as CUDA_VISIBLE_DEVICES=0 may come first)")
    model, flags = "", []
    index = 0
    while index < len(rest):
        word = rest[index]
        if word and word[0] in DASHES:
            raise LaunchError(f"“{excerpt(word, 24)}” starts with a dash, not two hyphens (a text editor may have "
                              f"joined them): type it as --{excerpt(word.lstrip(DASHES), 32)}")
        if not word.startswith("-"):
            if model or flags:
                raise LaunchError(f"“{excerpt(word, 40)}” stands alone where a flag belongs")
            model = word
            index += 1
            continue
        name, has_equals, value = word.partition("=")
        if name.startswith("--"):
            name = "--" + name[2:].replace("_", "-")  # vLLM's parser reads --max_model_len as --max-model-len
        name = ALIASES.get(name, name)
        if name == "--lora-target-modules":
            raise LaunchError("--lora-target-modules narrows which layers get LoRA slots; calc sizes slots on all "
                              "seven linear layers of each block and cannot honour a narrower list")
        if name in REMOVED:
            raise LaunchError(f"{name} is not a flag of {PINNED.name}, which refuses the line: {REMOVED[name]}")
        flag = BY_NAME.get(name)
        if flag is None:
            raise LaunchError(f"{name[:40]} is not a vLLM flag this calculator knows")
        if flag.takes_value and not has_equals:
            if index + 1 >= len(rest) or (rest[index + 1].startswith("--")):
                raise LaunchError(f"{name} needs a value after it")
            value = rest[index + 1]
            index += 1
            while flag.many and index + 1 < len(rest) and not rest[index + 1].startswith("-"):
                index += 1  # further values of a flag that takes several, such as --lora-modules a=/x b=/y
        elif not flag.takes_value and has_equals:
            raise LaunchError(f"{name} is a switch and takes no value")
        flags.append((name, value if flag.takes_value else None))
        index += 1
    return model, flags


def read(text: str, stack: Stack) -> Stack:
    """The stack a launch line describes on the stack's card; LaunchError says what cannot be read."""
    if len(text) > LONGEST_COMMAND:
        raise LaunchError(f"that is over {LONGEST_COMMAND:,} characters; a launch line is a few hundred")
    model_name, flags = _flags(tokens_of(text))
    given_flags = dict(flags)
    notes = []
    repeated = sorted({name for name, _ in flags if sum(1 for n, _ in flags if n == name) > 1})
    if repeated:
        notes.append(f"{', '.join(repeated)} given more than once: the last wins, as vLLM's parser takes it")
    if "--model" in given_flags:
        if model_name:
            raise LaunchError("the model is named twice: as the first word after vllm serve and with --model")
        model_name = given_flags["--model"]
    if not model_name:
        raise LaunchError("name the model: vllm serve meta-llama/Llama-3.1-8B-Instruct …")
    model, checkpoint_precision = _model(model_name)
    weights = checkpoint_precision or BF16
    if "--dtype" in given_flags and given_flags["--dtype"] not in SIXTEEN_BIT:
        raise LaunchError(f"--dtype {given_flags['--dtype'][:20]}: calc holds weights in 16 bits or fewer "
                          f"(auto, bfloat16, float16, half)")
    if "--quantization" in given_flags:
        method = given_flags["--quantization"] or ""
        if checkpoint_precision and QUANTIZATIONS.get(method) != checkpoint_precision:
            raise LaunchError(f"--quantization {excerpt(method, 20)} contradicts the checkpoint, which is stored in "
                              f"{checkpoint_precision.name}")
        if method in PRE_QUANTISED:
            family = method.split("_")[0]
            raise LaunchError(f"--quantization {method} reads a checkpoint already quantised to {family}; "
                              f"{excerpt(model_name, 60)} is stored in bf16, and vLLM refuses it. Only fp8 quantises "
                              f"a 16-bit checkpoint as it loads, and calc knows no {family} checkpoint")
        if method not in QUANTIZATIONS:
            raise LaunchError(f"--quantization {excerpt(method, 20)}: calc models fp8, the one method vLLM applies "
                              f"to a 16-bit checkpoint as it loads")
        weights = QUANTIZATIONS[method]
    kv = BF16
    if "--kv-cache-dtype" in given_flags:
        dtype = given_flags["--kv-cache-dtype"]
        if dtype not in KV_DTYPES:
            raise LaunchError(f"--kv-cache-dtype {dtype[:20]}: calc models {', '.join(KV_DTYPES)}")
        kv = KV_DTYPES[dtype] or BF16
    utilisation = DEFAULT_UTILISATION
    if "--gpu-memory-utilization" in given_flags:
        utilisation = _fraction("--gpu-memory-utilization", given_flags["--gpu-memory-utilization"])
    limit = model.max_position_embeddings
    auto_length = (given_flags.get("--max-model-len") or "").lower() in ("auto", "-1")
    if "--max-model-len" in given_flags and not auto_length:
        limit = _whole("--max-model-len", given_flags["--max-model-len"], human=True)
        if limit < 1:
            raise LaunchError("--max-model-len must be at least one token")
        if limit > model.max_position_embeddings:
            raise LaunchError(f"--max-model-len {grouped(limit)} is beyond {model.name}'s "
                              f"{grouped(model.max_position_embeddings)} positions; vLLM refuses it")
    tp = _whole("--tensor-parallel-size", given_flags.get("--tensor-parallel-size", "1"))
    _check_tensor_parallel(model, tp)
    if _whole("--pipeline-parallel-size", given_flags.get("--pipeline-parallel-size", "1")) != 1:
        raise LaunchError("--pipeline-parallel-size above 1 splits the layers into stages; this calculator "
                          "models one tensor-parallel group (document 11 covers pipelines)")
    if _number("--cpu-offload-gb", given_flags.get("--cpu-offload-gb") or "0", "4") != 0:
        raise LaunchError("--cpu-offload-gb streams weights from host memory each pass; calc does not model it")
    default_block = PINNED.block_size(stack.card, model.is_latent)
    block = _whole("--block-size", given_flags.get("--block-size") or str(default_block))
    if model.is_latent and default_block != 16 and block not in FLASHINFER_MLA_BLOCKS:
        raise LaunchError(f"--block-size {grouped(block)}: FlashInfer MLA, the backend vLLM picks for {model.name} on "
                          f"{stack.card.name}, takes blocks of {' or '.join(map(str, FLASHINFER_MLA_BLOCKS))} tokens")
    if block < 1 or block % BLOCK_MULTIPLE:
        raise LaunchError(f"--block-size {grouped(block)}: the attention backend vLLM picks for {model.name} on "
                          f"{stack.card.name} takes blocks of a multiple of {BLOCK_MULTIPLE} tokens")
    seqs = _optional_whole(given_flags, "--max-num-seqs")
    chunk = _optional_whole(given_flags, "--max-num-batched-tokens", human=True)
    if seqs is not None and seqs < 1 or chunk is not None and chunk < 1:
        raise LaunchError("--max-num-seqs and --max-num-batched-tokens must be at least 1")
    if chunk is not None and seqs is not None and chunk < seqs:
        raise LaunchError(f"--max-num-batched-tokens ({grouped(chunk)}) must be at least --max-num-seqs "
                          f"({grouped(seqs)}); vLLM refuses it ({VERIFY_ARGS})")
    if chunk is not None and seqs is None and chunk < default_max_num_seqs(stack.card):
        notes.append(f"--max-num-seqs: lowered from vLLM's default on {stack.card.name}, "
                     f"{grouped(default_max_num_seqs(stack.card))}, to the token budget, {grouped(chunk)} "
                     f"(vllm/engine/arg_utils.py, _set_default_max_num_seqs_and_batched_tokens_args)")
    kv_bytes = _optional_whole(given_flags, "--kv-cache-memory-bytes", human=True)
    if kv_bytes is not None and kv_bytes < 1:
        raise LaunchError("--kv-cache-memory-bytes must be at least one byte")
    if kv_bytes is not None and "--gpu-memory-utilization" in given_flags:
        notes.append("--gpu-memory-utilization: ignored, since --kv-cache-memory-bytes sets the cache outright")
    loras, rank = _lora(given_flags, model, tp, notes)
    notes += [f"{name}: {BY_NAME[name].does}; no change to capacity per GPU"
              for name in dict.fromkeys(n for n, _ in flags) if not BY_NAME[name].modelled]
    serving = Serving(command=text, tensor_parallel=tp, max_num_seqs=seqs, max_num_batched_tokens=chunk,
                      kv_cache_memory_bytes=kv_bytes, max_loras=loras, max_lora_rank=rank,
                      enforce_eager="--enforce-eager" in given_flags, notes="; ".join(notes))
    launched = replace(stack, model=model, weight_precision=weights, kv_precision=kv, engine=PINNED,
                       gpu_memory_utilization=utilisation, context_limit=limit, block_size=block,
                       typical_conversation=min(stack.typical_conversation, limit), serving=serving)
    one = shard(launched)
    if kv_bytes is not None and one.pool.value > stack.card.engine_capacity.value:
        raise LaunchError(f"--kv-cache-memory-bytes asks for a cache of {one.kv_budget}; with the weights, reserve and "
                          f"adapters that is {one.pool} per GPU, more than the {stack.card.engine_capacity} "
                          f"{stack.card.name} offers the engine")
    if one.kv_budget.value <= 0:
        held = (f"the weights per GPU ({one.weights}), what the profile holds ({one.reserve}) and the adapter slots "
                f"({one.lora})" if one.lora.value else
                f"the weights per GPU ({one.weights}) and what the profile holds ({one.reserve})")
        raise LaunchError(f"on {stack.card.name} {held} fill the pool ({one.pool}) and leave no cache; vLLM stops at "
                          f"start-up. {_remedy(launched, one)}")
    if auto_length:
        limit = min(model.max_position_embeddings, max(int(one.token_capacity.value), block))
        notes.insert(0, f"--max-model-len {given_flags['--max-model-len']}: vLLM takes the longest length the cache "
                        f"holds for one sequence, here {grouped(limit)} tokens")
        launched = replace(launched, context_limit=limit, typical_conversation=min(stack.typical_conversation, limit),
                           serving=replace(serving, notes="; ".join(notes)))
        one = shard(launched)
    if one.token_capacity.value < one.tokens_per_user.value:
        raise LaunchError(f"on {stack.card.name} this line leaves a KV budget of {one.kv_budget} per GPU, less than one "
                          f"sequence of --max-model-len needs; vLLM stops at start-up. {_remedy(launched, one)}, "
                          f"or lower --max-model-len (auto picks the longest that fits)")
    return launched


def _remedy(stack: Stack, one: Shard) -> str:
    """What to change, biggest lever first, when the pool leaves too little cache."""
    serving = stack.serving
    if serving.kv_cache_memory_bytes is not None:
        return "Raise --kv-cache-memory-bytes"
    levers = []
    if one.lora.value > one.weights.value:
        levers.append("lower --max-loras or --max-lora-rank")
    if stack.gpu_memory_utilization < DEFAULT_UTILISATION:
        levers.append(f"raise --gpu-memory-utilization (now {stack.gpu_memory_utilization:g})")
    levers += ["raise --tensor-parallel-size", "quantise the weights"] if one.lora.value <= one.weights.value else \
        ["raise --tensor-parallel-size"]
    text = ", ".join(levers[:-1]) + f", or {levers[-1]}"
    return text[0].upper() + text[1:]


def _optional_whole(flags: dict[str, str | None], name: str, human: bool = False) -> int | None:
    return _whole(name, flags[name] or "", human) if name in flags else None


def _check_tensor_parallel(model: Model, tp: int) -> None:
    if tp < 1 or tp > 64:
        raise LaunchError("--tensor-parallel-size must be between 1 and 64 GPUs")
    if model.num_attention_heads % tp:
        raise LaunchError(f"--tensor-parallel-size {tp} does not divide {model.name}'s "
                          f"{model.num_attention_heads} attention heads; vLLM refuses it")
    kv_heads = model.num_key_value_heads
    if not model.is_latent and kv_heads % tp and tp % kv_heads:
        raise LaunchError(f"--tensor-parallel-size {tp} and {model.name}'s {kv_heads} KV heads: one must divide "
                          f"the other")


def _lora(flags: dict[str, str | None], model: Model, tp: int, notes: list[str]) -> tuple[int, int]:
    """LoRA slots and their rank: (0, rank) when LoRA is off."""
    if "--fully-sharded-loras" in flags and tp > 1:
        raise LaunchError("--fully-sharded-loras splits every LoRA matrix across the GPUs; calc sizes the default, "
                          "half-sharded slots and cannot honour it above one GPU")
    rank = _whole("--max-lora-rank", flags.get("--max-lora-rank") or "16")
    if rank not in MAX_LORA_RANKS:
        raise LaunchError(f"--max-lora-rank {rank}: vLLM accepts {', '.join(map(str, MAX_LORA_RANKS))}")
    slots = _whole("--max-loras", flags.get("--max-loras") or "1")
    if not 1 <= slots <= 1_024:
        raise LaunchError("--max-loras must be between 1 and 1,024 adapters")
    if "--enable-lora" not in flags:
        stray = [name for name in ("--max-loras", "--max-lora-rank", "--lora-modules") if name in flags]
        if stray:
            notes.append(f"{', '.join(stray)} without --enable-lora: no adapter slots are held")
        return 0, rank
    if model.is_mixture_of_experts or model.is_latent:
        raise LaunchError(f"calc sizes LoRA adapters for dense models; {model.name}'s experts or latent "
                          f"attention are shaped differently")
    return slots, rank


def default_max_num_seqs(card: Card) -> int:
    return PINNED.batch_defaults(card)[1]


def default_max_num_batched_tokens(card: Card) -> int:
    return PINNED.batch_defaults(card)[0]


@dataclass(frozen=True)
class Shard:
    """The ladder on one GPU of a tensor-parallel group, and what the scheduler's cap admits."""

    accounting: memory.Accounting
    tensor_parallel: Result
    pool: Result
    weights: Result
    reserve: Result
    lora: Result
    kv_budget: Result
    kv_heads: Result
    per_token: Result
    token_capacity: Result
    tokens_per_user: Result
    tokens_per_user_paged: Result
    users_worst: Result
    users_paged: Result
    max_num_seqs: Result
    max_num_batched_tokens: Result
    admitted_worst: Result
    admitted_paged: Result
    concurrency: Result

    @property
    def binds(self) -> str:
        """What caps the paged count, in a phrase."""
        if self.kv_budget.value <= 0:
            return "nothing, since the weights, what the profile holds and the adapters fill the pool and leave no cache"
        if self.users_paged.value > self.max_num_seqs.value:
            return "--max-num-seqs, the scheduler's cap, below what memory admits"
        return "the KV budget, cache memory"


def shard(stack: Stack) -> Shard:
    """Per GPU, as the engine accounts it (calc.engine.memory): pool − weights ÷ TP − activation peak −
    non-torch − CUDA graphs − LoRA slots = KV budget; ÷ the GPU's share of each token = tokens; ÷ tokens
    per user = users, capped by --max-num-seqs."""
    accounting = memory.of_stack(stack)
    base = kvcache.ladder(replace(stack, serving=replace(stack.serving, tensor_parallel=1, max_loras=0,
                                                         kv_cache_memory_bytes=None)))
    serving = stack.serving
    tp = serving.tensor_parallel
    pool = accounting.pool
    if serving.kv_cache_memory_bytes is not None:
        held = (term(accounting.weights, str(accounting.weights)) + term(accounting.reserve, str(accounting.reserve))
                + term(accounting.lora, str(accounting.lora)) + term(accounting.available, str(accounting.available)))
        pool = held.result(GIB_HELD, "weights per GPU + what the profile holds + LoRA slots + --kv-cache-memory-bytes",
                           shown=f"{GIB_HELD.show(held.value)}; the utilisation is not used")
    capacity = accounting.tokens
    worst = kvcache.users_by_tokens(capacity, base.tokens_per_user)
    paged = kvcache.users_by_tokens(capacity, base.tokens_per_user_paged)
    seqs = _restated(accounting.max_num_seqs, COUNT, "--max-num-seqs" if serving.max_num_seqs else
                     f"--max-num-seqs, {stack.engine.name}'s default on {stack.card.name}")
    return Shard(
        accounting=accounting,
        tensor_parallel=given(tp, COUNT, "--tensor-parallel-size"),
        pool=pool,
        weights=accounting.weights,
        reserve=accounting.reserve,
        lora=accounting.lora,
        kv_budget=accounting.available,
        kv_heads=kv_heads_per_gpu(stack.model, tp),
        per_token=accounting.per_token,
        token_capacity=capacity,
        tokens_per_user=base.tokens_per_user,
        tokens_per_user_paged=base.tokens_per_user_paged,
        users_worst=worst,
        users_paged=paged,
        max_num_seqs=seqs,
        max_num_batched_tokens=_restated(accounting.max_num_batched_tokens, COUNT,
                                         "--max-num-batched-tokens, tokens a step"),
        admitted_worst=_capped(worst, seqs),
        admitted_paged=_capped(paged, seqs),
        concurrency=accounting.concurrency,
    )


def _restated(read: Result, unit: Unit, what: str) -> Result:
    """A number the accounting holds, restated under its flag's name: shown as a given, made of that number."""
    return Result(read.value, unit, formula=what, worked=unit.show(read.value), inputs=made_of(read))


def kv_heads_per_gpu(model: Model, tp: int) -> Result:
    """Each GPU holds its share of the KV heads; past one head each, a head is copied to several GPUs."""
    heads = model.num_key_value_heads
    read = made_of(field(model, "num_key_value_heads"))
    if tp <= heads:  # ⌊heads ÷ tp⌋, written without the floor
        return Result(heads // tp, COUNT, formula="KV heads ÷ tensor-parallel size",
                      worked=f"{heads} ÷ {tp} = {heads // tp}", inputs=read)
    return Result(1, COUNT, formula="one KV head per GPU, copied when the GPUs outnumber the heads",
                  worked=f"{tp} GPUs > {heads} KV heads: 1 each, every head held {tp // heads} times", inputs=read)


def _capped(users: Result, seqs: Result) -> Result:
    value = min(users.value, seqs.value)
    return Result(value, COUNT, formula="the lesser of memory's users and --max-num-seqs",
                  worked=(f"the lesser of {grouped(users.value)} by memory and {grouped(seqs.value)} by "
                          f"--max-num-seqs: {grouped(value)}"), inputs=made_of(users, seqs))


def utilisation_curve(stack: Stack) -> list[dict]:
    """Users admitted, worst case and paged and capped, against --gpu-memory-utilization."""
    steps = [round(0.5 + 0.02 * i, 2) for i in range(26)]
    rows = [shard(replace(stack, gpu_memory_utilization=u)) for u in steps]
    return [
        {"name": "paged, memory alone", "x": steps, "y": [int(r.users_paged.value) for r in rows]},
        {"name": "paged, capped by --max-num-seqs", "x": steps, "y": [int(r.admitted_paged.value) for r in rows]},
        {"name": "worst case", "x": steps, "y": [int(r.admitted_worst.value) for r in rows]},
    ]


TP_EXAMPLE = ("vllm serve meta-llama/Llama-3.1-70B-Instruct --tensor-parallel-size 4 --max-model-len 8192 "
              "--gpu-memory-utilization 0.9")
LORA_EXAMPLE = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192 "
                "--enable-lora --max-loras 8 --max-lora-rank 16")
CAP_EXAMPLE = ("vllm serve meta-llama/Llama-3.1-8B-Instruct --gpu-memory-utilization 0.9 --max-model-len 8192 "
               "--kv-cache-dtype fp8 --max-num-seqs 256")


def examples(stack: Stack) -> dict[str, object]:
    """Three launch lines on the stack's card: a 70B across four GPUs, eight LoRA slots, and a cap that binds."""
    made = {}
    for name, line in (("tp", TP_EXAMPLE), ("lora", LORA_EXAMPLE), ("cap", CAP_EXAMPLE)):
        try:
            made[name] = {"command": line, "shard": shard(read(line, stack))}
        except LaunchError as err:
            made[name] = {"command": line, "refused": str(err)}
    return made


SGLANG_ARGS = "https://docs.sglang.io/advanced_features/server_arguments.html (sgl-project/sglang, server_args.py)"
TGI_LAUNCHER = "https://huggingface.co/docs/text-generation-inference/reference/launcher"
TGI_DEFAULTS = "huggingface/text-generation-inference PR #1727 (launcher defaults from the model's config, capped)"
TRT_SERVE = "https://nvidia.github.io/TensorRT-LLM/commands/trtllm-serve.html"
TRT_KV = "https://nvidia.github.io/TensorRT-LLM/examples/kvcacheconfig.html (free_gpu_memory_fraction = 0.9)"
LLAMA_SERVER = ("https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md; src/llama-context.cpp "
                "(n_ctx_seq = n_ctx ÷ n_seq_max unless the KV cache is unified)")
TRT_BUILD_CONFIG = ("NVIDIA/TensorRT-LLM tensorrt_llm/builder.py, BuildConfig.max_batch_size = 2048 and "
                    "max_num_tokens = 8192 at commit 008b2b8d; tensorrt_llm/commands/serve.py takes both as its "
                    "defaults (default=BuildConfig…)")
LLAMA_ARG = ("https://github.com/ggml-org/llama.cpp/blob/master/common/arg.cpp (-np: “default: -1, auto”; --kv-unified: "
             "“default: enabled if number of slots is auto”); tools/server/server.cpp (auto: four slots, unified cache)")
SKYRL_MAPPING = ("https://github.com/NovaSky-AI/SkyRL/blob/main/skyrl-train/skyrl_train/inference_engines/"
                 "ray_wrapped_inference_engine.py (passes gpu_memory_utilization to SGLang as mem_fraction_static)")
LIGHTEVAL_SEQS = ("https://github.com/huggingface/lighteval/pull/588 (“For max_num_seqs, the default is 256”; "
                  "VLLMModelConfig.max_num_seqs = 256)")
TRT_FREE_FRACTION = 0.9
LLAMA_SLOTS = 4  # an example: four llama.cpp slots


@dataclass(frozen=True)
class Knob:
    """Another engine's capacity setting: what it is called, its default, what it does, and where it was read."""

    engine: str
    flag: str
    default: str
    does: str
    source: str


KNOBS: dict[str, Knob] = {
    "sglang_fraction": Knob("SGLang", "--mem-fraction-static", "chosen from the card's memory when unset, below "
                            "vLLM's default",
                            "the share of memory for the weights and the KV pool; activations and CUDA graphs live in "
                            "the rest", SGLANG_ARGS),
    "sglang_requests": Knob("SGLang", "--max-running-requests", "derived from the pool when unset",
                            "the cap on requests running at once: vLLM's --max-num-seqs", SGLANG_ARGS),
    "sglang_length": Knob("SGLang", "--context-length", "the model's config.json",
                          "the longest sequence: vLLM's --max-model-len", SGLANG_ARGS),
    "sglang_kv": Knob("SGLang", "--kv-cache-dtype", "auto (the model's dtype)", "the cache's element type; fp8_e4m3 "
                      "and fp8_e5m2 halve it", SGLANG_ARGS),
    "sglang_tp": Knob("SGLang", "--tp-size (--tp)", "1", "tensor-parallel GPUs", SGLANG_ARGS),
    "tgi_total": Knob("TGI", "--max-total-tokens", "from the model's config, capped",
                      "prompt plus output of one request: its memory budget", f"{TGI_LAUNCHER}; {TGI_DEFAULTS}"),
    "tgi_batch": Knob("TGI", "--max-batch-total-tokens", "measured from free memory on paged models",
                      "tokens the whole batch may hold: the token capacity", TGI_LAUNCHER),
    "tgi_fraction": Knob("TGI", "--cuda-memory-fraction", "1.0", "the share of visible memory the server may use",
                         TGI_LAUNCHER),
    "tgi_requests": Knob("TGI", "--max-concurrent-requests", "128",
                         "requests the router accepts before refusing new ones", TGI_LAUNCHER),
    "tgi_shards": Knob("TGI", "--num-shard", "every visible GPU", "tensor-parallel shards", TGI_LAUNCHER),
    "trt_fraction": Knob("TensorRT-LLM", "--kv_cache_free_gpu_memory_fraction", "0.9",
                         "the share of memory still free after the weights and buffers that goes to the KV cache",
                         f"{TRT_SERVE}; {TRT_KV}"),
    "trt_batch": Knob("TensorRT-LLM", "--max_batch_size", "2048 (BuildConfig, commit 008b2b8d)",
                      "requests the scheduler holds at once", f"{TRT_SERVE}; {TRT_BUILD_CONFIG}"),
    "trt_tokens": Knob("TensorRT-LLM", "--max_num_tokens", "8192 (BuildConfig, commit 008b2b8d)",
                       "tokens one step processes", f"{TRT_SERVE}; {TRT_BUILD_CONFIG}"),
    "trt_length": Knob("TensorRT-LLM", "--max_seq_len", "the model's config", "the longest sequence", TRT_SERVE),
    "trt_tp": Knob("TensorRT-LLM", "--tp_size", "1", "tensor-parallel GPUs", TRT_SERVE),
    "llama_ctx": Knob("llama.cpp", "-c, --ctx-size", "0: the model's trained context",
                      "the total context, shared among the slots", LLAMA_SERVER),
    "llama_slots": Knob("llama.cpp", "-np, --parallel", "−1: four slots sharing one unified cache",
                        "slots: sequences decoded together; set explicitly, each is given ctx-size ÷ slots",
                        f"{LLAMA_SERVER}; {LLAMA_ARG}"),
    "llama_gpu": Knob("llama.cpp", "-ngl, --n-gpu-layers", "auto",
                      "layers placed on the GPU; the rest run on the CPU from host memory", LLAMA_SERVER),
}


def other_engines(stack: Stack, one: Shard) -> dict[str, Result]:
    """The same card and model under other engines' memory rules, for the two comparisons the page makes."""
    base = kvcache.ladder(stack)
    fraction = given(TRT_FREE_FRACTION, FRACTION, "kv_cache_free_gpu_memory_fraction")
    # Shown in tokens: the budget itself is in the arithmetic of the token count.
    budget = (term(fraction, f"{TRT_FREE_FRACTION:g}") * (term(base.capacity, str(base.capacity))
              - term(one.weights, str(one.weights)) - term(one.reserve, str(one.reserve)))).result(
        GIB_HELD, "free fraction × (capacity − weights − vLLM's profiled reserve)")
    trt_tokens = kvcache.token_capacity(budget, one.per_token, stack.block_size)
    total = LLAMA_SLOTS * stack.context_limit
    slots, ctx = given(LLAMA_SLOTS, COUNT, "-np set explicitly, an example"), given(total, TOKENS, "-c, an example")
    return {
        "sglang_budget": (term(base.pool, str(base.pool)) - term(one.weights, str(one.weights))).result(
            GIB_HELD, "capacity × fraction − weights (activations outside it)"),
        "activation_gap": _restated(one.reserve, GIB_HELD, "what vLLM's profile takes inside its pool"),
        "trt_fraction": fraction,
        "trt_capacity": Result(trt_tokens.value, TOKENS,
                               formula="free fraction × (capacity − weights − vLLM's profiled reserve), in whole blocks",
                               worked=(f"{budget.worked}; {trt_tokens.worked}"), inputs=made_of(budget, trt_tokens)),
        "trt_users": kvcache.users_by_tokens(trt_tokens, one.tokens_per_user_paged),
        "llama_slots": slots,
        "llama_total": ctx,
        # ⌊ctx ÷ slots⌋, written without the floor
        "llama_per_slot": Result(total // LLAMA_SLOTS, TOKENS, formula="ctx-size ÷ slots",
                                 worked=f"{grouped(total)} ÷ {LLAMA_SLOTS} = {TOKENS.show(total // LLAMA_SLOTS)}",
                                 inputs=made_of(ctx, slots)),
    }


REPLICA_GPUS = 2  # an example: two GPUs for a model that fits on one


def replicas_against_split(stack: Stack, gpus: int = REPLICA_GPUS) -> dict[str, Result]:
    """The same GPUs used two ways: whole copies of the engine (data parallelism), or one engine split
    across them (tensor parallelism)."""
    one = shard(stack)
    split = shard(replace(stack, serving=replace(stack.serving, tensor_parallel=gpus)))
    count = given(gpus, COUNT, "GPUs, an example")
    return {
        "gpus": count,
        "replicas": (term(count, str(gpus)) * term(one.users_paged, grouped(one.users_paged.value))).result(
            COUNT, "GPUs × one GPU's paged users"),
        "split": split.users_paged,
    }


def section(stack: Stack) -> dict[str, object]:
    one = shard(stack)
    return {
        "shard": one,
        "command": stack.serving.command,
        "notes": stack.serving.notes or "none: every flag on the line changes capacity",
        "utilisation": given(stack.gpu_memory_utilization, FRACTION_SHORT, "--gpu-memory-utilization"),
        "max_model_len": given(stack.context_limit, TOKENS, "--max-model-len"),
        "default_utilisation": given(DEFAULT_UTILISATION, FRACTION_SHORT, f"vLLM's default ({CACHE_CONFIG})"),
        "defaults": engine_defaults(stack),
        "default_lora_rank": given(16, COUNT, f"vLLM's default --max-lora-rank ({LORA_CONFIG})"),
        "blocks": _blocks(one.token_capacity, stack),
        "seqs_bind": one.users_paged.value > one.max_num_seqs.value,
        "binds": one.binds,
        "at_default": _at_default_utilisation(stack),
        "knobs": KNOBS,
        "examples": examples(stack),
        "others": other_engines(stack, one),
        "replicas": replicas_against_split(stack),
    }


def _blocks(capacity: Result, stack: Stack) -> Result:
    blocks = term(capacity, str(capacity)) / term(field(stack, "block_size"), str(stack.block_size))
    return blocks.result(COUNT, "token capacity ÷ block size", shown=f"{grouped(blocks.value)} blocks")


def engine_defaults(stack: Stack) -> dict[str, Result]:
    """The release's scheduler defaults by card tier and entry point, read from its tiers."""
    source = stack.engine.batch_source
    largest, large, small = stack.engine.batch_tiers[0], stack.engine.batch_tiers[-2], stack.engine.batch_tiers[-1]
    tokens_here, seqs_here = stack.engine.batch_defaults(stack.card)
    return {
        "seqs_large": given(large.seqs, COUNT, f"max_num_seqs on a card of {large.from_gib} GiB or more ({source})"),
        "seqs_small": given(small.seqs, COUNT, f"max_num_seqs on a smaller card or an A100 ({source})"),
        "tokens_serve": given(large.tokens_serve, TOKENS, f"max_num_batched_tokens under vllm serve from "
                                                          f"{large.from_gib} GiB ({source})"),
        "tokens_class": given(large.tokens_class, TOKENS, f"max_num_batched_tokens for the LLM class from "
                                                          f"{large.from_gib} GiB, and under vllm serve from "
                                                          f"{largest.from_gib} GiB ({source})"),
        "tokens_small": given(small.tokens_serve, TOKENS, f"max_num_batched_tokens under vllm serve on a smaller card "
                                                          f"({source})"),
        "large_card": given(large.from_gib * GiB, GIB_WHOLE, f"NVML's total from which the larger defaults apply ({source})"),
        "largest_card": given(largest.from_gib * GiB, GIB_WHOLE, f"NVML's total from which vllm serve gets "
                                                                 f"{grouped(largest.tokens_serve)} ({source})"),
        "tokens_here": given(tokens_here, TOKENS, f"max_num_batched_tokens under vllm serve on the {stack.card.name}"),
        "seqs_here": given(seqs_here, COUNT, f"max_num_seqs on the {stack.card.name}"),
    }


def _at_default_utilisation(stack: Stack) -> Result:
    """The same line without --gpu-memory-utilization: vLLM's current default instead."""
    users = shard(replace(stack, gpu_memory_utilization=DEFAULT_UTILISATION)).users_paged
    return Result(users.value, COUNT, formula=f"paged users at the default utilisation, {DEFAULT_UTILISATION:g}",
                  worked=users.worked, inputs=users.inputs or made_of(users))


def release_section(stack: Stack) -> dict[str, object]:
    """The release the runbook describes: its name, its defaults as its code states them, and what
    they come to on the stack's card."""
    release = stack.engine
    memory = kvcache.ladder(stack).accounting
    tokens, seqs = int(memory.max_num_batched_tokens.value), int(memory.max_num_seqs.value)
    sizes = release.capture_sizes(stack.card, tokens, seqs)
    return {
        "name": release.name, "version": release.version, "wheel": release.wheel,
        "defaults": {d.name.replace(" ", "_").lower(): d for d in release.defaults},
        "utilisation": given(release.gpu_memory_utilization, FRACTION, "gpu_memory_utilization by default"),
        "max_num_batched_tokens": memory.max_num_batched_tokens, "max_num_seqs": memory.max_num_seqs,
        "capture_sizes": given(len(sizes), COUNT, "batch sizes CUDA graphs are captured for"),
        "largest_capture": given(sizes[-1] if sizes else 0, COUNT, "the largest"),
        "block_size": given(stack.block_size, COUNT, "tokens per block"),
        "overhead": steptime.overhead(),
        "batch_source": release.batch_source, "memory_source": release.memory_source,
        "requested_source": release.requested_source, "blocks_source": release.blocks_source,
        "concurrency_source": release.concurrency_source,
    }
