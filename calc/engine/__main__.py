"""The engine model from a shell: what the pages compute for one model on one card.

    python3 -m calc.engine [--model NAME_OR_CONFIG_JSON] [--card NAME] [--tensor-parallel N]
        [--gpu-memory-utilization U] [--kv-cache-dtype auto|fp8] [--max-model-len L] [--prompt P]
        [--batch B] [--context T] [--json]

Plain output is the memory ladder and the step times with their arithmetic; --json prints one object.
Bad input gets one line naming the flag, and exit status 2.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

from . import kvcache, timing
from ..specs.cards import CARDS
from ..fields import InputError, parse_config
from ..specs.models import CATALOGUE, Model
from ..specs.precision import BF16, FP8
from ..specs.repositories import MODELS
from ..specs.stack import REFERENCE, Stack
from ..core.units import GiB
from . import kernels

CARD_NAMES = {key: card for key, card in CARDS.items()} | {card.name.lower(): card for card in CARDS.values()}
MODEL_NAMES = ({key: model for key, model in CATALOGUE.items()} | {model.name.lower(): model for model in CATALOGUE.values()}
               | {repo: model for repo, (model, _) in MODELS.items()})
LONGEST_CONFIG_FILE = 1_000_000


class BadFlag(Exception):
    def __init__(self, flag: str, message: str):
        super().__init__(f"{flag}: {message}")


class Parser(argparse.ArgumentParser):
    def error(self, message: str):  # argparse's own messages, one line, status 2
        raise BadFlag("usage", message)


def _parser() -> Parser:
    parser = Parser(prog="python3 -m calc.engine", description=__doc__.splitlines()[0])
    parser.add_argument("--model", default=REFERENCE.model.name, help=f"a model by name ({', '.join(CATALOGUE)}) or a "
                        "path to a config.json")
    parser.add_argument("--card", default="h100-sxm", help=f"a card by name ({', '.join(CARDS)})")
    parser.add_argument("--tensor-parallel", default="1", help="GPUs the model is split across")
    parser.add_argument("--gpu-memory-utilization", default=f"{REFERENCE.gpu_memory_utilization:g}")
    parser.add_argument("--kv-cache-dtype", default="auto", help="auto or fp8")
    parser.add_argument("--max-model-len", default="", help=f"default: {REFERENCE.context_limit}, or the model's positions "
                        "if fewer")
    parser.add_argument("--prompt", default="", help=f"tokens prefilled (default: {REFERENCE.traffic.prompt_p50}, or "
                        "--max-model-len if less)")
    parser.add_argument("--batch", default="1", help="sequences in the decode step")
    parser.add_argument("--context", default=None, help="tokens each decoding sequence holds (default: prompt + 150)")
    parser.add_argument("--json", action="store_true", help="one JSON object instead of the worked ladder")
    return parser


def _whole(flag: str, text: str, least: int = 1, most: int = 10_000_000) -> int:
    if not (text.isascii() and text.isdigit()):
        raise BadFlag(flag, f"takes a whole number written in digits 0 to 9, not {text[:40]!r}")
    value = int(text)
    if not least <= value <= most:
        raise BadFlag(flag, f"must be between {least:,} and {most:,}, not {value:,}")
    return value


def _model(text: str) -> Model:
    if not text.strip():
        raise BadFlag("--model", "is empty: name a model calc knows or give a path to a config.json")
    known = MODEL_NAMES.get(text.lower())
    if known:
        return known
    path = Path(text)
    if not path.suffix == ".json" and not path.exists():
        raise BadFlag("--model", f"{text[:60]!r} is neither a model calc knows ({', '.join(CATALOGUE)}, or a Hugging "
                                 f"Face id such as meta-llama/Llama-3.1-70B-Instruct) nor a config.json")
    try:
        if not path.is_file():  # a directory, a device or a pipe: nothing with a size to trust
            raise BadFlag("--model", f"{text[:60]} is not a file: give the path of a config.json")
        with path.open("rb") as handle:
            raw = handle.read(LONGEST_CONFIG_FILE + 1)
        if len(raw) > LONGEST_CONFIG_FILE:
            raise BadFlag("--model", f"{text[:60]} is larger than a config.json ({LONGEST_CONFIG_FILE:,} bytes at most)")
        return parse_config(raw.decode("utf-8"))
    except OSError as err:
        raise BadFlag("--model", f"cannot read {text[:60]}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise BadFlag("--model", f"{text[:60]} is not UTF-8 text") from None
    except (InputError, ValueError) as err:
        raise BadFlag("--model", str(err)) from None


def stack_of(args: argparse.Namespace) -> tuple[Stack, int, int, int]:
    """The reference stack with the flags applied, and the prompt, batch and context they ask for."""
    card = CARD_NAMES.get(args.card.lower())
    if card is None:
        raise BadFlag("--card", f"{args.card[:40]!r} is not a card calc knows ({', '.join(CARDS)})")
    model = _model(args.model)
    if not re.fullmatch(r"[0-9]{0,3}(\.[0-9]{1,12})?", args.gpu_memory_utilization) or not args.gpu_memory_utilization:
        raise BadFlag("--gpu-memory-utilization", f"takes a number such as 0.9, not {args.gpu_memory_utilization[:20]!r}")
    utilisation = float(args.gpu_memory_utilization)
    if not 0 < utilisation <= 1:
        raise BadFlag("--gpu-memory-utilization", "must be above 0 and at most 1")
    if args.kv_cache_dtype not in ("auto", "fp8"):
        raise BadFlag("--kv-cache-dtype", f"takes auto or fp8, not {args.kv_cache_dtype[:20]!r}")
    tensor = _whole("--tensor-parallel", args.tensor_parallel, 1, 64)
    if model.num_attention_heads % tensor:
        raise BadFlag("--tensor-parallel", f"{tensor} does not divide {model.name}'s {model.num_attention_heads} heads")
    # A default is cut to what the model and the flags given allow, so an error names a flag the reader gave.
    limit_text = args.max_model_len or str(min(REFERENCE.context_limit, model.max_position_embeddings))
    limit = _whole("--max-model-len", limit_text, 1, model.max_position_embeddings)
    prompt = _whole("--prompt", args.prompt or str(min(REFERENCE.traffic.prompt_p50, limit)), 1, limit)
    batch = _whole("--batch", args.batch, 1, 100_000)
    context = _whole("--context", args.context, 1, limit) if args.context is not None else min(prompt + 150, limit)
    stack = replace(REFERENCE, model=model, card=card, gpu_memory_utilization=utilisation, context_limit=limit,
                    typical_conversation=min(REFERENCE.typical_conversation, limit),
                    kv_precision=FP8 if args.kv_cache_dtype == "fp8" else BF16,
                    serving=replace(REFERENCE.serving, tensor_parallel=tensor))
    return stack, prompt, batch, context


def refusal(stack: Stack) -> str:
    """Why vLLM would not start with this stack, in a sentence, or "" when it would: no memory left for
    the cache, or a cache that cannot hold one sequence of max_model_len (vllm/v1/core/kv_cache_utils.py,
    check_enough_kv_cache_memory)."""
    memory = kvcache.ladder(stack).accounting
    if not memory.fits:
        return (f"does not fit: the weights ({memory.weights}) and what the profile holds back ({memory.reserve}) leave "
                f"{memory.available} of the {memory.pool} pool for the cache; vLLM would not start")
    if memory.concurrency.value < 1:
        return (f"does not fit: one sequence of --max-model-len {stack.context_limit:,} needs more cache than the "
                f"{memory.tokens} the card holds; vLLM would not start (lower --max-model-len)")
    return ""


def admitted(stack: Stack, context: int) -> int:
    """Sequences of `context` tokens the cache holds, in whole blocks."""
    memory = kvcache.ladder(stack).accounting
    return int(memory.blocks.value) // kvcache.blocks_for(stack.model.tokens_cached(context), stack.block_size)


def report(stack: Stack, prompt: int, batch: int, context: int) -> dict:
    ladder = kvcache.ladder(stack)
    memory = ladder.accounting
    why = refusal(stack)
    held = admitted(stack, context) if not why else 0
    return {
        "engine": stack.engine.name,
        "model": stack.model.name,
        "card": stack.card.name,
        "tensor_parallel": memory.tensor,
        "fits": not why,
        "refusal": why,
        "kv_cache_gib": memory.available.value / GiB,
        "kv_cache_tokens": int(memory.tokens.value),
        "max_concurrency": memory.concurrency.value,
        "users_at_max_model_len": int(ladder.users_worst.value),
        "prefill_ms": None if why else timing.prefill_step(stack, prompt).time.value * 1000,
        "decode_step_ms": None if why else timing.decode_step(stack, batch, context).time.value * 1000,
        "prompt": prompt,
        "batch": batch,
        "context": context,
        "admitted_batch": held,
        "batch_fits": batch <= held,
        "kernels": kernels.measured(stack.card).provenance,
    }


def _plain(stack: Stack, prompt: int, batch: int, context: int) -> str:
    memory = kvcache.ladder(stack).accounting
    rungs = [("CUDA's total", memory.total), ("pool", memory.pool), ("weights", memory.weights),
             ("activation peak", memory.activation), ("non-torch", memory.non_torch),
             ("runner state", memory.runner_state), ("CUDA graphs", memory.graphs),
             ("KV cache", memory.available), ("blocks", memory.blocks), ("tokens", memory.tokens),
             ("concurrency", memory.concurrency)]
    lines = [f"{stack.engine.name} · {stack.model.name} on {stack.card.name}, tensor parallel {memory.tensor}", ""]
    lines += [f"  {name:<16} {str(rung):>18}   {rung.worked}" for name, rung in rungs]
    why = refusal(stack)
    if why:
        return "\n".join(lines + ["", f"  {why}"])
    prefill = timing.prefill_step(stack, prompt)
    step = timing.decode_step(stack, batch, context)
    lines += ["", "  as the engine logs it:"] + [f"    {line}" for line in memory.log_lines]
    lines += ["", f"  prefill of {prompt:,} tokens  {prefill.time}   {prefill.time.worked}",
              f"  decode step, {batch:,} × {context:,} tokens  {step.time}   {step.time.worked}"]
    held = admitted(stack, context)
    if batch > held:
        lines.append(f"  (the cache holds {held:,} sequences of {context:,} tokens: vLLM would run at most that many "
                     f"and queue or preempt the rest; this step is priced as asked)")
    lines += ["", f"  kernels: {kernels.measured(stack.card).provenance}"]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        stack, prompt, batch, context = stack_of(args)
        print(json.dumps(report(stack, prompt, batch, context), indent=2) if args.json else
              _plain(stack, prompt, batch, context))
    except BadFlag as err:
        print(f"python3 -m calc.engine: {err}", file=sys.stderr)
        return 2
    except BrokenPipeError:  # the reader's pipe closed early (| head): nothing more to say
        sys.stdout = None
    except OSError as err:  # stdout itself failed (a full disk): one line, not a traceback
        print(f"python3 -m calc.engine: cannot write the output: {err.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
