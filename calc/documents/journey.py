"""One request's journey: twelve stages from the HTTP request to the freed cache, each timed.

Every GPU time comes from the time model (calc.engine.timing): the prefill pass is timing.prefill_time,
split into the blocks and the LM head on the last position; the decode loop is (output − 1) decode
steps of timing.decode_step at the output's midpoint, the convention timing.request_time uses, so a
journey and the phases timer cannot disagree. The request is a cold one on an idle server: batch 1,
nothing queued, nothing cached. The CPU stages, and sampling, are not in the time model; each is a
named assumption below, with the reasoning or measurement it rests on.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..model import operations
from ..engine import timing
from ..model.anatomy import count_parameters
from ..engine.kvcache import blocks_for, bytes_for_tokens, bytes_per_token
from ..specs.precision import BF16
from ..specs.stack import Stack
from .tokens import samples
from ..core.arith import ceil_div, field, made_of, term, total
from ..core.units import (BYTES, COUNT, GB_MOVED, GIB_HELD, MS, MS_WHOLE, PERCENT, RATIO, TIMES, TFLOP, TOKENS,
    TOKENS_PER_S, Result, Unit, given, grouped, plain)

SHARE = Unit("percent", 0.01, "%", 1, spaced=False, significant=2)
MICROSECONDS = Unit("µs", 1e-6, "µs", 1)
MB_PER_S = Unit("MB/s", 1e6, "MB/s", 1)


@dataclass(frozen=True)
class Assumption:
    """A time or rate the time model does not derive: its value, and what it rests on."""

    value: float
    source: str


# The CPU front end and the sampler: engine work outside the forward pass.
HTTP_PARSE = Assumption(0.000_2, "reasoning: the OpenAI-compatible server (uvicorn, FastAPI) reads the request and "
                                 "pydantic validates a JSON body of a few kilobytes, each of order a hundred "
                                 "microseconds of CPython")
CHAT_TEMPLATE = Assumption(0.000_1, "reasoning: apply_chat_template renders a handful of messages through one "
                                    "compiled Jinja template, string concatenation of a few kilobytes")
TIKTOKEN_BYTES_PER_S = Assumption(13.8e6, "toktok-rs README (pypi.org/project/toktok-rs): tiktoken encodes The Pile "
                                          "with cl100k_base at 13.8 MB/s on one thread, Python 3.11")
TOKENIZER_SLOWER = Assumption(4.5, "openai/tiktoken README: tiktoken is 3 to 6 times faster than a comparable open "
                                   "source tokeniser; vLLM uses Hugging Face's, so the middle of that range")
ADMIT = Assumption(0.000_1, "reasoning: one pass of the scheduler's Python bookkeeping on an idle server, which "
                            "finds free blocks and a batch slot at once")
PER_BLOCK = Assumption(0.000_000_8, "reasoning: the block manager pops a free block id off a list and records it "
                                    "in the request's block table, under a microsecond of Python each")
EMIT = Assumption(0.000_2, "reasoning: incremental detokenisation of one id, a UTF-8 check, and one server-sent "
                           "event written by asyncio")
FINISH = Assumption(0.000_1, "reasoning: the stop check, the last event, and the request's block ids returned to "
                             "the free list")
LOGIT_BYTES = Assumption(4, "vLLM computes the logits it samples from in fp32, four bytes each")
WARM_FRACTION = Assumption(0.95, "a prompt whose system prompt and earlier turns are already cached: 1,900 of "
                                 "2,000 tokens, the reference page's example")
SHORT_OUTPUT = 20  # a classification or extraction answer
SHARE_CURVE_OUTPUTS = (1, 5, 10, 20, 50, 100, 200, 300, 500, 1_000, 2_000)

PHASES = ("cpu", "prefill", "decode")


def _assumed(assumption: Assumption, what: str) -> Result:
    return Result(assumption.value, MS, formula=f"{what} (an assumption: {assumption.source})",
                  worked=MS.show(assumption.value))


def _sum(parts: list[Result], what: str) -> Result:
    return total(term(p) for p in parts).result(MS, what)


def _given(assumption: Assumption, unit: Unit) -> Result:
    """An assumption as an input of the arithmetic that uses it."""
    return given(assumption.value, unit, assumption.source)


@dataclass(frozen=True)
class Stage:
    """One stage: where it runs, which phase of the wall clock it belongs to, its time, and the
    clock when it ends."""

    key: str
    name: str
    where: str
    phase: str
    time: Result
    clock: Result


@dataclass(frozen=True)
class Shares:
    """Each phase's share of the wall clock: CPU work, the prefill on the GPU, the decode loop."""

    cpu: Result
    prefill: Result
    decode: Result


@dataclass(frozen=True)
class Warm:
    """The same request with most of its prompt already cached (prefix caching)."""

    cached: Result
    computed: Result
    ops: Result
    prefill: Result
    speedup: Result
    ttft: Result
    ttft_speedup: Result
    total_saved: Result


@dataclass(frozen=True)
class Journey:
    """One request through the twelve stages, on one stack, cold and alone on the card."""

    stack: Stack
    prompt: Result
    output: Result
    # what the stages are derived from
    tokenizer_rate: Result
    characters: Result
    blocks: Result
    blocks_at_end: Result
    embedding_bytes: Result
    pass_ops: Result
    head_ops: Result
    blocks_ops: Result
    prefill_pass: Result
    step: timing.DecodeStep
    steps: Result
    # the twelve stages, in order
    http: Stage
    template: Stage
    tokenise: Stage
    admit: Stage
    allocate: Stage
    embed: Stage
    prefill: Stage
    head: Stage
    sample: Stage
    emit: Stage
    decode: Stage
    finish: Stage
    # what they add up to
    front_end: Result
    prefill_phase: Result
    cpu: Result
    ttft: Result
    total: Result
    shares: Shares
    warm: Warm | None = None
    short: Shares | None = None

    @property
    def stages(self) -> tuple[Stage, ...]:
        return (self.http, self.template, self.tokenise, self.admit, self.allocate, self.embed, self.prefill,
                self.head, self.sample, self.emit, self.decode, self.finish)

    @property
    def older(self) -> dict[str, Result]:
        """Figures the reference page gives for this request, and the arithmetic that reproduces the
        ones it derived: what the corrections on this page replace."""
        return older_figures(self.stack, int(self.prompt.value))

    @property
    def assumed(self) -> dict[str, Result]:
        """The assumptions the CPU stages rest on, as the page quotes them."""
        return {
            "tiktoken": given(TIKTOKEN_BYTES_PER_S.value, MB_PER_S, TIKTOKEN_BYTES_PER_S.source),
            "slower": given(TOKENIZER_SLOWER.value, RATIO, TOKENIZER_SLOWER.source),
            "characters_per_token": characters_per_token(),
            "per_block": given(PER_BLOCK.value, MICROSECONDS, PER_BLOCK.source),
            "warm_fraction": given(WARM_FRACTION.value, SHARE, WARM_FRACTION.source),
        }

    @property
    def bar_widths(self) -> list[float]:
        """The phases' shares of the wall clock, in percent, for the figure's timeline."""
        return [100 * getattr(self.shares, phase).value for phase in PHASES]

    @property
    def cache_written(self) -> Result:
        """The cache prefill writes: every prompt token's keys and values at every layer."""
        return bytes_for_tokens(bytes_per_token(self.stack.model, self.stack.kv_precision), int(self.prompt.value))

    @property
    def weights_per_prompt_token(self) -> Result:
        """Prefill reads the weights once for the whole prompt: the read each prompt token carries."""
        weights = self.step.read.weights
        return (term(weights) / term(self.prompt, grouped(int(self.prompt.value)))).result(
            GB_MOVED, "weights read ÷ prompt tokens")

    @property
    def step_versus_prefill(self) -> Result:
        """How much more arithmetic the prefill pass does than one decode step, for one token each."""
        first = operations.decode_ops(self.stack.model, 1, int(self.prompt.value))
        return (term(self.pass_ops) / term(first)).result(RATIO, "prefill operations ÷ first decode step's operations")

    @property
    def first_step_ops(self) -> Result:
        return operations.decode_ops(self.stack.model, 1, int(self.prompt.value))

    @property
    def all_logits(self) -> Result:
        """Logits for every position of a full context window, which prompt log-probabilities need."""
        model, limit = self.stack.model, self.stack.context_limit
        logits = (term(field(self.stack, "context_limit", TOKENS, "context limit"), grouped(limit))
                  * term(field(model, "vocab_size"), grouped(model.vocab_size))
                  * term(_given(LOGIT_BYTES, BYTES), f"{plain(LOGIT_BYTES.value)} B"))
        return logits.result(GIB_HELD, "context limit × vocabulary × 4 B (fp32 logits)",
                             shown=f"{grouped(logits.value)} B = {GIB_HELD.show(logits.value)}")

    @property
    def stream_rate(self) -> Result:
        """Tokens the stream path handles per second at the traffic's peak: each one detokenised and sent."""
        traffic = self.stack.traffic
        rate = term(field(traffic, "requests_per_s", COUNT, "requests per second"), plain(traffic.requests_per_s))
        output = term(field(traffic, "output_p50", TOKENS, "output tokens per request"), grouped(traffic.output_p50))
        return (rate * output).result(TOKENS_PER_S, "requests per second × output tokens per request")


QUOTED = "the reference page for this document"
OLDER = {  # as the reference page prints them
    "prefill_time": (0.0864, MS), "step_time": (0.0060, MS), "weights_read": (16e9, Unit("GB", 1e9, "GB", 0)),
    "total": (1.883, MS_WHOLE), "ttft": (0.089, MS_WHOLE), "decode_share": (0.95, PERCENT),
    "short_prefill_share": (0.75, PERCENT), "blocks_freed": (125, COUNT), "ridge": (150, COUNT),
    "token2_ops": (0.015e12, TFLOP), "warm_prefill": (0.004, MS_WHOLE), "warm_prefill_cold": (0.086, MS_WHOLE),
    "warm_ttft_speedup": (13, TIMES), "prefill_ops_quoted": (34.2e12, Unit("TFLOP", 1e12, "TFLOP", 1)),
}


def older_figures(stack: Stack, prompt: int) -> dict[str, Result]:
    """The reference page's figures, and how its prefill count and efficiencies come about."""
    out = {key: given(value, unit, QUOTED) for key, (value, unit) in OLDER.items()}
    total_params = int(count_parameters(stack.model).total.value)
    per_position = operations.attention_ops_per_position(stack.model).value
    linear = 2 * term(count_parameters(stack.model).total, grouped(total_params)) * term(prompt)
    square = term(operations.attention_ops_per_position(stack.model), grouped(per_position)) * term(prompt) * term(prompt)
    out["prefill_ops"] = (linear + square).result(
        TFLOP, "2 × all parameters × N + attention per position × N²",
        shown=f"{TFLOP.show(linear.value)} + {TFLOP.show(square.value)} = {TFLOP.show(linear.value + square.value)}")
    peak = timing.peak_compute(stack.card, stack.weight_precision)
    out["implied_mfu"] = timing.implied_mfu(out["prefill_ops"], out["prefill_time"], peak)
    weights = out["weights_read"]
    out["implied_bandwidth"] = (term(weights) / (term(out["step_time"]) * term(stack.card.bandwidth, str(stack.card.bandwidth))))\
        .result(SHARE, "bytes read ÷ (step time × bandwidth)")
    return out


def characters_per_token() -> Result:
    """English prose's characters per token on Llama 3's tokenizer, as document 01 measures it on its
    sample (not the four a token of OpenAI's rule of thumb)."""
    return samples()["english"].characters_per_token


def tokenizer_rate() -> Result:
    """Tokens a Hugging Face tokeniser encodes per second on one core, from the assumptions above and
    English's measured characters per token, one byte each."""
    per_token = characters_per_token()
    rate = (term(_given(TIKTOKEN_BYTES_PER_S, MB_PER_S), f"{grouped(TIKTOKEN_BYTES_PER_S.value)} B/s")
            / term(_given(TOKENIZER_SLOWER, RATIO), plain(TOKENIZER_SLOWER.value))
            / term(per_token, f"{per_token.number(4)} B"))
    return rate.result(TOKENS_PER_S, "tiktoken's bytes per second ÷ how much slower ÷ bytes per token (English's "
                                     "characters per token, one byte each)")


def _blocks(tokens: int | Result, stack: Stack, what: str) -> Result:
    count = tokens.value if isinstance(tokens, Result) else tokens
    blocks = ceil_div(term(tokens, grouped(count)),
                      term(field(stack, "block_size", TOKENS, "block size"), str(stack.block_size)))
    return blocks.result(COUNT, f"⌈{what} ÷ block size⌉", shown=grouped(blocks_for(count, stack.block_size)))


def _check(stack: Stack, prompt: int, output: int) -> None:
    if prompt < 1 or output < 1:
        raise ValueError("a request has at least one prompt token and produces at least one token")


def journey(stack: Stack, prompt: int, output: int, cases: bool = True) -> Journey:
    """The twelve stages of one cold request of `prompt` tokens answered in `output` tokens."""
    _check(stack, prompt, output)
    model = stack.model
    asked, answered = given(prompt, TOKENS, "prompt length"), given(output, TOKENS, "output length")

    # 1–5: the CPU front end
    rate = tokenizer_rate()
    per_token = characters_per_token()
    characters = (term(asked, grouped(prompt)) * term(per_token, per_token.number(4))).result(
        COUNT, "prompt tokens × English's characters per token")
    tokenise = (term(asked, TOKENS.show(prompt)) / term(rate)).result(MS, "prompt tokens ÷ tokeniser rate")
    blocks = _blocks(asked, stack, "prompt")
    allocate = (term(blocks, grouped(int(blocks.value))) * term(_given(PER_BLOCK, MICROSECONDS),
                                                                MICROSECONDS.show(PER_BLOCK.value)))\
        .result(MS, "blocks × time per block")

    # 6–9: the GPU's prefill, one engine step (calc.engine.timing.prefill_step)
    element = BF16.bytes if stack.weight_precision.quantised else stack.weight_precision.bytes
    embedding_bytes = (2 * term(asked, grouped(prompt)) * term(field(model, "hidden_size"), grouped(model.hidden_size))
                       * term(element, f"{plain(element)} B")).result(
        GB_MOVED, "2 × prompt × hidden size × bytes (rows read, then written)")
    pass_step = timing.prefill_step(stack, prompt)
    prefill_pass = pass_step.time
    embed = pass_step.group("embedding").time
    head = pass_step.group("the LM head").time
    pass_ops = operations.prefill_ops(model, prompt)
    head_ops = operations.head_ops(model)
    blocks_ops = (term(pass_ops) - term(head_ops)).result(TFLOP, "prefill operations − the LM head's")
    layers = [pass_step.group(name) for name in ("matrix multiplies", "prefill attention", "norms")]
    prefill = total(term(g.time) for g in layers).result(MS, "the layers' matrix multiplies + attention + norms and activation")
    fixed = pass_step.overhead

    # 11: the decode loop, as timing.request_time counts it
    step = timing.decode_step(stack, 1, prompt + output // 2)
    steps = (term(answered, grouped(output)) - 1).result(COUNT, "output tokens − 1 (prefill produced the first)",
                                                         shown=grouped(output - 1))
    decode = (term(steps, grouped(output - 1)) * term(step.time)).result(
        MS, "(output − 1) × the decode step at the output's midpoint, its fixed cost included")
    blocks_at_end = _blocks(prompt + output - 1, stack, "tokens cached at the end")

    timed = [
        ("http", "HTTP request parsed", "CPU", "cpu", _assumed(HTTP_PARSE, "parse and validate the request")),
        ("template", "Chat template applied", "CPU", "cpu", _assumed(CHAT_TEMPLATE, "render the messages")),
        ("tokenise", "Tokenised", "CPU", "cpu", tokenise),
        ("admit", "Admitted by the scheduler", "CPU", "cpu", _assumed(ADMIT, "one scheduler pass")),
        ("allocate", "KV blocks allocated", "CPU", "cpu", allocate),
        ("embed", "Embedding rows gathered", "GPU", "prefill", embed),
        ("prefill", "Prefill through every layer", "GPU", "prefill", prefill),
        ("head", "LM head, last position", "GPU", "prefill", head),
        ("sample", "Step's fixed cost: schedule, sample, launch", "CPU and GPU", "prefill", fixed),
        ("emit", "First token streamed", "CPU", "cpu", _assumed(EMIT, "detokenise and send one token")),
        ("decode", "The decode loop", "GPU", "decode", decode),
        ("finish", "End of turn", "CPU", "cpu", _assumed(FINISH, "stop, last event, blocks freed")),
    ]
    stages: dict[str, Stage] = {}
    began: Result | None = None
    for key, name, where, phase, time in timed:
        if began is not None and began.value:
            shown = (term(began) + term(time)).result(MS, "clock when the stage began + its time")
        else:  # the first stage begins at 0: its clock is its time
            clock = (began.value if began is not None else 0.0) + time.value
            shown = Result(clock, MS, formula="clock when the stage began + its time", worked=MS.show(clock),
                           inputs=made_of(began, time))
        stages[key] = Stage(key, name, where, phase, time, shown)
        began = shown

    front_end = _sum([stages[k].time for k in ("http", "template", "tokenise", "admit", "allocate")],
                     "the five CPU stages before the GPU starts")
    prefill_phase = _sum([stages[k].time for k in ("embed", "prefill", "head", "sample")],
                         "embedding + prefill + head + sampling")
    cpu = _sum([front_end, stages["emit"].time, stages["finish"].time], "front end + first token streamed + end of turn")
    ttft = _sum([front_end, prefill_phase, stages["emit"].time], "front end + prefill on the GPU + first token streamed")
    whole = _sum([ttft, decode, stages["finish"].time], "TTFT + decode loop + end of turn")

    def share(part: Result, what: str) -> Result:
        return (term(part) / term(whole)).result(SHARE, f"{what} ÷ total")

    shares = Shares(cpu=share(cpu, "CPU stages"), prefill=share(prefill_phase, "prefill on the GPU"),
                    decode=share(decode, "decode loop"))
    made = Journey(
        stack=stack, prompt=asked, output=answered,
        tokenizer_rate=rate, characters=characters, blocks=blocks, blocks_at_end=blocks_at_end,
        embedding_bytes=embedding_bytes, pass_ops=pass_ops, head_ops=head_ops, blocks_ops=blocks_ops,
        prefill_pass=prefill_pass, step=step, steps=steps, **stages,
        front_end=front_end, prefill_phase=prefill_phase, cpu=cpu, ttft=ttft, total=whole, shares=shares,
    )
    if not cases:
        return made
    short = journey(stack, prompt, SHORT_OUTPUT, cases=False).shares
    return Journey(**{**made.__dict__, "warm": warm(made), "short": short})


def warm(cold: Journey) -> Warm:
    """Prefix caching: only the uncached tail of the prompt is prefilled, attending to the whole prompt."""
    model = cold.stack.model
    prompt = int(cold.prompt.value)
    block = cold.stack.block_size
    cached_tokens = min(int(prompt * WARM_FRACTION.value) // block * block, prompt - 1)  # only full blocks are cached
    tail = prompt - cached_tokens
    head = operations.head_parameters(model)
    block_params = operations.multiplied_parameters(model).value - head
    per_position = operations.attention_ops_per_position(model).value
    positions = operations.causal_positions(model, prompt) - operations.causal_positions(model, cached_tokens)
    # ⌊prompt × fraction⌋ taken whole before the blocks are counted: the line states the rule, in words
    # of arithmetic that is not the computation's order, so it is kept and its inputs recorded
    cached = Result(cached_tokens, TOKENS, formula="the cached share of the prompt in whole blocks, at least one token left",
                    worked=(f"⌊{grouped(prompt)} × {plain(WARM_FRACTION.value)} ÷ {block}⌋ × {block} = {TOKENS.show(cached_tokens)}"
                            if cached_tokens < prompt - 1 or prompt == 1 else
                            f"{grouped(prompt)} − 1 = {TOKENS.show(cached_tokens)}"),
                    inputs=made_of(cold.prompt, _given(WARM_FRACTION, SHARE),
                                   field(cold.stack, "block_size", TOKENS, "block size")))
    computed = (term(cold.prompt, grouped(prompt)) - term(cached, grouped(cached_tokens))).result(TOKENS, "prompt − cached")
    ops = (2 * term(block_params) * term(computed, grouped(tail)) + 2 * term(head)
           + term(operations.attention_ops_per_position(model), grouped(per_position)) * term(positions)).result(
        TFLOP, "2 × block parameters × uncached + 2 × LM head + attention × positions attended")
    prefill = timing.prefill_after(cold.stack, prompt, cached_tokens).time
    saved = (term(cold.prefill_pass) - term(prefill)) / term(cold.total)
    ttft = (term(cold.ttft) - term(cold.prefill_pass) + term(prefill)).result(MS, "cold TTFT − cold prefill + warm prefill")
    return Warm(
        cached=cached,
        computed=computed,
        ops=ops,
        prefill=prefill,
        speedup=(term(cold.prefill_pass) / term(prefill)).result(RATIO, "cold prefill ÷ warm prefill"),
        ttft=ttft,
        ttft_speedup=(term(cold.ttft) / term(ttft)).result(RATIO, "cold TTFT ÷ warm TTFT"),
        total_saved=(saved.result(SHARE, "(cold prefill − warm prefill) ÷ cold total")
                     if cold.prefill_pass.value - prefill.value >= 0.01 * cold.prefill_pass.value else
                     # the two prefills all but cancel below the digits shown: show their gap itself
                     Result(saved.value, SHARE, formula="(cold prefill − warm prefill) ÷ cold total",
                            worked=(f"a warm prefill is only {MS.precise(cold.prefill_pass.value - prefill.value)} "
                                    f"shorter, of a {cold.total.operand} request: {SHARE.show(saved.value)}"),
                            inputs=made_of(cold.prefill_pass, prefill, cold.total))),
    )


def share_curves(stack: Stack, prompt: int) -> list[dict]:
    """Each phase's share of the wall clock, in percent, against output length, for one prompt."""
    made = [journey(stack, prompt, output, cases=False) for output in SHARE_CURVE_OUTPUTS]
    names = {"decode": "decode loop", "prefill": "prefill on the GPU", "cpu": "CPU stages"}
    return [{"name": names[phase], "x": list(SHARE_CURVE_OUTPUTS),
             "y": [100 * getattr(j.shares, phase).value for j in made]} for phase in ("decode", "prefill", "cpu")]


def fits(stack: Stack, prompt: int, output: int) -> str:
    """Why this request cannot run on this stack, or an empty string when it can."""
    longest = stack.model.max_position_embeddings
    if prompt + output > longest:
        return (f"prompt + output is {grouped(prompt + output)} tokens; {stack.model.name} reads at most "
                f"{grouped(longest)}")
    from ..engine.kvcache import ladder
    rungs = ladder(stack)
    if not rungs.weights_fit:
        return f"on {stack.card.name}, {rungs.binds}"
    held = blocks_for(stack.model.tokens_cached(prompt + output), stack.block_size) * stack.block_size
    if held > rungs.token_capacity.value:
        return (f"the request's cache needs {grouped(held)} tokens of blocks; {stack.card.name} holds "
                f"{rungs.token_capacity} after the weights")
    return ""
