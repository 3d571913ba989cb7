"""Read a vLLM start-up log (any release from 0.6): the version, the engine arguments and the memory figures.

Logs arrive as people paste them: ANSI colours (raw or as "^[[0;36m"), process prefixes ("(EngineCore_DP0
pid=1)", "(VllmWorker rank=0 pid=2)", "(RayWorkerWrapper pid=3)"), quote bars, lines wrapped by a terminal,
one block per rank. Each record starts at a line with a log level; lines without one continue the record
before them, and every pattern is tried on the record joined without and with a space (a wrapped number and
a wrapped sentence). Figures are kept as printed (GiB as vLLM divides by 2**30; V0's "GB" label is GiB too).
The first occurrence wins (rank 0 logs first); `ranks` counts the distinct worker prefixes.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass, field, fields
from typing import Any

ANSI = re.compile(r"(?:\x1b|\^\[)\[[0-9;]*[A-Za-z]")
# A line may start with Slurm's task label (srun --label: "0: "), quote marks, and process groups — Ray nests the
# worker's inside the engine core's; a repeated group keeps its last, the rank's own.
PREFIX = re.compile(r"^\s*(?:\d+:\s+)?(?:[▎>|]\s*)*(?:\((?P<proc>[A-Za-z_]\w*(?: TP\d+)?(?: rank=\d+)?(?: pid=\d+)?,?(?: ip=[\d.]+)?)\)\s*)*")
LEVEL = re.compile(r"^(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\s+\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)?\s+(?:\[[^\]]*\]|\S+:\d+\])\s*")
NUM = r"(-?[\d,]+(?:\.\d+)?)"


def _f(text: str) -> float:
    return float(text.replace(",", ""))


def _i(text: str) -> int:
    return int(float(text.replace(",", "")))


# (field, pattern, converter): the first match of each field wins.
PATTERNS: list[tuple[str, re.Pattern[str], Any]] = [
    ("version", re.compile(r"Initializing an? V[01] LLM engine \(v([^)\s]+)\)"), str),
    ("version", re.compile(r"vLLM API server version ([0-9][^\s,]*)"), str),
    ("engine", re.compile(r"Initializing an? (V[01]) LLM engine"), str),
    ("model", re.compile(r"with config: model='([^']+)'"), str),
    ("model", re.compile(r"Starting to load model ([^\s.]+(?:\.[^\s.]+)*/[^\s]+?)\.{0,3}$"), str),
    ("tp", re.compile(r"tensor_parallel_size=(\d+)"), int),
    ("pp", re.compile(r"pipeline_parallel_size=(\d+)"), int),
    ("max_model_len", re.compile(r"max_seq_len=(\d+)"), int),
    ("max_model_len", re.compile(r"Using max model len (\d+)"), int),
    ("max_num_batched_tokens", re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(\d+)"), int),
    ("sampler", re.compile(r"Using (FlashInfer) for top-p & top-k sampling"), lambda s: "flashinfer"),
    ("sampler", re.compile(r"Falling back to the (PyTorch)-native implementation of top-p & top-k sampling"),
     lambda s: "native"),
    ("sampler", re.compile(r"FlashInfer top-p/top-k sampling (disabled) via VLLM_USE_FLASHINFER_SAMPLER=0"),
     lambda s: "native"),
    ("fp4_kernel", re.compile(r"Weight-only FP4 compression will be used leveraging the (Marlin) kernel"), str),
    ("quantization", re.compile(r"quantization=([\w-]+)"), str),
    ("kv_cache_dtype", re.compile(r"kv_cache_dtype=([\w-]+)"), str),
    ("enforce_eager", re.compile(r"enforce_eager=(True|False)"), lambda s: s == "True"),
    # V1 and later
    ("weights_gib", re.compile(r"Model loading took " + NUM + r" GiB(?: memory)? and"), _f),
    ("weights_gib", re.compile(r"Loading model weights took " + NUM + r" GB"), _f),
    ("available_kv_gib", re.compile(r"Available KV cache memory: " + NUM + r" GiB"), _f),
    ("kv_tokens", re.compile(r"(?:GPU|[A-Z]+(?: \+ host)?) KV cache size: " + NUM + r" tokens"), _i),
    ("max_concurrency", re.compile(r"Maximum concurrency for " + NUM + r" tokens per request: " + NUM + r"x"),
     lambda a, b: (_i(a), _f(b))),
    ("cuda_graph_estimate_gib", re.compile(r"Estimated CUDA graph memory: " + NUM + r" GiB total"), _f),
    ("graph_pool", re.compile(r"CUDA graph pool memory: " + NUM + r" GiB \(actual\), " + NUM + r" GiB \(estimated\)"),
     lambda a, e: {"graph_pool_actual_gib": _f(a), "cuda_graph_estimate_gib": _f(e)}),
    ("graph_capture_gib", re.compile(r"Graph capturing finished in \d+ secs?, took " + NUM + r" GiB"), _f),
    ("split", re.compile(r"Actual usage is " + NUM + r" GiB for weight, " + NUM + r" GiB for peak activation, "
                         + NUM + r" GiB for non-torch memory, and " + NUM + r" GiB for CUDAGraph memory"),
     lambda w, a, n, g: {"weights_gib": _f(w), "activation_peak_gib": _f(a), "non_torch_gib": _f(n),
                         "cuda_graph_gib": _f(g)}),
    ("split", re.compile(r"Actual usage is " + NUM + r" GiB for consumed memory \(weights \+ non-torch\), " + NUM
                         + r" GiB for peak activation, and " + NUM + r" GiB for CUDAGraph memory"),
     lambda c, a, g: {"consumed_gib": _f(c), "activation_peak_gib": _f(a), "cuda_graph_gib": _f(g)}),
    ("free_total", re.compile(r"Free memory on device (?:\S+ )?\(" + NUM + r"/" + NUM + r" GiB\)"),
     lambda free, total: {"total_gib": _f(total)}),
    ("graph_equivalent", re.compile(r"--gpu-memory-utilization=" + NUM + r" is equivalent to "
                                    r"--gpu-memory-utilization=" + NUM), lambda u, e: (_f(u), _f(e))),
    ("kv_needed", re.compile(r"max seq len \((\d+)\), \(?" + NUM + r" GiB KV cache is needed, which is larger than the "
                             r"available KV cache memory \(" + NUM + r" GiB\)"),
     lambda n, need, avail: {"needed_len": int(n), "kv_needed_gib": _f(need), "available_kv_gib": _f(avail)}),
    ("estimated_max_len", re.compile(r"estimated maximum model length is (\d+)"), int),
    ("v0_error", re.compile(r"The model's max seq len \((\d+)\) is larger than the maximum number of tokens that "
                            r"can be stored in KV cache \((\d+)\)"),
     lambda n, t: {"needed_len": int(n), "error_kv_tokens": int(t)}),
    # V0
    ("total_gib", re.compile(r"total_gpu_memory[=\s(]+" + NUM + r"\s?GiB"), _f),
    ("gpu_memory_utilization", re.compile(r"gpu_memory_utilization[=\s(]+(0?\.\d+|1\.0+)\b"), _f),
    ("weights_gib", re.compile(r"model weights take\s+" + NUM + r"\s?GiB"), _f),
    ("non_torch_gib", re.compile(r"non_torch_memory(?: takes)?[=\s]+" + NUM + r"\s?GiB"), _f),
    ("activation_peak_gib", re.compile(r"PyTorch activation peak memory(?: takes)?\s+" + NUM + r"\s?GiB"), _f),
    ("peak_torch_gib", re.compile(r"peak_torch_memory=" + NUM + r"GiB"), _f),
    ("available_kv_gib", re.compile(r"(?:available_kv_cache_memory|kv_cache_size)[=\s]+" + NUM + r"\s?GiB"), _f),
    ("available_kv_gib", re.compile(r"the rest of the memory reserved for KV Cache is " + NUM + r"\s?GiB"), _f),
    ("gpu_blocks", re.compile(r"(?:# )?GPU blocks: " + NUM), _i),
]
NON_DEFAULT = re.compile(r"non-default args: (\{.*\})")
ARG_KEYS = {"model": "model", "model_tag": "model", "tensor_parallel_size": "tp", "pipeline_parallel_size": "pp",
            "max_model_len": "max_model_len", "gpu_memory_utilization": "gpu_memory_utilization",
            "max_num_seqs": "max_num_seqs", "max_num_batched_tokens": "max_num_batched_tokens",
            "quantization": "quantization", "kv_cache_dtype": "kv_cache_dtype", "enforce_eager": "enforce_eager"}


@dataclass
class StartupLog:
    """What a start-up log states (None: not in the log). GiB as printed; tokens; the engine's own flags."""

    version: str | None = None
    engine: str | None = None  # "V0" | "V1" as the engine line names it
    model: str | None = None
    tp: int | None = None
    pp: int | None = None
    max_model_len: int | None = None
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    quantization: str | None = None
    kv_cache_dtype: str | None = None
    enforce_eager: bool | None = None
    sampler: str | None = None  # "flashinfer" | "native": the top-k/top-p sampler the engine said it uses
    fp4_kernel: str | None = None  # "Marlin" when FP4 weights run weight-only through Marlin
    total_gib: float | None = None
    weights_gib: float | None = None
    consumed_gib: float | None = None
    activation_peak_gib: float | None = None
    peak_torch_gib: float | None = None
    non_torch_gib: float | None = None
    cuda_graph_gib: float | None = None
    cuda_graph_estimate_gib: float | None = None
    graph_capture_gib: float | None = None
    graph_pool_actual_gib: float | None = None
    available_kv_gib: float | None = None
    kv_tokens: int | None = None
    gpu_blocks: int | None = None
    max_concurrency: float | None = None
    concurrency_tokens: int | None = None  # the "for N tokens per request" of that line
    kv_needed_gib: float | None = None  # "X GiB KV cache is needed" (start-up failed)
    needed_len: int | None = None
    estimated_max_len: int | None = None
    error_kv_tokens: int | None = None  # V0's "maximum number of tokens that can be stored in KV cache (N)"
    graph_equivalent_gmu: float | None = None  # "... is equivalent to --gpu-memory-utilization=e" (0.18+)
    ranks: int = 0
    starts: int = 0  # start-ups the file holds (the figures are the last one's)
    recognised: list[str] = field(default_factory=list)  # the figures found, in order

    @property
    def failed(self) -> bool:
        return self.kv_needed_gib is not None or self.error_kv_tokens is not None or (
            self.available_kv_gib is not None and self.available_kv_gib <= 0)

    def figures(self) -> dict[str, Any]:
        """Every field the log stated, by name."""
        return {f.name: getattr(self, f.name) for f in fields(self)
                if f.name not in ("ranks", "starts", "recognised") and getattr(self, f.name) is not None}


def records(text: str) -> list[tuple[str | None, str, str]]:
    """(process prefix, record joined without spaces, joined with spaces) per log record."""
    out: list[tuple[str | None, list[str]]] = []
    for raw in ANSI.sub("", text).replace("\r\n", "\n").replace("\r", "\n").split("\n"):
        m = PREFIX.match(raw)
        proc = m.group("proc") if m else None
        body = raw[m.end():] if m else raw
        level = LEVEL.match(body)
        if level is not None or not out or proc is not None:
            out.append((proc, [body[level.end():] if level else body]))
        else:  # a continuation: a line wrapped by the terminal, or a multi-line message
            out[-1][1].append(body.strip())
    return [(proc, "".join(p.strip() for p in parts), " ".join(p.strip() for p in parts)) for proc, parts in out]


def parse_log(text: str) -> StartupLog:
    """The figures of one start-up log; `recognised` is empty when nothing in it is a vLLM start-up line.

    A file holding several start-ups (a failed run, then a retry) is read from the last one that states figures:
    mixing one run's flags with another's capacity would compare nothing real. `starts` says how many it held."""
    all_records = records(text)
    # a run starts at its API server line (the engine line comes later, after the non-default args), else at its
    # engine line; one run or none: the whole file
    api = [n for n, rec in enumerate(all_records) if "vLLM API server version" in rec[2]]
    runs = api or [n for n, rec in enumerate(all_records) if re.search(r"Initializing an? V[01] LLM engine", rec[2])]
    if len(runs) <= 1:
        log = _parse(all_records)
        log.starts = len(runs)
        return log
    for begin in reversed(runs):
        log = _parse(all_records[begin:])
        if log.recognised and any(k not in ("version", "engine", "model") for k in log.recognised):
            log.starts = len(runs)
            return log
    log = _parse(all_records)
    log.starts = len(runs)
    return log


def _parse(recs: list[tuple[str | None, str, str]]) -> StartupLog:
    text = "\n".join(spaced for _, _, spaced in recs)
    log = StartupLog()
    procs: set[str] = set()
    for proc, tight, spaced in recs:
        if proc and re.search(r"Worker|rank=", proc):
            procs.add(proc)  # one process per rank (Ray's wrappers differ only by pid)
        # the tight join first: a number wrapped by the terminal is whole only there; a sentence wrapped at a space
        # is whole only in the spaced join, which is tried next for what the tight one did not find
        for candidate in (tight, spaced):
            args = NON_DEFAULT.search(candidate)
            if args is not None:
                _non_default(log, args.group(1))
            for name, pattern, convert in PATTERNS:
                m = pattern.search(candidate)
                if m is None:
                    continue
                _store(log, name, convert(*m.groups()))
    log.ranks = max(1, len(procs)) if log.recognised else 0
    if log.engine is None and (log.gpu_blocks is not None or log.peak_torch_gib is not None or log.error_kv_tokens
                               or re.search(r"Memory profiling results|model weights take", text)):
        log.engine = "V0"  # V0's own memory lines: the V1 engine never prints them
    return log


def _store(log: StartupLog, name: str, value: Any) -> None:
    if isinstance(value, dict):
        for key, v in value.items():
            _store(log, key, v)
        return
    if name == "max_concurrency":
        tokens, conc = value
        if log.max_concurrency is None:
            log.max_concurrency, log.concurrency_tokens = conc, tokens
            log.recognised.append(name)
        return
    if name == "graph_equivalent":
        if log.graph_equivalent_gmu is None:
            log.gpu_memory_utilization = log.gpu_memory_utilization or value[0]
            log.graph_equivalent_gmu = value[1]
            log.recognised.append(name)
        return
    if name == "version" and isinstance(value, str):
        value = value.lstrip("v")
    if getattr(log, name) is None:
        setattr(log, name, value)
        log.recognised.append(name)


def _non_default(log: StartupLog, text: str) -> None:
    """`non-default args: {...}`: a Python dict literal (read with ast.literal_eval, never evaluated)."""
    try:
        args = ast.literal_eval(text)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        args = None
    if not isinstance(args, dict):  # a value that is no literal (an enum's repr): read the known keys one by one
        args = {}
        for key in ARG_KEYS:
            m = re.search(r"'" + key + r"':\s*('([^']*)'|True|False|-?\d+(?:\.\d+)?)", text)
            if m:
                raw = m.group(1)
                args[key] = m.group(2) if m.group(2) is not None else (
                    raw == "True" if raw in ("True", "False") else float(raw) if "." in raw else int(raw))
    for key, name in ARG_KEYS.items():
        value = args.get(key)
        if value is not None and isinstance(value, (str, int, float, bool)):
            _store(log, name, value)
