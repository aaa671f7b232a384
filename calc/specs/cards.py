"""Accelerator cards, from their datasheets. Compute figures are dense: never the sparsity figure."""
from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from ..core.arith import field, made_of, term
from ..core.units import GB_PER_S, GIB_HELD, MIB_REPORTED, GiB, MiB, TB, TB_PER_S, TFLOPS, Result, given


@dataclass(frozen=True)
class Card:
    """One accelerator. `reported_mib` is nvidia-smi's total; `cuda_gib`, where a start-up log has
    published it, is the smaller total CUDA reports to a process (torch.cuda.mem_get_info), the one
    an engine multiplies by its utilisation."""

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
    bf16_sparse_tflops: float = 0.0  # the datasheet's headline bf16 figure, which assumes 2:4 sparsity
    host_link: str = ""              # the link to the host's memory (document 10's swap and offload tier)
    host_gb_per_s: float = 0.0       # that link's nominal rate in each direction, GB/s
    host_source: str = ""
    cuda_gib: float = 0.0            # CUDA's total as an engine logs it, in GiB to two places; 0: none published
    cuda_source: str = ""
    compute_capability: tuple[int, int] = (0, 0)  # CUDA's (major, minor), which picks vLLM's kernels and limits
    device_name: str = ""   # the name the driver gives the card, which vLLM's defaults read (an A100 is told by it)
    fp8_encoding: str = ""  # the fp8 its tensor cores multiply: "OCP" (E4M3 and E5M2) or "FNUZ"; "" where they have none
    fp4_formats: str = ""   # the fp4 formats its tensor cores multiply, as the datasheet names them; "" where none
    traits_source: str = "" # where the device name and the tensor cores' formats are stated

    @cached_property
    def host_bandwidth(self) -> Result:
        """The host link's nominal rate one way: datasheets quote PCIe both ways added, twice this."""
        return given(self.host_gb_per_s * 1e9, GB_PER_S, f"{self.host_link} nominal rate, each direction")

    @cached_property
    def reported_capacity(self) -> Result:
        value = self.reported_mib * MiB
        return Result(value, GIB_HELD, formula="reported MiB ÷ 1,024",
                      worked=f"{MIB_REPORTED.show(value)} ÷ 1,024 MiB/GiB = {GIB_HELD.show(value)}",
                      inputs=made_of(field(self, "reported_mib", what="total memory nvidia-smi reports, MiB")))

    @cached_property
    def cuda_capacity(self) -> Result:
        """CUDA's total for the card, as a published start-up log prints it: what vLLM multiplies."""
        return given(self.cuda_gib * GiB, GIB_HELD, "total CUDA reports to the process, as vLLM logs it")

    @cached_property
    def engine_capacity(self) -> Result:
        """The total an engine multiplies by its utilisation: CUDA's, where a log has published it;
        otherwise nvidia-smi's less what the driver kept back on the card where both are published
        (an assumption: the driver's share is taken to be the same on every card)."""
        if self.cuda_gib:
            return self.cuda_capacity
        held = driver_reserve()
        reported = self.reported_capacity
        return (term(reported, str(reported)) - term(held)).result(
            GIB_HELD, "nvidia-smi's total − the driver's share (as measured on an H100 SXM)")

    @cached_property
    def bandwidth(self) -> Result:
        value = self.hbm_tb_per_s * TB
        return given(value, TB_PER_S if value >= TB else GB_PER_S, "memory bandwidth")

    @cached_property
    def bf16_dense(self) -> Result:
        return given(self.bf16_dense_tflops * 1e12, TFLOPS, "dense bf16 tensor throughput")

    @cached_property
    def bf16_sparse(self) -> Result:
        return given(self.bf16_sparse_tflops * 1e12, TFLOPS, "bf16 tensor throughput with 2:4 structured sparsity")

    @cached_property
    def fp8_dense(self) -> Result:
        return given(self.fp8_dense_tflops * 1e12, TFLOPS, "dense fp8 tensor throughput")

    @cached_property
    def link_bandwidth(self) -> Result:
        return given(self.interconnect_gb_per_s * 1e9, GB_PER_S, f"{self.interconnect} bandwidth")


def _nvidia(sheet: str, smi: str) -> str:
    return f"NVIDIA {sheet} datasheet, dense figures (the datasheet's larger ones assume 2:4 sparsity); {smi}"


def _nvidia_traits(device: str, sheet: str, fp8: bool = True, fp4: bool = False) -> str:
    tensor = ("FP8 Tensor Cores, in the OCP formats E4M3 and E5M2" if fp8 else "no FP8 Tensor Core") + (
        ", and FP4 Tensor Cores (NVFP4 and MXFP4), Blackwell's fifth generation" if fp4 else "")
    return f"'{device}' is the name NVML gives the card (nvidia-smi --query-gpu=name); the {sheet} datasheet lists {tensor}"


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
    source=_nvidia("H100 Tensor Core GPU (SXM column: 1,979 bf16 and 3,958 fp8 TFLOP/s there are sparse)",
                   "81,559 MiB is nvidia-smi's total on an H100 80GB HBM3"),
    bf16_sparse_tflops=1979,
    host_link="PCIe Gen5 x16",
    host_gb_per_s=64,
    host_source="NVIDIA H100 datasheet (SXM column) lists PCIe Gen5 at 128 GB/s, both directions added: 64 GB/s each way",
    cuda_gib=79.19,
    cuda_source=("vLLM 0.19.0's start-up log on an H100 80 GB HBM3, 'worker init memory snapshot: … "
                 "total_memory=79.19GiB' (llm-d-incubation/llm-d-planner, accuracy/results/v0.19.0/logs/, commit "
                 "d3121e0, April 2026; vLLM of December 2024 printed 79.22 GiB on an older driver, "
                 "https://github.com/vllm-project/vllm/pull/10511); vLLM takes it from torch's get_memory_info "
                 "(cudaMemGetInfo) and prints bytes ÷ 2^30 to two places"),
    compute_capability=(9, 0),
    device_name="NVIDIA H100 80GB HBM3",
    fp8_encoding="OCP",
    traits_source=_nvidia_traits("NVIDIA H100 80GB HBM3", "H100"),
)

H100_PCIE = Card(
    name="H100 PCIe 80 GB",
    marketed_gb=80,
    reported_mib=81559,
    hbm_tb_per_s=2.0,
    bf16_dense_tflops=756.5,
    fp8_dense_tflops=1513.0,
    power_w=350,
    interconnect="PCIe Gen5 x16",
    interconnect_gb_per_s=128,
    source=_nvidia("H100 Tensor Core GPU (PCIe column: 1,513 bf16 and 3,026 fp8 TFLOP/s there are sparse)",
                   "81,559 MiB as nvidia-smi reports the 80 GB part"),
    bf16_sparse_tflops=1513,
    host_link="PCIe Gen5 x16",
    host_gb_per_s=64,
    host_source="NVIDIA H100 datasheet (PCIe column) lists PCIe Gen5 at 128 GB/s, both directions added: 64 GB/s each way",
    compute_capability=(9, 0),
    device_name="NVIDIA H100 PCIe",
    fp8_encoding="OCP",
    traits_source=_nvidia_traits("NVIDIA H100 PCIe", "H100"),
)

H200_SXM = Card(
    name="H200 SXM 141 GB",
    marketed_gb=141,
    reported_mib=143771,
    hbm_tb_per_s=4.8,
    bf16_dense_tflops=989.4,
    fp8_dense_tflops=1978.9,
    power_w=700,
    interconnect="NVLink 4",
    interconnect_gb_per_s=900,
    source=_nvidia("H200 Tensor Core GPU (SXM column: 1,979 bf16 and 3,958 fp8 TFLOP/s there are sparse)",
                   "143,771 MiB is nvidia-smi's total on an H200"),
    bf16_sparse_tflops=1979,
    host_link="PCIe Gen5 x16",
    host_gb_per_s=64,
    host_source="NVIDIA H200 datasheet (SXM column) lists PCIe Gen5 at 128 GB/s, both directions added: 64 GB/s each way",
    compute_capability=(9, 0),
    device_name="NVIDIA H200",
    fp8_encoding="OCP",
    traits_source=_nvidia_traits("NVIDIA H200", "H200"),
)

B200 = Card(
    name="B200 180 GB",
    marketed_gb=180,
    reported_mib=183359,
    hbm_tb_per_s=7.7,
    bf16_dense_tflops=2250,
    fp8_dense_tflops=4500,
    power_w=1000,
    interconnect="NVLink 5",
    interconnect_gb_per_s=1800,
    source=_nvidia("HGX B200 (per GPU: 4.5 PFLOP/s bf16 and 9 PFLOP/s fp8 there are sparse; the current table gives "
                   "62 TB/s of HBM over eight GPUs, 7.7 TB/s each, where earlier sheets said 64)",
                   "183,359 MiB is nvidia-smi's total on a B200"),
    bf16_sparse_tflops=4500,
    host_link="PCIe Gen5 x16",
    host_gb_per_s=64,
    host_source="PCIe Gen5 x16 host interface at the PCIe 5.0 rate, 64 GB/s each way (the HGX B200 table lists NVLink, not the host link)",
    compute_capability=(10, 0),
    device_name="NVIDIA B200",
    fp8_encoding="OCP",
    fp4_formats="NVFP4 and MXFP4",
    traits_source=_nvidia_traits("NVIDIA B200", "HGX B200", fp4=True),
)

A100_80 = Card(
    name="A100 SXM 80 GB",
    marketed_gb=80,
    reported_mib=81920,
    hbm_tb_per_s=2.039,
    bf16_dense_tflops=312,
    fp8_dense_tflops=0,
    power_w=400,
    interconnect="NVLink 3",
    interconnect_gb_per_s=600,
    source=_nvidia("A100 Tensor Core GPU (80GB SXM column: 624 bf16 TFLOP/s there is sparse; no fp8 tensor cores)",
                   "81,920 MiB is nvidia-smi's total on an A100 80GB"),
    bf16_sparse_tflops=624,
    host_link="PCIe Gen4 x16",
    host_gb_per_s=32,
    host_source="NVIDIA A100 datasheet (80GB SXM column) lists PCIe Gen4 at 64 GB/s, both directions added: 32 GB/s each way",
    compute_capability=(8, 0),
    device_name="NVIDIA A100-SXM4-80GB",
    fp8_encoding="",
    traits_source=_nvidia_traits("NVIDIA A100-SXM4-80GB", "A100", fp8=False),
)

A100_40 = Card(
    name="A100 SXM 40 GB",
    marketed_gb=40,
    reported_mib=40960,
    hbm_tb_per_s=1.555,
    bf16_dense_tflops=312,
    fp8_dense_tflops=0,
    power_w=400,
    interconnect="NVLink 3",
    interconnect_gb_per_s=600,
    source=_nvidia("A100 Tensor Core GPU (40GB SXM column: 624 bf16 TFLOP/s there is sparse; no fp8 tensor cores)",
                   "40,960 MiB is nvidia-smi's total on an A100 40GB"),
    bf16_sparse_tflops=624,
    host_link="PCIe Gen4 x16",
    host_gb_per_s=32,
    host_source="NVIDIA A100 datasheet (40GB SXM column) lists PCIe Gen4 at 64 GB/s, both directions added: 32 GB/s each way",
    compute_capability=(8, 0),
    device_name="NVIDIA A100-SXM4-40GB",
    fp8_encoding="",
    traits_source=_nvidia_traits("NVIDIA A100-SXM4-40GB", "A100", fp8=False),
)

L40S = Card(
    name="L40S 48 GB",
    marketed_gb=48,
    reported_mib=46068,
    hbm_tb_per_s=0.864,
    bf16_dense_tflops=362.05,
    fp8_dense_tflops=733,
    power_w=350,
    interconnect="PCIe Gen4 x16",
    interconnect_gb_per_s=64,
    source=_nvidia("L40S (733 bf16 and 1,466 fp8 TFLOP/s there are sparse; GDDR6, not HBM)",
                   "46,068 MiB is nvidia-smi's total on an L40S"),
    bf16_sparse_tflops=733,
    host_link="PCIe Gen4 x16",
    host_gb_per_s=32,
    host_source="NVIDIA L40S datasheet lists PCIe Gen4 at 64 GB/s, both directions added: 32 GB/s each way",
    compute_capability=(8, 9),
    device_name="NVIDIA L40S",
    fp8_encoding="OCP",
    traits_source=_nvidia_traits("NVIDIA L40S", "L40S"),
)

L4 = Card(
    name="L4 24 GB",
    marketed_gb=24,
    reported_mib=23034,
    hbm_tb_per_s=0.3,
    bf16_dense_tflops=121,
    fp8_dense_tflops=242.5,
    power_w=72,
    interconnect="PCIe Gen4 x16",
    interconnect_gb_per_s=64,
    source=_nvidia("L4 Tensor Core GPU (242 bf16 and 485 fp8 TFLOP/s there are sparse; GDDR6, not HBM)",
                   "23,034 MiB is nvidia-smi's total on an L4"),
    bf16_sparse_tflops=242,
    host_link="PCIe Gen4 x16",
    host_gb_per_s=32,
    host_source="NVIDIA L4 datasheet lists PCIe Gen4 at 64 GB/s, both directions added: 32 GB/s each way",
    compute_capability=(8, 9),
    device_name="NVIDIA L4",
    fp8_encoding="OCP",
    traits_source=_nvidia_traits("NVIDIA L4", "L4"),
)

MI300X = Card(
    name="MI300X 192 GB",
    marketed_gb=192,
    reported_mib=196592,
    hbm_tb_per_s=5.3,
    bf16_dense_tflops=1307.4,
    fp8_dense_tflops=2614.9,
    power_w=750,
    interconnect="Infinity Fabric",
    interconnect_gb_per_s=896,
    source=("AMD Instinct MI300X data sheet, dense figures (2,614.9 bf16 and 5,229.8 fp8 TFLOP/s there are sparse); "
            "196,592 MiB is what rocminfo reports in all (eight CPX partitions of 24,574 MiB)"),
    bf16_sparse_tflops=2614.9,
    host_link="PCIe Gen5 x16",
    host_gb_per_s=64,
    host_source="AMD Instinct MI300X data sheet: PCIe Gen5 x16, 128 GB/s both directions added: 64 GB/s each way",
    compute_capability=(9, 4),
    device_name="AMD_Instinct_MI300X",
    fp8_encoding="FNUZ",
    traits_source=("vLLM names the card AMD_Instinct_MI300X (vllm/platforms/rocm.py, _ROCM_DEVICE_ID_NAME_MAP, device "
                   "0x74a1); AMD CDNA 3 (MI300X): fp8 in the FNUZ encodings, PyTorch's float8_e4m3fnuz and "
                   "float8_e5m2fnuz, and no fp4"),
)

CARDS: dict[str, Card] = {
    "h100-sxm": H100_SXM,
    "h100-pcie": H100_PCIE,
    "h200-sxm": H200_SXM,
    "b200": B200,
    "a100-80": A100_80,
    "a100-40": A100_40,
    "l40s": L40S,
    "l4": L4,
    "mi300x": MI300X,
}


def driver_reserve() -> Result:
    """What the driver keeps from CUDA on the card calc has both totals for: nvidia-smi's total
    less the total CUDA reports to a process."""
    card = H100_SXM
    reported, cuda = card.reported_capacity, card.cuda_capacity
    return (term(reported, str(reported)) - term(cuda, str(cuda))).result(
        GIB_HELD, "nvidia-smi's total − CUDA's total, on the H100 SXM")
