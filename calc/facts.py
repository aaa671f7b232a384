"""Every named number the documents refer to, computed from one stack and the documents' own inputs.

Content writes `{{ ladder.kv_budget }}`; the build looks the path up in `facts(stack, inputs)`.
The calculators call the same function with the reader's inputs, so a number on the
page and the number a calculator shows come from one computation.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator, Mapping

from .engine import kvcache
from .documents import phases
from .model.anatomy import count_parameters
from .specs.inputs import REFERENCE_INPUTS, CacheOps, DocumentInputs, PromptText, Sampling, Speculation, Stream
from .specs.models import CATALOGUE, Model, short_key
from .specs.stack import REFERENCE, Stack
from .core.units import MS_WHOLE, SECONDS, given


SECTIONS: dict[str, Callable[[Stack, DocumentInputs, "Facts"], object]] = {
    "stack": lambda stack, inputs, made: stack,
    "inputs": lambda stack, inputs, made: inputs,
    "model": lambda stack, inputs, made: stack.model,
    "card": lambda stack, inputs, made: stack.card,
    "traffic": lambda stack, inputs, made: stack.traffic,
    "params": lambda stack, inputs, made: count_parameters(stack.model),
    "weights": lambda stack, inputs, made: phases.weights(stack),
    "kv": lambda stack, inputs, made: phases.kv(stack, made["ladder"]),
    "ladder": lambda stack, inputs, made: kvcache.ladder(stack),
    "levers": lambda stack, inputs, made: kvcache.stacked_levers(stack),
    "family": lambda stack, inputs, made: {short_key(key): phases.model_cache(model, stack) for key, model in CATALOGUE.items()},
    "recompute": lambda stack, inputs, made: {
        "typical": kvcache.recompute_cost_ratio(stack.traffic.prompt_p50, stack.traffic.output_p50),
        "long": kvcache.recompute_cost_ratio(stack.traffic.prompt_p95, stack.traffic.output_long),
    },
    "read": lambda stack, inputs, made: phases.reads(stack, made["ladder"]),
    "promise": lambda stack, inputs, made: {
        "ttft": given(stack.promise.ttft_p95_s, SECONDS, "time to first token, p95"),
        "itl": given(stack.promise.itl_p95_s, MS_WHOLE, "inter-token latency, p95"),
    },
    "floor": lambda stack, inputs, made: phases.floors(stack, made["ladder"]),
    "long_context": lambda stack, inputs, made: phases.long_context(stack),
    "time": lambda stack, inputs, made: phases.times(stack, made["ladder"]),
    "workload": lambda stack, inputs, made: phases.workload(stack, made["ladder"]),
    "measured": lambda stack, inputs, made: phases.measurements(stack),
    "journey": lambda stack, inputs, made: _journey(stack),
    "hardware": lambda stack, inputs, made: _hardware(stack, made["ladder"]),
    "tokens": lambda stack, inputs, made: _tokens(stack, inputs.text),
    "anatomy": lambda stack, inputs, made: _anatomy(stack, stack.model),
    "mixtral": lambda stack, inputs, made: _mixtral(stack),
    "tied": lambda stack, inputs, made: _anatomy(stack, CATALOGUE["llama-3.2-1b"]),
    "sizes": lambda stack, inputs, made: _sizes(),
    "attention": lambda stack, inputs, made: _attention(stack),
    "position": lambda stack, inputs, made: _position(stack, inputs.priced_context),
    "formats": lambda stack, inputs, made: _formats(),
    "number": lambda stack, inputs, made: _number(inputs.stored_number),
    "precision": lambda stack, inputs, made: _precision(stack),
    "cacheops": lambda stack, inputs, made: _cacheops(stack, inputs.cache),
    "plan": lambda stack, inputs, made: _plan(stack),
    "parallel": lambda stack, inputs, made: _parallel(stack),
    "engines": lambda stack, inputs, made: _engines(stack),
    "lora": lambda stack, inputs, made: _lora(stack),
    "batching": lambda stack, inputs, made: _batching(stack),
    "startup": lambda stack, inputs, made: _startup(stack),
    "logread": lambda stack, inputs, made: _logread(stack),
    "engine": lambda stack, inputs, made: _release(stack),
    "sampling": lambda stack, inputs, made: _sampling(inputs.sampling),
    "speculative": lambda stack, inputs, made: _speculative(stack, inputs.speculation, inputs.sampling),
    "production": lambda stack, inputs, made: _production(stack, inputs.stream, inputs.cache),
    "start": lambda stack, inputs, made: _start(stack),
}


# Documents' own modules load when a page first asks for their section, so a calculator's Python
# starts without importing what its page never shows.
def _journey(stack: Stack) -> object:
    from .documents import journey
    return journey.journey(stack, stack.workload.prompt, stack.workload.output)


def _hardware(stack: Stack, ladder: kvcache.Ladder) -> object:
    from .documents import hardware
    return hardware.section(stack, ladder)


def _tokens(stack: Stack, text: PromptText) -> object:
    from .documents import tokens
    return tokens.section(stack, text)


def _anatomy(stack: Stack, model: Model) -> object:
    from .model import forward
    return forward.section(replace(stack, model=model))


def _mixtral(stack: Stack) -> object:
    from .model import forward
    mixtral = CATALOGUE["mixtral-8x7b"]
    return {**forward.section(replace(stack, model=mixtral)), "versus": forward.against(mixtral, stack.model)}


def _attention(stack: Stack) -> object:
    from .documents import attention
    return attention.section(stack)


def _position(stack: Stack, priced_context: int | None) -> object:
    from .documents import position
    return position.section(stack, priced_context)


def _formats() -> object:
    from .documents import quantisation
    return quantisation.format_facts()


def _number(stored: float) -> object:
    from .documents import quantisation
    return quantisation.number(stored)


def _precision(stack: Stack) -> object:
    from .documents import quantisation
    return quantisation.section(stack)


def _cacheops(stack: Stack, cache: CacheOps) -> object:
    from .engine import cacheops
    return cacheops.section(stack, cache)


def _plan(stack: Stack) -> object:
    from .documents import planning
    return planning.section(stack)


def _parallel(stack: Stack) -> object:
    from .engine import parallel
    return parallel.section(stack)


def _engines(stack: Stack) -> object:
    from .engine import launch
    return launch.section(stack)


def _lora(stack: Stack) -> object:
    from .documents import adapters
    return adapters.section(stack)


def _batching(stack: Stack) -> object:
    from .engine import batching
    return batching.section(stack)


def _startup(stack: Stack) -> object:
    from .engine import logs
    return logs.section()

def _release(stack: Stack) -> object:
    from .engine import launch
    return launch.release_section(stack)


def _sizes() -> object:
    from .documents import tokens
    return tokens.family_sizes()


def _logread(stack: Stack) -> object:
    from .engine import logs
    return logs.reader(stack)


def _sampling(setting: Sampling) -> object:
    from .engine import sampling
    return sampling.section(setting)


def _speculative(stack: Stack, speculation: Speculation, setting: Sampling) -> object:
    from .engine import speculative
    return speculative.section(stack, speculation, setting)


def _production(stack: Stack, stream: Stream, cache: CacheOps) -> object:
    from .documents import production
    return production.section(stack, stream, cache)


def _start(stack: Stack) -> object:
    from .documents import start
    return start.section(stack)


class Facts(Mapping[str, object]):
    """The namespace a document's references resolve in, computed a section at a time, when first
    asked for: a calculator's recompute costs only the sections its page shows."""

    def __init__(self, stack: Stack, inputs: DocumentInputs = REFERENCE_INPUTS):
        self.stack = stack
        self.inputs = inputs
        self._made: dict[str, object] = {}

    def __getitem__(self, key: str) -> object:
        if key not in self._made:
            if key not in SECTIONS:
                raise KeyError(key)
            self._made[key] = SECTIONS[key](self.stack, self.inputs, self)
        return self._made[key]

    def __iter__(self) -> Iterator[str]:
        return iter(SECTIONS)

    def made(self) -> dict[str, object]:
        """The sections computed so far: what a recompute has already paid for."""
        return dict(self._made)

    def __len__(self) -> int:
        return len(SECTIONS)


def facts(stack: Stack = REFERENCE, inputs: DocumentInputs = REFERENCE_INPUTS) -> Facts:
    return Facts(stack, inputs)
