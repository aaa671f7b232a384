"""Every named number the documents refer to, computed from one stack.

Content writes `{{ ladder.kv_budget }}`; the build looks the path up in `facts(stack)`.
The calculators call the same function with the reader's inputs, so a number on the
page and the number a calculator shows come from one computation.
"""
from __future__ import annotations

from dataclasses import replace
from typing import Callable, Iterator, Mapping

from .engine import kvcache
from .documents import phases
from .model.anatomy import count_parameters
from .specs.models import CATALOGUE, Model
from .specs.stack import REFERENCE, Stack
from .core.units import MS_WHOLE, SECONDS, given


SECTIONS: dict[str, Callable[[Stack, "Facts"], object]] = {
    "stack": lambda stack, made: stack,
    "model": lambda stack, made: stack.model,
    "card": lambda stack, made: stack.card,
    "traffic": lambda stack, made: stack.traffic,
    "params": lambda stack, made: count_parameters(stack.model),
    "weights": lambda stack, made: phases.weights(stack),
    "kv": lambda stack, made: phases.kv(stack, made["ladder"]),
    "ladder": lambda stack, made: kvcache.ladder(stack),
    "levers": lambda stack, made: kvcache.stacked_levers(stack),
    "family": lambda stack, made: {key.split("-")[-1]: phases.model_cache(model, stack) for key, model in CATALOGUE.items()},
    "recompute": lambda stack, made: {
        "typical": kvcache.recompute_cost_ratio(stack.traffic.prompt_p50, stack.traffic.output_p50),
        "long": kvcache.recompute_cost_ratio(stack.traffic.prompt_p95, stack.traffic.output_long),
    },
    "read": lambda stack, made: phases.reads(stack, made["ladder"]),
    "promise": lambda stack, made: {
        "ttft": given(stack.promise.ttft_p95_s, SECONDS, "time to first token, p95"),
        "itl": given(stack.promise.itl_p95_s, MS_WHOLE, "inter-token latency, p95"),
    },
    "floor": lambda stack, made: phases.floors(stack, made["ladder"]),
    "long_context": lambda stack, made: phases.long_context(stack),
    "time": lambda stack, made: phases.times(stack, made["ladder"]),
    "workload": lambda stack, made: phases.workload(stack, made["ladder"]),
    "measured": lambda stack, made: phases.measurements(stack),
    "journey": lambda stack, made: _journey(stack),
    "hardware": lambda stack, made: _hardware(stack, made["ladder"]),
    "tokens": lambda stack, made: _tokens(stack),
    "anatomy": lambda stack, made: _anatomy(stack, stack.model),
    "mixtral": lambda stack, made: _mixtral(stack),
    "tied": lambda stack, made: _anatomy(stack, CATALOGUE["llama-3.2-1b"]),
    "sizes": lambda stack, made: _sizes(),
    "attention": lambda stack, made: _attention(stack),
    "position": lambda stack, made: _position(stack),
    "formats": lambda stack, made: _formats(),
    "number": lambda stack, made: _number(stack),
    "precision": lambda stack, made: _precision(stack),
    "cacheops": lambda stack, made: _cacheops(stack),
    "plan": lambda stack, made: _plan(stack),
    "parallel": lambda stack, made: _parallel(stack),
    "engines": lambda stack, made: _engines(stack),
    "lora": lambda stack, made: _lora(stack),
    "batching": lambda stack, made: _batching(stack),
    "startup": lambda stack, made: _startup(stack),
    "logread": lambda stack, made: _logread(stack),
    "engine": lambda stack, made: _release(stack),
    "sampling": lambda stack, made: _sampling(stack),
    "speculative": lambda stack, made: _speculative(stack),
    "production": lambda stack, made: _production(stack),
    "start": lambda stack, made: _start(stack),
}


# Documents' own modules load when a page first asks for their section, so a calculator's Python
# starts without importing what its page never shows.
def _journey(stack: Stack) -> object:
    from .documents import journey
    return journey.journey(stack, stack.workload.prompt, stack.workload.output)


def _hardware(stack: Stack, ladder: kvcache.Ladder) -> object:
    from .documents import hardware
    return hardware.section(stack, ladder)


def _tokens(stack: Stack) -> object:
    from .documents import tokens
    return tokens.section(stack)


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


def _position(stack: Stack) -> object:
    from .documents import position
    return position.section(stack)


def _formats() -> object:
    from .documents import quantisation
    return quantisation.format_facts()


def _number(stack: Stack) -> object:
    from .documents import quantisation
    return quantisation.number(stack)


def _precision(stack: Stack) -> object:
    from .documents import quantisation
    return quantisation.section(stack)


def _cacheops(stack: Stack) -> object:
    from .engine import cacheops
    return cacheops.section(stack)


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


def _sampling(stack: Stack) -> object:
    from .engine import sampling
    return sampling.section(stack)


def _speculative(stack: Stack) -> object:
    from .engine import speculative
    return speculative.section(stack)


def _production(stack: Stack) -> object:
    from .documents import production
    return production.section(stack)


def _start(stack: Stack) -> object:
    from .documents import start
    return start.section(stack)


class Facts(Mapping[str, object]):
    """The namespace a document's references resolve in, computed a section at a time, when first
    asked for: a calculator's recompute costs only the sections its page shows."""

    def __init__(self, stack: Stack):
        self.stack = stack
        self._made: dict[str, object] = {}

    def __getitem__(self, key: str) -> object:
        if key not in self._made:
            if key not in SECTIONS:
                raise KeyError(key)
            self._made[key] = SECTIONS[key](self.stack, self)
        return self._made[key]

    def __iter__(self) -> Iterator[str]:
        return iter(SECTIONS)

    def made(self) -> dict[str, object]:
        """The sections computed so far: what a recompute has already paid for."""
        return dict(self._made)

    def __len__(self) -> int:
        return len(SECTIONS)


def facts(stack: Stack = REFERENCE) -> Facts:
    return Facts(stack)
