"""What the starter repo's templates need, derived once from the plan and the answers (no logic in templates).

Every number here traces to the plan (sizing core) or to a rule of shared/reference/deploy-checklist.md, cited
per constant. User strings reach templates only through these fields: names are validated as DNS-1123 labels,
everything else is quoted by the template filters (`shq` for shell, `yq` for YAML).
"""

from __future__ import annotations

import json
import math
import os
import re
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from wizard.errors import InputError
from wizard.sizing.cold_start import ColdStartAssumptions
from wizard.sizing.engine import VLLM_VERSION
from wizard.sizing.performance import NETWORK_BYTES_S, pp_hand_off_bytes
from wizard.sources.catalog import find_gpu
from wizard.specs.contracts import ColdStart, Plan

APP_NAME_MAX = 50  # + "-secrets" (8) and "-api" stay well inside 63
# Names that end up in Kubernetes objects and vLLM flags: the pattern, and the accepted form for messages.
# The app name prefixes a Service ("-api"), which must start with a letter and fit 63 characters (DNS-1035).
NAME_RULES = {
    "app_name": (re.compile(r"[a-z]([-a-z0-9]{0,%d}[a-z0-9])?" % (APP_NAME_MAX - 2)),
                 f"expected at most {APP_NAME_MAX} lowercase letters, digits and '-', starting with a letter and "
                 "ending with a letter or digit"),
    "namespace": (re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?"),
                  "expected a DNS-1123 label: at most 63 lowercase letters, digits and '-', starting and ending with "
                  "a letter or digit"),
    "served_model_name": (re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:-]{0,199}"),
                          "expected at most 200 letters, digits and . _ / : -, starting with a letter or digit"),
    "storage_class": (re.compile(r"[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?"),
                      "expected a DNS-1123 subdomain: at most 253 lowercase letters, digits, '-' and '.', starting and "
                      "ending with a letter or digit"),
    # An OCI image reference (the distribution spec's grammar, simplified): [registry[:port]/]path[:tag][@sha256:hex]
    "server_image": (re.compile(r"[a-z0-9]+([._-][a-z0-9]+)*(\.[a-z0-9-]+)*(:[0-9]{1,5})?(/[a-z0-9]+([._-][a-z0-9]+)*)*"
                                r"(:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127})?(@sha256:[0-9a-f]{64})?"),
                     "expected an image reference: [registry[:port]/]name[:tag][@sha256:<64 hex digits>], lowercase name"),
}
ETHERNET_BYTES_S = 25e9 / 8  # plain 25 Gb/s Ethernet per node, NCCL over TCP sockets: the README's comparison
PRESEED_PACE_BYTES_S = 1e8  # a slow Hub download (100 MB/s) for the README's `kubectl wait` on the pre-seed Job
PRESEED_MARKS = "/models/.preseeded"  # the pre-seed Job leaves one file here per model it downloaded completely
PORT = 8000
PRESTOP_SLEEP_S = 15  # leave the Service endpoints before vLLM drains (checklist §2.1 SIGTERM, KServe 60/15/15)
SHUTDOWN_TIMEOUT_S = 30  # --shutdown-timeout floor: drain in-flight requests (vLLM >= 0.18)
SHUTDOWN_MARGIN = 1.2  # the drain lets the plan's longest typical request (P99 TTFT + output x P99 TPOT) finish
GRACE_MARGIN_S = 15  # terminationGracePeriodSeconds > preStop + shutdown timeout + ~15 s (checklist item 13)
STARTUP_FLOOR_S = 600  # checklist §2.3: floor the startup budget at 600 s
STARTUP_MARGIN = 1.5  # budget = cold start (without the image pull, which happens before the container) × margin
PROBE_PERIOD_S = 10
QUEUE_TARGET = 5  # requests waiting per pod before scaling out (production-stack's KEDA threshold)
# The server image per card vendor, pinned to VLLM_VERSION's tag (vX.Y.Z) in one place. NVIDIA: vLLM's CUDA image;
# AMD: vLLM's own ROCm image, published beside it since AMD deprecated rocm/vllm for it (vLLM's ROCm install docs,
# https://github.com/vllm-project/vllm/pull/32580; tags vX.Y.Z, e.g. vllm/vllm-openai-rocm:v0.27.1 in
# https://github.com/AMD-AGI/Hyperloom/pull/1220). Intel Gaudi runs a separate fork and runtime: no image here.
IMAGES = {"nvidia": "vllm/vllm-openai", "amd": "vllm/vllm-openai-rocm"}
IMAGE = IMAGES["nvidia"]
ACCESS_LABEL = "llm-deploy-wizard/api-access"  # namespaces whose pods may reach the API port (k8s/networkpolicy.yaml)
GPU_RESOURCES = {"nvidia": "nvidia.com/gpu", "amd": "amd.com/gpu"}  # the device plugins' extended resources
NODE_LABELS = Path(__file__).parent / "data" / "gpu-node-labels.json"


@lru_cache(maxsize=1)
def _node_labels() -> dict[str, Any]:
    return json.loads(NODE_LABELS.read_text(encoding="utf-8"))["gpus"]


def gpu_node_terms(gpu_id: str) -> list[dict[str, Any]]:
    """The node labels that identify this card (data/gpu-node-labels.json): one required-affinity term per label,
    ORed, so a GPU Feature Discovery, GKE, EKS or AKS node of that model matches as it is. Empty when none is known."""
    return [{"key": key, "values": entry["values"], "derived": bool(entry.get("derived"))}
            for key, entry in _node_labels().get(gpu_id, {}).items()]
MODEL_VOLUME = "/models"  # where the pods mount the model PVC (HF_HOME is /models/hf)

# The self-built gateway of a basic team (DOMAIN §6; gateway/ in the starter repo): nginx on the gateway port in front
# of one vLLM server per replica on the same machine, each bound to 127.0.0.1 on its own port from REPLICA_BASE_PORT.
NGINX_IMAGE = "nginx:1.28.0"  # pinned like the vLLM image; the config uses nothing newer than nginx 1.22
REPLICA_BASE_PORT = PORT + 1  # replica i (1-based) listens on 127.0.0.1:(PORT + i); the gateway keeps PORT
GATEWAY_TIMEOUT_MARGIN = 2  # proxy_read_timeout = the plan's typical request time x 2 (as the client starter)
GATEWAY_TIMEOUT_FLOOR_S = 60  # ... and never below nginx's own default of 60 s
GATEWAY_CONNECT_TIMEOUT_S = 3  # a replica on the same machine accepts in ms: fail over fast when it is down/loading
GATEWAY_MAX_FAILS = 3  # passive health check: 3 failed attempts (error, timeout, 502, 503) ...
GATEWAY_FAIL_TIMEOUT_S = 30  # ... within 30 s take the replica out of rotation for 30 s
GATEWAY_MAX_TRIES = 3  # proxy_next_upstream_tries: the first replica and at most two others
BODY_BYTES_PER_TOKEN = 16  # request body budget per context token (JSON-escaped text, ~4 bytes/token, x4)
# `vllm serve` flags that configure the HTTP server, not the engine: the offline LLM class has no such keyword.
SERVER_ONLY_FLAGS = frozenset({"--host", "--port", "--shutdown-timeout", "--disable-access-log-for-endpoints"})
BATCH_CHUNK_MIN = 256  # rows per chunk of serve/batch.py: flushed and resumable after each one ...
BATCH_CHUNK_PER_SEQ = 4  # ... and at least 4 x max_num_seqs, so the engine's batch stays full inside a chunk


def checked_name(text: str, field: str) -> str:
    """`text` if it passes NAME_RULES[field], else an InputError naming the field and the accepted form."""
    pattern, accepted = NAME_RULES[field]
    if not pattern.fullmatch(text):
        raise InputError(field, text, accepted)
    return text


def server_image(plan: Plan, answers: dict[str, Any]) -> str:
    """The server image: the answers' `server_image` (a mirror or digest of the pinned release, checked), else
    vLLM's own image for the card's vendor at the pinned release's tag. The tag alone is what can be written offline:
    the registry's digest is the user's to pin (the generated README says how)."""
    given = answers.get("server_image")
    if given:
        return checked_name(str(given), "server_image")
    return f"{IMAGES.get(plan.gpu_vendor or 'nvidia', IMAGE)}:v{VLLM_VERSION}"


def derive_name(model: str) -> str:
    """An app name from a model id: meta-llama/Llama-3.1-8B-Instruct → llama-3-1-8b-instruct (m-123 for "123")."""
    last = model.rstrip("/").split("/")[-1].lower()
    name = re.sub(r"[^a-z0-9]+", "-", last).strip("-")
    if name and not name[0].isalpha():
        name = "m-" + name
    return name[:APP_NAME_MAX].strip("-") or "llm"


def shm_size_gib(tp: int, nodes: int) -> int:
    """/dev/shm for NCCL and torch IPC (checklist item 8: TP 1 → 2Gi; TP > 1 → 8Gi; multi-node/Ray → 16Gi)."""
    if nodes > 1:
        return 16
    return 8 if tp > 1 else 2


def startup_budget_s(cold_start: ColdStart | None, download_s: float | None = None) -> int:
    """Seconds the startupProbe allows: the cold start after the image is pulled, × margin, floored at 600 s,
    rounded up to whole probe periods (checklist §2.3). `download_s` replaces the plan's weight download (a
    script started by hand downloads what the cluster's pre-seed Job fetched beforehand)."""
    if not cold_start:
        return STARTUP_FLOOR_S
    in_container = sum(s.seconds for s in cold_start.stages if s.name not in ("image pull", "GPU node bring-up")
                       and (download_s is None or s.name != "weight download")) + (download_s or 0.0)
    budget = max(STARTUP_FLOOR_S, in_container * STARTUP_MARGIN)
    return int(math.ceil(budget / PROBE_PERIOD_S) * PROBE_PERIOD_S)


def interconnect(plan: Plan, pp: int, nodes: int) -> dict[str, Any] | None:
    """What a multi-node replica sends between nodes at its planned batch, against the link the performance model
    assumed (NETWORK_BYTES_S) and plain Ethernet: each decode step hands every sequence's hidden state and residual
    across the pp − 1 stage boundaries. None within one node."""
    if nodes <= 1 or plan.memory is None or not plan.memory.model.hidden_size:
        return None
    micro = -(-max(1, plan.concurrency_per_replica or 1) // pp)  # sequences per micro-batch
    step = micro * pp_hand_off_bytes(plan.memory.model.hidden_size)
    return {"bytes": step, "boundaries": pp - 1, "assumed_gbit": NETWORK_BYTES_S * 8 / 1e9,
            "assumed_ms": (pp - 1) * step / NETWORK_BYTES_S * 1e3, "ethernet_ms": (pp - 1) * step / ETHERNET_BYTES_S * 1e3}


def on_cluster(plan: Plan, answers: dict[str, Any] | None) -> bool:
    """Whether the repo gets Kubernetes manifests: a Kubernetes exposure, or a platform team (a gateway team on its
    own cluster, §6)."""
    return plan.exposure == "kubernetes" or (answers or {}).get("ops_capability") == "platform"


def autoscaled(plan: Plan, answers: dict[str, Any] | None) -> bool:
    """Whether an autoscaler runs the replicas (k8s/hpa.yaml): one node per replica on a cluster, with replicas
    beyond the warm minimum to scale between."""
    return (plan.form in ("single_gpu", "single_node_multi_gpu") and on_cluster(plan, answers)
            and plan.replicas > (plan.min_replicas or plan.replicas))


def shutdown_timeout_s(plan: Plan, answers: dict[str, Any]) -> int:
    """--shutdown-timeout: long enough for the plan's longest typical request to finish when a pod is stopped (its
    P99 TTFT + typical output tokens × P99 TPOT, × SHUTDOWN_MARGIN), at least SHUTDOWN_TIMEOUT_S."""
    p = plan.performance
    if p is None:
        return SHUTDOWN_TIMEOUT_S
    output = int(plan.fit_facts().get("typical_output_tokens") or answers.get("output_tokens") or 512)
    longest = ((p.ttft_p99_ms or p.ttft_ms) + output * (p.tpot_p99_ms or p.tpot_ms)) / 1000
    return max(SHUTDOWN_TIMEOUT_S, math.ceil(longest * SHUTDOWN_MARGIN))


def serve_flags(plan: Plan, answers: dict[str, Any]) -> list[tuple[str, str | None]]:
    """`vllm serve` flags after the model and --served-model-name (every one exists in vLLM 0.33.0)."""
    assert plan.memory is not None, "a served plan has its memory"
    flags: list[tuple[str, str | None]] = [
        ("--host", "0.0.0.0"),
        ("--port", str(PORT)),
        ("--max-model-len", str(plan.memory.inputs.context_tokens)),
        ("--max-num-seqs", str(plan.concurrency_per_replica)),
        ("--gpu-memory-utilization", str(plan.memory.inputs.gpu_memory_utilization)),
        ("--shutdown-timeout", str(shutdown_timeout_s(plan, answers))),
        ("--disable-access-log-for-endpoints", "/health,/metrics"),
    ]
    if plan.exposure != "none":
        # The readiness probe's one-token inference asks priority -1 (lower runs first): at a peak it does not queue
        # behind the backlog until every pod leaves the Service at once, and a hung engine still fails it (guide §7).
        # Requests without a priority keep 0, first come first served among themselves. (A batch job has no probe.)
        flags.append(("--scheduling-policy", "priority"))
    if plan.tp > 1:
        flags.append(("--tensor-parallel-size", str(plan.tp)))
    if plan.pp > 1:
        flags.append(("--pipeline-parallel-size", str(plan.pp)))
    if answers.get("kv_cache_dtype") == "fp8":
        flags.append(("--kv-cache-dtype", "fp8"))
    if answers.get("weight_precision") == "fp8" and plan.checkpoint_format == "bf16":
        flags.append(("--quantization", "fp8"))  # dynamic FP8 of a 16-bit checkpoint; quantized ones self-describe
    return flags


def flatten(model: str, served: str, flags: list[tuple[str, str | None]]) -> list[str]:
    """The argv after `vllm serve`: model positional, served name, then the flags."""
    argv = [model, "--served-model-name", served]
    for flag, value in flags:
        argv += [flag] if value is None else [flag, value]
    return argv


# OpenAI-compatible base URLs of the providers in the price catalog (verify against the provider's docs).
PROVIDER_BASES = {
    "together_ai": "https://api.together.xyz/v1",
    "deepinfra": "https://api.deepinfra.com/v1/openai",
    "fireworks_ai": "https://api.fireworks.ai/inference/v1",
    "groq": "https://api.groq.com/openai/v1",
    "cerebras": "https://api.cerebras.ai/v1",
    "nebius": "https://api.studio.nebius.com/v1",
}


def client_context(plan: Plan, answers: dict[str, Any]) -> dict[str, Any]:
    """Values of the managed-API client starter: provider, model name there, prices, budget, timeouts. The budget
    guard prices usage at the plan's own managed price (listed, estimated or given): the figure the plan used."""
    price = plan.cost.managed_price if plan.cost is not None else None
    if price is None:
        basis = "no price in the plan: set PRICE_IN/PRICE_OUT"
    elif price.basis == "given":
        basis = "managed_usd_per_mtok from the answers"
    elif price.basis == "estimated":
        basis = f"estimated from {', '.join(price.estimated_from)}: {price.note}; {price.date}, read via {price.via}"
    else:
        via = f", read via {price.via}" if price.via else ""
        basis = f"{price.provider}, {price.date}{via}: {price.source}"
    provider = (price.provider if price else "") or "your provider"
    key = price.model_key if price else ""
    provider_model = key.split("/", 1)[1] if "/" in key else (answers.get("model") or "")
    ttft = answers.get("ttft_p99_ms") or 2000
    tpot = answers.get("tpot_p99_ms") or 100
    out = int(answers.get("output_tokens") or 512)
    return {
        "provider": provider,
        "api_base": PROVIDER_BASES.get(provider, "https://api.example.com/v1"),
        "provider_model": provider_model,
        "price_in": price.usd_per_mtok_input if price else 0.0,
        "price_out": price.usd_per_mtok_output if price else 0.0,
        "price_basis": price.basis if price else "",
        "price_source": basis,
        "monthly_budget": answers.get("monthly_budget_usd")
        or round(((plan.cost.managed_usd_month if plan.cost else None) or 100) * 1.5, 2),
        "read_timeout_s": int(math.ceil((ttft + out * tpot) / 1000 * 2)),  # twice the P99 request time
        "output_tokens": out,
    }


def self_built_gateway(plan: Plan, answers: dict[str, Any] | None) -> bool:
    """Whether the repo gets the nginx gateway of gateway/: a gateway exposure off a cluster (a basic team builds its
    own, §6) for a form whose replicas run on one machine each."""
    return (plan.exposure == "gateway" and not on_cluster(plan, answers)
            and plan.form in ("single_gpu", "single_node_multi_gpu"))


def _literal(value: str) -> int | float | str:
    """A `vllm serve` flag value as the Python value of the matching LLM keyword."""
    for kind in (int, float):
        try:
            return kind(value)
        except ValueError:
            pass
    return value


def engine_kwargs(plan: Plan, answers: dict[str, Any]) -> list[tuple[str, int | float | str]]:
    """The LLM(...) keywords of serve/batch.py: the engine limits of `vllm serve` (serve_flags, flag --x-y is keyword
    x_y), without the HTTP server's flags, plus max_num_batched_tokens: the budget the plan's memory was sized with
    (the `vllm serve` default for the GPU): the LLM class runs under another usage context (LLM_CLASS) whose
    scheduler defaults differ (vllm/engine/arg_utils.py, _set_default_args)."""
    out = [(flag.removeprefix("--").replace("-", "_"), _literal(value)) for flag, value in serve_flags(plan, answers)
           if flag not in SERVER_ONLY_FLAGS and value is not None]
    if plan.gpu and plan.memory is not None:  # the token budget the plan's memory was sized with (plan.json)
        out.append(("max_num_batched_tokens", plan.memory.inputs.max_num_batched_tokens))
    return out


def batch_copies(copies: int, gpus_per_copy: int, gpus_per_node: int, nodes: int = 1) -> list[dict[str, Any]]:
    """One line per copy of the offline job: its shard, the machine it runs on, and the CUDA_VISIBLE_DEVICES prefix
    of its command (none on CPU, or when a copy spans machines: Ray places it)."""
    per_node = max(1, gpus_per_node // max(1, gpus_per_copy))
    machines = -(-copies // per_node)
    out = []
    for i in range(copies):
        devices = ",".join(str((i % per_node) * gpus_per_copy + g) for g in range(gpus_per_copy))
        out.append({"shard": i, "machine": i // per_node + 1,
                    "env": f"CUDA_VISIBLE_DEVICES={devices} " if devices and nodes == 1 else "",
                    "note": f"  # machine {i // per_node + 1}" if devices and nodes == 1 and machines > 1 else ""})
    return out


def gateway_context(plan: Plan, answers: dict[str, Any], ctx: dict[str, Any]) -> dict[str, Any]:
    """Values of gateway/ (nginx.conf, compose.yaml, keys.sh, README.md): the replicas on their ports and GPUs, the
    timeouts from the plan's request time and the rate limits from its capacity.

    One machine holds as many replicas as its GPUs allow (gpus_per_node // GPUs per replica); a plan with more
    replicas runs the same gateway/ folder on `hosts` machines (each with its own gateway in front of its own
    replicas, behind DNS round-robin or the cloud's load balancer), so every limit here is per machine."""
    assert plan.performance is not None and plan.gpu is not None and plan.memory is not None
    gpus = ctx["gpus_per_pod"]
    per_node = max(1, find_gpu(plan.gpu).gpus_per_node // gpus)
    hosts = -(-plan.replicas // per_node)
    per_host = -(-plan.replicas // hosts)
    request_s = (plan.performance.ttft_ms + ctx["output_tokens"] * plan.performance.tpot_ms) / 1000
    concurrency = per_host * ctx["max_num_seqs"]  # sequences this machine's replicas carry within the targets
    rate_per_min = max(1, math.floor(concurrency / request_s * 60))  # requests a minute they complete at that load
    replicas = []
    for i in range(per_host):
        port = REPLICA_BASE_PORT + i
        flags = [(f, str(port) if f == "--port" else "127.0.0.1" if f == "--host" else v)
                 for f, v in serve_flags(plan, answers)]
        replicas.append({"name": f"vllm-{i + 1}", "port": port,
                         "devices": [str(i * gpus + g) for g in range(gpus)],
                         "serve_args": flatten(ctx["pod_model"], ctx["served_model_name"], flags)})
    local_source = str(PurePosixPath(os.path.abspath(ctx["model"]))) if ctx["local_model"] else ""
    return {
        "gateway_port": PORT,
        "nginx_image": NGINX_IMAGE,
        "gateway_hosts": hosts,
        "gateway_replicas": replicas,
        "replicas_per_host": per_host,
        "replicas_total": hosts * per_host,
        "request_s": round(request_s, 1),
        "read_timeout_s": int(max(GATEWAY_TIMEOUT_FLOOR_S, math.ceil(request_s * GATEWAY_TIMEOUT_MARGIN))),
        "timeout_margin": GATEWAY_TIMEOUT_MARGIN,
        "timeout_floor_s": GATEWAY_TIMEOUT_FLOOR_S,
        "connect_timeout_s": GATEWAY_CONNECT_TIMEOUT_S,
        "max_fails": GATEWAY_MAX_FAILS,
        "fail_timeout_s": GATEWAY_FAIL_TIMEOUT_S,
        "next_upstream_tries": max(1, min(per_host, GATEWAY_MAX_TRIES)),
        "gateway_concurrency": concurrency,
        "rate_per_min": rate_per_min,
        "burst": concurrency,
        "body_mib": max(1, math.ceil(ctx["context_tokens"] * BODY_BYTES_PER_TOKEN / 2**20)),
        "model_bind_source": local_source,
        "model_bind_target": ctx["pod_model"] if ctx["local_model"] else "",
    }


BENCH_MIN_PROMPTS = 200  # enough requests that the clients' joining (and the open loop's start) is a small share
BENCH_PROMPTS_PER_SEQ = 10
# The closed loop's clients join at this multiple of the requests a second the plan predicts at the peak: fast enough
# that the cap of `concurrency` in flight binds even when the endpoint serves up to 25 % more than predicted (beyond
# that check-bench flags the throughput anyway), slow enough that the joins spread over most of a request's time.
BENCH_JOIN_MARGIN = 1.25


def _three_digits(x: float) -> str:
    """x rounded up to three significant digits, as plain decimal text (no exponent): a --request-rate value."""
    digits = max(0, 2 - math.floor(math.log10(x)))
    step = 10.0 ** -digits
    return f"{math.ceil(x / step - 1e-9) * step:.{digits}f}"


def bench_load(plan: Plan, answers: dict[str, Any]) -> dict[str, Any]:
    """bench/run.sh's load: the plan's peak — a request rate (open loop) when the answers give peak_rps, else the
    peak concurrency across the endpoint (closed loop) — at the typical lengths the plan sized.

    The closed loop's clients join at a Poisson rate (`join_rate`, --request-rate beside --max-concurrency) instead
    of all at once: `vllm bench serve` otherwise sends `concurrency` prompts at t = 0, and with fixed lengths and
    --ignore-eos they finish and start again together, so every wave is that burst — a harsher load than the peak
    the plan sized, whose clients' requests come and go independently."""
    prompt, output = plan.typical_lengths() or (int(answers.get("prompt_tokens") or 2048),
                                                 int(answers.get("output_tokens") or 512))
    concurrency = int(answers.get("peak_concurrency") or plan.concurrency_per_replica or 1)
    p = plan.performance
    at_peak = p.at_peak if p is not None else None
    rate = answers.get("peak_rps")
    if at_peak is not None:
        # the load the replicas were sized for: the peak, or more when the daily volume keeps more in flight on
        # average (§2: the plan then carries the average, and so does its benchmark)
        rate = at_peak.requests_per_s or rate
        concurrency = max(concurrency, round(at_peak.sequences_per_replica * max(1, plan.replicas)))
    prompts = max(BENCH_MIN_PROMPTS, BENCH_PROMPTS_PER_SEQ * concurrency)
    join = None
    if not rate and at_peak is not None and at_peak.tokens_per_s_per_replica > 0:
        served = at_peak.tokens_per_s_per_replica * max(1, plan.replicas) / max(1, output)  # requests/s at the peak
        join = _three_digits(BENCH_JOIN_MARGIN * served)
    rate = _three_digits(float(rate)) if rate else None
    text = f"{rate} requests/s (Poisson arrivals)" if rate else f"{concurrency} requests in flight"
    return {"prompt": prompt, "output": output, "rate": rate, "concurrency": concurrency, "prompts": prompts,
            "join_rate": join, "load_text": text}


def build_context(plan: Plan, answers: dict[str, Any]) -> dict[str, Any]:
    """Template values for one plan. Raises InputError for names that cannot be Kubernetes names."""
    model = str(answers.get("model") or plan.model or "")
    app = checked_name(answers.get("app_name") or derive_name(model), "app_name")
    namespace = checked_name(answers.get("namespace") or "default", "namespace")
    # A local folder named like a flag ("--trust-remote-code") must reach vLLM as a path, never as an option.
    model_arg = f"./{model}" if model.startswith("-") else model
    served = answers.get("served_model_name") or model_arg
    has_gpus = bool(plan.gpu)
    ctx: dict[str, Any] = {
        "plan": plan,
        "answers": answers,
        "residency": bool(answers.get("data_residency")),
        "access_label": ACCESS_LABEL,
        "model": model,
        "model_arg": model_arg,
        "served_model_name": served,
        "app": app,
        "service_name": f"{app}-api",  # never "vllm": an injected VLLM_PORT crashes vLLM (checklist item 14)
        "namespace": namespace,
        "vllm_version": VLLM_VERSION,
        "image": server_image(plan, answers),
        "port": PORT,
        "context_tokens": int(answers.get("context_tokens") or 8192),
        "output_tokens": int(answers.get("output_tokens") or min(512, int(answers.get("context_tokens") or 8192) // 4)),
        "max_num_seqs": int(plan.concurrency_per_replica or answers.get("peak_concurrency") or 1),
        "gpu_memory_utilization": float(answers.get("gpu_memory_utilization") or 0.9),
        "tp": 1, "pp": 1, "nodes": 1,
        "on_cpu": plan.form == "cpu",
        "batch_kwargs": [("max_model_len", int(answers.get("context_tokens") or 8192)),
                         ("max_num_seqs", int(plan.concurrency_per_replica or answers.get("peak_concurrency") or 1))]
        + ([("kv_cache_dtype", "fp8")] if answers.get("kv_cache_dtype") == "fp8" else []),
        "batch_shards": max(1, plan.replicas),
        "batch_copies": batch_copies(max(1, plan.replicas), 0, 1),
    }
    ctx["batch_chunk"] = max(BATCH_CHUNK_MIN, BATCH_CHUNK_PER_SEQ * ctx["max_num_seqs"])
    ctx["bench"] = bench_load(plan, answers)
    if plan.form == "managed_api":
        return ctx | client_context(plan, answers)
    if not has_gpus or plan.memory is None or plan.gpu is None:
        return ctx
    tp, pp = plan.tp, plan.pp
    nodes = plan.nodes_per_replica
    # A local checkpoint folder is a path on this machine: in a pod it must come from the model volume (/models).
    local = plan.memory.model.source == "local"
    pod_model = f"{MODEL_VOLUME}/{PurePosixPath(model.rstrip('/')).name or 'model'}" if local else model
    gpus_per_pod = -(-(tp * pp) // nodes)  # GPUs of one pod group = TP × PP, spread over its nodes
    budget = startup_budget_s(plan.cold_start)
    # launch.sh / head.sh / compose start from an empty cache unless the weights are placed beforehand: they wait
    # for the download too (at the plan's network assumption), where the cluster's pods start after the Job's
    given = {k: v for k, v in (answers.get("cold_start") or {}).items() if v is not None}
    assumed = ColdStartAssumptions()._replace(**given)
    fetch_s = 0.0 if local or assumed.weights_cached else (plan.checkpoint_bytes or 0) / assumed.network_bytes_s
    script_budget = startup_budget_s(plan.cold_start, fetch_s)
    drain = shutdown_timeout_s(plan, answers)  # --shutdown-timeout (serve_flags) and the grace period around it
    weights_per_pod = plan.memory.per_gpu_bytes.weights * gpus_per_pod
    shm = shm_size_gib(tp, nodes)
    ram = int(math.ceil(weights_per_pod / 2**30)) + shm + 8  # stage the weights in RAM + shm + the server
    storage_class = answers.get("storage_class")
    ctx |= {
        "local_model": local,
        "pod_model": pod_model,
        # On a cluster a Job downloads the checkpoint once into the volume; the servers wait for its mark and run
        # with HF_HUB_OFFLINE=1. A local folder is copied into the volume by hand: the servers wait for its config.
        "preseed": not local,
        "weights_mark": (f"{MODEL_VOLUME}/{PurePosixPath(pod_model).name}/config.json" if local
                         else f"{PRESEED_MARKS}/{model.replace('/', '--')}"),
        "storage_class": checked_name(storage_class, "storage_class") if storage_class else None,
        "node_terms": gpu_node_terms(plan.gpu),
        "interconnect": interconnect(plan, pp, nodes),
        "shared_volume": plan.replicas > 1 or nodes > 1,
        # `kubectl wait` on the pre-seed Job: the checkpoint at a slow 100 MB/s, at least ten minutes
        "preseed_timeout_s": max(600, math.ceil((plan.checkpoint_bytes or 0) / PRESEED_PACE_BYTES_S)),
        "tp": tp,
        "pp": pp,
        "nodes": nodes,
        "replicas": plan.replicas,
        "min_replicas": max(1, min(plan.min_replicas or plan.replicas, plan.replicas)),
        "gpus_per_pod": gpus_per_pod,
        "gpu_resource": GPU_RESOURCES.get(plan.gpu_vendor or "nvidia", GPU_RESOURCES["nvidia"]),
        "shm_gib": shm,
        "memory_gib": ram,
        "cpu": 4 + 2 * gpus_per_pod,
        "startup_budget_s": budget,
        "startup_margin": STARTUP_MARGIN,
        "startup_floor_s": STARTUP_FLOOR_S,
        "startup_failure_threshold": budget // PROBE_PERIOD_S,
        "probe_period_s": PROBE_PERIOD_S,
        "engine_ready_timeout_s": budget,  # >= the startup budget (checklist item 4)
        "script_ready_timeout_s": script_budget,  # the same for a start by hand, which downloads first
        "prestop_sleep_s": PRESTOP_SLEEP_S,
        "shutdown_timeout_s": drain,
        "grace_s": PRESTOP_SLEEP_S + drain + GRACE_MARGIN_S,
        "progress_deadline_s": budget + 600,
        "queue_target": QUEUE_TARGET,
        "flags": serve_flags(plan, answers),
        "serve_args": flatten(pod_model, served, serve_flags(plan, answers)),
        "batch_kwargs": engine_kwargs(plan, answers),
        "batch_copies": batch_copies(max(1, plan.replicas), gpus_per_pod, find_gpu(plan.gpu).gpus_per_node, nodes),
    }
    if self_built_gateway(plan, answers) and plan.performance is not None:
        ctx |= gateway_context(plan, answers, ctx)
    return ctx
