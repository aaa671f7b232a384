"""Published measurements of the reference stack (or the nearest one published), as data.

Every time in the runbook rests on two assumptions, MFU and the achieved bandwidth fraction
(calc.stack.Efficiency). These are the measurements they stand for: each is turned back into the
efficiency it implies by the same time model that produces the pages' times, so model and
measurement are compared like for like.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from . import operations, timing
from .roofline import decode_read
from .stack import REFERENCE, Efficiency, Stack
from .units import MS, MS_FINE, PERCENT, RATIO_FINE, TOKENS_PER_S, Result, given

LAMBDA = ("Lambda Labs, LambdaLabsML/vllm-benchmark, results/{}/1xH100-80GB-SXM/"
          "Meta-Llama-3-8B-Instruct_tp1_len2048.json (commit a4f9f43, September 2024): vLLM's benchmark_serving "
          "against its OpenAI server, ShareGPT prompts; the vLLM version is not logged (tokens stream in tens, "
          "so multi-step scheduling, v0.6 or later)")
RECONSTRUCTED = "batch and context reconstructed from the logged per-request lengths, ±10%"


@dataclass(frozen=True)
class Prefill:
    """A measured prefill: `prompts` prompts of `mean_prompt` tokens done in `seconds`."""

    key: str
    label: str
    prompts: int
    mean_prompt: int
    seconds: float
    source: str
    caveat: str

    def ops(self, stack: Stack) -> Result:
        one = operations.prefill_ops(stack.model, self.mean_prompt)
        return replace(one, value=one.value * self.prompts,
                       worked=f"{self.prompts} × {one} = {one.unit.show(one.value * self.prompts)}")

    def implied_mfu(self, stack: Stack = REFERENCE) -> Result:
        return timing.implied_mfu(self.ops(stack), self.seconds, timing.peak_compute(stack.card, stack.weight_precision))

    def modelled(self, stack: Stack = REFERENCE) -> Result:
        rate = timing.achieved(timing.peak_compute(stack.card, stack.weight_precision), stack.efficiency.mfu, "MFU")
        value = self.ops(stack).value / rate.value
        return Result(value, MS, formula="operations ÷ (MFU × peak)", worked=f"{self.ops(stack).operand} ÷ {rate.operand} = {MS.show(value)}")


@dataclass(frozen=True)
class DecodeStepTime:
    """A measured decode step: `batch` sequences holding about `tokens` tokens each."""

    key: str
    label: str
    batch: int
    tokens: int
    seconds: float
    source: str
    caveat: str

    def implied_bandwidth_fraction(self, stack: Stack = REFERENCE) -> Result:
        read = decode_read(stack.model, stack.weight_precision, stack.kv_precision, self.batch, self.tokens)
        return timing.implied_bandwidth_fraction(read, self.seconds, stack.card)

    def modelled(self, stack: Stack = REFERENCE) -> Result:
        return timing.decode_step(stack, self.batch, self.tokens).time


PREFILLS = (
    Prefill("prefill_steps", "320 ShareGPT prompts, prefilled in steps of up to 2,048 tokens", 281, 205, 1.982,
            LAMBDA.format("prompt_320"),
            "57,560 prompt tokens between the first and last prefill step (the first step left out); "
            "about 281 prompts of 205 tokens on average, " + RECONSTRUCTED),
    Prefill("prefill_ttft", "10 ShareGPT prompts prefilled together, time to first token", 10, 137, 0.0624,
            LAMBDA.format("prompt_10"),
            "mean TTFT of 62.4 ms for 1,369 prompt tokens, measured at the client: HTTP, tokenisation "
            "and scheduling are inside it, so the MFU it implies is a floor"),
)

DECODE_STEPS = (
    DecodeStepTime("step_1", "one sequence decoding alone", 1, 615, 0.00705, LAMBDA.format("prompt_10"),
                   "ten-token chunks of 70.5 ms; " + RECONSTRUCTED),
    DecodeStepTime("step_10", "ten sequences, first decode steps", 10, 142, 0.00753, LAMBDA.format("prompt_10"),
                   "a 75.25 ms chunk of ten steps; " + RECONSTRUCTED),
    DecodeStepTime("step_98", "about 98 sequences", 98, 448, 0.01074, LAMBDA.format("prompt_320"),
                   "a 107.4 ms chunk of ten steps; " + RECONSTRUCTED),
    DecodeStepTime("step_200", "about 200 sequences", 200, 195, 0.01331, LAMBDA.format("prompt_320"),
                   "a 133.1 ms chunk of ten steps; " + RECONSTRUCTED),
    DecodeStepTime("step_8", "eight sequences, 32 tokens in and 128 out", 8, 96, 0.997542 / 128,
                   "vLLM's nightly performance benchmark, latency_llama8B_tp1 on H100 (997.5 ms mean for the "
                   "whole request; version and date not stated)",
                   "end-to-end time ÷ 128 tokens, so the short prefill is inside it: an upper bound on the step"),
)

OLDER_ENGINE = ("vLLM blog, 'vLLM v0.6.0: 2.7x Throughput Improvement and 5x Latency Reduction' (5 September "
                "2024): before v0.6, 'Llama3 8B can generate 1 token every 13 ms under light load', with only 38% "
                "of the time spent on GPU execution")


@dataclass(frozen=True)
class Comparison:
    """One measurement beside the model: the time measured, the time modelled, and the efficiency
    the measurement implies."""

    label: str
    source: str
    caveat: str
    measured: Result
    modelled: Result
    implied: Result

    @property
    def rate(self) -> Result:
        """A measured step time as tokens per second for each sequence."""
        value = 1 / self.measured.value
        return Result(value, TOKENS_PER_S, formula="1 ÷ measured step",
                      worked=f"1 ÷ {self.measured.operand} = {TOKENS_PER_S.show(value)}")

    @property
    def model_over_measured(self) -> Result:
        value = self.modelled.value / self.measured.value
        return Result(value, RATIO_FINE, formula="modelled time ÷ measured time",
                      worked=f"{self.modelled.operand} ÷ {self.measured.operand} = {RATIO_FINE.show(value)}")


def comparisons(efficiency: Efficiency) -> dict[str, Comparison]:
    """Every measurement against the model on the reference stack at these efficiencies."""
    stack = replace(REFERENCE, efficiency=efficiency)
    out: dict[str, Comparison] = {}
    for m in PREFILLS:
        out[m.key] = Comparison(m.label, m.source, m.caveat, given(m.seconds, MS_FINE, "measured"), m.modelled(stack),
                                m.implied_mfu(stack))
    for d in DECODE_STEPS:
        out[d.key] = Comparison(d.label, d.source, d.caveat, given(d.seconds, MS_FINE, "measured"), d.modelled(stack),
                                d.implied_bandwidth_fraction(stack))
    return out


def median(values: list[float]) -> float:
    ordered = sorted(values)
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else (ordered[middle - 1] + ordered[middle]) / 2


def measured_mfu() -> Result:
    """The MFU the full-step prefill measurement implies: the client-timed TTFT includes the HTTP
    server, tokenisation and scheduling, so it is only a floor and is not averaged in."""
    steps, ttft = (m.implied_mfu() for m in PREFILLS)
    return Result(steps.value, PERCENT, formula="the measured prefill in full steps (the client-timed TTFT is a floor)",
                  worked=f"{steps} in full steps; {ttft} at the client, a floor")


def measured_bandwidth_fraction() -> Result:
    implied = [m.implied_bandwidth_fraction() for m in DECODE_STEPS]
    value = median(r.value for r in implied)
    return Result(value, PERCENT, formula="median of the measured decode steps' implied bandwidth fraction",
                  worked=f"median({', '.join(str(r) for r in implied)}) = {PERCENT.show(value)}")

