"""Document 13: speculative decoding, priced on the time model.

A drafter proposes γ tokens; the target runs one forward pass over the γ + 1 positions (the last
accepted token and the γ drafts), accepts a prefix of the drafts by rejection sampling, and adds
one token of its own: the correction at the first rejection, or a bonus token when every draft is
accepted. With each draft accepted independently with probability α, a pass yields on average
(1 − α^(γ+1)) ÷ (1 − α) tokens (Leviathan, Kalman & Matias, ICML 2023, equation 1), and with a draft
step costing c of a target step the time per token improves by (1 − α^(γ+1)) ÷ ((1 − α)(γc + 1))
(their Theorem 3.8). That rule takes the verification pass to cost one ordinary step. On the time
model it does only while the step is memory-bound: a pass over B sequences multiplies by
B × (γ + 1) tokens, nearly free while the weights' reading dominates, and proportionally more once
the matrix multiplies are compute-bound, which is why the same setting that speeds up one user
slows a full batch down.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache

from . import kvcache, timing
from . import steptime
from ..specs.models import LLAMA_3_2_1B, Model
from ..model.weights import weight_bytes
from ..specs.inputs import Sampling, Speculation
from ..specs.stack import Stack
from ..core.arith import Expr, field, made_of, term, total
from ..core.units import COUNT, FRACTION, GIB_HELD, MS, RATIO_FINE, SHARE, TOKENS_FINE, Result, Unit, grouped, plain

LEVIATHAN = ("Leviathan, Kalman & Matias, “Fast Inference from Transformers via Speculative Decoding”, ICML 2023, "
             "arXiv:2211.17192: equation (1), Theorem 3.8, and the rejection rule of section 2.3")
CHEN = ("Chen, Borgeaud, Irving, Lespiau, Sifre & Jumper, “Accelerating Large Language Model Decoding with "
        "Speculative Sampling”, 2023, arXiv:2302.01318: modified rejection sampling, Theorem 1")
EAGLE = ("Li, Wei, Zhang & Zhang, “EAGLE: Speculative Sampling Requires Rethinking Feature Uncertainty”, ICML 2024, "
         "arXiv:2401.15077")
MEDUSA = ("Cai, Li, Geng, Peng, Lee, Chen & Dao, “Medusa: Simple LLM Inference Acceleration Framework with Multiple "
          "Decoding Heads”, ICML 2024, arXiv:2401.10774")
VLLM_METRICS = ("vllm/v1/spec_decode/metrics.py, https://github.com/vllm-project/vllm/blob/v0.33.0/vllm/v1/spec_decode/metrics.py: "
                "draft acceptance rate = accepted tokens ÷ draft tokens, mean acceptance length = 1 + accepted tokens ÷ drafts, "
                "and vllm:spec_decode_num_accepted_tokens_per_pos, where a draft counts as accepted only before the first rejection")
DYNAMIC = ("vLLM, Dynamic Speculative Decoding, num_speculative_tokens_per_batch_size in --speculative-config, "
           "https://github.com/vllm-project/vllm/blob/v0.33.0/docs/features/speculative_decoding/dynamic_speculative_decoding.md")
VLLM_SPEC_DOCS = ("vLLM, Speculative Decoding: “reduce inter-token latency under medium-to-low QPS, memory-bound workloads”, "
                  "https://github.com/vllm-project/vllm/blob/v0.33.0/docs/features/speculative_decoding/README.md")
LEVIATHAN_ARITHMETIC = ("Leviathan, Kalman & Matias, arXiv:2211.17192, section 3.4, Theorem 3.11: the expected factor "
                        "of increase in arithmetic operations, (1 − α)(γĉ + γ + 1) ÷ (1 − α^(γ+1))")
PROMPT_LOOKUP = ("Saxena, “Prompt Lookup Decoding”, 2023, https://github.com/apoorvumang/prompt-lookup-decoding; "
                 "vLLM's method \"ngram\", https://docs.vllm.ai/en/latest/features/spec_decode.html")
GAMMAS = tuple(range(1, 11))
COST = Unit("fraction", 1, "", 3)
AS_TYPED = Unit("fraction", 1, "", 0, exact_up_to=6)  # α as the reader typed it, as plain() prints a float
CHART_ALPHAS = (0.6, 0.7, 0.8, 0.9)
CHART_BATCHES = timing.STEP_BATCHES


@dataclass(frozen=True)
class Drafter:
    """Who proposes the drafts. `shape` builds, from the target, the model a draft step runs on the
    same time model (None: drafting costs nothing the time model counts)."""

    key: str
    name: str
    kind: str
    source: str

    def shape(self, target: Model) -> Model | None:
        if self.kind == "model":
            return LLAMA_3_2_1B
        if self.kind == "head":
            return replace(target, num_hidden_layers=1, name=f"one decoder layer of {target.name} and its LM head")
        return None


DRAFTERS: dict[str, Drafter] = {
    "llama-3.2-1b": Drafter("llama-3.2-1b", "Llama 3.2 1B draft model", "model",
                            "the same tokenizer and vocabulary as Llama 3.1; config.json in calc.specs.models"),
    "eagle": Drafter("eagle", "EAGLE-style head", "head",
                     EAGLE + ": a single decoder layer over the target's features, reusing its LM head; "
                             "costed here as one layer of the target's shape plus its LM head"),
    "ngram": Drafter("ngram", "n-gram lookup", "lookup",
                     PROMPT_LOOKUP + ": a string match over the tokens so far, costed as nothing"),
}


def tokens_per_pass(alpha: float, gamma: int) -> float:
    return float(gamma + 1) if alpha >= 1 else (1 - alpha ** (gamma + 1)) / (1 - alpha)


def rule_value(alpha: float, gamma: int, cost: float) -> float:
    return tokens_per_pass(alpha, gamma) / (gamma * cost + 1)


def accepted_per_pass(alpha: float, gamma: int) -> float:
    """Drafts accepted per pass, the prefix before the first rejection: α + α² + … + α^γ."""
    return tokens_per_pass(alpha, gamma) - 1


def rate_of(alpha: float, gamma: int) -> float:
    return accepted_per_pass(alpha, gamma) / gamma


def _alpha(alpha: float, of: object = None) -> Result:
    """α as an operand: the run's field where a run is named (`of`), else α as the page's `alpha` fact shows it."""
    return field(of, "alpha", AS_TYPED, "α") if of is not None else Result(alpha, AS_TYPED, "α", worked=plain(alpha))


def _gamma(gamma: int, of: object = None) -> Result:
    """γ as an operand, as _alpha."""
    return field(of, "gamma", COUNT, "γ") if of is not None else Result(gamma, COUNT, "γ", worked=str(gamma))


def _power(alpha: Result, exponent: int, inputs: tuple[Result, ...]) -> Expr:
    """α^k as an operand, shown as the rule writes it."""
    return Expr(alpha.value ** exponent, f"{plain(alpha.value)}^{exponent}", inputs)


def draft_acceptance_rate(alpha: float, gamma: int, *, of: object = None) -> Result:
    """What vLLM logs as the draft acceptance rate, accepted tokens ÷ drafted tokens, for a per-draft α.
    The engine counts a draft as accepted only if every draft before it was, so the rate is the mean
    accepted prefix over γ: (α + α² + … + α^γ) ÷ γ, below α whenever γ is above 1."""
    accepted = accepted_per_pass(alpha, gamma)
    value = accepted / gamma
    formula = "(α + α² + … + α^γ) ÷ γ = α(1 − α^γ) ÷ ((1 − α)γ)"
    # the powers are shown added; the value is the closed form, so the line is written, not computed
    inputs = made_of(_alpha(alpha, of), _gamma(gamma, of))
    if alpha < 0.001:  # too small to print as an operand: its powers would read as 0
        return Result(value, SHARE, formula=formula, inputs=inputs,
                      worked=f"α of {plain(alpha)}: nearly every first draft is rejected, and the rate is {SHARE.show(value)}")
    return Result(value, SHARE, formula=formula, inputs=inputs,
                  worked=(f"({' + '.join(f'{plain(alpha)}^{k}' if k > 1 else plain(alpha) for k in range(1, gamma + 1))}) "
                          f"÷ {gamma} = {accepted:.4f} ÷ {gamma} = {SHARE.show(value)}"))


def acceptance_length(alpha: float, gamma: int, *, of: object = None) -> Result:
    """vLLM's mean acceptance length, 1 + accepted tokens ÷ drafts: the tokens a pass yields, measured."""
    accepted = accepted_per_pass(alpha, gamma)
    value = 1 + accepted
    return Result(value, TOKENS_FINE, formula="1 + accepted tokens ÷ drafts, the bonus or correction token counted",
                  worked=f"1 + {accepted:.4f} = {TOKENS_FINE.show(value)}", inputs=made_of(_alpha(alpha, of), _gamma(gamma, of)))


def alpha_from_rate(rate: float, gamma: int, *, reported: Result | None = None, of: object = None) -> Result:
    """The per-draft α behind a reported draft acceptance rate: the rate rises with α, so bisection
    on α(1 − α^γ) ÷ ((1 − α)γ) = rate finds it."""
    formula = "the α whose α(1 − α^γ) ÷ ((1 − α)γ) equals the reported rate"
    inputs = made_of(reported if reported is not None else Result(rate, SHARE, worked=plain(rate)), _gamma(gamma, of))
    if rate <= 0 or rate >= 1:  # the ends, where the division would read 0 ÷ 0
        return Result(1.0 if rate >= 1 else 0.0, FRACTION, formula=formula, inputs=inputs,
                      worked=f"a rate of {plain(rate)}: " + ("every draft is accepted, so α is 1" if rate >= 1 else
                                                            "no draft is ever accepted, so α is 0"))
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        low, high = (middle, high) if rate_of(middle, gamma) < rate else (low, middle)
    value = (low + high) / 2
    # Places enough for a small rate, and for 1 − α near 1, to keep three significant figures.
    places = max(4, 2 - math.floor(math.log10(min(rate, 1 - value))))
    return Result(value, FRACTION, formula=formula, inputs=inputs,
                  worked=(f"solving α(1 − α^{gamma}) ÷ ((1 − α) × {gamma}) for a rate of {rate:.{places}f} gives α of "
                          f"{value:.{places}f}; {value:.{places}f} × (1 − {value:.{places}f}^{gamma}) ÷ "
                          f"({1 - value:.{places}f} × {gamma}) = {rate_of(value, gamma):.{places}f}"))


def expected_tokens(alpha: float, gamma: int, *, of: object = None) -> Result:
    """Tokens one verification pass yields on average: the accepted prefix plus the target's own token."""
    alpha_r, gamma_r = _alpha(alpha, of), _gamma(gamma, of)
    if alpha >= 1:
        return (term(gamma_r, f"{gamma}") + term(1)).result(TOKENS_FINE, "γ + 1 when every draft is accepted")
    if alpha <= 0:
        return Result(1, TOKENS_FINE, formula="only the target's own token when no draft is accepted", inputs=made_of(alpha_r),
                      worked=f"α of 0: no draft survives, and the pass yields the target's own token, {TOKENS_FINE.show(1)}")
    value = tokens_per_pass(alpha, gamma)
    if alpha < 0.001:  # too small to print as an operand: the power would read as 0
        return Result(value, TOKENS_FINE, formula="(1 − α^(γ+1)) ÷ (1 − α)", inputs=made_of(alpha_r, gamma_r),
                      worked=f"α below 0.001: nearly every draft is rejected, and a pass yields {TOKENS_FINE.show(value)}")
    return ((term(1) - _power(alpha_r, gamma + 1, (alpha_r, gamma_r))) / (term(1) - term(alpha_r, plain(alpha)))).result(
        TOKENS_FINE, "(1 − α^(γ+1)) ÷ (1 − α)")


def speedup_rule(alpha: float, gamma: int, cost: float | Result, *, of: object = None) -> Result:
    """Leviathan et al.'s improvement factor: tokens per pass over the pass's cost in target steps,
    the verification pass counted as one ordinary step. `cost` is c, as a number or as the result it was computed as."""
    tokens = expected_tokens(alpha, gamma, of=of)
    c = cost if isinstance(cost, Result) else Result(cost, COST, worked=f"{cost:.4f}")
    return (term(tokens) / (term(_gamma(gamma, of), f"{gamma}") * term(c, f"{c.value:.4f}") + term(1))).result(
        RATIO_FINE, "(1 − α^(γ+1)) ÷ ((1 − α) × (γ × c + 1))")


@dataclass(frozen=True)
class Passes:
    """The three passes speculation is priced on, as numbers at any batch (calc.engine.steptime.Costs,
    no worked lines), for the scans over every batch: an ordinary decode step, one draft pass and a
    verification pass. A draft pass runs inside the engine step that verifies it, so it pays its
    kernels only; the step's fixed cost (scheduling, sampling, launching) is paid once, by the
    verification pass, as it is by the ordinary step."""

    target: steptime.Costs
    draft: steptime.Costs | None
    held: float
    draft_held: float

    def step(self, batch: int) -> float:
        return self.verify(batch, 0)

    def draft_pass(self, batch: int) -> float:
        if self.draft is None:
            return 0.0
        return self.draft.blocks(batch) + self.draft.head(batch) + self.draft.decode_attention(batch, batch * self.draft_held)

    def verify(self, batch: int, gamma: int) -> float:
        positions = batch * (gamma + 1)
        costs = self.target
        return (costs.blocks(positions) + costs.head(positions)
                + costs.decode_attention(batch, batch * self.held, gamma + 1) + costs.overhead_s)


@lru_cache(maxsize=64)
def passes(stack: Stack, drafter: Drafter, tokens: int) -> Passes:
    hardware = timing.timed(stack).hardware
    shape = drafter.shape(stack.model)
    draft = None if shape is None else steptime.Costs(hardware, shape)
    return Passes(steptime.Costs(hardware, stack.model), draft, stack.model.tokens_cached(tokens),
                  shape.tokens_cached(tokens) if shape else 0)


def draft_step(stack: Stack, drafter: Drafter, batch: int, tokens: int) -> timing.DecodeStep | None:
    """One draft pass for `batch` sequences on the same card and time model (None: a lookup runs no model)."""
    shape = drafter.shape(stack.model)
    return None if shape is None else timing.decode_step(replace(stack, model=shape), batch, tokens)


def scheduled_batch(stack: Stack, gamma: int) -> int:
    """The most sequences one engine step verifies in full: max_num_seqs, and the token budget over the
    γ + 1 positions each schedules (vllm/v1/core/sched/scheduler.py, Scheduler.schedule: a running
    request's new tokens are its last token and its drafts, taken from the step's token budget)."""
    from .simulation import scheduler_caps
    seqs, budget = scheduler_caps(stack)
    return max(1, min(seqs, budget // (gamma + 1)))


def draft_weight_bytes(stack: Stack, drafter: Drafter) -> Result | None:
    """The drafter's weights at the stack's precision (None: a lookup holds none)."""
    shape = drafter.shape(stack.model)
    return None if shape is None else weight_bytes(shape, stack.weight_precision)


def admitted_batch(stack: Stack, drafter: Drafter, tokens: int, gamma: int) -> int:
    """Sequences of `tokens` + γ the KV pool admits. A draft model or head takes its weights out of
    the pool and adds its own cache to every token (vLLM gives the draft's layers blocks in the same
    pool); a lookup holds neither, so it keeps the target's count."""
    ladder = kvcache.ladder(stack)
    each = kvcache.blocks_for(tokens + gamma, stack.block_size) * stack.block_size
    shape = drafter.shape(stack.model)
    if shape is None:
        return int(ladder.token_capacity.value // each)
    budget, per_token = _beside_draft(ladder, draft_weight_bytes(stack, drafter), kvcache.bytes_per_token(shape, stack.kv_precision))
    if budget.value <= 0:
        return 0
    capacity = kvcache.token_capacity(budget, per_token, stack.block_size)
    return int(capacity.value // each)


def _beside_draft(ladder: kvcache.Ladder, weights: Result, draft: Result) -> tuple[Result, Result]:
    """The KV budget left beside the draft's weights, and the cache a token takes for target and draft."""
    return ((term(ladder.kv_budget) - term(weights)).result(GIB_HELD, "KV budget − draft weights"),
            (term(ladder.per_token) + term(draft)).result(ladder.per_token.unit, "target + draft cache per token"))


@dataclass(frozen=True)
class Speculative:
    """Speculative decoding for one stack: α, γ, the drafter, the batch and the length held."""

    stack: Stack
    alpha: float
    gamma: int
    drafter: Drafter
    batch: int
    tokens: int

    @cached_property
    def _seconds(self) -> tuple[float, float, float]:
        """An ordinary step, a draft pass and a verification pass, in seconds: what every figure below
        divides, computed once (the charts ask for many batches)."""
        drafted = draft_step(self.stack, self.drafter, self.batch, self.tokens)
        return (self.step.value, drafted.kernels.value if drafted else 0.0, self.verify.value)

    @property
    def per_pass(self) -> Result:
        return expected_tokens(self.alpha, self.gamma, of=self)

    @property
    def step(self) -> Result:
        """An ordinary decode step at this batch: one token per sequence."""
        return timing.decode_step(self.stack, self.batch, self.tokens).time

    @property
    def draft_step(self) -> Result:
        drafted = draft_step(self.stack, self.drafter, self.batch, self.tokens)
        if drafted is None:
            return Result(0.0, MS, formula="no model runs", worked=f"{self.drafter.name}: 0 ms on the time model")
        return Result(drafted.kernels.value, MS,
                      formula="the draft's kernels for one token per sequence; the engine step's fixed cost is the verification's",
                      worked=drafted.kernels.worked, inputs=drafted.kernels.inputs)

    @property
    def cost(self) -> Result:
        """c: a draft pass over a target step, at this batch."""
        quotient = term(self.draft_step, MS.precise(self._seconds[1])) / term(self.step, MS.precise(self._seconds[0]))
        return quotient.result(COST, "draft pass ÷ target step", shown=f"{quotient.value:.4f}")

    @property
    def rule(self) -> Result:
        return speedup_rule(self.alpha, self.gamma, self.cost, of=self)

    @property
    def verify(self) -> Result:
        """One target pass over B × (γ + 1) positions, its kernel groups and the step's fixed cost."""
        step = timing.verify_step(self.stack, self.batch, self.gamma, self.tokens)
        return Result(step.time.value, MS,
                      formula=f"the step's kernels over B × (γ + 1) positions ({step.time.formula}) + its fixed cost",
                      worked=step.time.worked, inputs=step.time.inputs)

    @property
    def verify_ratio(self) -> Result:
        """How much longer a verification pass takes than an ordinary step: 1 while memory-bound."""
        return (term(self.verify, MS.precise(self._seconds[2])) / term(self.step, MS.precise(self._seconds[0]))).result(
            RATIO_FINE, "verification pass ÷ ordinary step")

    @property
    def _pass_seconds(self) -> float:
        return self.gamma * self._seconds[1] + self._seconds[2]

    @property
    def pass_time(self) -> Result:
        return (term(_gamma(self.gamma, self), f"{self.gamma}") * term(self.draft_step, MS.precise(self._seconds[1]))
                + term(self.verify, MS.precise(self._seconds[2]))).result(MS, "γ × draft step + verification pass")

    @property
    def speedup(self) -> Result:
        """Tokens per second with speculation over without, on the time model at this batch."""
        return (term(self.per_pass) * term(self.step, MS.precise(self._seconds[0]))
                / term(self.pass_time, MS.precise(self._pass_seconds))).result(
            RATIO_FINE, "tokens per pass × ordinary step ÷ pass time")

    @property
    def inter_token(self) -> Result:
        return (term(self.pass_time, MS.precise(self._pass_seconds)) / term(self.per_pass)).result(
            MS, "pass time ÷ tokens per pass")

    @property
    def reported_rate(self) -> Result:
        """The draft acceptance rate vLLM would log for this α and γ."""
        return draft_acceptance_rate(self.alpha, self.gamma, of=self)

    @property
    def acceptance_length(self) -> Result:
        return acceptance_length(self.alpha, self.gamma, of=self)

    @property
    def misread(self) -> Result:
        """Tokens per pass if the logged rate is typed in as α: the mistake the rate invites."""
        return expected_tokens(rate_of(self.alpha, self.gamma), self.gamma)

    @cached_property
    def by_gamma(self) -> dict[int, float]:
        """Speedup on the time model at this batch for every γ from 1 to 10, and to this run's γ if larger."""
        return {g: self.speedup_for(self.alpha, g) for g in range(1, max(GAMMAS[-1], self.gamma) + 1)}

    def speedup_for(self, alpha: float, gamma: int) -> float:
        """Speedup on the time model at this batch and length for another α and γ, reusing this run's
        ordinary and draft steps (neither depends on α or γ)."""
        step, draft, _ = self._seconds
        return tokens_per_pass(alpha, gamma) * step / (gamma * draft + self._verify_seconds(gamma))

    def _verify_seconds(self, gamma: int) -> float:
        """A verification pass at this batch for another γ, each γ computed once per run: the charts
        and best γ ask for every γ at several α."""
        known = self._verify_by_gamma
        if gamma not in known:
            known[gamma] = self._passes.verify(self.batch, gamma)
        return known[gamma]

    @cached_property
    def _verify_by_gamma(self) -> dict[int, float]:
        return {self.gamma: self._seconds[2]}

    @cached_property
    def _passes(self) -> Passes:
        return passes(self.stack, self.drafter, self.tokens)

    @property
    def best(self) -> "Speculative":
        """This run at the γ with the largest speedup on the time model at this batch (the smaller γ on a tie)."""
        speedups = self.by_gamma
        return replace(self, gamma=max(speedups, key=lambda g: (speedups[g], -g)))

    @property
    def best_gamma(self) -> Result:
        best = self.best.gamma
        speedups = self.by_gamma
        return Result(best, COUNT, formula="the γ with the largest speedup on the time model at this batch",
                      worked=(f"at a batch of {grouped(self.batch)}, γ of {best} gives {RATIO_FINE.show(speedups[best])}, "
                              f"the most for any γ from 1 to {max(speedups)} (γ of {self.gamma} gives {RATIO_FINE.show(speedups[self.gamma])})"
                              + ("; no γ pays here: decode without speculation" if speedups[best] < 1 else "")),
                      inputs=made_of(field(self, "batch"), _gamma(self.gamma, self)))

    @property
    def best_text(self) -> str:
        """The best γ at this batch in words, or that none pays."""
        best, speedups = self.best.gamma, self.by_gamma
        if speedups[best] < 1:
            return f"none; the least slow, γ of {best}, gives {RATIO_FINE.show(speedups[best])}"
        return f"{best}, giving {RATIO_FINE.show(speedups[best])}"

    @property
    def rule_gamma(self) -> Result:
        """The γ the batch-blind rule favours at this draft cost, for comparison."""
        cost = self.cost.value
        rules = {g: rule_value(self.alpha, g, cost) for g in GAMMAS}
        best = max(rules, key=lambda g: (rules[g], -g))
        return Result(best, COUNT, formula="the γ with the largest (1 − α^(γ+1)) ÷ ((1 − α)(γc + 1))",
                      worked=f"γ of {best} gives {RATIO_FINE.show(rules[best])} by the rule, the most for any γ from 1 to {GAMMAS[-1]}",
                      inputs=made_of(self.cost))

    @property
    def stops_by_gamma(self) -> str:
        """Where speculation stops paying for each γ up to this run's, at this α and length."""
        return "; ".join(f"γ {g}: {replace(self, gamma=g).stops_text}" for g in range(1, max(self.gamma, 2) + 1))

    @property
    def shared_gain(self) -> Result:
        """The card's tokens per second speculating beside the draft's weights and cache, over plain
        decoding at this batch (see shared_throughput)."""
        return shared_throughput(self)

    @property
    def shared_pool(self) -> Result:
        """Sequences of this length the cache admits once the draft's weights and its own cache share
        the target's KV budget (vLLM gives the draft's layers blocks in the same pool)."""
        ladder = kvcache.ladder(self.stack)
        shape = self.drafter.shape(self.stack.model)
        charged = kvcache.tokens_in_blocks(self.stack.model.tokens_cached(self.tokens), self.stack.block_size)
        if shape is None:
            return Result(kvcache.users_by_tokens(ladder.token_capacity, charged).value, COUNT,
                          formula="a lookup holds no weights and no cache", worked=f"{self.drafter.name}: the target's count",
                          inputs=made_of(ladder.token_capacity, charged))
        weights = weight_bytes(shape, self.stack.weight_precision)
        draft = kvcache.bytes_per_token(shape, self.stack.kv_precision)
        budget, per_token = _beside_draft(ladder, weights, draft)
        if budget.value <= 0:
            return Result(0, COUNT, formula="the draft's weights take the whole KV budget", inputs=made_of(ladder.kv_budget, weights),
                          worked=f"{ladder.kv_budget} KV budget < {weights} of draft weights: no sequence fits beside the draft")
        capacity = kvcache.token_capacity(budget, per_token, self.stack.block_size)
        users = kvcache.users_by_tokens(capacity, charged)
        # capacity counts whole blocks and users whole sequences: floors the line states in words
        return Result(users.value, COUNT,
                      formula="⌊(KV budget − draft weights) ÷ (target + draft cache per token), in blocks ÷ tokens per sequence⌋",
                      worked=(f"({ladder.kv_budget} − {weights}) ÷ ({ladder.per_token} + {draft}) = {capacity} in whole blocks; "
                              f"{capacity} ÷ {charged} → {grouped(users.value)} sequences"),
                      inputs=made_of(ladder.kv_budget, weights, ladder.per_token, draft, capacity, charged))

    @cached_property
    def largest(self) -> int:
        """The most sequences verified together at this length: what the pool admits with the drafts on
        top, beside the drafter's weights and cache when it holds them (as the calculator's batch check
        counts them), and what one engine step schedules (scheduled_batch). The last batch the scans try."""
        return max(1, min(admitted_batch(self.stack, self.drafter, self.tokens, self.gamma),
                          scheduled_batch(self.stack, self.gamma)))

    @cached_property
    def ranges(self) -> tuple[tuple[int, int, bool], ...]:
        """Batches from 1 to the largest, cut where speculation starts or stops paying on the time
        model: (first, last, pays). Speedup need not fall as the batch grows (the measured kernels'
        shares rise and fall with the tokens in a step), so every batch is tried."""
        found, first, paying = [], 1, self.at(1) >= 1
        for batch in range(2, self.largest + 1):
            pays = self.at(batch) >= 1
            if pays != paying:
                found.append((first, batch - 1, paying))
                first, paying = batch, pays
        found.append((first, self.largest, paying))
        return tuple(found)

    @property
    def stops(self) -> Result:
        """The first batch at which speculation stops paying after paying at a smaller one; the largest
        batch the pool admits when it pays throughout, 1 when it pays nowhere. The worked line shows
        the speedup on both sides of every change."""
        ranges = self.ranges
        sides = "; ".join(f"{_against_one(self.at(last))} at {grouped(last)}, "
                          f"{_against_one(self.at(following[0]))} at {grouped(following[0])}"
                          for (_, last, _), following in zip(ranges, ranges[1:]))
        worked = f"speedup {sides} sequences: {self.paying_text}" if sides else \
            f"speedup {RATIO_FINE.show(self.at(1), 3)} at 1 sequence, {RATIO_FINE.show(self.at(self.largest), 3)} at " \
            f"{grouped(self.largest)}: {self.paying_text}"
        stopping = [following[0] for (_, _, pays), following in zip(ranges, ranges[1:]) if pays]
        if stopping:
            return Result(stopping[0], COUNT, formula="the first batch that does not pay after one that does", worked=worked)
        if ranges[0][2] and len(ranges) == 1:
            return Result(self.largest, COUNT, formula=f"pays at every batch {self.pool_words} admits", worked=worked)
        if len(ranges) == 1:
            return Result(1, COUNT, formula=f"pays at no batch {self.pool_words} admits", worked=worked)
        return Result(self.largest, COUNT, formula=f"pays from a batch on, up to all {self.pool_words} admits", worked=worked)

    @property
    def paying_text(self) -> str:
        """Where it pays, in words: every range of batches up to what the pool admits."""
        ranges = self.ranges
        if len(ranges) == 1:
            return (f"{'pays at every' if ranges[0][2] else 'does not pay at any'} batch {self.pool_words} admits "
                    f"({_span(1, self.largest)} {'sequence' if self.largest == 1 else 'sequences'})")
        (first, last, pays), *rest = ranges
        parts = [f"{'pays' if pays else 'does not pay'} at {_span(first, last)} {'sequence' if last == 1 else 'sequences'}"]
        parts += [f"{'pays' if pays else 'not'} at {_span(first, last)}" for first, last, pays in rest]
        return f"{', '.join(parts)}, the most {self.pool_words} admits"

    @property
    def pool_words(self) -> str:
        """What bounds the batch: the target's cache alone, or the pool it shares with the drafter."""
        return "the cache" if self.drafter.shape(self.stack.model) is None else f"the pool beside the {self.drafter.name}"

    @property
    def stops_text(self) -> str:
        return f"it {self.paying_text}"

    @property
    def speedup_value(self) -> float:
        step, draft, verify = self._seconds
        return tokens_per_pass(self.alpha, self.gamma) * step / (self.gamma * draft + verify)

    def at(self, batch: int) -> float:
        """Speedup on the time model at another batch, from the passes' numbers (no step is rebuilt)."""
        passes_ = self._passes
        return (tokens_per_pass(self.alpha, self.gamma) * passes_.step(batch)
                / (self.gamma * passes_.draft_pass(batch) + passes_.verify(batch, self.gamma)))

    def cost_at(self, batch: int) -> float:
        """c at another batch: a draft pass over a target step."""
        return self._passes.draft_pass(batch) / self._passes.step(batch)


def _against_one(speedup: float) -> str:
    """A speedup with places enough (three at least) to show which side of 1× it falls on."""
    places = 3
    while places < 9 and (round(speedup, places) == 1 or (round(speedup, places) >= 1) != (speedup >= 1)):
        places += 1
    return RATIO_FINE.show(speedup, places)


def _span(first: int, last: int) -> str:
    return grouped(first) if first == last else f"{grouped(first)}–{grouped(last)}"


@dataclass(frozen=True)
class Verification:
    """One drafted token checked by rejection sampling: the draft proposes x with probability q(x);
    the target accepts it with probability min(1, p(x) ÷ q(x)), and on a rejection draws from the
    residual norm(max(0, p − q)). Chen et al. (Theorem 1) and Leviathan et al. (section 2.3) prove the
    token that comes out is distributed exactly as p; here it is computed, token by token."""

    labels: tuple[str, ...]
    target: tuple[float, ...]
    draft: tuple[float, ...]
    # p and q as the results they were computed as, where the caller has them (the sampler's stages)
    target_shares: tuple[Result, ...] = ()
    draft_shares: tuple[Result, ...] = ()

    @property
    def acceptance(self) -> Result:
        """α for this position: Σ min(p, q), the chance a draft from q survives."""
        terms = [min(p, q) for p, q in zip(self.target, self.draft)]
        value = sum(terms)
        formula = "Σ min(p(x), q(x)) over the tokens"
        operands = [self._smaller(i, t) for i, t in enumerate(terms) if t]
        if not operands:
            return Result(value, SHARE, formula=formula, worked=f" = {value:.4f}")
        added = total(operands)  # a zero term adds nothing, so the sum is the same with it left out
        return added.result(SHARE, formula, shown=f"{added.value:.4f}")

    def _smaller(self, i: int, smaller: float) -> Expr:
        """min(p, q) for token i: the target's or the draft's probability, as the result it came from."""
        shown = f"{smaller:.4f}"
        if self.target_shares and self.draft_shares:
            share = self.target_shares[i] if self.target[i] <= self.draft[i] else self.draft_shares[i]
            if share.value == smaller:
                return term(share, shown)
        return term(smaller, shown)

    @property
    def residual(self) -> tuple[float, ...]:
        excess = [max(0.0, p - q) for p, q in zip(self.target, self.draft)]
        total = sum(excess)
        return tuple(e / total if total else 0.0 for e in excess)

    @property
    def output(self) -> tuple[float, ...]:
        """P(token) = q × min(1, p ÷ q) + (1 − α) × residual: accepted as drafted, or drawn after a rejection."""
        rejected = 1 - self.acceptance.value
        return tuple((q * min(1.0, p / q) if q else 0.0) + rejected * r
                     for p, q, r in zip(self.target, self.draft, self.residual))

    @property
    def largest_gap(self) -> Result:
        value = max(abs(o - p) for o, p in zip(self.output, self.target))
        places = "every" if value == 0 else f"{math.floor(-math.log10(value))}"
        return Result(value, FRACTION, formula="the largest |P(token) − p(token)|",
                      worked=f"all {len(self.labels)} tokens' probabilities agree with the target's to {places} decimal places")

    @property
    def excess(self) -> str:
        """The tokens the residual can draw: where the target wants more than the draft offered."""
        return ", ".join(f"“{label}”" for label, p, q in zip(self.labels, self.target, self.draft) if p > q)


def speculative(stack: Stack, chosen: Speculation) -> Speculative:
    return Speculative(stack, chosen.acceptance, chosen.drafted, DRAFTERS[chosen.drafter], chosen.batch,
                       stack.workload.tokens_held)


def shared_throughput(full: Speculative) -> Result:
    """Tokens per second of the whole card with speculation, its batch shrunk to what the pool admits
    beside the draft's weights and cache, over plain decoding at the full batch."""
    pool = full.shared_pool
    if pool.value < 1:
        return Result(0, RATIO_FINE, formula="no sequence fits beside the draft", inputs=made_of(pool),
                      worked=f"{pool.worked}, so the card cannot speculate with this draft at all")
    shared = replace(full, batch=int(pool.value))
    pass_time, step = shared.pass_time, full.step
    speculating = term(pool, grouped(shared.batch)) * term(shared.per_pass) / term(pass_time, MS.precise(pass_time.value))
    speculating = Expr(speculating.value, f"({speculating.text})", speculating.inputs)  # bracketed, as the rule reads
    plain_rate = term(field(full, "batch"), grouped(full.batch)) / term(step, MS.precise(step.value))
    return (speculating / plain_rate).result(RATIO_FINE, "(B′ × tokens per pass ÷ pass time at B′) ÷ (B ÷ ordinary step at B)")


def gamma_curves(run: Speculative) -> dict:
    """Speedup on the time model against γ at the reader's batch, for several α and the reader's, over the
    γ that best γ compares."""
    alphas = list(CHART_ALPHAS) + [run.alpha]
    names = [f"α = {plain(a)}" for a in CHART_ALPHAS] + [f"your α = {plain(run.alpha)}"]
    gammas = list(run.by_gamma)  # 1 to 10, and on to the reader's γ when it is larger
    curves = [{"name": name, "x": gammas, "y": [run.speedup_for(a, g) for g in gammas]}
              for a, name in zip(alphas, names)]
    rows = [[str(g)] + [f"{curve['y'][i]:.2f}×" for curve in curves] for i, g in enumerate(gammas)]
    return {"curves": curves, "rows": rows}


def batch_curves(run: Speculative) -> dict:
    """Speedup on the time model against batch, up to what the pool admits (beside the drafter), beside the rule that
    ignores the batch, and 1×."""
    x = [b for b in CHART_BATCHES if b < run.largest] + [run.largest]
    model = [run.at(b) for b in x]
    rule = [rule_value(run.alpha, run.gamma, run.cost_at(b)) for b in x]
    curves = [
        {"name": "on the time model: verification over B × (γ + 1) tokens", "x": x, "y": model},
        {"name": "the rule, the pass taken as one ordinary step", "x": x, "y": rule},
        {"name": "break-even (1×)", "x": [x[0], x[-1]], "y": [1, 1]},
    ]
    rows = [[grouped(b), f"{model[i]:.2f}×", f"{rule[i]:.2f}×"] for i, b in enumerate(x)]
    return {"curves": curves, "rows": rows}


def section(stack: Stack, chosen: Speculation, setting: Sampling) -> dict[str, object]:
    """Document 13's speculative-decoding facts on one stack, speculating as `chosen`, with a few batches
    side by side; the example draft verified is the sampler's `setting`."""
    from .sampling import CANDIDATES, sample
    run = speculative(stack, chosen)
    stages = sample(setting).stages
    # The example draft proposes from the untempered, unfiltered distribution; the target samples
    # from the page's final one: two different distributions over the same six candidates.
    lossless = Verification(tuple(c.strip() for c in CANDIDATES), stages[-1].probabilities, stages[0].probabilities,
                            tuple(stages[-1].tokens.values()), tuple(stages[0].tokens.values()))
    admitted = timing.compute_bound_batch(stack, run.tokens).admitted
    full = replace(run, batch=max(1, int(admitted.value)))
    return {
        "run": run,
        "alpha": Result(run.alpha, AS_TYPED, worked=plain(run.alpha)),
        "gamma": Result(run.gamma, COUNT, worked=str(run.gamma)),
        "drafter": run.drafter.name,
        "admitted": admitted,
        "full": full,
        "doubtful": replace(run, alpha=CHART_ALPHAS[0]),
        "doubtful_full": replace(full, alpha=CHART_ALPHAS[0]),
        "recovered": alpha_from_rate(run.reported_rate.value, run.gamma, reported=run.reported_rate, of=run),
        "lossless": lossless,
        "papers": {"leviathan": LEVIATHAN, "leviathan_arithmetic": LEVIATHAN_ARITHMETIC, "chen": CHEN, "eagle": EAGLE, "medusa": MEDUSA, "lookup": PROMPT_LOOKUP},
        "vllm": {"metrics": VLLM_METRICS, "dynamic": DYNAMIC, "docs": VLLM_SPEC_DOCS},
        "rate_formula": "reported rate = (α + α² + … + α^γ) ÷ γ = α(1 − α^γ) ÷ ((1 − α) × γ)",
        "per_pass_formula": "tokens per pass = (1 − α^(γ+1)) ÷ (1 − α)",
        "speedup_formula": "speedup = (1 − α^(γ+1)) ÷ ((1 − α) × (γ × c + 1))",
        "eagle": replace(run, drafter=DRAFTERS["eagle"]),
        "ngram": replace(run, drafter=DRAFTERS["ngram"]),
        "all_accepted": expected_tokens(1.0, run.gamma),
        "free_draft": speedup_rule(run.alpha, run.gamma, 0.0),
    }
