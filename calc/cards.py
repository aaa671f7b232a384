"""Accelerator cards, from their datasheets. Compute figures are dense: never the sparsity figure."""
from __future__ import annotations

from dataclasses import dataclass

from .units import GB_PER_S, GIB_HELD, MIB_REPORTED, MiB, TB, TB_PER_S, TFLOPS, Result, given


@dataclass(frozen=True)
class Card:
    """One accelerator. `reported_mib` is the capacity the runtime sees (nvidia-smi's total)."""

    name: str
    marketed_gb: int
    reported_mib: int
    hbm_tb_per_s: float
    bf16_dense_tflops: float
    fp8_dense_tflops: float
    power_w: int
    interconnect: str
    interconnect_gb_per_s: float
    source: str

    @property
    def reported_capacity(self) -> Result:
        value = self.reported_mib * MiB
        return Result(value, GIB_HELD, formula="reported MiB ÷ 1,024",
                      worked=f"{MIB_REPORTED.show(value)} ÷ 1,024 = {GIB_HELD.show(value)}")

    @property
    def bandwidth(self) -> Result:
        return given(self.hbm_tb_per_s * TB, TB_PER_S, "HBM bandwidth")

    @property
    def bf16_dense(self) -> Result:
        return given(self.bf16_dense_tflops * 1e12, TFLOPS, "dense bf16 tensor throughput")

    @property
    def fp8_dense(self) -> Result:
        return given(self.fp8_dense_tflops * 1e12, TFLOPS, "dense fp8 tensor throughput")

    @property
    def link_bandwidth(self) -> Result:
        return given(self.interconnect_gb_per_s * 1e9, GB_PER_S, f"{self.interconnect} bandwidth")


H100_SXM = Card(
    name="H100 SXM 80 GB",
    marketed_gb=80,
    reported_mib=81559,
    hbm_tb_per_s=3.35,
    bf16_dense_tflops=989.4,
    fp8_dense_tflops=1978.9,
    power_w=700,
    interconnect="NVLink 4",
    interconnect_gb_per_s=900,
    source=("NVIDIA H100 Tensor Core GPU datasheet (SXM column; 1,979 bf16 and 3,958 fp8 TFLOP/s there are "
            "the 2:4 sparsity figures, halved here); 81,559 MiB is nvidia-smi's total on an H100 80GB HBM3"),
)

CARDS: dict[str, Card] = {
    "h100-sxm": H100_SXM,
}
