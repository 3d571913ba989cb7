"""GpuSpec: one accelerator type as the catalog describes it (datasheet figures with sources)."""


from typing import NamedTuple


class GpuSpec(NamedTuple):
    """A GPU type. Memory in bytes, bandwidth in bytes/s, compute in FLOP/s (dense, no sparsity)."""

    id: str  # lowercase catalog id, e.g. h100-sxm-80gb
    name: str
    vendor: str
    memory_marketed_bytes: int  # what the datasheet says (GB = 1e9 or GiB as the vendor means it)
    memory_reported_bytes: int  # what CUDA/ROCm reports as total: the base of vLLM's budget (DOMAIN §2)
    memory_reported_source: str  # "observed: <log>" or "estimated: <rule>"
    mem_bw_bytes_s: float
    bf16_flops: float | None
    fp8_flops: float | None
    int8_ops: float | None
    fp8_support: bool
    interconnect: str
    interconnect_bytes_s: float | None  # per GPU, one direction, within a node
    nvlink: bool  # fast intra-node fabric (NVLink/XGMI) vs PCIe only
    gpus_per_node: int
    tdp_w: int | None
    sources: tuple[str, ...]
    notes: tuple[str, ...] = ()
    memory_type: str = "HBM"  # HBM (datacenter stacks), GDDR6/GDDR6X/GDDR7 (consumer, L-class and RTX PRO cards) or
    # LPDDR5X (unified CPU+GPU memory of a superchip: DGX Spark / GB10)
    compute_capability: str | None = None  # CUDA compute capability ("9.0"); None for AMD and Gaudi cards
    fp4_flops: float | None = None  # dense FP4 FLOP/s (NVFP4 / MXFP4 tensor cores); None without FP4 or no figure read
    fp4_support: bool = False  # hardware FP4 tensor cores (Blackwell, AMD CDNA4); the figure may still be None
    # PCIe peer-to-peer between two cards of this type. GeForce RTX 4090/5090 drivers leave it off: NCCL then stages
    # every all-reduce through host memory and vLLM's custom all-reduce is disabled (its P2P check fails).
    pcie_p2p: bool = True
