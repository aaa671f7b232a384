"""Document 11: one model over many GPUs. What each GPU holds when the weights are split by tensor
parallelism (and the layers by pipeline stages), the cache each GPU keeps per token, the users the
group admits, and what the split costs in communication: two all-reduces per layer, priced as a
ring over the card's link, against the time model's step.

What divides and what does not, as vLLM shards a Llama-style model: every block matrix is split
across the tensor-parallel ranks (columns of q, k, v, gate and up; rows of o and down); the
embedding and the LM head are split by vocabulary after padding it to a multiple of 64
(VOCAB_SOURCE); norms are replicated. KV heads are split while there are at least as many as
ranks, and replicated past that (SPLIT_SOURCE). A latent (MLA) cache has a single head, so every
rank keeps all of it. Pipeline stages hold whole layers; the busiest stage is the one priced.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from functools import lru_cache

from . import kvcache, timing
from ..model import operations
from ..model.anatomy import count_parameters
from . import memory, steptime
from .sharding import (VOCAB_PADDING, VOCAB_SOURCE, cache_per_token, kv_copies, kv_heads_per_rank, matrices_per_gpu,
    norms_per_gpu, tables_per_gpu)
from ..specs.cards import H200_SXM, L40S, Card
from ..specs.models import DEEPSEEK_V3, LLAMA_3_1_405B, LLAMA_3_1_70B, MIXTRAL_8X7B, Model
from ..specs.precision import BF16, FP8, PRECISIONS, Precision
from ..model.weights import weight_bytes
from . import kernels
from ..specs.stack import MEASURED, Stack
from ..core.arith import Expr, ceil_div, field, made_of, term, total
from ..core.units import (BYTES, COUNT, GB_MOVED, GB_PER_S, GIB_HELD, MICROSECONDS, MS, PERCENT, RATIO, RATIO_FINE,
    SHARE, TIMES, TOKENS_PER_S, GiB, Result, given, grouped, plain)

NODE_GPUS = 8  # GPUs one server joins by NVLink (HGX H100, H200, B200) or on one PCIe fabric
DEGREES = (1, 2, 4, 8)
# Published measurements the two link assumptions stand for (calc.specs.stack.Parallel), as data.
RING_EFFECTIVE_GB_PER_S = 370
RING_SOURCE = ("NCCL's developers: H100 NVLink's line rate is 450 GB/s; after about 20% of protocol overhead a ring "
               "(NCCL_ALGO=RING) reaches an effective 370 GB/s, https://github.com/NVIDIA/nccl-tests/issues/212")
NVLS_BUS_GB_PER_S = 480
NVLS_SOURCE = ("NCCL's developers: on eight H100s an all-reduce uses NVLink SHARP (NVLS) by default and peaks near "
               "480 GB/s of bus bandwidth, https://github.com/NVIDIA/nccl-tests/issues/212")
CUSTOM_ALL_REDUCE_US = {2: 9.5, 4: 9.1, 8: 10.1}
CUSTOM_ALL_REDUCE_SOURCE = ("vLLM's custom all-reduce on H100, 512 float32 elements (2 KiB), timed in eager mode by a "
                            "host loop, at tp 2, 4 and 8; the same table times SGLang's kernel at 3.7 to 5.9 µs: "
                            "https://github.com/sgl-project/sglang/pull/2904")
# DeepSeek-V3's node-limited routing, from its config.json (not among calc.specs.models' fields): 256 routed
# experts in n_group groups, and each token chooses its experts from topk_group of the groups.
ROUTING_GROUPS, ROUTING_GROUPS_CHOSEN = 8, 4
ROUTING_SOURCE = ("DeepSeek-V3 config.json: n_group 8, topk_group 4, https://huggingface.co/deepseek-ai/DeepSeek-V3; "
                  "DeepEP's normal kernels send a token once to each rank that holds one of its experts "
                  "(get_dispatch_layout, is_token_in_rank), its low-latency kernels once per expert, "
                  "https://github.com/deepseek-ai/DeepEP")
SGLANG_ALL_REDUCE_US = (3.7, 5.9)  # the fastest and slowest of SGLang's own kernel in the same table
ACTIVATIONS = BF16  # what the all-reduces carry: activations stay in 16 bits under fp8 or int4 weights
GPUS_PER_NODE = given(NODE_GPUS, COUNT, "GPUs per node")  # the fact parallel.node_gpus, as an operand


def _scaled(read: Result, factor: float, shown: str) -> Expr:
    """A datasheet number in its own units (GB/s) as an operand in base units, shown as the sheet prints it."""
    return Expr(read.value * factor, shown, (read,))


def _relabelled(result: Result) -> tuple[Result, ...]:
    """The inputs of a result shown again under another name, with its own worked line: what it rests on."""
    return result.inputs or made_of(result)


def refusal(model: Model, tensor: int, pipeline: int) -> str:
    """Why this split cannot run, in a sentence, or "" when it can."""
    if tensor > NODE_GPUS:
        return (f"tensor parallelism beyond one node's {NODE_GPUS} GPUs would all-reduce over the network twice a "
                f"layer; keep it within the node and add pipeline stages instead")
    if model.num_attention_heads % tensor:
        return (f"{tensor} does not divide {model.name}'s {model.num_attention_heads} attention heads: each rank "
                f"must hold whole heads")
    if not model.is_latent and model.num_key_value_heads % tensor and tensor % model.num_key_value_heads:
        return (f"{tensor} neither divides nor is a multiple of {model.name}'s {model.num_key_value_heads} KV heads: "
                f"each rank must hold whole KV heads, or each head the same number of times")
    if pipeline > model.num_hidden_layers:
        return f"{model.name} has {model.num_hidden_layers} layers: a stage must hold at least one"
    return ""


def remainder(pool: Result, weights: Result, reserve: Result) -> Result:
    """pool − weights − what the profile holds back, shown precisely enough that the printed terms
    subtract to it."""
    value = pool.value - weights.value - reserve.value
    terms = (pool, weights, reserve)
    printed = round(value / GiB, 2)
    by_hand = round(pool.value / GiB, 2) - round(weights.value / GiB, 2) - round(reserve.value / GiB, 2)
    precise = abs(by_hand - printed) > 0.005
    first, second, third = (term(t, None if precise else str(t)) for t in terms)
    return (first - second - third).result(GIB_HELD, "pool − weights per GPU − activation, non-torch and CUDA graphs")


@dataclass(frozen=True)
class Plan(memory.Rungs):
    """One model split tp × pp ways: the ladder of one GPU, and what the group and a node admit."""

    stack: Stack
    tensor: int
    pipeline: int
    layers: Result
    kv_heads: Result
    kv_copies: Result
    matrices: Result
    tables: Result
    norms: Result
    accounting: memory.Accounting
    tokens_per_user: Result
    users_worst: Result
    users_paged: Result

    @property
    def model(self) -> Model:
        return self.stack.model

    @property
    def gpus(self) -> Result:
        return (term(given(self.tensor, COUNT, "tensor-parallel degree"))
                * term(given(self.pipeline, COUNT, "pipeline stages"))).result(COUNT, "tp × pp")

    @property
    def fits(self) -> bool:
        return self.kv_budget.value > 0 and self.users_worst.value >= 1

    @property
    def verdict(self) -> str:
        if self.kv_budget.value <= 0:
            return (f"does not fit: each GPU's share of the weights and what its profile holds back overflow its pool by "
                    f"{GIB_HELD.show(-self.kv_budget.value)}")
        if self.users_worst.value < 1:
            return "loads, but not one sequence at the full context limit fits in the cache left"
        return f"fits, with {grouped(self.users_worst.value)} users at the context limit"

    @property
    def nodes(self) -> int:
        return -(-int(self.gpus.value) // NODE_GPUS)

    @property
    def replicas(self) -> Result:
        """Copies of the model one node holds side by side (data parallelism), or 1 when one copy spans nodes."""
        gpus = int(self.gpus.value)
        value = max(NODE_GPUS // gpus, 1)
        if not self.fits:
            return Result(0, COUNT, formula="no copy serves", worked=f"{self.verdict}: no copy serves",
                          inputs=made_of(self.kv_budget, self.users_worst))
        if gpus > NODE_GPUS:
            return Result(value, COUNT, formula="one copy over several nodes",
                          worked=f"{gpus} GPUs span {self.nodes} nodes of {NODE_GPUS}: one copy",
                          inputs=made_of(self.gpus, GPUS_PER_NODE))
        # ⌊8 ÷ tp × pp⌋ is at least 1 here, so the max() above changes nothing
        return (term(GPUS_PER_NODE) // term(self.gpus, str(gpus))).result(COUNT, "⌊GPUs per node ÷ (tp × pp)⌋")

    @property
    def copies_text(self) -> str:
        copies = int(self.replicas.value)
        if not copies:
            return "no copy serves a user"
        if self.nodes > 1:
            return f"one copy spans {self.nodes} nodes"
        return f"{copies} {'copy' if copies == 1 else 'copies'} per node"

    @property
    def gpus_text(self) -> str:
        gpus = int(self.gpus.value)
        return f"{gpus} {'GPU' if gpus == 1 else 'GPUs'} per copy"

    @property
    def kv_heads_text(self) -> str:
        heads = int(self.kv_heads.value)
        return f"{heads} KV {'head' if heads == 1 else 'heads'} each"

    @property
    def node_users(self) -> Result:
        """Users one node serves: every replica's, or a share of one replica's when it spans nodes."""
        users, copies = int(self.users_worst.value), int(self.replicas.value)
        value = users * copies // self.nodes
        if self.nodes == 1:
            return (term(self.users_worst, grouped(users)) * term(self.replicas, str(copies))).result(
                COUNT, "users per copy × copies per node")
        return Result(value, COUNT, formula="users per copy ÷ nodes per copy",
                      worked=f"{grouped(users)} ÷ {self.nodes} = {grouped(users / self.nodes, 1)} → {grouped(value)}",
                      inputs=made_of(self.users_worst))


@lru_cache(maxsize=256)
def plan(stack: Stack, tensor: int, pipeline: int) -> Plan:
    """The stack's model (its weights and cache precisions, on its card) split tp × pp ways: the
    engine's ladder on one GPU of the split."""
    model = stack.model
    ladder = kvcache.ladder(stack)
    accounting = memory.of_stack(stack, tensor=tensor, pipeline=pipeline)
    capacity = accounting.tokens
    return Plan(
        stack=stack, tensor=tensor, pipeline=pipeline,
        layers=ceil_div(field(model, "num_hidden_layers"), pipeline).result(COUNT, "⌈layers ÷ stages⌉"),
        kv_heads=Result(kv_heads_per_rank(model, tensor), COUNT, formula="KV heads per rank",
                        worked=COUNT.show(kv_heads_per_rank(model, tensor)),
                        inputs=() if model.is_latent else made_of(field(model, "num_key_value_heads"))),
        kv_copies=kv_copies(model, tensor),
        matrices=matrices_per_gpu(model, tensor, pipeline),
        tables=tables_per_gpu(model, tensor, pipeline),
        norms=norms_per_gpu(model, pipeline),
        accounting=accounting,
        tokens_per_user=ladder.tokens_per_user,
        users_worst=kvcache.users_by_tokens(capacity, ladder.tokens_per_user),
        users_paged=kvcache.users_by_tokens(capacity, ladder.tokens_per_user_paged),
    )


# ---- Communication: two all-reduces per layer, as a ring over the card's link.

def one_way(card: Card) -> Result:
    """Datasheets quote NVLink and PCIe with both directions added; a ring sends one way at a time."""
    # rate × 1e9 ÷ 2 is rate ÷ 2 × 1e9 to the bit: halving is exact
    rate = field(card, "interconnect_gb_per_s", what="interconnect (both directions, GB/s)")
    return (_scaled(rate, 1e9, f"{grouped(rate.value)} GB/s") / term(2)).result(
        GB_PER_S, "the datasheet's link rate (both directions) ÷ 2")


def achieved_link(stack: Stack) -> Result:
    line = one_way(stack.card)
    fraction = field(stack.parallel, "link_fraction", PERCENT, "share of the one-way line rate a ring reaches")
    # fraction × line is line × fraction to the bit: a product of two floats does not depend on the order
    reached = term(fraction, plain(fraction.value)) * term(line, str(line))
    return reached.result(GB_PER_S, "link fraction × one-way rate", shown=GB_PER_S.precise(reached.value))


def ring_factor(gpus: int) -> Result:
    """Each GPU of a ring all-reduce sends (and receives) 2(n − 1) ÷ n of the message."""
    return (term(2) * (term(gpus) - term(1)) / term(gpus)).result(RATIO_FINE, "2(n − 1) ÷ n")


@dataclass(frozen=True)
class AllReduces:
    """Every all-reduce of one forward pass over `tokens` token positions, on `gpus` ranks."""

    gpus: int
    tokens: int
    count: Result
    message: Result
    traffic: Result
    link: Result
    latency: Result
    each: Result
    sketch: Result
    measured: bool = False

    @property
    def bytes(self) -> Result:
        return (term(self.count, grouped(self.count.value)) * term(self.traffic, f"{grouped(self.traffic.value)} B")).result(
            GB_MOVED, "all-reduces × traffic per GPU")

    @property
    def time(self) -> Result:
        return (term(self.count, grouped(self.count.value)) * term(self.each, MICROSECONDS.precise(self.each.value))).result(
            MS, "all-reduces × time of each")

    @property
    def latency_share(self) -> Result:
        if not self.each.value:
            return Result(0.0, PERCENT, formula="fixed cost ÷ time of one all-reduce", worked="no all-reduce to share out",
                          inputs=made_of(self.each))
        return (term(self.latency) / term(self.each, MICROSECONDS.precise(self.each.value))).result(
            PERCENT, "fixed cost ÷ time of one all-reduce")


def all_reduces(stack: Stack, tensor: int, tokens: int, layers: int) -> AllReduces:
    """Two per layer (after attention's output projection and after the MLP's down projection) and
    one for the vocabulary-split embedding, each of tokens × hidden activations. Each is priced as
    vLLM's all-reduce was measured on the card at that degree (calc.engine.kernels.all_reduce_time),
    where it was and the stack asks for it; otherwise, and always as the sketch a reader can check,
    as a fixed cost plus a ring's traffic over the achieved link."""
    model = stack.model
    link, latency = achieved_link(stack), given(stack.parallel.latency_s, MICROSECONDS, "fixed cost per all-reduce")
    elements = tokens * model.hidden_size
    message_r = (term(tokens) * term(field(model, "hidden_size")) * term(ACTIVATIONS.bytes, "2 B")).result(
        BYTES, "tokens × hidden × 2 B (bf16 activations)")
    message = message_r.value
    if tensor == 1:
        none = Result(0, COUNT, formula="no tensor parallelism", worked="one GPU per stage: nothing to all-reduce")
        zero = Result(0, MICROSECONDS, worked="0 µs")
        return AllReduces(1, tokens, none, message_r, Result(0, BYTES, worked="0 B"), link, latency, zero, zero)
    depth = term(field(model, "num_hidden_layers")) if layers == model.num_hidden_layers else term(layers)
    count = (term(2) * depth + term(1)).result(COUNT, "2 × layers + 1 (the embedding)")
    factor = ring_factor(tensor)
    # factor × message is message × factor to the bit
    traffic_r = (term(factor, f"2 × ({tensor} − 1) ÷ {tensor}") * term(message_r, f"{grouped(message)} B")).result(
        BYTES, "2(n − 1) ÷ n × message")
    traffic = traffic_r.value
    ring_e = term(latency, str(latency)) + term(traffic_r, f"{grouped(traffic)} B") / term(link)
    ring = ring_e.value
    unit = MICROSECONDS if ring < 0.001 else MS  # a prompt's all-reduce can run to milliseconds
    sketch = ring_e.result(unit, "fixed cost + traffic ÷ achieved link")
    measured = stack.parallel.all_reduce == MEASURED and bool(kernels.all_reduce_rows(stack.card, tensor))
    if measured:
        latency = kernels.all_reduce_time(stack.card, tensor, 1)
        latency = Result(latency.value, MICROSECONDS, formula="the smallest message's all-reduce, measured",
                         worked=latency.worked, inputs=_relabelled(latency))
    return AllReduces(
        gpus=tensor, tokens=tokens,
        count=count,
        message=message_r,
        traffic=traffic_r,
        link=link, latency=latency,
        each=kernels.all_reduce_time(stack.card, tensor, elements) if measured else sketch,
        sketch=sketch, measured=measured,
    )


def handoffs(stack: Stack, pipeline: int, tokens: int) -> Result:
    """Between pipeline stages, one send of the activations: stages − 1 per pass."""
    hops = pipeline - 1
    if not hops:
        return Result(0, MS, formula="one stage: no hand-off", worked="one stage: no hand-off")
    link = achieved_link(stack)
    message = tokens * stack.model.hidden_size * ACTIVATIONS.bytes
    latency = field(stack.parallel, "latency_s", MICROSECONDS, "fixed cost per all-reduce")
    return (term(hops) * (term(latency, MICROSECONDS.precise(latency.value)) + term(message, f"{grouped(message)} B")
                          / term(link))).result(MS, "(stages − 1) × (fixed cost + tokens × hidden × 2 B ÷ achieved link)")


# ---- Time: one GPU's share of the step from the time model, plus the communication.

def _hardware(stack: Stack) -> steptime.Hardware:
    return timing.timed(stack).hardware


class Communicating:
    """Computing then communicating, one after the other, for a step or a prefill of the split model
    (its `compute`, `all_reduce` and `handoff`): the time and the share spent communicating."""

    TIME_FORMULA = "computing + communicating"
    SHARE_FORMULA = "communicating ÷ the whole"

    @property
    def communication(self) -> Result:
        if not self.handoff.value:
            value = self.all_reduce.time.value + self.handoff.value
            return Result(value, MS, formula="all-reduces", worked=self.all_reduce.time.worked,
                          inputs=_relabelled(self.all_reduce.time))
        return (term(self.all_reduce.time) + term(self.handoff)).result(MS, "all-reduces + hand-offs")

    @property
    def time(self) -> Result:
        return (term(self.compute) + term(self.communication)).result(MS, self.TIME_FORMULA)

    @property
    def share(self) -> Result:
        return (term(self.communication) / term(self.time)).result(SHARE, self.SHARE_FORMULA)


def _staged(groups: tuple[steptime.Group, ...], stages: int, overhead: Result, what: str) -> Result:
    """Each stage's kernels one after another, and the step's fixed cost once."""
    stage = total(term(g.time) for g in groups)  # 0 + a + b … is a + b … to the bit
    if stages == 1:  # and 1 × the stage is the stage
        return (stage + term(overhead)).result(MS, f"{what} on one GPU + the step's fixed cost")
    return (term(stages) * stage + term(overhead)).result(MS, f"stages × {what} on one GPU + the step's fixed cost")


@dataclass(frozen=True)
class Step(Communicating):
    """One decode step of the split model: each stage's GPUs run their share of the step's kernels,
    one stage after another, and the all-reduces and hand-offs wait between them."""

    TIME_FORMULA = "computing + communicating, one after the other"
    SHARE_FORMULA = "communicating ÷ step"

    batch: Result
    tokens: int
    matmuls: steptime.Group
    head: steptime.Group
    attention: steptime.Group
    others: steptime.Group
    overhead: Result
    stages: int
    all_reduce: AllReduces
    handoff: Result

    @property
    def compute(self) -> Result:
        return _staged((self.matmuls, self.head, self.attention, self.others), self.stages, self.overhead,
                       "(matrix multiplies + LM head + attention + norms and activation)")

    @property
    def tokens_per_second(self) -> Result:
        return (term(self.batch, grouped(self.batch.value)) / term(self.time, MS.precise(self.time.value))).result(
            TOKENS_PER_S, "batch ÷ step time")


def decode_step(split: Plan, batch: int, tokens: int) -> Step:
    """`batch` sequences each holding `tokens` tokens, on the split."""
    stack, model = split.stack, split.model
    held = model.tokens_cached(tokens)
    hw, tp, pp = _hardware(stack), split.tensor, split.pipeline
    return Step(
        batch=given(batch, COUNT, "sequences decoding together"),
        tokens=held,
        matmuls=steptime.matrices(hw, model, batch, tp, pp),
        head=steptime.head(hw, model, batch, tp),
        attention=steptime.decode_attention(hw, model, batch, batch * held, tp, pp),
        others=steptime.elementwise(hw, model, batch, tp, pp),
        overhead=steptime.overhead(),
        stages=pp,
        all_reduce=all_reduces(stack, tp, batch, model.num_hidden_layers),
        handoff=handoffs(stack, pp, batch),
    )


@dataclass(frozen=True)
class Prefill(Communicating):
    """One prompt through the split: each stage computes its share, then all-reduces whole-prompt messages."""

    SHARE_FORMULA = "communicating ÷ prefill"

    prompt: int
    compute: Result
    all_reduce: AllReduces
    handoff: Result


def prefill(split: Plan, prompt: int) -> Prefill:
    stack, model = split.stack, split.model
    hw, tp, pp = _hardware(stack), split.tensor, split.pipeline
    groups = (steptime.matrices(hw, model, prompt, tp, pp), steptime.head(hw, model, 1, tp),
              steptime.prefill_attention(hw, model, ((prompt, 0),), tp, pp), steptime.elementwise(hw, model, prompt, tp, pp))
    return Prefill(
        prompt=prompt,
        compute=_staged(groups, pp, steptime.overhead(), "(matrix multiplies + LM head + attention + norms)"),
        all_reduce=all_reduces(stack, tp, prompt, model.num_hidden_layers),
        handoff=handoffs(stack, pp, prompt),
    )


def busy_batch(split: Plan) -> int | None:
    """The stack's batch, or every sequence the split's cache admits at the limit; None when the cache
    holds no sequence at the limit, or fewer than the batch asked for."""
    admitted = int(split.users_worst.value) if split.kv_budget.value > 0 else 0
    batch = split.stack.parallel.batch or admitted
    return batch if 1 <= batch <= admitted else None


# ---- The section: the stack's own split, the degrees, and the comparisons the page makes.

def sharded(stack: Stack) -> Stack:
    """The stack with document 11's model on it."""
    return replace(stack, model=stack.parallel.model)


@dataclass(frozen=True)
class Fit:
    """One model at one precision against one card's pool and one node's."""

    model: Model
    precision: Precision
    weights: Result
    card_pool: Result
    node_pool: Result
    smallest: str


def fit(stack: Stack, model: Model, precision: Precision) -> Fit:
    on = replace(stack, model=model, weight_precision=precision)
    pool = kvcache.ladder(on).pool
    node = (term(GPUS_PER_NODE) * term(pool)).result(GIB_HELD, "GPUs per node × pool")
    smallest = next((n for n in DEGREES if not refusal(model, n, 1) and plan(on, n, 1).fits), None)
    return Fit(model, precision, weight_bytes(model, precision), pool, node,
               f"tensor-parallel {smallest}" if smallest else "more than one node")


def moe_memory(stack: Stack, model: Model, precision: Precision) -> dict[str, Result]:
    """A mixture of experts against a node: every expert is held; one token multiplies a few."""
    held = weight_bytes(model, precision)
    counted = count_parameters(model).total
    multiplied = operations.multiplied_parameters(model)
    total_v, active_v = counted.value, multiplied.value
    pool = kvcache.ladder(replace(stack, model=model, weight_precision=precision)).pool
    every = Result(total_v, COUNT, formula="parameters held", worked=COUNT.show(total_v), inputs=made_of(counted))
    active = Result(active_v, COUNT, formula="parameters one token multiplies", worked=multiplied.worked,
                    inputs=_relabelled(multiplied))
    node = (term(GPUS_PER_NODE) * term(pool)).result(GIB_HELD, "GPUs per node × pool")
    return {
        "weights": held,
        "total": every,
        "active": active,
        "active_share": (term(active, grouped(active_v)) / term(every, grouped(total_v))).result(PERCENT, "multiplied ÷ held"),
        "node_pool": node,
        "over": (term(held) - term(node, GIB_HELD.precise(node.value))).result(GIB_HELD, "weights − the node's pool"),
        "spare": ((term(GPUS_PER_NODE) * term(stack.card.engine_capacity) - term(held)) / term(GPUS_PER_NODE)).result(
            GIB_HELD, "(GPUs per node × CUDA's total − weights) ÷ GPUs per node"),
    }


def attention_split(stack: Stack) -> dict[str, object]:
    """DeepSeek-V3 in fp8 on a node of H200s: tensor parallelism copies the latent cache to every
    rank; data-parallel attention keeps attention whole on each GPU, each with its own sequences,
    and spreads only the experts."""
    on = replace(stack, model=DEEPSEEK_V3, card=H200_SXM, weight_precision=FP8, kv_precision=BF16)
    tp = plan(on, NODE_GPUS, 1)
    model, count = DEEPSEEK_V3, count_parameters(DEEPSEEK_V3)
    attention = model.num_hidden_layers * count.attention_per_layer
    rest = count.block_matrices - attention
    tables = tables_per_gpu(model, NODE_GPUS, 1)
    norms = norms_per_gpu(model, 1)
    held = ((term(attention) + term(rest) / term(GPUS_PER_NODE)) * term(FP8.bytes, "1 B")
            + (term(tables, grouped(tables.value)) + term(norms, grouped(norms.value))) * term(BF16.bytes, "2 B"))
    weights = held.result(GIB_HELD, "(attention whole + the rest ÷ GPUs) × 1 B + (tables + norms) × 2 B",
                          shown=f"{grouped(held.value)} B = {GIB_HELD.show(held.value)}")
    budget = remainder(tp.pool, weights, tp.reserve)
    capacity = kvcache.token_capacity(budget, tp.per_token, on.block_size)
    each = kvcache.users_by_tokens(capacity, tp.tokens_per_user)
    dp_users = (term(GPUS_PER_NODE) * term(each, grouped(each.value))).result(COUNT, "GPUs × users each GPU's own cache holds")
    users = dp_users.value
    gain_formula = "data-parallel attention's users ÷ tensor parallelism's"
    gain = ((term(dp_users, grouped(users)) / term(tp.users_worst, grouped(tp.users_worst.value))).result(RATIO, gain_formula)
            if tp.users_worst.value else
            Result(0.0, RATIO, formula=gain_formula, worked=f"{grouped(users)} ÷ {grouped(tp.users_worst.value)} = no ratio",
                   inputs=made_of(dp_users, tp.users_worst)))
    return {
        "card": H200_SXM, "model": model, "tp": tp,
        "dp_weights": weights, "dp_budget": budget, "dp_capacity": capacity, "dp_each": each,
        "dp_users": dp_users,
        "gain": gain,
    }


def all_to_all(model: Model, gpus: int) -> dict[str, Result]:
    """Expert parallelism against tensor parallelism: bytes the node sends per token and MoE layer.
    Under tensor parallelism all `gpus` ranks send 2(n − 1) ÷ n of the hidden state for each of two
    all-reduces. Under expert parallelism the token sits on one GPU (attention data-parallel) and its
    hidden state goes to its experts' GPUs and back. With one routing group per GPU it reaches at most
    topk_group GPUs, sent once per GPU (DeepEP's normal mode), or once per expert (its low-latency
    mode); both counted as if every GPU reached were another, the most they can send."""
    k, hidden = model.num_experts_per_tok, model.hidden_size
    width = field(model, "hidden_size")
    state = term(width, grouped(hidden)) * term(ACTIVATIONS.bytes, "2 B")
    # 2 × factor × (hidden × 2 B), as computed before: the state's product binds as tightly as the rest
    ring = (term(2) * term(ring_factor(gpus), f"2 × ({gpus} − 1) ÷ {gpus}") * state).result(
        BYTES, "2 all-reduces × 2(n − 1) ÷ n × hidden × 2 B")
    node = (term(gpus) * term(ring, f"{grouped(ring.value)} B")).result(BYTES, "GPUs × each GPU's all-reduce traffic")
    ranks = min(ROUTING_GROUPS_CHOSEN, gpus) if ROUTING_GROUPS == gpus else min(k, gpus)
    reached = given(ranks, COUNT, ROUTING_SOURCE)
    # whole numbers: the products are exact in any order
    by_rank = (term(2) * term(reached, str(ranks)) * term(width, grouped(hidden)) * term(ACTIVATIONS.bytes, "2 B")).result(
        BYTES, "2 (dispatch, combine) × GPUs reached × hidden × 2 B")
    by_expert = (term(2) * term(field(model, "num_experts_per_tok"), str(k)) * term(width, grouped(hidden))
                 * term(ACTIVATIONS.bytes, "2 B")).result(BYTES, "2 (dispatch, combine) × experts per token × hidden × 2 B")
    share = "expert parallelism's bytes ÷ tensor parallelism's"
    return {
        "experts_per_gpu": (term(field(model, "num_local_experts"), str(model.num_local_experts)) / term(gpus)).result(
            COUNT, "routed experts ÷ GPUs"),
        "groups": given(ROUTING_GROUPS, COUNT, ROUTING_SOURCE),
        "ranks": reached,
        "tensor_per_gpu": ring,
        "tensor_node": node,
        "by_rank": by_rank,
        "by_expert": by_expert,
        "rank_share": (term(by_rank, grouped(by_rank.value)) / term(node, grouped(node.value))).result(PERCENT, share),
        "expert_share": (term(by_expert, grouped(by_expert.value)) / term(node, grouped(node.value))).result(PERCENT, share),
    }


def pcie(stack: Stack, prompt: int) -> dict[str, object]:
    """The same all-reduces at tp 4 over a PCIe card's link: one decode token, and a prompt's prefill."""
    on = replace(stack, card=L40S)
    layers = stack.model.num_hidden_layers
    prefill = all_reduces(on, 4, prompt, layers)
    bus = term(prefill.traffic) / term(prefill.each)
    return {"card": L40S, "one_way": one_way(L40S), "release": kernels.all_reduce_release(L40S) or "none",
            "link": achieved_link(on), "decode": all_reduces(on, 4, 1, layers),
            "prefill": prefill, "nvlink_prefill": all_reduces(stack, 4, prompt, layers),
            "bus": bus.result(GB_PER_S, "ring traffic per GPU ÷ the measured time", shown=GB_PER_S.precise(bus.value))}


def bubble(stages: int, microbatches: int) -> Result:
    batches = given(microbatches, COUNT, "micro-batches per batch")
    return ((term(stages) - term(1)) / (term(batches, str(microbatches)) + term(stages) - term(1))).result(
        PERCENT, "(p − 1) ÷ (m + p − 1)")


@dataclass(frozen=True)
class Degree:
    """One tensor-parallel degree on the stack's split model: the ladder and two steps."""

    plan: Plan
    busy: Step | None
    lone: Step | None


def degree(stack: Stack, tensor: int) -> Degree:
    split = plan(stack, tensor, stack.parallel.pipeline)
    if split.kv_budget.value <= 0:
        return Degree(split, None, None)
    lone = decode_step(split, 1, stack.traffic.prompt_p50)
    batch = busy_batch(split)
    return Degree(split, decode_step(split, batch, stack.context_limit) if batch else None, lone)


def section(stack: Stack) -> dict[str, object]:
    """Document 11 on a stack: its own split, every degree, the fit table and the comparisons."""
    on = sharded(stack)
    chosen = plan(on, stack.parallel.tensor, stack.parallel.pipeline)
    busy = busy_batch(chosen)
    loads = chosen.kv_budget.value > 0
    step = decode_step(chosen, busy, stack.context_limit) if busy else None
    lone = decode_step(chosen, 1, stack.traffic.prompt_p50) if loads else None
    prompt = prefill(chosen, stack.traffic.prompt_p50) if loads else None
    link = achieved_link(on)
    degrees = {f"tp{n}": degree(on, n) for n in DEGREES if not refusal(on.model, n, stack.parallel.pipeline)}
    big = replace(stack, model=LLAMA_3_1_405B)
    fp8_405 = plan(replace(big, weight_precision=FP8), NODE_GPUS, 1)
    bf16_405 = plan(replace(big, weight_precision=BF16), NODE_GPUS, 2)
    ratio = {f"n{n}": ring_factor(n) for n in DEGREES[1:]}
    line = one_way(on.card)
    ring_rate = given(RING_EFFECTIVE_GB_PER_S * 1e9, GB_PER_S, RING_SOURCE)
    fits = {f"{key}_{p}": fit(stack, model, PRECISIONS[p])
            for key, model in (("l70", LLAMA_3_1_70B), ("l405", LLAMA_3_1_405B)) for p in ("bf16", "fp8", "int4")}
    return {
        "model": on.model,
        "tensor": given(stack.parallel.tensor, COUNT, "tensor-parallel degree"),
        "pipeline": given(stack.parallel.pipeline, COUNT, "pipeline stages"),
        "plan": chosen,
        "single": plan(on, 1, 1),
        # A split whose weights overflow the pool has no step to time, and one whose cache holds no
        # sequence at the limit (or fewer than the batch) no busy step: the page says so in words.
        "step": step,
        "lone": lone,
        "prefill": prompt,
        "summary": summary(chosen, step, lone, prompt),
        "degrees": degrees,
        "link": link,
        "one_way": line,
        "vocab_padding": given(VOCAB_PADDING, COUNT, VOCAB_SOURCE),
        "measured": {"release": kernels.all_reduce_release(on.card) or "none",
                     "ring": ring_rate,
                     "sglang_low": given(SGLANG_ALL_REDUCE_US[0] * 1e-6, MICROSECONDS, CUSTOM_ALL_REDUCE_SOURCE),
                     "sglang_high": given(SGLANG_ALL_REDUCE_US[1] * 1e-6, MICROSECONDS, CUSTOM_ALL_REDUCE_SOURCE),
                     "nvls": given(NVLS_BUS_GB_PER_S * 1e9, GB_PER_S, NVLS_SOURCE),
                     "ring_fraction": (term(ring_rate, f"{RING_EFFECTIVE_GB_PER_S} GB/s") / term(line, str(line))).result(
                         PERCENT, "measured ring rate ÷ one-way line rate"),
                     **{f"tp{n}": given(us * 1e-6, MICROSECONDS, CUSTOM_ALL_REDUCE_SOURCE)
                        for n, us in CUSTOM_ALL_REDUCE_US.items()}},
        "link_fraction": given(stack.parallel.link_fraction, PERCENT, "share of the one-way line rate a ring reaches"),
        "latency": given(stack.parallel.latency_s, MICROSECONDS, "fixed cost per all-reduce"),
        "ring": ratio,
        "fits": fits,
        "node_gpus": GPUS_PER_NODE,
        "l405_fp8": fp8_405,
        "l405_fp8_step": decode_step(fp8_405, 1, stack.traffic.prompt_p50),
        "l405_bf16": bf16_405,
        "l405_bf16_step": decode_step(bf16_405, 1, stack.traffic.prompt_p50),
        "bubble": bubble(bf16_405.pipeline, stack.parallel.microbatches),
        "microbatches": given(stack.parallel.microbatches, COUNT, "micro-batches per batch"),
        "deepseek": moe_memory(stack, DEEPSEEK_V3, FP8),
        "mixtral": moe_memory(stack, MIXTRAL_8X7B, BF16),
        "expert": all_to_all(DEEPSEEK_V3, NODE_GPUS),
        "latent": attention_split(stack),
        "naive": naive(on, degrees),
        "pcie": pcie(on, stack.traffic.prompt_p50),
        "beyond": {"copies": kv_copies(LLAMA_3_1_405B, 2 * NODE_GPUS),
                   "at_node": cache_per_token(LLAMA_3_1_405B, stack.kv_precision, NODE_GPUS, 1),
                   "at_two_nodes": cache_per_token(LLAMA_3_1_405B, stack.kv_precision, 2 * NODE_GPUS, 1)},
    }


def _sequences(count: int) -> str:
    return f"{grouped(count)} {'sequence' if count == 1 else 'sequences'}"


def summary(split: Plan, step: Step | None, lone: Step | None, prompt: Prefill | None) -> dict[str, str]:
    """The calculator's communication card in words, for every case: nothing loads, no busy step, or both steps."""
    if not lone or not prompt:
        return {"decode": f"Nothing to time. The split {split.verdict}.", "prefill": "No prefill to time"}
    if lone.all_reduce.count.value:
        alone = f"One sequence alone: {lone.share} of {lone.time}."
    else:
        alone = f"One sequence alone: {lone.time}, with no all-reduce at one GPU per stage."
    if not step:
        batch = split.stack.parallel.batch
        why = (f"a batch of {_sequences(batch)} at the limit needs more cache than the "
               f"{_sequences(int(split.users_worst.value))} it admits" if batch and split.users_worst.value
               else "not one sequence at the limit fits")
        busy = f"No busy step: {why}."
    elif not step.all_reduce.count.value:
        busy = f"A step of {step.time} at {_sequences(int(step.batch.value))}."
    else:
        busy = (f"{step.all_reduce.count} all-reduces of {step.all_reduce.message} at "
                f"{_sequences(int(step.batch.value))}: {step.all_reduce.time} of a {step.time} step ({step.share}).")
    if split.nodes > 1 and split.pipeline > 1:
        alone += " Hand-offs between nodes are priced at the card's own link, not the network."
    return {"decode": f"{busy} {alone}",
            "prefill": f"Prefill of {grouped(prompt.prompt)} tokens: {prompt.time}, {prompt.share} communicating"}


def naive(stack: Stack, degrees: dict[str, Degree]) -> dict[str, Result]:
    """The claims this page corrects, computed as they are usually made."""
    card = stack.card
    lone = decode_step(plan(stack, NODE_GPUS, 1), 1, stack.traffic.prompt_p50)
    traffic = lone.all_reduce.traffic.value
    line = one_way(card)
    reading = term(lone.all_reduce.traffic, f"{grouped(traffic)} B") / term(line, str(line))
    at_datasheet = reading.result(MICROSECONDS, "ring traffic per GPU ÷ the one-way line rate",
                                  shown=MICROSECONDS.precise(reading.value))
    at_sheet = at_datasheet.value
    each = lone.all_reduce.each
    off_formula = "derived time ÷ the line-rate reading"
    result: dict[str, Result] = {
        "at_datasheet": at_datasheet,
        "derived": each,
        "off": (_off(each, at_datasheet, off_formula) if at_sheet else
                Result(0.0, TIMES, formula=off_formula, worked=(f"{MICROSECONDS.precise(each.value)} ÷ "
                                                               f"{MICROSECONDS.precise(at_sheet)} = {grouped(0, 0)}×"),
                       inputs=made_of(each, at_datasheet))),
    }
    result["ring_steps"] = (term(2) * (term(GPUS_PER_NODE) - term(1))).result(
        COUNT, "2(n − 1) sends per GPU in one ring all-reduce")
    if all(key in degrees and degrees[key].lone for key in ("tp2", "tp8")):
        two, eight = degrees["tp2"].lone.time, degrees["tp8"].lone.time
        result["speedup"] = (term(two, MS.precise(two.value)) / term(eight, MS.precise(eight.value))).result(
            RATIO, "one sequence's step at tp 2 ÷ at tp 8")
    return result


def _off(each: Result, at_datasheet: Result, formula: str) -> Result:
    off = term(each, MICROSECONDS.precise(each.value)) / term(at_datasheet, MICROSECONDS.precise(at_datasheet.value))
    return off.result(TIMES, formula, shown=f"{grouped(off.value, 0)}×")


def curves(stack: Stack) -> dict:
    """Users (per copy and per node) and step time against the tensor-parallel degree. A degree at
    which the weights do not load has no step, and one at which no user fits has no busy step, so
    each step curve has only the degrees it can time."""
    on = sharded(stack)
    degrees = [(n, degree(on, n)) for n in DEGREES if not refusal(on.model, n, stack.parallel.pipeline)]
    timed = [(n, d) for n, d in degrees if d.lone]
    busy = [(n, d) for n, d in degrees if d.busy]
    batch = stack.parallel.batch
    drawn = [
        {"name": "users per copy, worst case", "x": [n for n, _ in degrees], "y": [d.plan.users_worst.value for _, d in degrees]},
        {"name": "users per node of eight", "x": [n for n, _ in degrees], "y": [d.plan.node_users.value for _, d in degrees]},
        {"name": "step, one sequence (ms)", "x": [n for n, _ in timed], "y": [1000 * d.lone.time.value for _, d in timed]},
        {"name": f"step, batch of {grouped(batch)} (ms)" if batch else "step, every user admitted (ms)", "x": [n for n, _ in busy], "y": [1000 * d.busy.time.value for _, d in busy]},
    ]
    rows = [[str(n), grouped(d.plan.users_worst.value), grouped(d.plan.node_users.value),
             f"{1000 * d.lone.time.value:.1f}" if d.lone else "does not load",
             f"{1000 * d.busy.time.value:.1f}" if d.busy else _no_busy_step(d.plan, batch),
             SHARE.show(d.lone.share.value) if d.lone else "—"] for n, d in degrees]
    return {"curves": drawn, "rows": rows}


def _no_busy_step(split: Plan, batch: int | None) -> str:
    if split.kv_budget.value <= 0:
        return "does not load"
    if batch and split.users_worst.value:
        return f"batch over the {grouped(split.users_worst.value)} admitted"
    return "no user fits"
