"""`check-bench`: a `vllm bench serve` result (bench/run.sh's) against the plan's predictions and P99 targets.

The verdict is the targets: P99 TTFT and P99 TPOT measured at the plan's peak must be within the P99 targets the
plan was sized for. Beside each, the plan's prediction: a measured figure more than 25 % from it names the input
to revisit, and what the measured figure implies for the replica count (latency grows about linearly with the
sequences per replica in the memory-bound decode, an assumption stated with the figure).
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

from wizard.errors import InputError
from wizard.specs.contracts import Plan

MAX_RESULT_BYTES = 256 * 2**20  # a result with per-request lists for 10,000 prompts is a few MB
OFF = 0.25  # predicted vs measured beyond this names the input to revisit
# (metric, result key, the plan's prediction field, the answers' target key)
METRICS = (
    ("TTFT mean (ms)", "mean_ttft_ms", "ttft_ms", None),
    ("TTFT P99 (ms)", "p99_ttft_ms", "ttft_p99_ms", "ttft_p99_ms"),
    ("TPOT mean (ms)", "mean_tpot_ms", "tpot_ms", None),
    ("TPOT P99 (ms)", "p99_tpot_ms", "tpot_p99_ms", "tpot_p99_ms"),
    ("output tokens/s", "output_throughput", "output_tokens_per_s", None),
)
REVISIT = {
    "mean_ttft_ms": "the prompt lengths and the replicas (queueing for prefill grows with the load per replica)",
    "p99_ttft_ms": "the replicas (the tail is queueing for prefill) and max_num_batched_tokens (the chunk size)",
    "mean_tpot_ms": "max-num-seqs (sequences per replica) and the card (its bandwidth sets every decode step)",
    "p99_tpot_ms": "max-num-seqs and the replicas (steps that carry prompt chunks are longer under load)",
    "output_throughput": "the replicas and the card: the endpoint delivers a different share of the plan's capacity",
}


@dataclass
class Row:
    metric: str
    key: str
    predicted: float | None
    measured: float | None
    target: float | None
    verdict: str  # "ok", "fails target", "no target", "not measured"
    off: float | None  # (measured − predicted) / predicted


@dataclass
class Lengths:
    """The request lengths the predictions were made at (tokens): the result's means, else the plan's."""

    prompt_tokens: int
    output_tokens: int
    source: str  # "result" (its totals / completed requests) or "plan" (the result has no totals)
    varied_outputs: bool  # the outputs differ in length (stopped at EOS, a conversation dataset)
    varied_prompts: bool = False  # the saved per-request prompts differ in length (a dataset's prompts)


@dataclass
class BenchCheck:
    result_file: str
    plan_file: str
    rows: list[Row] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    advice: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # what the predictions rest on, where the reader should know
    load: str = ""
    lengths: Lengths | None = None


def read_result(path: Path) -> dict[str, Any]:
    """The saved `vllm bench serve` result; InputError (exit 2) when it is none."""
    from wizard.capped_read import TooBig, read_capped

    try:
        if path.is_dir():
            raise InputError("RESULT", str(path), "a folder: expected the JSON file `vllm bench serve --save-result` writes")
        raw = read_capped(path, MAX_RESULT_BYTES)
    except TooBig:
        raise InputError("RESULT", str(path), f"larger than {MAX_RESULT_BYTES // 2**20} MiB: a benchmark result is a few KiB") from None
    except OSError as e:
        raise InputError("RESULT", str(path), f"unreadable ({e.strerror or type(e).__name__}): expected a readable JSON file") from None
    except ValueError:
        raise InputError("RESULT", repr(str(path)), "expected a file path") from None
    expected = "expected the JSON object `vllm bench serve --save-result` writes (mean_ttft_ms, p99_tpot_ms, ...)"
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError):
        raise InputError("RESULT", str(path), f"not JSON: {expected}") from None
    if not isinstance(data, dict) or not any(isinstance(data.get(k), (int, float)) for k in ("mean_ttft_ms", "mean_tpot_ms")):
        raise InputError("RESULT", str(path), f"not a benchmark result: {expected}")
    return data


def bench_lengths(data: dict[str, Any]) -> tuple[int, int] | None:
    """Mean prompt and output tokens of the result's requests (its totals / completed requests, rounded), None when
    the result does not have them."""
    done, ins, outs = data.get("completed"), data.get("total_input_tokens"), data.get("total_output_tokens")
    if not (isinstance(done, int) and isinstance(ins, int) and isinstance(outs, int)) \
            or any(isinstance(x, bool) for x in (done, ins, outs)) or min(done, ins, outs) <= 0:
        return None
    return max(1, round(ins / done)), max(1, round(outs / done))


def varied_outputs(data: dict[str, Any], planned_output: int | None) -> bool:
    """The result's outputs differ in length. Its per-request `output_lens` (--save-detailed) say so directly, failed
    requests' zeros left out; without them, only bench/run.sh's case counts as identical: --ignore-eos requests of the
    plan's typical output, an output total of exactly that many a request (a conversation dataset's or EOS-stopped
    outputs could divide evenly by chance). Identical requests in a closed loop move in waves that keep their shape
    (performance.Workload.synchronized)."""
    lens = data.get("output_lens")
    if isinstance(lens, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in lens):
        done = [x for x in lens if x > 0]  # vllm bench serve writes 0 for a failed request
        if done:
            return len(set(done)) > 1
    done_n, outs = data.get("completed"), data.get("total_output_tokens")
    return not (isinstance(done_n, int) and isinstance(outs, int) and planned_output and outs == done_n * planned_output)


def varied_prompts(data: dict[str, Any]) -> bool:
    """The result's prompts differ in length, by its per-request `input_lens` (--save-detailed), the requests that
    failed (an output length of 0 beside them) left out. vllm bench serve's random dataset re-encodes a prompt to
    its target length and records what it got, which can miss by a few tokens, so prompts within a 16-token KV block
    or 1 % of their mean of each other count as equal. Without input_lens they are taken as equal: as bench/run.sh's
    random dataset at range ratio 0 sends them."""
    lens, outs = data.get("input_lens"), data.get("output_lens")
    if not (isinstance(lens, list) and lens and all(isinstance(x, int) and not isinstance(x, bool) for x in lens)):
        return False
    if isinstance(outs, list) and len(outs) == len(lens):
        lens = [x for x, o in zip(lens, outs, strict=True) if not (isinstance(o, int) and o == 0)] or lens
    spread, mean = max(lens) - min(lens), sum(lens) / len(lens)
    return spread > max(16, 0.01 * mean)


def finite_rate(rate: Any) -> float | None:
    """The result's request_rate as requests/s when it paced its arrivals (a positive finite number); None when
    every request was sent at once (vllm bench serve writes "inf") or the field is missing or no rate."""
    if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 < rate < math.inf:
        return None
    return float(rate)


def run_lengths(plan: Plan, data: dict[str, Any]) -> Lengths | None:
    """The lengths to predict the result at: its own mean lengths when it has totals (a benchmark of other requests
    than the plan's typical one is predicted as it ran), else the plan's typical prompt and output; None when
    neither is known."""
    planned, own = plan.typical_lengths(), bench_lengths(data)
    if own is not None:
        return Lengths(own[0], own[1], "result", varied_outputs(data, planned[1] if planned else None),
                       varied_prompts(data))
    return Lengths(planned[0], planned[1], "plan", False) if planned else None


def count(value: Any) -> int | None:
    """A result's count field (num_prompts, max_concurrency) when it is a whole number above 0 (an int, or a float
    such as 200.0; not a bool)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


class Overrun(NamedTuple):
    """A closed-loop run that kept more requests in flight on a replica than its engine holds to their last token."""

    in_flight: int  # requests on the busiest replica
    clients: int  # requests in flight over all replicas
    held: float  # what one engine holds to their last token: min(max_num_seqs, KV cache)
    max_num_seqs: float
    kv_requests: float  # requests of the run's lengths the KV cache holds whole
    tokens: int  # a request's prompt + output

    def note(self) -> str:
        return (f"the benchmark kept {self.in_flight:,} requests in flight on its busiest replica, more than the "
                f"engine holds to their last token ({self.held:,.4g}: --max-num-seqs {self.max_num_seqs:,.0f}, KV "
                f"cache for {self.kv_requests:,.4g} requests of {self.tokens:,} tokens); the rest waited in vLLM's "
                "queue or were preempted and recomputed: its TTFT measures that queue, not the plan's peak, and the "
                "predictions follow it")


def predict_at_bench_load(plan: Plan, data: dict[str, Any], replicas: int
                          ) -> tuple[dict[str, float | None], str, Lengths | None, Overrun | None]:
    """The plan's figures at the load the benchmark ran — its clients (or rate) spread over the replicas, its
    prompt count (the closed loop's opening burst), its requests' lengths (run_lengths) — from the sizing core; the
    plan's own figures (at its batch per replica) when the model or card cannot be sized here, with a line saying
    so. Also returns the lengths the figures are at (None for the plan's own figures)."""
    p = plan.performance
    assert p is not None
    fallback = {"ttft_ms": p.ttft_ms, "ttft_p99_ms": p.ttft_p99_ms, "tpot_ms": p.tpot_ms, "tpot_p99_ms": p.tpot_p99_ms,
                "output_tokens_per_s": p.tokens_per_s_per_replica * replicas}
    lengths = run_lengths(plan, data)
    prompt, output = (lengths.prompt_tokens, lengths.output_tokens) if lengths else (None, None)
    conc, rate, prompts = count(data.get("max_concurrency")), data.get("request_rate"), count(data.get("num_prompts"))
    try:
        from wizard.sizing.fit import SizeInputs, size
        from wizard.sizing.performance import Workload, kv_requests, max_num_seqs, performance
        from wizard.sources.catalog import find_gpu
        from wizard.sources.resolve import resolve_model

        mem = plan.memory
        if mem is None or not plan.gpu or not isinstance(prompt, int) or not isinstance(output, int):
            raise InputError("plan", plan.model, "no sized layout")
        i = mem.inputs
        inputs = SizeInputs(tp=plan.tp, pp=plan.pp, context_tokens=i.context_tokens, concurrency=1,
                            weight_precision=i.weight_precision, kv_cache_dtype=i.kv_cache_dtype,
                            gpu_memory_utilization=i.gpu_memory_utilization, max_num_seqs=i.max_num_seqs,
                            max_num_batched_tokens=i.max_num_batched_tokens, vllm_version=i.vllm_version,
                            sequence_tokens=i.sequence_tokens)
        spec, gpu = resolve_model(plan.model), find_gpu(plan.gpu)
        # the replicas share the prompts: the busiest has ⌈N / replicas⌉
        per_prompts = -(-prompts // replicas) if prompts else None
        arrivals = finite_rate(rate)
        # varied outputs (a conversation dataset, EOS): an open-loop run ends with its longest, at most what the
        # context leaves after the prompt (vLLM stops a request at max_model_len)
        assert lengths is not None
        varied = max(1, i.context_tokens - prompt) if lengths.varied_outputs else None
        if arrivals is not None and not isinstance(conc, int):
            w = Workload(1, prompt, output, rate=arrivals / replicas, prompts=per_prompts, varied_output_max=varied)
            b = 1
        else:
            # without --max-concurrency (and no rate) every prompt is sent at once: those past the slots queue
            clients = (float(conc) / replicas if isinstance(conc, int)
                       else float(per_prompts) if per_prompts else float(i.max_num_seqs))
            seqs = max(1.0, min(clients, float(i.max_num_seqs)))  # a time average: may be fractional
            waiting = clients if clients > i.max_num_seqs else None  # beyond max_num_seqs: vLLM's queue
            # with a rate too, the clients join at it (capped: at most `conc` in flight); without, all at once
            w = Workload(seqs, prompt, output, rate=arrivals / replicas if arrivals is not None else None,
                         prompts=per_prompts, clients=waiting, capped=arrivals is not None,
                         synchronized=(lengths.source == "result" and not lengths.varied_outputs
                                       and not lengths.varied_prompts),
                         varied_output_max=varied)
            b = max(1, int(round(seqs)))
        r = size(spec, gpu, inputs._replace(concurrency=b))
        q = performance(r, w)
    except (InputError, OSError, ValueError):
        return fallback, ("the plan's model or card could not be sized here: the figures are the plan's own, at its "
                          "batch per replica and its typical request, not at the benchmark's load"), None, None
    overrun = None
    if w.rate is None and (conc or prompts):
        # a closed loop (its clients, or every prompt at once) holding more requests than the engine takes to their
        # last token: a queue in the engine. The busiest replica has ⌈clients / replicas⌉ (a rate-capped loop keeps
        # what its arrivals bring, not its cap: no note).
        in_flight = min(-(-conc // replicas) if conc else math.inf, per_prompts or math.inf)
        seqs, kv = max_num_seqs(r), kv_requests(r, prompt + output)
        if in_flight > min(seqs, kv) * 1.01:
            overrun = Overrun(int(in_flight), int(min(conc or math.inf, prompts or math.inf)), min(seqs, kv), seqs, kv,
                              prompt + output)
    return {"ttft_ms": q.ttft_ms, "ttft_p99_ms": q.ttft_p99_ms, "tpot_ms": q.tpot_ms, "tpot_p99_ms": q.tpot_p99_ms,
            "output_tokens_per_s": q.output_tokens_per_s * replicas}, "", lengths, overrun


def check_bench(result_path: Path, plan_path: Path) -> BenchCheck:
    from wizard.session.doctor import read_plan

    data = read_result(result_path)
    plan = read_plan(plan_path)
    check = BenchCheck(result_file=str(result_path), plan_file=str(plan_path))
    p = plan.performance
    if p is None:
        raise InputError("--plan", str(plan_path), "has no served layout to compare (a managed API or an offline plan)")
    replicas = max(1, plan.replicas)
    conc, rate, prompts = count(data.get("max_concurrency")), data.get("request_rate"), count(data.get("num_prompts"))
    predicted, how, lengths, overrun = predict_at_bench_load(plan, data, replicas)
    if how:
        check.notes.append(how)
    if overrun is not None:
        check.notes.append(overrun.note())
    arrivals = finite_rate(rate)
    check.load = (f"{conc} requests in flight, joining at {arrivals:g} requests/s"
                  if isinstance(conc, int) and arrivals is not None
                  else f"{conc} requests in flight" if isinstance(conc, int) else
                  f"{arrivals:g} requests/s" if arrivals is not None else
                  f"{prompts} request{'s' if prompts > 1 else ''} sent at once" if prompts
                  else "the load of the result")
    check.lengths = lengths
    if lengths is not None and lengths.source == "result":
        check.load += (f", requests of {lengths.prompt_tokens:,} prompt + {lengths.output_tokens:,} output tokens on "
                       "average")
        pp, po = plan.typical_lengths() or (0, 0)
        if pp and po and (abs(lengths.prompt_tokens - pp) > OFF * pp or abs(lengths.output_tokens - po) > OFF * po):
            check.notes.append(
                f"the benchmark's requests averaged {lengths.prompt_tokens:,} prompt + {lengths.output_tokens:,} "
                f"output tokens, the plan's typical request {pp:,} + {po:,}: the predictions are at the benchmark's "
                "lengths, while the P99 targets were set for the plan's workload; bench/run.sh sends the plan's "
                "lengths")
        ctx = plan.memory.inputs.context_tokens if plan.memory else None
        if ctx and lengths.prompt_tokens >= ctx:
            check.notes.append(f"the benchmark's mean prompt ({lengths.prompt_tokens:,} tokens) leaves no room for an "
                               f"output in the plan's context of {ctx:,} tokens (--max-model-len): it cannot have run "
                               "against this plan's server as planned")
    for metric, key, pred_key, target_key in METRICS:
        measured = data.get(key)
        measured = float(measured) if isinstance(measured, (int, float)) and not isinstance(measured, bool) else None
        pred = predicted.get(pred_key)
        target = plan.step(target_key) if target_key else None
        target = float(target) if isinstance(target, (int, float)) else None
        if measured is None:
            verdict = "not measured"
        elif target is None:
            verdict = "no target"
        else:
            verdict = "ok" if measured <= target else "fails target"
        off = (measured - pred) / pred if measured is not None and pred else None
        check.rows.append(Row(metric, key, pred, measured, target, verdict, off))
        if verdict == "fails target":
            check.failed.append(metric)
    for row in check.rows:
        if row.off is None or abs(row.off) <= OFF:
            continue
        line = f"{row.metric}: measured {row.measured:,.1f} against {row.predicted:,.1f} predicted ({row.off:+.0%}); " \
               f"revisit {REVISIT[row.key]}"
        if row.target and row.measured and row.measured > row.target and overrun is not None \
                and row.key.endswith("ttft_ms"):
            # a queue for room, not a slow engine: the replicas that hold the run's requests to their last token
            line += (f". The run overran its engines: holding its {overrun.clients:,} requests in flight without that "
                     f"queue takes about {math.ceil(overrun.clients / overrun.held)} replica(s) instead of "
                     f"{replicas}")
        elif row.target and row.measured and row.measured > row.target:
            implied = math.ceil(replicas * row.measured / row.target)
            line += (f". At the measured figure the target needs about {implied} replica(s) instead of {replicas} "
                     "(latency taken as linear in the sequences per replica: an assumption)")
        check.advice.append(line)
    return check


def bench_json(c: BenchCheck) -> dict[str, Any]:
    return {"result": c.result_file, "plan": c.plan_file, "load": c.load,
            "lengths": None if c.lengths is None else asdict(c.lengths),
            "metrics": [{"metric": r.metric, "key": r.key, "predicted": r.predicted, "measured": r.measured,
                         "target": r.target, "verdict": r.verdict,
                         "difference": round(r.off, 4) if r.off is not None else None} for r in c.rows],
            "targets_hold": not c.failed, "failed": c.failed, "advice": c.advice,
            "notes": c.notes}
