"""Predicted vs measured for every row of tests/data/throughput-dev.yaml and tests/data/throughput-bench.yaml.

Each row is re-run through the sizing core with the row's model, GPU and lengths. Benchmarks sent with
request_rate=inf keep the engine full: the sequences in flight are then what the KV cache admits,
min(prompts, max_num_seqs, capacity / (prompt + output / 2)). Rows of other engines (SGLang, TensorRT-LLM)
are predicted but not counted in the error of this vLLM model; rows without prompt/output lengths say so.
`--fit` searches the efficiency constants, each on the rows that isolate it (fit()), and prints the best set (the
values in wizard/sizing/performance.py and data/vllm-speed.json come from this search; re-run it after changing the
model).

throughput-bench.yaml (public `vllm bench serve` / benchmark_serving results, closed and open loop, eight card types)
marks each row fit: true (used by --fit) or fit: false (held out): the summary reports the held-out rows per
metric — the share within 25 % of TTFT mean, TTFT P99, TPOT and output tokens/s — and per card.

Usage: python benchmarks/throughput.py [--fit]
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import re
import statistics
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import wizard.sizing.performance as perf  # noqa: E402
from wizard.sizing.engine import default_max_num_seqs  # noqa: E402
from wizard.sizing.engines import DEFAULT_VLLM_VERSION, profile_for  # noqa: E402
from wizard.sizing.fit import SizeInputs, size  # noqa: E402
from wizard.sizing.performance import Workload, performance  # noqa: E402
from wizard.sources.catalog import find_entry, find_gpu, load_catalog_model  # noqa: E402

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "throughput-dev.yaml"
H100 = "h100-sxm-80gb"  # the rows say "H100 (single GPU)" / "H100 80GB HBM3": the 80 GB HBM3 part is the SXM one

# Inputs each row implies (model, gpu, lengths, engine limits), with the assumption stated where the row is silent.
ROWS = {
    "tp-011": dict(model="Qwen/Qwen3-32B", gpu=H100, prompt=217, output=201, prompts=1000, max_len=40960, engine="vllm",
                   note="ShareGPT: 217,393 / 201,422 tokens over 1,000 prompts"),
    "tp-012": dict(model="Qwen/Qwen3-32B", gpu=H100, prompt=217, output=201, prompts=1000, max_len=40960, engine="sglang"),
    "tp-013": dict(model="Qwen/Qwen3-32B", gpu=H100, prompt=217, output=201, prompts=1000, max_len=40960, engine="trtllm"),
    "tp-014": dict(model="Qwen/Qwen3-32B-FP8", gpu=H100, prompt=217, output=201, prompts=1000, max_len=40960,
                   engine="trtllm"),
    "tp-015": dict(model="Qwen/Qwen3-32B", gpu=H100, prompt=32000, output=100, prompts=100, max_len=40960, engine="vllm"),
    "tp-016": dict(model="Qwen/Qwen3-32B", gpu=H100, prompt=4000, output=200, prompts=500, max_len=40960, engine="vllm"),
    "tp-017": dict(model="Qwen/Qwen3-32B", gpu=H100, prompt=2000, output=100, prompts=500, max_len=40960, engine="vllm"),
    "tp-018": dict(model="Qwen/Qwen3-32B", gpu=H100, prompt=128, output=4, prompts=1000, max_len=40960, engine="vllm"),
}
# tp-023 (Llama-3.1-8B, concurrency sweep) states no lengths; at concurrency 1 and 4 its TPOT is decode-bound,
# so it is predicted with short chat lengths (assumed 128 prompt / 256 output tokens) and flagged as such.
SWEEP = dict(model="meta-llama/Llama-3.1-8B-Instruct", gpu=H100, prompt=128, output=256, max_len=8192)


def in_flight(model, gpu, cfg) -> float:
    """Sequences the engine keeps in flight when every prompt is sent at once: what the KV cache admits,
    at vLLM's default max_num_seqs for the GPU (1024 on >= 70 GiB non-A100 cards, else 256)."""
    seqs = default_max_num_seqs(gpu)
    probe = size(model, gpu, SizeInputs(context_tokens=cfg["prompt"] + cfg["output"], concurrency=1, max_num_seqs=seqs))
    admitted = probe.kv_capacity_tokens / (cfg["prompt"] + cfg["output"] / 2)
    return max(1.0, min(cfg["prompts"], seqs, admitted))


def predict_row(row: dict) -> list[tuple[str, str, float, float, bool]]:
    """[(row id, metric, predicted, measured, counted)] for one row."""
    out = []
    if row["id"] == "tp-023":
        model = load_catalog_model(find_entry(SWEEP["model"]))
        gpu = find_gpu(SWEEP["gpu"])
        for point in row["sweep"]:
            c = point["concurrency"]
            r = size(model, gpu, SizeInputs(context_tokens=SWEEP["prompt"] + SWEEP["output"], concurrency=c))
            p = performance(r, Workload(c, SWEEP["prompt"], SWEEP["output"]))
            counted = c <= 4
            out.append((f"tp-023 c={c}", "tpot_p50_ms", p.tpot_ms, point["tpot_p50_ms"], counted))
        return out
    cfg = ROWS.get(row["id"])
    if cfg is None:
        return [(row["id"], "(no prompt/output lengths in the row)", math.nan, math.nan, False)]
    model = load_catalog_model(find_entry(cfg["model"]))
    gpu = find_gpu(cfg["gpu"])
    b = in_flight(model, gpu, cfg)
    r = size(model, gpu, SizeInputs(context_tokens=cfg["prompt"] + cfg["output"], concurrency=max(1, int(b)),
                                    max_num_seqs=default_max_num_seqs(gpu)))
    # request rate inf: every prompt is sent at once, those beyond the engine's b wait in its queue
    clients = float(cfg["prompts"]) if cfg["prompts"] > b else None
    p = performance(r, Workload(b, cfg["prompt"], cfg["output"], prompts=cfg["prompts"], clients=clients))
    counted = cfg["engine"] == "vllm"
    out.append((row["id"], f"output_tok_s (B={b:.1f})", p.output_tokens_per_s, row["output_tok_s"], counted))
    if row.get("tpot_ms", {}).get("median"):
        out.append((row["id"], "tpot_median_ms", p.tpot_ms, row["tpot_ms"]["median"], counted))
    return out


BENCH = DATA.parent / "throughput-bench.yaml"
# The rows' card names → catalog ids; the models' catalog stand-ins where a row's checkpoint shares the shapes.
GPU_NAMES = [("rtx 3090", "rtx3090-24gb"), ("rtx 4090", "rtx4090-24gb"), ("rtx 5090", "rtx5090-32gb"),
             ("mi300x", "mi300x-192gb"), ("h200", "h200-sxm-141gb"), ("h100 pcie", "h100-pcie-80gb"), ("h100", "h100-sxm-80gb"), ("a100 80", "a100-sxm-80gb"),
             ("a100", "a100-sxm-80gb"), ("l40s", "l40s-48gb"), ("l4", "l4-24gb")]
MODEL_STAND_INS = {"meta-llama/Meta-Llama-3-8B-Instruct": "meta-llama/Llama-3.1-8B-Instruct",  # same shapes
                   "Qwen/Qwen3Guard-Gen-8B": "Qwen/Qwen3-8B",  # a fine-tune of it: the same shapes
                   # DeepSeek-R1 distills: fine-tunes with their base's shapes (the rows' model_basis; Qwen-7B's
                   # rope_theta differs, which sizes nothing). R1-Distill-Qwen-1.5B unties its output layer: no
                   # catalog model has its shapes, so its rows are not predicted.
                   "deepseek-ai/DeepSeek-R1-Distill-Llama-8B": "meta-llama/Llama-3.1-8B",
                   "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B": "Qwen/Qwen2.5-7B",
                   "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B": "Qwen/Qwen2.5-14B",
                   # the H100 PCIe sweeps (s29-s41): each row's model_basis says what of the shapes was verified
                   "nvidia/AceMath-7B-Instruct": "Qwen/Qwen2.5-7B",
                   # the RTX 5090 sweeps (s42, s43): an AWQ int4 checkpoint of Qwen3-Coder-30B-A3B, whose model card
                   # states Qwen3-30B-A3B's shapes (the rows' model_basis)
                   "QuantTrio/Qwen3-Coder-30B-A3B-Instruct-AWQ": "Qwen/Qwen3-30B-A3B",
                   "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B": "Qwen/Qwen2.5-32B",
                   "Qwen/QwQ-32B-Preview": "Qwen/Qwen2.5-32B",
                   "deepseek-ai/DeepSeek-R1-Distill-Llama-70B": "meta-llama/Llama-3.3-70B-Instruct",
                   "neuralmagic/Llama-3.1-Nemotron-70B-Instruct-HF-FP8-dynamic": "meta-llama/Llama-3.1-70B-Instruct",
                   "meta-llama/Meta-Llama-3-70B-Instruct": "meta-llama/Llama-3.1-70B"}
# Rows that publish no token totals but send the same 1,000 ShareGPT prompts as tp-011 (vllm bench serve's default
# seed) to a model with the same tokenizer (Qwen3's): tp-011's measured totals, 217,393 prompt and 201,422 output
# tokens, are their lengths (an assumption the row list states; the outputs can stop at EOS sooner or later).
SHAREGPT_1000_QWEN3 = (217, 201)
KV_BLOCK_TOKENS = 16  # vLLM's default --block-size on CUDA: the prefix cache holds whole blocks
SHAREGPT_MAX_TOTAL = 2048  # vLLM's ShareGPT sampler drops pairs longer than this (is_valid_sequence, max_total_len)


def assumed_lengths(row: dict) -> bool:
    """True when the row's lengths are not its own (SHAREGPT_1000_QWEN3): it is shown, neither fitted nor counted —
    and its varied ShareGPT lengths sent at once are a workload the model's one mean length does not describe."""
    return not (row.get("input_len") and row.get("output_len")) and row_lengths(row) is not None


def row_lengths(row: dict) -> tuple[int, int] | None:
    """(prompt, output) tokens per request: the row's own, else the shared ShareGPT sample's for a Qwen3 model."""
    if row.get("input_len") and row.get("output_len"):
        return int(row["input_len"]), max(1, int(row["output_len"]))
    if (str(row.get("dataset", "")).startswith("sharegpt") and row.get("num_prompts") == 1000
            and str(row.get("model", "")).startswith("Qwen/Qwen3-")):
        return SHAREGPT_1000_QWEN3
    return None


def row_precision(row: dict) -> tuple[str, str]:
    """(weight precision, KV dtype) the row's stated weights mean for the sizing core."""
    w = str(row.get("weights_dtype", "")).lower()
    kv = "fp8" if str(row.get("kv_cache_dtype") or "").startswith("fp8") else "auto"  # the server's flag, where given
    if "fp8" in w and "kv" in w and w.startswith("bf16"):
        return "auto", "fp8"
    if "fp8" in w:
        return "fp8", kv
    for bits in ("int4", "int8"):
        if bits in w:
            return bits, kv
    return "auto", kv


def bench_rows() -> list[dict]:
    """The rows of throughput-bench.yaml (read once: --fit asks for them at every grid point; nothing changes them)."""
    return list(_bench_rows())


@functools.lru_cache(maxsize=1)
def _bench_rows() -> tuple[dict, ...]:
    if not BENCH.exists():
        return ()
    return tuple(r for r in yaml.safe_load(BENCH.read_text())["rows"] if isinstance(r, dict))


def _metric(row: dict, name: str, stat: str):
    block = row.get(name) or {}
    return block.get(stat) if isinstance(block, dict) else None


def row_gpu_id(row: dict) -> str | None:
    """The catalog id of the row's card (GPU_NAMES), None for a card the catalog does not name."""
    return next((gid for name, gid in GPU_NAMES if name in str(row.get("gpu", "")).lower()), None)


def row_version(row: dict) -> str:
    """The row's vLLM release where the memory profiles know it (its speed entry and batch defaults follow), else
    the pinned default (0.4.1 predates the profiles; some rows state none)."""
    v = str(row.get("vllm_version") or "")
    try:
        profile_for(v)
    except Exception:
        return DEFAULT_VLLM_VERSION
    return v


def predict_bench(row: dict, run: tuple[perf.Performance, str] | None | bool = True
                  ) -> list[tuple[str, str, float, float, bool, str]]:
    """[(row id, metric, predicted, measured, fit row?, gpu id)] for one benchmark row; [] when it cannot be run.
    `run`: the row's run_row result where the caller has it (True: run it here)."""
    if run is True:
        run = run_row(row)
    if not isinstance(run, tuple):
        return []
    perf_, gpu_id = run
    out = []
    for name, pred, meas in (
        ("ttft_mean_ms", perf_.ttft_ms, _metric(row, "ttft_ms", "mean")),
        ("ttft_p99_ms", perf_.ttft_p99_ms, _metric(row, "ttft_ms", "p99")),
        ("tpot_mean_ms", perf_.tpot_ms, _metric(row, "tpot_ms", "mean") or _metric(row, "tpot_ms", "median")),
        ("output_tok_s", perf_.output_tokens_per_s, row.get("output_tok_s")),
    ):
        if name.startswith("ttft") and (row.get("ttft_prefix_cached") or row.get("ttft_not_steady")):
            continue  # no prefill measured (prefix cache), or no steady-state TTFT (the row says why)
        if isinstance(meas, (int, float)) and meas > 0:
            out.append((row["id"], name, pred, float(meas), bool(row.get("fit")), gpu_id))
    return out


def open_loop(row: dict) -> bool:
    """Poisson arrivals at a finite --request-rate without --max-concurrency; every other row is a closed loop (its
    clients, or every prompt sent at once)."""
    rate = row.get("request_rate")
    return isinstance(rate, (int, float)) and rate != float("inf") and not row.get("max_concurrency")


def run_row(row: dict) -> tuple[perf.Performance, str] | None:
    """The row's load run through the sizing core and the load model: (its Performance, the card's catalog id), or
    None when the row's model, card or lengths are not known to the catalog."""
    gpu_id = row_gpu_id(row)
    model_id = MODEL_STAND_INS.get(row.get("model"), row.get("model"))
    try:
        model, gpu = load_catalog_model(find_entry(model_id)), find_gpu(gpu_id or "")
    except Exception:  # a model or card outside the catalog: not predicted
        return None
    if row.get("gpus_per_pod"):
        # TP ranks in separate pods (Ray workers, one GPU each): NCCL sees separate hosts, so every all-reduce
        # takes the network path, as across nodes, and vLLM's custom all-reduce is off (it needs one host)
        gpu = gpu._replace(gpus_per_node=int(row["gpus_per_pod"]))
    lengths = row_lengths(row)
    if lengths is None:
        return None
    prompt, output = lengths
    tp = int(row.get("tp") or 1)
    ctx = min(model.max_position_embeddings, -(-(prompt + output) // 16) * 16)
    # The server's max_model_len (its command, else the model's maximum): V0 without chunked prefill batches
    # whole prompts up to it per step, so it sets how a burst of prompts is prefilled.
    m = re.search(r"--max-model-len[ =](\d+)", str(row.get("serve_cmd") or ""))
    served = int(m.group(1)) if m else model.max_position_embeddings
    precision, kv_dtype = row_precision(row)
    version = row_version(row)
    cmd = str(row.get("serve_cmd") or "")
    pinned = re.search(r"--max[-_]num[-_]seqs[ =](\d+)", cmd)
    seqs = int(pinned.group(1)) if pinned else profile_for(version).default_batch(gpu, ctx, model, version)[1]
    gmu = re.search(r"--gpu[-_]memory[-_]utilization[ =]([0-9.]+)", cmd)
    rate = row.get("request_rate")
    conc = row.get("max_concurrency")
    batch_tokens = None
    if profile_for(version).no_chunked_prefill:
        batch_tokens = profile_for(version).default_batch(gpu, served, model, version)[0]
    steps = re.search(r"--num[-_]scheduler[-_]steps[ =](\d+)", cmd)  # V0's multi-step scheduling
    base = SizeInputs(tp=tp, context_tokens=ctx, concurrency=1, max_num_seqs=seqs, weight_precision=precision,
                      kv_cache_dtype=kv_dtype, vllm_version=version, max_num_batched_tokens=batch_tokens,
                      scheduler_steps=int(steps.group(1)) if steps else 1)
    if gmu:
        base = base._replace(gpu_memory_utilization=float(gmu.group(1)))
    try:
        probe = size(model, gpu, base)
        if row.get("available_kv_gib"):
            # the server's own KV pool ("Available KV cache memory", its utilization unpublished): the utilization
            # that leaves that pool beside what this sizing puts in the budget
            pool = probe.kv_pool_bytes
            want = float(row["available_kv_gib"]) * 2**30
            base = base._replace(gpu_memory_utilization=min(
                0.99, base.gpu_memory_utilization + (want - pool) / gpu.memory_reported_bytes))
            probe = size(model, gpu, base)
    except Exception:
        return None
    sharegpt = str(row.get("dataset", "")).startswith("sharegpt")
    longest = SHAREGPT_MAX_TOTAL if sharegpt else prompt + output
    if probe.kv_capacity_tokens < longest and not gmu and not row.get("available_kv_gib"):
        # At the default utilization the pool cannot hold the run's longest request, which the server did serve
        # (vLLM refuses a request over --max-model-len, and that cannot exceed the pool): it ran with a
        # --gpu-memory-utilization the source does not publish, so its KV pool is unknown — not predicted.
        return None
    # The same prompts sent to this server by an earlier run (prompts_sent_before): vLLM's prefix cache still holds
    # them when its pool held that whole run — its prompts and outputs, whole 16-token blocks; vLLM frees blocks to
    # the back of a least-recently-used queue, so a pool short of the run has evicted each prompt before the next run
    # reaches it (a loop over more blocks than the cache holds misses on every one). A cached prompt is prefilled from
    # its last full block on (at least its last token).
    cached = 0
    # a run's tokens at its mean lengths, plus a block per request for the part-filled blocks of varied lengths
    run = int(row.get("num_prompts") or 0) * (prompt + output + KV_BLOCK_TOKENS)
    if row.get("prompts_sent_before") and probe.kv_capacity_tokens >= run:
        cached = (prompt - 1) // KV_BLOCK_TOKENS * KV_BLOCK_TOKENS
    fixed = str(row.get("len_basis", "")).startswith("fixed") and (conc is not None or str(rate) == "inf")
    # Sequences at every stage of their output hold prompt + output / 2 tokens on average; identical requests that
    # start together (fixed lengths, a closed loop) grow together, so the cache must hold each at its full length.
    admitted = max(1.0, probe.kv_capacity_tokens / (prompt + (output if fixed else output / 2)))
    # ShareGPT's outputs vary (conversation replies): the longest sets the run's end. vLLM's sampler keeps pairs of at
    # most 2048 tokens (vllm/benchmarks/datasets.py is_valid_sequence, max_total_len=2048)
    varied = SHAREGPT_MAX_TOTAL - prompt if sharegpt else None
    if open_loop(row):
        w = Workload(1, prompt, output, rate=float(rate), prompts=int(row.get("num_prompts") or 0) or None,
                     varied_output_max=varied, cached_prompt_tokens=cached)
        b = None
    else:  # closed loop: --max-concurrency, or every prompt at once (rate inf): what the engine admits
        b = max(1.0, min(float(conc or row.get("num_prompts") or 1), float(row.get("num_prompts") or 1e9), seqs,
                         admitted))
        clients = float(conc or row.get("num_prompts") or b)
        w = Workload(b, prompt, output, prompts=int(row.get("num_prompts") or 0) or None,
                     clients=clients if clients > b else None, synchronized=fixed, cached_prompt_tokens=cached,
                     varied_output_max=varied)
    r = size(model, gpu, base._replace(concurrency=max(1, int(b or 1))))
    return performance(r, w), gpu.id


def all_bench() -> list[tuple[str, str, float, float, bool, str]]:
    return [x for row in bench_rows() for x in predict_bench(row)]


def all_predictions() -> list[tuple[str, str, float, float, bool]]:
    rows = yaml.safe_load(DATA.read_text())["rows"]
    return [x for row in rows for x in predict_row(row)]


def error(pred: float, meas: float) -> float:
    return (pred - meas) / meas


def score(rows: str) -> float:
    """Median |log error| (plus a quarter of the worst) over the counted rows of one kind."""
    errs = [abs(math.log(p / m)) for rid, _, p, m, counted in all_predictions()
            if counted and (rid.startswith("tp-023") == (rows == "decode"))]
    return statistics.median(errs) + 0.25 * max(errs)


def speed_entry(row: dict) -> dict | None:
    """The data/vllm-speed.json entry a row runs at (None: the module's constants)."""
    gpu_id = row_gpu_id(row)
    entry = find_entry(MODEL_STAND_INS.get(row.get("model"), row.get("model")))
    if entry is None or gpu_id is None:
        return None
    model = load_catalog_model(entry)
    profile = perf.speed_for(row_version(row), model.architecture, find_gpu(gpu_id).vendor).profile
    return next((e for e in perf._speed_entries() if e["id"] == profile), None)


HBM_PREFILL_ROWS = ("tp-015", "tp-016", "tp-017")  # Qwen3-32B on one H100, 2,000–32,000-token prompts: prefill-bound


def fit_rows(keep) -> list[dict]:
    """The fit rows of throughput-bench.yaml on a catalog card, with stated lengths, that the load model runs and does
    not saturate (a saturated row's TTFT and throughput are set by the queue — the prompts waiting for the engine —
    not by the step times the constants govern), and that `keep(row, gpu)` takes. A stage takes its set once, at its
    start, so no grid point can change which rows score it."""
    return [row for row in bench_rows()
            if row.get("fit") and not assumed_lengths(row) and (gpu_id := row_gpu_id(row)) is not None
            and keep(row, find_gpu(gpu_id)) and (run := run_row(row)) is not None and not run[0].saturated]


def class_fit_rows(gddr: bool) -> list[dict]:
    """The fit rows a card class's FLOPS efficiency is scored on: rows whose FLOPS efficiency is the module's (rows of
    a speed entry that names its own fit that entry instead; an entry that sets only the front end keeps its rows
    here, at that front end), one card each on GDDR (TP rows of cards without peer-to-peer fit the host all-reduce
    instead)."""
    return fit_rows(lambda row, g: "eff_flops" not in (speed_entry(row) or {}) and perf.is_gddr(g) == gddr
                    and not _host_allreduce_row(row) and (not gddr or int(row.get("tp") or 1) == 1))


def rocm_fit_rows() -> list[dict]:
    """The fit rows of AMD HBM cards (the ROCm bandwidth class) that no data/vllm-speed.json entry covers but for its
    front end: their decode steps read at the class's bandwidth share."""
    return fit_rows(lambda row, g: perf.bandwidth_class(g) == "rocm"
                    and ((entry := speed_entry(row)) is None or frontend_only(entry)))


def pcie_fit_rows() -> list[dict]:
    """The TP fit rows of cards with PCIe peer-to-peer and no NVLink: each decode step's all-reduces take the PCIe
    latency."""
    return fit_rows(lambda row, g: int(row.get("tp") or 1) > 1 and not g.nvlink and not perf.allreduce_through_host(g))


def host_fit_rows(loaded: bool) -> list[dict]:
    """The fit rows of TP on cards without peer-to-peer: at one request a second (decode-bound: one sequence's step
    is its weights and its all-reduces' latency), or (`loaded`) above it and unsaturated (steps carry prompt chunks,
    whose hidden states the all-reduces move through host memory)."""
    return [row for row in bench_rows()
            if row.get("fit") and _host_allreduce_row(row) and (row.get("request_rate") == 1) != loaded
            and not (loaded and _saturated(row))]


def rows_score(rows: list[dict], metric: str | None = None, extra: tuple[float, ...] = ()) -> float:
    """Median |log error| of one metric (None: every metric) over `rows`; never fewer than two figures. A closed
    loop's TTFT is left out where clients wait for a slot (_slot_wait): a queue sets it, not the constants fitted."""
    errs = list(extra)
    for row in rows:
        run = run_row(row)
        queued = _slot_wait(row, run)
        errs += [abs(math.log(p / m)) for _, name, p, m, _, _ in predict_bench(row, run)
                 if p > 0 and (metric is None or name == metric) and not (queued and name.startswith("ttft"))]
    assert len(errs) >= 2, (metric, [r["id"] for r in rows])
    return statistics.median(errs)


def _slot_wait(row: dict, run: tuple[perf.Performance, str] | None) -> bool:
    """A closed-loop row (clients, or every prompt at once) with more clients than the engine runs in the load model
    (`run`, the row's run_row): the others wait for a slot, a queue in their TTFT; their TPOT and throughput are the
    engine's."""
    prompts = row.get("num_prompts")
    clients = float(min(row.get("max_concurrency") or prompts or 0, prompts or math.inf))  # at most N wait
    return not open_loop(row) and run is not None and clients > run[0].concurrency * (1 + 1e-9)


def _saturated(row: dict) -> bool:
    """The load model runs this row's engine at (or past) what it serves: a queue sets its TTFT."""
    run = run_row(row)
    return run is not None and run[0].saturated


def _host_allreduce_row(row: dict) -> bool:
    """A TP row on cards whose all-reduces go through host memory (performance.allreduce_through_host)."""
    gpu_id = row_gpu_id(row)
    return int(row.get("tp") or 1) > 1 and gpu_id is not None and perf.allreduce_through_host(find_gpu(gpu_id))


def _is_gddr(gpu_id: str) -> bool:
    return perf.is_gddr(find_gpu(gpu_id))


def _grid(names: tuple[str, ...], values: tuple[tuple[float, ...], ...], scorer, quiet: bool = False) -> tuple[float, ...]:
    """Set perf's constants `names` to the grid point of `values` with the lowest scorer() (the first on a tie)."""
    best = None
    for point in itertools.product(*values):
        for n, v in zip(names, point):
            setattr(perf, n, v)
        _forget()
        s = scorer()
        if best is None or s < best[0] - 1e-9:
            best = (s, point)
    assert best is not None
    for n, v in zip(names, best[1]):
        setattr(perf, n, v)
    _forget()
    if not quiet:
        print("best: " + " ".join(f"{n}={v}" for n, v in zip(names, best[1])) + f" (median |log error| {best[0]:.3f})")
    return best[1]


def fit() -> None:
    """Stages, each on the rows that isolate it (never on one row): HBM bandwidth efficiency on the decode-bound rows
    of throughput-dev.yaml (tp-023, Llama-3.1-8B on one H100 at concurrency 1 and 4: weights read once per step); the
    GDDR bandwidth on the GDDR rows of throughput-bench.yaml marked fit: true (one card each, unsaturated), the AMD
    HBM (ROCm) bandwidth on that class's fit rows no entry covers (rocm_fit_rows); the prompt-carrying steps and the
    front end together (prefill_stage); the host all-reduce of cards without peer-to-peer on their TP fit rows (its
    latency at one request a second, its bytes/s above it), the PCIe peer-to-peer all-reduce latency on the TP fit
    rows of such cards (pcie_fit_rows); then the other constants of each entry of data/vllm-speed.json on its own
    rows."""
    _grid(("EFF_BANDWIDTH",), ((0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9),), lambda: score("decode"))
    # Each constant on the metric it governs (as fit_speed_entries does): the bandwidth on TPOT, the FLOPS efficiency
    # and the front end on mean TTFT (the ROCm bandwidth from the HBM default down, the first on a tie, as an entry's);
    # then the host all-reduce on its TP rows, which decode at the GDDR bandwidth, and the PCIe one on its TP rows;
    # twice round, as each shifts the others' rows. Each stage fixes its rows at its start.
    for _ in range(2):
        rows = class_fit_rows(gddr=True)
        _grid(("EFF_BANDWIDTH_GDDR",), ((0.6, 0.7, 0.8, 0.9),), lambda rows=rows: rows_score(rows, "tpot_mean_ms"))
        rows = rocm_fit_rows()
        _grid(("EFF_BANDWIDTH_ROCM",), (GRIDS["eff_bandwidth"],),
              lambda rows=rows: rows_score(rows, "tpot_mean_ms"))
        prefill_stage()
        rows = host_fit_rows(loaded=False)
        _grid(("ALLREDUCE_LATENCY_HOST_S",), ((10e-6, 20e-6, 30e-6, 40e-6, 50e-6, 60e-6, 70e-6, 80e-6, 100e-6),),
              lambda rows=rows: rows_score(rows, "tpot_mean_ms"))
        rows = host_fit_rows(loaded=True)
        _grid(("ALLREDUCE_HOST_BYTES_S",), ((2e9, 3e9, 4e9, 6e9, 8e9, 12e9, 16e9, 24e9, 32e9),),
              lambda rows=rows: rows_score(rows, "tpot_mean_ms"))
        rows = pcie_fit_rows()
        _grid(("ALLREDUCE_LATENCY_PCIE_S",), ((20e-6, 30e-6, 40e-6, 50e-6, 60e-6, 80e-6, 100e-6, 120e-6, 160e-6),),
              lambda rows=rows: rows_score(rows, "tpot_mean_ms"))
    fit_speed_entries()


def frontend_only(entry: dict) -> bool:
    """An entry of data/vllm-speed.json that sets a release's front end and nothing else."""
    return [k for k in GRIDS if k in entry] == ["frontend_s"]


def prefill_stage() -> None:
    """The FLOPS efficiency of each card class and the front ends.

    A row's mean TTFT is its front end plus its prefill: on one card the two trade against each other. They are told
    apart across cards: a release's front end is the same software on every card that ran it, while the cards'
    prefill times differ by their FLOPS and bandwidth. So the two FLOPS efficiencies are searched together on a grid;
    at each point every front end is fitted on its own rows, on mean TTFT — the default on the class fit rows no
    front-end entry covers (at least three figures from two sweeps), each front-end-only entry of data/vllm-speed.json
    on the rows it lists. The point is scored by three medians of |log error|, added: mean TTFT over the HBM class
    fit rows, mean TTFT over the GDDR ones (class_fit_rows), and every metric of the prefill-bound dev rows
    (HBM_PREFILL_ROWS, which publish no TTFT). Each group counts once, so the many short-prompt rows of one source
    do not outvote the long prompts of another."""
    rows = class_fit_rows(gddr=True) + class_fit_rows(gddr=False)
    entries = [e for e in perf._speed_entries() if frontend_only(e)]
    own = [r for r in rows if "frontend_s" not in (speed_entry(r) or {})]
    figures = [r["sweep_id"] for r in own for _, name, *_ in predict_bench(r) if name == "ttft_mean_ms"]
    assert len(figures) >= 3 and len(set(figures)) >= 2, "the default front end needs rows of its own"
    groups = [[r for r in rows if _is_gddr(row_gpu_id(r) or "") == gddr] for gddr in (False, True)]

    def fit_frontends() -> None:
        _grid(("FRONTEND_S",), (GRIDS["frontend_s"],), lambda: rows_score(own, "ttft_mean_ms"), quiet=True)
        for e in entries:
            fit_entry_constant(e, "frontend_s")

    def scorer() -> float:
        fit_frontends()
        dev = [abs(math.log(p / m)) for rid, _, p, m, _ in all_predictions() if rid in HBM_PREFILL_ROWS]
        return sum(rows_score(g, "ttft_mean_ms") for g in groups) + statistics.median(dev)

    coarse = ((0.2, 0.25, 0.3, 0.37, 0.45, 0.6, 0.75), (0.3, 0.37, 0.45, 0.6, 0.75, 0.9))
    best = _grid(("EFF_FLOPS", "EFF_FLOPS_GDDR"), coarse, scorer)
    # then finer about that point, within the coarse range (and below peak): the score is a sum of medians, not
    # smooth, and its best can lie between the coarse points (after the 2026-12-06 run-shape change 0.25 scored
    # 0.231 and 0.3 0.241, where 0.265 scored 0.180); the coarse point first, so that it wins a tie
    fine = tuple(tuple(dict.fromkeys(min(max(round(x * f, 3), grid[0]), grid[-1], 1.0) for f in FINE))
                 for x, grid in zip(best, coarse, strict=True))
    _grid(("EFF_FLOPS", "EFF_FLOPS_GDDR"), fine, scorer)
    fit_frontends()  # at the chosen point
    print(f"  front ends there: FRONTEND_S={perf.FRONTEND_S} "
          + " ".join(f"{e['id']}={e['frontend_s']}" for e in entries))


# Grid steps of at most ~1.3x on eff_flops below 0.1: the held-out test is a 25 % band, and a factor-2 step (0.1 to 0.05)
# cannot land inside it.
GRIDS = {"step_overhead_s": (0.0, 0.01, 0.02, 0.025, 0.03, 0.035, 0.04, 0.05),
         "eff_flops": (0.45, 0.3, 0.2, 0.15, 0.1, 0.08, 0.07, 0.06, 0.05, 0.04, 0.03, 0.02),
         "frontend_s": (0.003, 0.004, 0.005, 0.006, 0.008, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08),
         "eff_bandwidth": (0.75, 0.65, 0.55, 0.5, 0.45, 0.4, 0.35, 0.3, 0.25)}


FINE = (1.0, 0.88, 0.94, 1.06, 1.12)  # the finer grid about a coarse optimum: ±6 % and ±12 % (a coarse step is 20–33 %)


def _forget() -> None:
    """Drop remembered sizings and speeds: the constants just changed."""
    perf.performance.cache_clear()
    perf.speed_for.cache_clear()


# The metric each constant governs, and the one its fit scores: a step's fixed cost sets the decode steps (TPOT), the
# FLOPS efficiency the prompt-carrying steps and the front end the request's start (TTFT). Scoring each on its own
# metric keeps two constants from trading one metric's error against another's on the same two rows.
GOVERNS = {"step_overhead_s": ("tpot_mean_ms",), "eff_flops": ("ttft_mean_ms",), "frontend_s": ("ttft_mean_ms",),
           "eff_bandwidth": ("tpot_mean_ms",)}


def fit_entry_constant(entry: dict, name: str) -> None:
    """Set one constant of a data/vllm-speed.json entry to the value of its grid (GRIDS) that fits the entry's own
    rows best on the metric it governs (GOVERNS; median |log error|, the first on a tie)."""
    by_id = {r["id"]: r for r in bench_rows()}
    chosen = [by_id[i] for i in entry["fitted_on"] if i in by_id]
    assert len(chosen) >= 2, entry["id"]  # never one row
    best = None
    for value in GRIDS[name]:
        entry[name] = value
        _forget()
        errs = [abs(math.log(p / m)) for row in chosen for _, metric, p, m, _, _ in predict_bench(row)
                if p > 0 and metric in GOVERNS[name]]
        s = statistics.median(errs)
        if best is None or s < best[0] - 1e-9:
            best = (s, value)
    assert best is not None
    entry[name] = best[1]
    _forget()


def fit_speed_entries() -> None:
    """Stage three: each entry of data/vllm-speed.json on its own fit rows (the ones it lists; never one row). Its
    constants are searched one after another (in GRIDS order), each on the metric it governs (median |log error|),
    twice round: a prefill chunk's time also enters the decode steps it shares. Front-end-only entries are fitted
    with the FLOPS efficiencies instead (prefill_stage)."""
    for entry in perf._speed_entries():
        if frontend_only(entry):
            continue
        names = [k for k in GRIDS if k in entry]
        for _ in range(2):
            for name in names:
                fit_entry_constant(entry, name)
        print(f"best {entry['id']}: " + ", ".join(f"{k}={entry[k]}" for k in names)
              + f" (rows {', '.join(entry['fitted_on'])}, each on the metric it governs)")


def print_bench() -> None:
    by_row = {r["id"]: r for r in bench_rows()}
    rows = all_bench()
    if not rows:
        return
    print(f"\n{'bench row':10s} {'card':15s} {'metric':14s} {'predicted':>10s} {'measured':>10s} {'error':>8s}  set")
    for rid, metric, p, m, fit_row, gpu in rows:
        label = ("assumed lengths: not counted" if assumed_lengths(by_row[rid]) else "fit" if fit_row else "held out")
        print(f"{rid:10s} {gpu:15s} {metric:14s} {p:10.1f} {m:10.1f} {error(p, m):+8.1%}  {label}")
    held = [(metric, gpu, abs(error(p, m)) <= 0.25) for rid, metric, p, m, fit_row, gpu in rows
            if not fit_row and not assumed_lengths(by_row[rid])]
    print("held-out rows within 25 %:")
    for metric in ("ttft_mean_ms", "ttft_p99_ms", "tpot_mean_ms", "output_tok_s"):
        hits = [ok for mm, _, ok in held if mm == metric]
        if hits:
            print(f"  {metric:14s} {sum(hits)}/{len(hits)} ({sum(hits) / len(hits):.0%})")
    for gpu in sorted({g for _, g, _ in held}):
        hits = [ok for _, g, ok in held if g == gpu]
        per = ", ".join(f"{m.replace('_ms', '').replace('_', ' ')} {sum(o for mm, g, o in held if g == gpu and mm == m)}/"
                        f"{sum(1 for mm, g, _ in held if g == gpu and mm == m)}"
                        for m in ("ttft_mean_ms", "ttft_p99_ms", "tpot_mean_ms", "output_tok_s")
                        if any(mm == m and g == gpu for mm, g, _ in held))
        print(f"  {gpu:14s} {sum(hits)}/{len(hits)} ({sum(hits) / len(hits):.0%}): {per}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fit", action="store_true", help="search the efficiency constants first")
    if parser.parse_args().fit:
        fit()
    print(f"constants: EFF_BANDWIDTH={perf.EFF_BANDWIDTH} EFF_BANDWIDTH_GDDR={perf.EFF_BANDWIDTH_GDDR} "
          f"EFF_BANDWIDTH_ROCM={perf.EFF_BANDWIDTH_ROCM} "
          f"EFF_FLOPS={perf.EFF_FLOPS} EFF_FLOPS_GDDR={perf.EFF_FLOPS_GDDR} FRONTEND_S={perf.FRONTEND_S} "
          f"STEP_OVERHEAD_S={perf.STEP_OVERHEAD_S} ALLREDUCE_LATENCY_HOST_S={perf.ALLREDUCE_LATENCY_HOST_S} "
          f"ALLREDUCE_LATENCY_PCIE_S={perf.ALLREDUCE_LATENCY_PCIE_S} "
          f"ALLREDUCE_HOST_BYTES_S={perf.ALLREDUCE_HOST_BYTES_S:.3g}")
    print(f"{'row':14s} {'metric':26s} {'predicted':>10s} {'measured':>10s} {'error':>8s}  counted")
    errs = []
    for rid, metric, p, m, counted in all_predictions():
        if math.isnan(p):
            print(f"{rid:14s} {metric}")
            continue
        e = error(p, m)
        if counted:
            errs.append(e)
        print(f"{rid:14s} {metric:26s} {p:10.1f} {m:10.1f} {e:+8.1%}  {'yes' if counted else 'no (other engine or assumed lengths)'}")
    within = sum(abs(e) <= 0.25 for e in errs)
    print(f"vLLM rows: median |error| {statistics.median(abs(e) for e in errs):.1%}, "
          f"{within}/{len(errs)} within ±25 %")
    print_bench()


if __name__ == "__main__":
    main()
