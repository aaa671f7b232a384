#!/usr/bin/env python3
"""Write calc/engine/measured_kernels.py: the kernel times calc's step-time model is calibrated on,
read from NVIDIA's aiconfigurator-core (Apache-2.0), whose tables were measured on each card with a
vLLM release's own kernels. Run it after moving to a newer aiconfigurator-core; the package stays
out of the pages and out of CI, and only the compact table below travels.

    pip install aiconfigurator-core==0.12.0 pyarrow
    python3 tools/engine_kernels.py [--package DIR]

What it keeps, for each card with vLLM tables, on the shapes of one Llama 3.1 8B layer (bf16):
the four matrix multiplies (qkv, o, gate_up, down) at each token count in TOKENS, in bf16 and, where
the card has the table, in per-tensor fp8 (W8A8), decode attention over 2,048 cached tokens at each
batch, the smallest decode-attention call, and prefill attention at batch 1 over a range of prompt
lengths; and vLLM's all-reduce under CUDA graphs at 2, 4 and 8 GPUs over every message size the card
was timed at (the newest vLLM release the card has that table for). Where a shape falls between the
table's grid points it interpolates the time per unit of width between the two neighbours, which is
interpolating the achieved FLOP/s; nothing is extrapolated.
"""
from __future__ import annotations

import argparse
import importlib.util
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "calc" / "engine" / "measured_kernels.py"

PACKAGE_VERSION = "0.12.0"
# aiconfigurator's system name → calc's card key, and the vLLM release its tables were measured with.
SYSTEMS = {"h100_sxm": ("h100-sxm", "0.24.0"), "h200_sxm": ("h200-sxm", "0.24.0"), "b200_sxm": ("b200", "0.24.0"),
           "l40s": ("l40s", "0.24.0"), "a100_sxm": ("a100-80", "0.14.0")}
FP8 = "fp8"  # per-tensor scaled W8A8, the format of the fp8 checkpoints calc prices
ALL_REDUCE_BACKEND = "vllm_graph"  # vLLM's all-reduce as a decode step runs it, captured in a CUDA graph
TOKENS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192)  # tokens in a matrix multiply
CACHED = 2048  # tokens each sequence attends to in the decode-attention rows
SMALLEST = 16  # the smallest decode-attention call kept: one sequence, this many tokens
PROMPTS = (128, 256, 512, 1024, 2048, 4096, 8192, 16384)  # prompt lengths of the prefill-attention rows
HIDDEN, INTERMEDIATE, HEADS, KV_HEADS, HEAD_DIM = 4096, 14336, 32, 8, 128
# (N, K) of one layer's matrix multiplies: y = x Wᵀ with W of N rows and K columns.
LAYER_GEMMS = {"qkv": ((HEADS + 2 * KV_HEADS) * HEAD_DIM, HIDDEN), "o": (HIDDEN, HEADS * HEAD_DIM),
               "gate_up": (2 * INTERMEDIATE, HIDDEN), "down": (HIDDEN, INTERMEDIATE)}


def read_table(path: Path) -> list[dict]:
    import pyarrow.parquet as parquet
    return parquet.read_table(path).to_pylist()


def between(grid: list[int], x: int) -> tuple[int, int, float]:
    """The grid points on either side of x and x's weight towards the upper one."""
    if x in grid:
        return x, x, 0.0
    lower = max(v for v in grid if v < x)
    upper = min(v for v in grid if v > x)
    return lower, upper, (x - lower) / (upper - lower)


class Gemms:
    def __init__(self, rows: list[dict], dtype: str = "bfloat16"):
        rows = [r for r in rows if r["gemm_dtype"] == dtype]
        self.kernel = sorted({r["kernel_source"] for r in rows})
        self.time = {(r["m"], r["n"], r["k"]): r["latency"] / 1000 for r in rows}
        self.n = sorted({r["n"] for r in rows})
        self.k = sorted({r["k"] for r in rows})

    def seconds(self, m: int, n: int, k: int) -> float:
        n0, n1, wn = between(self.n, n)
        k0, k1, wk = between(self.k, k)
        total = 0.0
        for nn, weight_n in ((n0, 1 - wn), (n1, wn)):
            for kk, weight_k in ((k0, 1 - wk), (k1, wk)):
                if weight_n and weight_k:
                    total += weight_n * weight_k * (n / nn) * (k / kk) * self.time[(m, nn, kk)]
        return total


def attention_rows(rows: list[dict]) -> list[dict]:
    """The 8B's attention shape, bf16 cache, no window, in the table's most common kernel."""
    chosen = [r for r in rows if r["num_heads"] == HEADS and r["num_key_value_heads"] == KV_HEADS
              and r["head_dim"] == HEAD_DIM and r["kv_cache_dtype"] == "bfloat16" and r.get("window_size", 0) == 0]
    kernels = sorted({r["kernel_source"] for r in chosen}, key=lambda k: -sum(r["kernel_source"] == k for r in chosen))
    return [r for r in chosen if r["kernel_source"] == kernels[0]]


def all_reduce(data: Path) -> tuple[str, dict[int, tuple]]:
    """The newest release's all-reduce rows under CUDA graphs: {GPUs: ((elements, seconds), …)}; the
    table's message size counts bf16 elements."""
    folder = data / "comm" / "vllm"
    newest = max((p.name for p in folder.iterdir()), key=lambda v: tuple(int(x) for x in v.split(".")))
    rows = [r for r in read_table(folder / newest / "custom_allreduce_perf.parquet") if r["backend"] == ALL_REDUCE_BACKEND]
    # The release the rows were measured with, which a folder may file under a later name (a copy).
    measured_with = {r["version"] for r in rows}
    assert len(measured_with) == 1, f"{folder / newest}: rows of several releases, {sorted(measured_with)}"
    return measured_with.pop(), {n: tuple(sorted((r["message_size"], r["latency"] / 1000) for r in rows if r["num_gpus"] == n))
                                 for n in sorted({r["num_gpus"] for r in rows})}


def measure(package: Path, system: str, version: str) -> dict:
    data = package / "systems" / "data" / system
    gemm_rows = read_table(data / "gemm" / "vllm" / version / "gemm_perf.parquet")
    gemms = Gemms(gemm_rows)
    fp8 = Gemms(gemm_rows, FP8) if any(r["gemm_dtype"] == FP8 for r in gemm_rows) else None
    reduce_version, reduces = all_reduce(data)
    decode = attention_rows(read_table(data / "attention" / "vllm" / version / "generation_attention_perf.parquet"))
    prefill = attention_rows(read_table(data / "attention" / "vllm" / version / "context_attention_perf.parquet"))
    # A generation row attends to isl + step tokens; its isl is 1.
    decode_at = {(r["batch_size"], r["isl"] + r["step"]): r["latency"] / 1000 for r in decode}
    prefill_at = {(r["batch_size"], r["isl"]): r["latency"] / 1000 for r in prefill}
    batches = sorted(b for b, length in decode_at if length == CACHED)
    return {
        "system": system,
        "vllm": version,
        "gemm_kernel": ", ".join(gemms.kernel),
        "decode_kernel": decode[0]["kernel_source"],
        "prefill_kernel": prefill[0]["kernel_source"],
        "gemm": tuple(sum(gemms.seconds(m, n, k) for n, k in LAYER_GEMMS.values()) for m in TOKENS),
        "gemm_fp8": (tuple(sum(fp8.seconds(m, n, k) for n, k in LAYER_GEMMS.values()) for m in TOKENS) if fp8 else ()),
        "gemm_fp8_kernel": ", ".join(fp8.kernel) if fp8 else "",
        "decode": tuple((b, decode_at[(b, CACHED)]) for b in batches),
        "smallest": decode_at[(1, SMALLEST)],
        "prefill": tuple((s, prefill_at[(1, s)]) for s in PROMPTS if (1, s) in prefill_at),
        "all_reduce_vllm": reduce_version,
        "all_reduce": reduces,
    }


def rounded(value):
    """Four significant figures: the tables' own run-to-run spread is larger than that."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, tuple):
        return tuple(rounded(v) for v in value)
    if isinstance(value, dict):
        return {k: rounded(v) for k, v in value.items()}
    return value


def module_text(measured: dict[str, dict]) -> str:
    lines = [
        '"""Kernel times measured on real cards with vLLM\'s own kernels, as data: what calc.engine.kernels',
        "calibrates the step time on. Written by tools/engine_kernels.py from NVIDIA's aiconfigurator-core",
        f"{PACKAGE_VERSION} (Apache-2.0; systems/data/<card>/<op>/vllm/<release>/*.parquet); never edit by hand.",
        "",
        "Every time is seconds for one call on one layer of Llama 3.1 8B's shapes, bf16 weights and cache:",
        "`gemm`, the four matrix multiplies (qkv, o, gate_up, down) at each of TOKENS tokens; `gemm_fp8`,",
        "the same in per-tensor fp8 (W8A8), where the card has that table; `decode`, (batch, seconds) of",
        "decode attention, each sequence attending to CACHED tokens; `smallest`, one sequence attending to",
        "SMALLEST tokens; `prefill`, (prompt, seconds) of causal prefill attention for one prompt;",
        "`all_reduce`, {GPUs: ((bf16 elements, seconds), …)} of vLLM's all-reduce captured in a CUDA graph,",
        'measured with the release `all_reduce_vllm`."""',
        "",
        f'PACKAGE = "aiconfigurator-core {PACKAGE_VERSION}"',
        f"TOKENS = {TOKENS!r}",
        f"CACHED = {CACHED!r}",
        f"SMALLEST = {SMALLEST!r}",
        "",
        "CARDS = {",
    ]
    for key, m in measured.items():
        lines += [f"    {key!r}: {{",
                  *(f"        {field!r}: {rounded(m[field])!r}," for field in m),
                  "    },"]
    lines += ["}", ""]
    return "\n".join(lines)


def installed_package() -> Path:
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("aiconfigurator_core is not installed: pip install aiconfigurator-core==0.12.0, "
                         "or pass --package DIR (the unpacked wheel's aiconfigurator_core folder)")
    return Path(list(spec.submodule_search_locations)[0])


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--package", type=Path, help="the aiconfigurator_core folder (default: the installed one)")
    args = parser.parse_args()
    package = args.package or installed_package()
    measured = {key: measure(package, system, version) for system, (key, version) in SYSTEMS.items()}
    OUT.write_text(module_text(measured), encoding="utf-8")
    for key, m in measured.items():
        print(f"{key}: vLLM {m['vllm']}, {len(m['decode'])} decode batches, {len(m['prefill'])} prompt lengths")
    print(f"wrote {OUT.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
