"""Document 13: from a vector of logits to one token, one filter at a time, in vLLM's order.

vLLM's V1 sampler (vllm/v1/sample/sampler.py) applies, after the penalties: temperature (logits ÷
T; a temperature below 1e-5 means greedy, the argmax, and no filter runs), then min-p (remove every
token whose probability is below min_p × the top token's), then top-k (keep the k largest logits,
ties at the k-th kept), then top-p (sort ascending, remove every token whose cumulative probability,
counted from the smallest, is at most 1 − p; the largest always stays). Each filter sets a removed
token's logit to −∞, so the next one sees the survivors renormalised. Hugging Face's generate
runs temperature, top-k, top-p, then min-p; the order changes the result only at the edges.

The draw is inverse-CDF: a uniform number from Python's random.Random(seed), which is the same
Mersenne Twister in CPython and in Pyodide, walked against the final probabilities in token order.
vLLM draws differently (an exponential race), so a seed here names this page's draw, not vLLM's.
"""
from __future__ import annotations

import math
import random
from dataclasses import dataclass, replace
from functools import cached_property

from ..specs.inputs import Sampling
from ..core.arith import Expr, field, made_of, term, total
from ..core.units import COUNT, FRACTION, SHARE, Result, grouped, plain

# Six candidates for the token after "The cat sat on the": an example vocabulary, small enough to read.
CANDIDATES = (" mat", " floor", " sofa", " bed", " roof", " moon")
# vLLM's _SAMPLING_EPS (vllm/sampling_params.py): below it SamplingParams switches top-k, top-p and
# min-p off and treats the request as greedy; the V2 runner takes the argmax outright only at exactly 0
# (vllm/v1/worker/gpu/sample/states.py), and at a temperature this small its draw is the argmax all but surely.
GREEDY_BELOW = 1e-5
# The V2 model runner's sampler, 0.33.0's default: logit bias, penalties and bad words, then temperature,
# min-p, top-k and top-p, then a Gumbel-max draw (the V1 runner's vllm/v1/sample/sampler.py keeps the same order).
VLLM_SAMPLER = "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/worker/gpu/sample/sampler.py"
VLLM_PENALTIES = ("https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/worker/gpu/sample/penalties.py "
                  "(PenaltiesState and _penalties_kernel: repetition, then frequency, then presence)")
OPENAI_PENALTIES = ("https://platform.openai.com/docs/advanced-usage "
                    "(frequency and presence penalties: mu[j] − c[j] × α_frequency − 1[c[j] > 0] × α_presence)")
HF_WARPERS = ("https://github.com/huggingface/transformers/blob/main/src/transformers/generation/utils.py "
              "(GenerationMixin._get_logits_processor: temperature, top-k, top-p, then min-p)")
GENERATION_CONFIG = "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/generation_config.json"
VLLM_SAMPLING_PARAMS = "https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/sampling_params.py"
# Stopping: Llama 3.1 8B Instruct's end-of-sequence ids, from its generation_config.json (GENERATION_CONFIG):
# <|end_of_text|>, <|eom_id|> (end of a tool-calling message) and <|eot_id|> (end of turn).
LLAMA_3_1_EOS = ((128001, "<|end_of_text|>"), (128008, "<|eom_id|>"), (128009, "<|eot_id|>"))
# vLLM's SamplingParams.max_tokens default for offline generation (VLLM_SAMPLING_PARAMS: max_tokens = 16), which
# the OpenAI-compatible completions endpoint shares (VLLM_COMPLETIONS); chat completions leave it unset.
VLLM_MAX_TOKENS = 16
# Hugging Face's GenerationConfig default top_k, applied by generate() when generation_config.json is silent
# (HF_GENERATION_CONFIG).
HF_TOP_K = 50
HF_GENERATION_CONFIG = ("https://huggingface.co/docs/transformers/main_classes/text_generation "
                        "(GenerationConfig: top_k defaults to 50)")
LLAMA_3_0_EOS = ("https://github.com/vllm-project/vllm/issues/4180 (Llama 3 8B Instruct: <|eot_id|> not respected while "
                 "the tokenizer's eos_token was <|end_of_text|>) and https://github.com/vllm-project/vllm/pull/4182 (vLLM "
                 "adds generation_config.json's eos_token_id to the stop ids); Llama 3.1 8B Instruct's tokenizer_config.json "
                 "names <|eot_id|> its eos_token, https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct/blob/main/tokenizer_config.json")
VLLM_COMPLETIONS = ("https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/entrypoints/openai/completion/protocol.py "
                    "(CompletionRequest.max_tokens = 16, OpenAI's default for /v1/completions; /v1/chat/completions "
                    "leaves max_tokens unset and the engine fills it with the room left in the context)")


def softmax(logits: tuple[float, ...]) -> tuple[float, ...]:
    """Probabilities from logits; a logit of −∞ (removed) gets exactly zero."""
    top = max(logits)
    weights = [math.exp(x - top) if x != -math.inf else 0.0 for x in logits]
    total = sum(weights)
    return tuple(w / total for w in weights)


def _removing(logits: tuple[float, ...], keep: list[bool]) -> tuple[float, ...]:
    return tuple(x if k else -math.inf for x, k in zip(logits, keep))


def min_p_keep(logits: tuple[float, ...], min_p: float) -> list[bool]:
    """Keep a token whose probability is at least min_p × the top token's; the top token always stays."""
    probs = softmax(logits)
    threshold = min_p * max(probs)
    return [p >= threshold and x != -math.inf for p, x in zip(probs, logits)]


def top_k_keep(logits: tuple[float, ...], k: int) -> list[bool]:
    """Keep the k largest logits (every token tied with the k-th stays); k = 0 keeps everything."""
    alive = sorted((x for x in logits if x != -math.inf), reverse=True)
    if k == 0 or k >= len(alive):
        return [x != -math.inf for x in logits]
    kth = alive[k - 1]
    return [x >= kth for x in logits]


def top_p_keep(logits: tuple[float, ...], p: float) -> list[bool]:
    """vLLM's rule: sort ascending, remove each token whose cumulative probability (itself and every
    smaller one) is at most 1 − p, and never the largest. That keeps the smallest set of the largest
    tokens whose probabilities reach p."""
    if p >= 1:  # off, as vLLM skips it: rounding must not remove a token whose share prints as 0
        return [x != -math.inf for x in logits]
    probs = softmax(logits)
    order = sorted(range(len(logits)), key=lambda i: logits[i])
    keep = [True] * len(logits)
    cumulative = 0.0
    for position, i in enumerate(order):
        cumulative += probs[i]
        if cumulative <= 1 - p and position < len(order) - 1:
            keep[i] = False
    return [k and x != -math.inf for k, x in zip(keep, logits)]


@dataclass(frozen=True)
class Stage:
    """The candidates' logits after one step of the sampler; a removed token's logit is −∞."""

    key: str
    name: str
    logits: tuple[float, ...]

    @property
    def probabilities(self) -> tuple[float, ...]:
        return softmax(self.logits)

    @property
    def kept(self) -> Result:
        alive = [CANDIDATES[i].strip() for i, x in enumerate(self.logits) if x != -math.inf]
        return Result(len(alive), COUNT, formula="tokens left", worked=f"{', '.join(alive)}: {len(alive)} left")

    @property
    def survivors(self) -> str:
        """The tokens still in the running, most likely first, each with its probability."""
        shares = self.tokens
        alive = sorted((i for i, x in enumerate(self.logits) if x != -math.inf), key=lambda i: -self.logits[i])
        return ", ".join(f"“{CANDIDATES[i]}” {shares[CANDIDATES[i].strip()]}" for i in alive)

    @cached_property
    def tokens(self) -> dict[str, Result]:
        """Each candidate's probability: its weight e^(logit − top) over the weights of the tokens left."""
        top = max(self.logits)
        weights = [Result(math.exp(x - top) if x != -math.inf else 0.0, FRACTION, formula="e^(logit − top logit)",
                          worked=f"{math.exp(x - top) if x != -math.inf else 0.0:.6f}") for x in self.logits]
        summed = total(term(w, f"{w.value:.6f}") for w in weights)
        whole = summed.result(FRACTION, "e^(logit − top logit) summed over the tokens", shown=f"{summed.value:.6f}")
        formula = "e^(logit − top logit) ÷ the same summed over the tokens left"
        return {label.strip(): ((term(w, f"{w.value:.6f}") / term(whole, f"{whole.value:.6f}")).result(SHARE, formula)
                                if x != -math.inf else
                                Result(w.value / whole.value, SHARE, formula=formula,
                                       worked="removed: its logit is −∞, its probability 0"))
                for label, w, x in zip(CANDIDATES, weights, self.logits)}


@dataclass(frozen=True)
class Sampled:
    """Every stage from the raw logits to the final distribution, and the token drawn from it."""

    setting: Sampling
    stages: tuple[Stage, ...]

    @property
    def greedy(self) -> bool:
        return self.setting.temperature < GREEDY_BELOW

    @property
    def final(self) -> Stage:
        return self.stages[-1]

    @cached_property
    def uniform(self) -> Result:
        value = random.Random(self.setting.seed).random()
        return Result(value, FRACTION, formula="the first number random.Random(seed) draws",
                      worked=f"the first number Python's random.Random({self.setting.seed}) draws: {value:.6f}",
                      inputs=made_of(field(self.setting, "seed")))

    @property
    def index(self) -> int:
        """Inverse CDF: the first token, in the candidates' order, whose running total passes the draw."""
        probs = self.final.probabilities
        if self.greedy:
            return probs.index(max(probs))
        u, total = self.uniform.value, 0.0
        for i, p in enumerate(probs):
            total += p
            if u < total:
                return i
        return max(i for i, p in enumerate(probs) if p > 0)  # a draw past a total rounded below 1

    @property
    def token(self) -> str:
        return f"“{CANDIDATES[self.index]}”"

    @property
    def draw(self) -> Result:
        """The running totals the draw is walked against, up to the token it lands in."""
        if self.greedy:
            return Result(self.index, COUNT, formula="greedy: the largest logit",
                          worked=f"temperature {plain(self.setting.temperature)} is below {plain(GREEDY_BELOW)}: "
                                 f"greedy, {self.token}", inputs=made_of(field(self.setting, "temperature", FRACTION)))
        probs, u = self.final.probabilities, self.uniform.value
        shares = list(self.final.tokens.values())
        totals, running = [], 0.0
        for i, p in enumerate(probs[: self.index + 1]):
            running += p
            totals.append(f"{CANDIDATES[i].strip()} {FRACTION.show(running, 4)}")
        return Result(self.index, COUNT, formula="the first running total above the draw",
                      worked=f"draw {u:.4f}; running totals {', '.join(totals)}: {self.token}",
                      inputs=made_of(self.uniform, *shares[: self.index + 1]))

    @property
    def probability(self) -> Result:
        p = self.final.probabilities[self.index]
        return Result(p, SHARE, formula="the sampled token's final probability",
                      worked=f"{self.token}: {SHARE.show(p)}",
                      inputs=made_of(self.final.tokens[CANDIDATES[self.index].strip()]))

    @property
    def threshold(self) -> Result:
        """min-p's cut: a share of the top token's probability after temperature."""
        tempered = self.stages[1]
        probs = tempered.probabilities
        top = max(probs)
        leader = tempered.tokens[CANDIDATES[probs.index(top)].strip()]
        product = term(field(self.setting, "min_p", FRACTION), plain(self.setting.min_p)) * term(leader, SHARE.show(top, 2))
        return product.result(SHARE, "min_p × the top token's probability", shown=SHARE.show(product.value, 2))

    @property
    def nucleus(self) -> Result:
        """What the tokens top-p keeps add up to, before renormalising: at least p."""
        before = self.stages[-2].probabilities
        kept = [before[i] for i, x in enumerate(self.final.logits) if x != -math.inf]
        value = sum(kept)
        # added in the candidates' order, shown largest first: the inputs in the order the line shows them
        shares = self.stages[-2].tokens
        shown = sorted((i for i, x in enumerate(self.final.logits) if x != -math.inf), key=lambda i: -before[i])
        return Result(value, SHARE, formula="the kept tokens' probabilities before top-p, added",
                      worked=f"{' + '.join(SHARE.show(p, 2) for p in sorted(kept, reverse=True))} = {SHARE.show(value, 2)}",
                      inputs=made_of(*(shares[CANDIDATES[i].strip()] for i in shown)))


def sample(setting: Sampling) -> Sampled:
    """The five stages: logits, temperature, min-p, top-k, top-p. Greedy stops after the first."""
    raw = tuple(float(x) for x in setting.logits)  # a grammar mask may already hold −∞
    stages = [Stage("logits", "the model's logits (temperature 1)", raw)]
    if setting.temperature < GREEDY_BELOW:
        best = raw.index(max(raw))
        one = tuple(x if i == best else -math.inf for i, x in enumerate(raw))
        stages += [Stage(key, name, one) for key, name in
                   (("temperature", "greedy: only the largest logit"), ("min_p", "greedy: filters skipped"),
                    ("top_k", "greedy: filters skipped"), ("top_p", "greedy: filters skipped"))]
        return Sampled(setting, tuple(stages))
    tempered = tuple(x / setting.temperature for x in raw)
    stages.append(Stage("temperature", f"÷ temperature {plain(setting.temperature)}", tempered))
    after_min_p = _removing(tempered, min_p_keep(tempered, setting.min_p))
    stages.append(Stage("min_p", f"min-p {plain(setting.min_p)}", after_min_p))
    after_top_k = _removing(after_min_p, top_k_keep(after_min_p, setting.top_k))
    stages.append(Stage("top_k", f"top-k {setting.top_k}" if setting.top_k else "top-k off", after_top_k))
    after_top_p = _removing(after_top_k, top_p_keep(after_top_k, setting.top_p))
    stages.append(Stage("top_p", f"top-p {plain(setting.top_p)}", after_top_p))
    return Sampled(setting, tuple(stages))


# Constrained decoding's example: a schema whose field allows only these two of the six candidates.
ALLOWED = (" sofa", " roof")


def constrained(setting: Sampling, allowed: tuple[str, ...] = ALLOWED) -> Sampled:
    """The same sampler after a grammar mask: every token the grammar forbids gets −∞ first, as an
    engine applies the mask before penalties, temperature and the filters."""
    masked = tuple(x if label in allowed else -math.inf for label, x in zip(CANDIDATES, setting.logits))
    return sample(replace(setting, logits=masked))


def penalised(logit: float, in_prompt: bool, output_count: int, repetition: float, frequency: float,
              presence: float) -> float:
    """vLLM's penalties on one token's logit: the repetition penalty (CTRL's) divides a positive logit
    and multiplies a negative one if the token is anywhere in the prompt or output; the frequency
    penalty subtracts per occurrence in the output; the presence penalty subtracts once if it occurs.
    OpenAI defines frequency and presence the same way."""
    seen = in_prompt or output_count > 0
    if seen:
        logit = logit / repetition if logit > 0 else logit * repetition
    return logit - frequency * output_count - presence * (output_count > 0)


@dataclass(frozen=True)
class PenaltyExample:
    """One token's logit under the penalties: an example, with OpenAI's and vLLM's definitions."""

    logit: float = 4.0
    output_count: int = 3
    frequency: float = 0.5
    presence: float = 0.5
    repetition: float = 1.2

    def _term(self, name: str) -> Expr:
        """One of the example's numbers as an operand that remembers it was read off the example."""
        value = getattr(self, name)
        return term(field(self, name, COUNT if name == "output_count" else FRACTION), f"{value}" if name == "output_count"
                    else plain(value))

    def _penalties(self) -> tuple[Expr, Expr]:
        """− frequency × count − presence × [count > 0], as penalised() subtracts them."""
        return (self._term("frequency") * self._term("output_count"),
                self._term("presence") * term(int(self.output_count > 0)))

    @property
    def additive(self) -> Result:
        frequency, presence = self._penalties()
        worked = self._term("logit") - frequency - presence
        return worked.result(FRACTION, "logit − frequency × count − presence × [count > 0]", shown=plain(round(worked.value, 6)))

    @property
    def repeated(self) -> Result:
        formula = "a positive logit ÷ the repetition penalty"
        if self.logit <= 0:  # penalised() multiplies a negative logit; the worked line is written for a positive one
            value = penalised(self.logit, True, 0, self.repetition, 0.0, 0.0)
            return Result(value, FRACTION, formula=formula,
                          worked=f"{plain(self.logit)} ÷ {plain(self.repetition)} = {FRACTION.show(value, 4)}")
        divided = self._term("logit") / self._term("repetition")
        return divided.result(FRACTION, formula, shown=FRACTION.show(divided.value, 4))

    @property
    def combined(self) -> Result:
        """All three on one token, in vLLM's order: the repetition penalty first, then the additive ones."""
        formula = "logit ÷ repetition − frequency × count − presence × [count > 0]"
        if self.logit <= 0:  # as in repeated
            value = penalised(self.logit, True, self.output_count, self.repetition, self.frequency, self.presence)
            return Result(value, FRACTION, formula=formula,
                          worked=(f"{plain(self.logit)} ÷ {plain(self.repetition)} − {plain(self.frequency)} × "
                                  f"{self.output_count} − {plain(self.presence)} × 1 = {FRACTION.show(value, 4)}"))
        frequency, presence = self._penalties()
        worked = self._term("logit") / self._term("repetition") - frequency - presence
        return worked.result(FRACTION, formula, shown=FRACTION.show(worked.value, 4))

    @property
    def count(self) -> Result:
        return Result(self.output_count, COUNT, worked=grouped(self.output_count))


def chart(sampled: Sampled) -> dict:
    """The candidates' probabilities at every stage, as grouped bars, and the table's rows."""
    x = [label.strip() for label in CANDIDATES]
    curves = [{"name": stage.name, "x": x, "y": [100 * p for p in stage.probabilities]} for stage in sampled.stages]
    rows = [[x[i]] + [f"{curve['y'][i]:.1f}%" for curve in curves] for i in range(len(x))]
    return {"curves": curves, "rows": rows}


def section(setting: Sampling) -> dict[str, object]:
    """Document 13's sampling facts on one setting of the sampler."""
    sampled = sample(setting)
    return {
        "candidates": " ".join(f"“{c}”" for c in CANDIDATES),
        "stage": {stage.key: stage for stage in sampled.stages},
        "token": sampled.token,
        "draw": sampled.draw,
        "uniform": sampled.uniform,
        "probability": sampled.probability,
        "threshold": sampled.threshold,
        "setting": (f"the six logits typed, temperature {plain(setting.temperature)}, min-p {plain(setting.min_p)}, "
                    f"top-k {grouped(setting.top_k)}, top-p {plain(setting.top_p)}"),
        "cut": "none: greedy decoding runs no filter" if sampled.greedy else sampled.threshold.show(),
        "nucleus": sampled.nucleus,
        "chosen": {
            "temperature": Result(setting.temperature, FRACTION, worked=plain(setting.temperature)),
            "top_p": Result(setting.top_p, FRACTION, worked=plain(setting.top_p)),
            "min_p": Result(setting.min_p, FRACTION, worked=plain(setting.min_p)),
            "top_k": Result(setting.top_k, COUNT, worked=grouped(setting.top_k)),
            "seed": Result(setting.seed, COUNT, worked=grouped(setting.seed)),
        },
        "penalty": PenaltyExample(),
        "constrained": {"allowed": ", ".join(f"“{a}”" for a in ALLOWED), "sampled": constrained(setting)},
        "eos": ", ".join(f"{i} {name}" for i, name in LLAMA_3_1_EOS),
        "eos_count": len(LLAMA_3_1_EOS),
        "max_tokens": VLLM_MAX_TOKENS,
        "hf_top_k": Result(HF_TOP_K, COUNT, worked=grouped(HF_TOP_K)),
        "sources": {"sampler": VLLM_SAMPLER, "penalties": VLLM_PENALTIES, "openai": OPENAI_PENALTIES,
                    "hf": HF_WARPERS, "generation_config": GENERATION_CONFIG, "sampling_params": VLLM_SAMPLING_PARAMS,
                    "completions": VLLM_COMPLETIONS, "llama_3_0_eos": LLAMA_3_0_EOS,
                    "hf_generation_config": HF_GENERATION_CONFIG},
    }
