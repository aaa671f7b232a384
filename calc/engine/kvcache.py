"""The KV cache: what one token leaves behind, and how many users a card can hold."""
from __future__ import annotations

from functools import lru_cache

import math
from dataclasses import dataclass, replace

from ..model.kvshape import bytes_per_token
from ..specs.models import Model
from ..specs.precision import FP8
from ..model.weights import weight_bytes
from . import memory
from .memory import Accounting, Rungs
from ..specs.stack import Stack
from ..core.arith import field, made_of, term
from ..core.units import COUNT, GIB_HELD, PERCENT, RATIO, TIMES, TOKENS, Result, floor_count, grouped, plain



def key_width(model: Model) -> Result:
    """The width of one layer's keys (and of its values): KV heads × head dimension."""
    return (term(field(model, "num_key_value_heads")) * term(field(model, "head_dim"))).result(COUNT, "kv_heads × head_dim")


def bytes_for_tokens(per_token: Result, tokens: int) -> Result:
    """The cache one sequence holds once it has reached `tokens` tokens."""
    return (term(per_token) * term(tokens, grouped(tokens))).result(GIB_HELD, "per token × tokens")


def blocks_for(tokens: int, block_size: int) -> int:
    """Paged allocation hands out whole blocks: a partly filled last block still counts."""
    return -(-tokens // block_size)


def _blocks(count: int) -> str:
    return f"{grouped(count)} block" + ("" if count == 1 else "s")


def tokens_in_blocks(tokens: int, block_size: int) -> Result:
    """The tokens a sequence is charged under paging: its length rounded up to whole blocks."""
    blocks = blocks_for(tokens, block_size)
    value = blocks * block_size
    return Result(value, TOKENS, formula="⌈tokens ÷ block⌉ × block", inputs=(),  # two whole numbers, both shown
                  worked=f"⌈{grouped(tokens)} ÷ {block_size}⌉ = {_blocks(blocks)}; "
                         f"{grouped(blocks)} × {block_size} = {TOKENS.show(value)}")


def token_capacity(budget: Result, per_token: Result, block_size: int) -> Result:
    """The tokens the KV budget holds, in whole blocks: the figure an engine logs at start-up."""
    if budget.value <= 0:
        return Result(0, TOKENS, formula="⌊KV budget ÷ (block × per token)⌋ × block",
                      worked=f"a KV budget of {budget} holds no tokens", inputs=made_of(budget))
    blocks = floor_count(budget.value, block_size * per_token.value)
    value = blocks * block_size
    return Result(value, TOKENS, formula="⌊KV budget ÷ (block × per token)⌋ × block",
                  worked=f"⌊{grouped(int(budget.value))} B ÷ ({block_size} × {grouped(per_token.value)} B)⌋ = {_blocks(blocks)}; "
                         f"{grouped(blocks)} × {block_size} = {TOKENS.show(value)}", inputs=made_of(budget, per_token))


def users_by_tokens(capacity: Result, per_user: Result) -> Result:
    """Whole users: the floor of the token capacity over the tokens each user is charged."""
    users = floor_count(capacity.value, per_user.value)
    return Result(users, COUNT, formula="⌊token capacity ÷ tokens per user⌋",
                  worked=(f"{capacity} ÷ {per_user} = {grouped(capacity.value / per_user.value, 2)} → "
                          f"{grouped(users)} users"), inputs=made_of(capacity, per_user))


def bytes_paged(per_token: Result, tokens: int, block_size: int) -> Result:
    """The cache a sequence of `tokens` holds under paging: only its blocks, rounded up."""
    blocks = blocks_for(tokens, block_size)
    value = per_token.value * blocks * block_size
    return Result(
        value,
        GIB_HELD,
        formula="⌈tokens ÷ block⌉ × block × per token",
        worked=(f"⌈{grouped(tokens)} ÷ {block_size}⌉ = {_blocks(blocks)}; "
                f"{grouped(blocks)} × {block_size} × {per_token.operand} = {GIB_HELD.show(value)}"),
        inputs=made_of(per_token),
    )


@dataclass(frozen=True)
class Ladder(Rungs):
    """Document 06's ladder: the engine's accounting of one GPU (calc.engine.memory), then the users
    its cache holds, worst case and paged."""

    stack: Stack
    accounting: Accounting
    tokens_per_user: Result
    per_user: Result
    users_worst: Result
    tokens_per_user_paged: Result
    per_user_paged: Result
    users_paged: Result
    paging_gain: Result

    @property
    def weights_fit(self) -> bool:
        return self.accounting.fits

    @property
    def binds(self) -> str:
        """What stops the count from being larger, in a phrase."""
        if not self.weights_fit:
            return "the weights and what the profile holds back do not fit in the pool"
        if self.users_worst.value < 1:
            return "the KV budget is smaller than one user's worst-case cache"
        return "the KV budget: cache memory, not compute"


@lru_cache(maxsize=512)
def ladder(stack: Stack) -> Ladder:
    """The engine's pool − weights − activation peak − non-torch − CUDA graphs = KV budget; in whole
    blocks; ÷ each user's blocks = users."""
    accounting = memory.of_stack(stack)
    worst, typical = stack.model.tokens_cached(stack.context_limit), stack.model.tokens_cached(stack.typical_conversation)
    tokens_per_user = tokens_in_blocks(worst, stack.block_size)
    tokens_per_user_paged = tokens_in_blocks(typical, stack.block_size)
    per_token = accounting.per_token
    per_user = bytes_paged(per_token, worst, stack.block_size)
    per_user_paged = bytes_paged(per_token, typical, stack.block_size)
    # Users are whole blocks each, so they divide the blocks, not the engine's logged token figure
    # (which counts ⌈limit ÷ block⌉ blocks as `limit` tokens).
    count = int(accounting.blocks.value)
    capacity = (term(accounting.blocks, grouped(count)) * term(stack.block_size)).result(TOKENS, "blocks × block")
    return Ladder(
        stack=stack,
        accounting=accounting,
        tokens_per_user=tokens_per_user,
        per_user=per_user,
        users_worst=users_by_tokens(capacity, tokens_per_user),
        tokens_per_user_paged=tokens_per_user_paged,
        per_user_paged=per_user_paged,
        users_paged=users_by_tokens(capacity, tokens_per_user_paged),
        paging_gain=Result(per_user.value / per_user_paged.value, RATIO,
                           formula="tokens charged at the limit ÷ tokens held, in blocks",
                           worked=(f"{tokens_per_user} ÷ {tokens_per_user_paged} = "
                                   f"{RATIO.show(tokens_per_user.value / tokens_per_user_paged.value)}"),
                           inputs=made_of(tokens_per_user, tokens_per_user_paged)),
    )


@dataclass(frozen=True)
class Lever:
    """One step of the stacked levers: what changed, the per-user cache after it, and the users."""

    name: str
    per_user: Result
    users: Result
    gain: Result


@dataclass(frozen=True)
class Levers:
    """Multi-head attention → GQA → fp8 cache → paging, on one fixed KV budget."""

    kv_budget: Result
    multi_head: Lever
    gqa: Lever
    fp8_cache: Lever
    paging: Lever
    gqa_factor: Result
    fp8_factor: Result
    fp8_weights_budget_gain: Result

    @property
    def steps(self) -> tuple[Lever, ...]:
        return (self.multi_head, self.gqa, self.fp8_cache, self.paging)

    @property
    def bar_widths(self) -> list[float]:
        """Each step's users as a percentage of the most any step admits, for drawing the bars."""
        top = max(max(step.users.value for step in self.steps), 1)
        return [round(100 * step.users.value / top, 2) for step in self.steps]

    @property
    def total_gain(self) -> Result:
        """The levers' gains multiplied: each divides a different factor of the formula."""
        factors = [step.gain for step in self.steps[1:]]
        value = math.prod(f.value for f in factors)
        shown = " × ".join(f"({f.worked.rpartition(' = ')[0]})" for f in factors)
        return Result(value, RATIO, formula="the levers' gains multiplied", worked=f"{shown} = {RATIO.show(value)}",
                      inputs=made_of(*factors))


def stacked_levers(stack: Stack) -> Levers:
    """Each lever acts on a different factor of the formula, so their effects multiply.

    The budget is held at the stack's own: the comparison isolates the cache. (A multi-head
    twin of the model would also carry larger K and V projections; see the deep read.)
    """
    budget = ladder(stack).kv_budget
    model = stack.model
    worst = tokens_in_blocks(model.tokens_cached(stack.context_limit), stack.block_size)
    typical = tokens_in_blocks(model.tokens_cached(stack.typical_conversation), stack.block_size)
    multi_head = replace(model, num_key_value_heads=model.num_attention_heads)
    fp8 = FP8 if stack.kv_precision.bytes > FP8.bytes else stack.kv_precision
    heads = made_of(field(model, "num_attention_heads"), field(model, "num_key_value_heads"))
    gains = [
        Result(1.0, RATIO, formula="the starting point", worked="the starting point"),
        Result(model.query_heads_per_kv_head, RATIO, formula="num_attention_heads ÷ num_key_value_heads",
               worked=f"{model.num_attention_heads} ÷ {model.num_key_value_heads} = "
                      f"{RATIO.show(model.query_heads_per_kv_head)}", inputs=heads),
        Result(stack.kv_precision.bytes / fp8.bytes, RATIO, formula="bytes per element before ÷ after", inputs=(),
               worked=f"{plain(stack.kv_precision.bytes)} B ÷ {plain(fp8.bytes)} B = "
                      f"{RATIO.show(stack.kv_precision.bytes / fp8.bytes)}"),
        Result(worst.value / typical.value, RATIO, formula="tokens charged at the limit ÷ tokens held, in blocks",
               worked=f"{worst} ÷ {typical} = {RATIO.show(worst.value / typical.value)}", inputs=made_of(worst, typical)),
    ]
    # On a tensor-parallel split the budget is one GPU's, so each step's cache per token is one GPU's share.
    share = ladder(stack).per_token.value / bytes_per_token(model, stack.kv_precision).value

    def on_one_gpu(per_token: Result) -> Result:
        if share == 1:
            return per_token
        return (term(per_token) * term(share, plain(share))).result(per_token.unit, "cache per token × this GPU's share")
    plan = [("multi_head", on_one_gpu(bytes_per_token(multi_head, stack.kv_precision)), worst),
            ("gqa", on_one_gpu(bytes_per_token(model, stack.kv_precision)), worst),
            ("fp8_cache", on_one_gpu(bytes_per_token(model, fp8)), worst),
            ("paging", on_one_gpu(bytes_per_token(model, fp8)), typical)]
    steps = []
    for (name, per_token, tokens), gain in zip(plan, gains, strict=True):
        per_user = bytes_for_tokens(per_token, int(tokens.value))
        users = users_by_tokens(token_capacity(budget, per_token, stack.block_size), tokens)
        steps.append(Lever(name, per_user, users, gain))
    fp8_weights = weight_bytes(model, FP8)
    weights = weight_bytes(model, stack.weight_precision)
    budget_fp8_weights = budget.value + weights.value - fp8_weights.value
    formula = "KV budget with fp8 weights ÷ KV budget − 1"
    if budget.value > 0:
        budget_gain = ((term(budget) + term(weights) - term(fp8_weights)) / term(budget) - 1).result(PERCENT, formula)
    else:
        budget_gain = Result(0.0, PERCENT, formula=formula, inputs=made_of(budget, weights, fp8_weights),
                             worked=(f"no gain can be stated as a share of a KV budget of {budget}; fp8 weights would "
                                     f"make it {GIB_HELD.show(budget_fp8_weights)}"))
    return Levers(
        budget,
        *steps,
        gqa_factor=Result(model.query_heads_per_kv_head, TIMES, formula="num_attention_heads ÷ num_key_value_heads",
                          worked=f"{model.num_attention_heads} ÷ {model.num_key_value_heads} = {model.query_heads_per_kv_head}×",
                          inputs=heads),
        fp8_factor=Result(stack.kv_precision.bytes / fp8.bytes, TIMES, formula="bytes per element before ÷ after",
                          inputs=(),  # two formats' widths, both shown
                          worked=(f"{plain(stack.kv_precision.bytes)} B ÷ {plain(fp8.bytes)} B = "
                                  f"{TIMES.show(stack.kv_precision.bytes / fp8.bytes)}")),
        fp8_weights_budget_gain=budget_gain,
    )


def recompute_cost_ratio(prompt: int, output: int) -> Result:
    """Token-passes without a cache ÷ with one, for `output` tokens after a `prompt`.

    Without a cache, output token i needs a pass over all prompt + i − 1 tokens before it;
    with one, the prompt is processed once and each later token once.
    """
    without = output * prompt + output * (output - 1) // 2
    with_cache = prompt + output - 1
    value = without / with_cache
    return Result(
        value,
        TIMES,
        formula="(N × P + N(N − 1) ÷ 2) ÷ (P + N − 1)",
        inputs=(),  # two lengths, both shown
        worked=(f"({grouped(output)} × {grouped(prompt)} + {grouped(output)} × {grouped(output - 1)} ÷ 2) ÷ "
                f"({grouped(prompt)} + {grouped(output - 1)}) = {grouped(without)} ÷ {grouped(with_cache)} = "
                f"{TIMES.show(value)}"),
    )

