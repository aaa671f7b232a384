"""Published measurements of the reference stack set beside the model, as data: each with what was
measured, on which engine and release, and the model's figure for the same thing, so every page that
prices time can show the ratio.

Four kinds, from the kernels up:

- `KERNELS`: NVIDIA aiconfigurator-core's estimate of a prefill and of decode steps, composed from its
  tables of vLLM 0.24.0's kernels measured on an H100 SXM. The model's kernel time (without the step's
  fixed cost, which the estimate leaves out) must land within a tenth of it.
- `SINGLE_STREAM`: one sequence end to end, vLLM 0.19.1 on an H100 (vLLM's blog): the fixed cost per
  step is calibrated on its intercept (calc.engine.steptime), so its slope is what this checks.
- `CLOSED_LOOP`: benchmarks run at a fixed concurrency, the way `vllm bench serve --max-concurrency`
  runs: vLLM 0.19.1 at 8 (vLLM's blog) and TensorRT-LLM 1.0.0rc3 at 8, 32 and 128 (aiconfigurator's
  silicon_sample.csv; another engine on the same model and card, whose kernels differ: the nearest
  published run at 128 found). The model's side is calc.engine.simulation.closed_loop on the same lengths.
- `ENGINE_2024`: the steps of vLLM of September 2024 (Lambda) that the runbook's two old constants
  came from, kept to show how far the engine has moved.
"""
from __future__ import annotations

from dataclasses import dataclass

from . import simulation, timing
from ..model.roofline import decode_read
from ..specs.stack import REFERENCE, Stack
from ..core.arith import term, total
from ..core.units import MS, MS_FINE, PERCENT, RATIO_FINE, TOKENS, TOKENS_PER_S, Result, given, grouped

AIC = ("NVIDIA aiconfigurator-core 0.12.0, `estimate` in static mode on h100_sxm with its vllm 0.24.0 tables, "
       "Llama-3.1-8B bf16, 2,000 tokens in and 300 out (decode at 2,151 tokens held): its sum of measured GEMM and "
       "attention kernels plus its rule for norms and activation")
BLOG = ("vLLM blog, 'The State of FP8 KV-Cache and Attention Quantization in vLLM', 22 April 2026, Llama-3.1-8B on "
        "one H100, vLLM 0.19.1, FlashAttention 3, bf16 cache, "
        "https://github.com/vllm-project/vllm-project.github.io/blob/main/_posts/2026-04-22-fp8-kvcache.md")
SILICON = ("NVIDIA aiconfigurator-core 0.12.0, systems/silicon_sample.csv: TensorRT-LLM 1.0.0rc3 on one H100 SXM, "
           "meta-llama/Llama-3.1-8B-Instruct, TP 1, fixed 2,048 tokens in and 512 out, measured end to end")
LAMBDA = ("Lambda Labs, LambdaLabsML/vllm-benchmark, results/{}/1xH100-80GB-SXM/"
          "Meta-Llama-3-8B-Instruct_tp1_len2048.json (commit a4f9f43, September 2024): vLLM's benchmark_serving "
          "against its OpenAI server, ShareGPT prompts; the vLLM version is not logged (tokens stream in tens, "
          "so multi-step scheduling, v0.6 or later)")
RECONSTRUCTED = "batch and context reconstructed from the logged per-request lengths, ±10%"


@dataclass(frozen=True)
class Comparison:
    """One measurement beside the model: what was measured, the model's figure, and their ratio."""

    key: str
    label: str
    source: str
    measured: Result
    modelled: Result

    @property
    def ratio(self) -> Result:
        return (term(self.modelled) / term(self.measured)).result(RATIO_FINE, "model ÷ measurement")


def _measured(value: float, unit, what: str) -> Result:
    return given(value, unit, what)


KERNELS = {"prefill": (2000, 0.04244), "step_1": (1, 0.006240), "step_32": (32, 0.009768), "step_128": (128, 0.018666)}
KERNEL_CONTEXT = 2151


def kernel_comparisons(stack: Stack) -> dict[str, Comparison]:
    """The model's kernel time (no fixed cost) beside aiconfigurator's measured-kernel estimate."""
    prompt, seconds = KERNELS["prefill"]
    out = {"prefill": Comparison("prefill", f"prefill of {grouped(prompt)} tokens, kernels", AIC,
                                 _measured(seconds, MS, "aiconfigurator's estimate"),
                                 timing.prefill_step(stack, prompt).kernels)}
    for key in ("step_1", "step_32", "step_128"):
        batch, seconds = KERNELS[key]
        step = timing.decode_step(stack, batch, KERNEL_CONTEXT)
        kernels = total(term(g.time) for g in step.groups)  # 0 + a + b … is a + b … to the bit
        out[key] = Comparison(key, f"decode step, {grouped(batch)} × {grouped(KERNEL_CONTEXT)} tokens, kernels", AIC,
                              _measured(seconds, MS, "aiconfigurator's estimate"),
                              kernels.result(MS, "the step's kernels, without its fixed cost"))
    return out


SINGLE_STREAM = {"intercept_s": 6.44e-3, "slope_s": 4.37e-8, "prompt": 2000, "output": 128}


def single_stream(stack: Stack) -> dict[str, Comparison]:
    """One sequence's ITL after a 2,000-token prompt, and what each cached token adds to it."""
    m = SINGLE_STREAM
    slope = Result(m["slope_s"], MS, formula="fitted slope", worked=f"{m['slope_s'] * 1e3:.7f} ms a token")
    intercept = _measured(m["intercept_s"], MS, "fitted intercept")
    measured = (term(intercept, MS.precise(m["intercept_s"])) + term(slope, f"{m['slope_s'] * 1e3:.7f} ms")
                * term(m["prompt"])).result(MS_FINE, "the fitted intercept + slope × prompt")
    held = m["prompt"] + m["output"] // 2
    step = timing.decode_step(stack, 1, held)
    longer = timing.decode_step(stack, 1, held + 1000).time
    per_token = (term(longer, MS.precise(longer.value, 7)) - term(step.time, MS.precise(step.time.value, 7))) / term(1000)
    return {
        "itl": Comparison("itl", f"one sequence's ITL after {grouped(m['prompt'])} tokens", BLOG, measured, step.time),
        "slope": Comparison("slope", "what each cached token adds to one sequence's step", BLOG, slope,
                            per_token.result(MS, "(the step 1,000 tokens longer − the step) ÷ 1,000",
                                             shown=MS.precise(per_token.value))),
    }


@dataclass(frozen=True)
class Benchmark:
    """One published closed-loop run: its concurrency, fixed lengths, requests and what it printed."""

    key: str
    engine: str
    concurrency: int
    prompt: int
    output: int
    requests: int
    source: str
    ttft_s: float = 0.0  # mean, or median where `median` says so
    tpot_s: float = 0.0
    itl_s: float = 0.0  # median ITL
    output_rate: float = 0.0  # output tokens per second
    median: bool = False


CLOSED_LOOP = (
    Benchmark("vllm_8", "vLLM 0.19.1", 8, 20_000, 2_000, 150, BLOG + ": '150 requests at concurrency 8, each with "
              "~20k input tokens and ~2k output tokens (±15% variance)'; BF16 row: median TTFT 763.6 ms, median ITL "
              "15.18 ms, 450.3 output tok/s", ttft_s=0.7636, itl_s=0.01518, output_rate=450.3, median=True),
    Benchmark("trt_8", "TensorRT-LLM 1.0.0rc3", 8, 2048, 512, 80, SILICON, ttft_s=0.6917, tpot_s=0.00817),
    Benchmark("trt_32", "TensorRT-LLM 1.0.0rc3", 32, 2048, 512, 320, SILICON, ttft_s=0.3378, tpot_s=0.01256),
    Benchmark("trt_128", "TensorRT-LLM 1.0.0rc3", 128, 2048, 512, 1280, SILICON, ttft_s=0.5767, tpot_s=0.03114),
)


def derived_rate(b: Benchmark) -> Result:
    """Output tokens per second a closed loop sustains from its TTFT and TPOT: concurrency × output ÷
    (TTFT + (output − 1) × TPOT), each request's time in the loop."""
    # the two measured figures as closed_loops shows them, so the popover links them
    ttft, tpot = _measured(b.ttft_s, MS, "TTFT, measured"), _measured(b.tpot_s, MS_FINE, "TPOT, measured")
    seconds = term(ttft, MS.precise(b.ttft_s)) + term(b.output - 1) * term(tpot, MS.precise(b.tpot_s))
    return (term(b.concurrency) * term(b.output) / seconds).result(
        TOKENS_PER_S, "concurrency × output ÷ (TTFT + (output − 1) × TPOT)")


def closed_loops(stack: Stack) -> dict[str, dict[str, Comparison]]:
    """Each published closed-loop run beside the simulation of the same loop."""
    out: dict[str, dict[str, Comparison]] = {}
    for b in CLOSED_LOOP:
        run = simulation.closed_loop(stack, b.concurrency, b.prompt, b.output, b.requests)
        label = (f"{b.engine}, {b.concurrency} in flight, {grouped(b.prompt)} in and {grouped(b.output)} out")
        rows: dict[str, Comparison] = {}
        if b.ttft_s:
            model_ttft = run.median_ttft if b.median else run.mean_ttft
            rows["ttft"] = Comparison("ttft", f"{label}: TTFT ({'median' if b.median else 'mean'})", b.source,
                                      _measured(b.ttft_s, MS, "TTFT, measured"),
                                      _measured(model_ttft, MS, "TTFT in the simulated loop"))
        if b.tpot_s:
            rows["tpot"] = Comparison("tpot", f"{label}: TPOT (mean)", b.source, _measured(b.tpot_s, MS_FINE, "TPOT, measured"),
                                      _measured(run.mean_tpot, MS_FINE, "TPOT in the simulated loop"))
            rows["rate"] = Comparison("rate", f"{label}: output tokens per second", b.source, derived_rate(b),
                                      _measured(run.output_rate, TOKENS_PER_S, "output tokens per second, simulated"))
        if b.itl_s:
            rows["itl"] = Comparison("itl", f"{label}: ITL (median)", b.source, _measured(b.itl_s, MS_FINE, "ITL, measured"),
                                     _measured(run.median_itl, MS_FINE, "median ITL in the simulated loop"))
        if b.output_rate:
            rows["rate"] = Comparison("rate", f"{label}: output tokens per second", b.source,
                                      _measured(b.output_rate, TOKENS_PER_S, "output tokens per second, measured"),
                                      _measured(run.output_rate, TOKENS_PER_S, "output tokens per second, simulated"))
        out[b.key] = rows
    return out


@dataclass(frozen=True)
class OldStep:
    """A decode step of vLLM of September 2024: `batch` sequences holding about `tokens` tokens each."""

    key: str
    label: str
    batch: int
    tokens: int
    seconds: float
    caveat: str


ENGINE_2024 = (
    OldStep("step_1", "one sequence decoding alone", 1, 615, 0.00705, "ten-token chunks of 70.5 ms; " + RECONSTRUCTED),
    OldStep("step_10", "ten sequences", 10, 142, 0.00753, "a 75.25 ms chunk of ten steps; " + RECONSTRUCTED),
    OldStep("step_98", "about 98 sequences", 98, 448, 0.01074, "a 107.4 ms chunk of ten steps; " + RECONSTRUCTED),
    OldStep("step_200", "about 200 sequences", 200, 195, 0.01331, "a 133.1 ms chunk of ten steps; " + RECONSTRUCTED),
)
# What the old constants were: the median implied bandwidth share of those steps, and the MFU of
# their prefill steps (57,560 prompt tokens of about 205 each in 1.982 s).
OLD_CONSTANTS = {"mfu": 0.40, "bandwidth_fraction": 0.60}


def engine_2024(stack: Stack) -> dict[str, object]:
    """The 2024 engine's steps beside today's model: how much faster today's kernels and scheduler are."""
    rows = {}
    for old in ENGINE_2024:
        step = timing.decode_step(stack, old.batch, old.tokens)
        rows[old.key] = Comparison(old.key, old.label, LAMBDA.format("prompt_320" if old.batch > 10 else "prompt_10"),
                                   _measured(old.seconds, MS_FINE, "measured in September 2024"), step.time)
    read = decode_read(stack.model, stack.weight_precision, stack.kv_precision, 1, 615)
    return {**rows, "read_1": read.total,
            "mfu": given(OLD_CONSTANTS["mfu"], PERCENT, "the runbook's MFU before it modelled vLLM 0.33.0"),
            "bandwidth_fraction": given(OLD_CONSTANTS["bandwidth_fraction"], PERCENT,
                                        "the runbook's bandwidth share before it modelled vLLM 0.33.0")}


def section(stack: Stack = REFERENCE) -> dict[str, object]:
    return {"kernels": kernel_comparisons(stack), "single": single_stream(stack), "closed": closed_loops(stack),
            "engine_2024": engine_2024(stack), "context": given(KERNEL_CONTEXT, TOKENS, "tokens held")}
