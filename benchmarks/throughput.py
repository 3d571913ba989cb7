"""Predicted vs measured for every row of tests/data/throughput-dev.yaml (issue #4's calibration check).

Each row is re-run through the sizing core with the row's model, GPU and lengths. Benchmarks sent with
request_rate=inf keep the engine full: the sequences in flight are then what the KV cache admits,
min(prompts, max_num_seqs, capacity / (prompt + output / 2)). Rows of other engines (SGLang, TensorRT-LLM)
are predicted but not counted in the error of this vLLM model; rows without prompt/output lengths say so.
`--fit` searches the three efficiency constants on the counted rows and prints the best set (the values in
wizard/sizing/performance.py come from this search; re-run it after changing the model).

Usage: python benchmarks/throughput.py [--fit]
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import wizard.sizing.performance as perf  # noqa: E402
from wizard.sizing.engine import default_max_num_seqs  # noqa: E402
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
    p = performance(r, Workload(b, cfg["prompt"], cfg["output"]))
    counted = cfg["engine"] == "vllm"
    out.append((row["id"], f"output_tok_s (B={b:.1f})", p.output_tokens_per_s, row["output_tok_s"], counted))
    if row.get("tpot_ms", {}).get("median"):
        out.append((row["id"], "tpot_median_ms", p.tpot_ms, row["tpot_ms"]["median"], counted))
    return out


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


def fit() -> None:
    """Two stages, each on the rows that isolate it: bandwidth efficiency and step overhead on the decode-bound
    rows (tp-023 at concurrency 1 and 4: a few short sequences, weights read once per step); then FLOPS
    efficiency on the mixed prefill/decode rows (tp-011, tp-015..018)."""
    best = None
    for bw in (0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9):
        for oh in (0.0, 0.0002, 0.0005, 0.0008, 0.0012):
            perf.EFF_BANDWIDTH, perf.STEP_OVERHEAD_S = bw, oh
            s = score("decode")
            if best is None or s < best[0] - 1e-9:
                best = (s, bw, oh)
    perf.EFF_BANDWIDTH, perf.STEP_OVERHEAD_S = best[1], best[2]
    best_fl = None
    for fl in (0.2, 0.225, 0.25, 0.275, 0.3, 0.325, 0.35, 0.375, 0.4, 0.45, 0.5, 0.6):
        perf.EFF_FLOPS = fl
        s = score("mixed")
        if best_fl is None or s < best_fl[0]:
            best_fl = (s, fl)
    perf.EFF_FLOPS = best_fl[1]
    print(f"best: EFF_BANDWIDTH={perf.EFF_BANDWIDTH} STEP_OVERHEAD_S={perf.STEP_OVERHEAD_S} (decode rows) "
          f"EFF_FLOPS={perf.EFF_FLOPS} (mixed rows)")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--fit", action="store_true", help="search the efficiency constants first")
    if parser.parse_args().fit:
        fit()
    print(f"constants: EFF_BANDWIDTH={perf.EFF_BANDWIDTH} EFF_FLOPS={perf.EFF_FLOPS} "
          f"STEP_OVERHEAD_S={perf.STEP_OVERHEAD_S}")
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


if __name__ == "__main__":
    main()
