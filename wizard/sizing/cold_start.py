"""Cold start of one replica, stage by stage (DOMAIN §7), each with the assumption it rests on.

    image pull        image size / registry bandwidth
    weight download   weight bytes / network bandwidth (0 when the weights are already on a local disk or PVC)
    load to GPU       weight bytes per node / local disk read speed (the nodes of a replica load in parallel)
    engine init       torch.compile + CUDA graph capture + communication groups (growing with nodes)
    first inference   the TTFT of a typical request at the planned batch (DOMAIN §7: warm up with realistic lengths)
The total without the image pull (it happens before the container starts) sizes the startup-probe budget and
VLLM_ENGINE_READY_TIMEOUT_S of the starter repo; the whole total drives the
cold_start_vs_ramp warning: if a new replica takes longer than the traffic ramp, scaling out does not work.
Every assumption is a named default the caller may override.
"""

from typing import NamedTuple

GB = 1e9


class ColdStartAssumptions(NamedTuple):
    image_bytes: float = 10 * GB  # the vllm/vllm-openai CUDA image, compressed layers (order of magnitude)
    registry_bytes_s: float = 0.1 * GB  # image pull with layer extraction (~100 MB/s: a pull is minutes, not seconds)
    # A scale-out on a cloud cluster first waits for the autoscaler to bring up a GPU node with its driver and device
    # plugin: minutes (an assumption; 0 where GPU nodes are kept up — override cold_start.node_bringup_s)
    node_bringup_s: float = 240.0
    network_bytes_s: float = 1.0 * GB  # weight download from the Hub or an object store (~8 Gb/s)
    weights_cached: bool = False  # weights pre-placed on the node or a PVC: no download
    # reading the weights from the model volume (a network disk: AWS gp3 gives 125 MB/s by default and up to 1,000
    # provisioned; local NVMe several GB/s) — an assumption, override cold_start.disk_bytes_s with yours
    disk_bytes_s: float = 0.5 * GB
    compile_s: float = 55.0  # torch.compile on first start: 54.73 s logged for Llama-3.1-70B w8a8 (kv-020)
    cuda_graphs_s: float = 15.0  # capturing the default CUDA graph sizes
    per_node_init_s: float = 10.0  # Ray / NCCL group set-up per extra node (multi-node only)


class Stage(NamedTuple):
    name: str
    seconds: float
    basis: str  # the formula and inputs, for the rationale


class ColdStart(NamedTuple):
    stages: tuple[Stage, ...]

    @property
    def total_s(self) -> float:
        return sum(s.seconds for s in self.stages)


def cold_start(weight_bytes_total: float, nodes: int, first_token_s: float, enforce_eager: bool = False,
               a: ColdStartAssumptions = ColdStartAssumptions()) -> ColdStart:
    """Seconds from scheduling a replica to its first real inference answered."""
    per_node = weight_bytes_total / max(1, nodes)
    download = 0.0 if a.weights_cached else weight_bytes_total / a.network_bytes_s
    init = (0.0 if enforce_eager else a.compile_s + a.cuda_graphs_s) + a.per_node_init_s * (nodes - 1)
    return ColdStart((
        Stage("GPU node bring-up", a.node_bringup_s,
              f"{a.node_bringup_s:g} s for the cluster autoscaler to add a GPU node (assumption; 0 if nodes are kept)"),
        Stage("image pull", a.image_bytes / a.registry_bytes_s,
              f"{a.image_bytes / GB:g} GB image / {a.registry_bytes_s / GB:g} GB/s"),
        Stage("weight download", download,
              "weights already on the node or the model volume (downloaded once, before)" if a.weights_cached
              else f"{weight_bytes_total / GB:,.1f} GB / {a.network_bytes_s / GB:g} GB/s"),
        Stage("load to GPU", per_node / a.disk_bytes_s,
              f"{per_node / GB:,.1f} GB per node / {a.disk_bytes_s / GB:g} GB/s from the model volume"),
        Stage("engine init", init,
              ("eager: no compile or graphs" if enforce_eager else f"compile {a.compile_s:g} s + CUDA graphs {a.cuda_graphs_s:g} s")
              + (f" + {nodes - 1} × {a.per_node_init_s:g} s node groups" if nodes > 1 else "")),
        Stage("first inference", first_token_s, "TTFT of a typical request at the planned batch"),
    ))
