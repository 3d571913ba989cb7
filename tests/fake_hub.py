"""A small fake Hugging Face Hub for tests: in-memory repos behind HEAD/GET /{repo}/resolve/{revision}/{file}.

It answers the way huggingface_hub 2.x expects (file_download.get_hf_file_metadata, hf_hub_download,
HfApi.get_safetensors_metadata / parse_safetensors_file_metadata, utils/_http.hf_raise_for_status):
- files: 200 with X-Repo-Commit, ETag and Content-Length; a `Range: bytes=a-b` GET gets 206 + Content-Range;
- a missing file: 404 with X-Error-Code: EntryNotFound (and X-Repo-Commit, so the absence is cached);
- a missing repo: 404 with X-Error-Code: RepoNotFound; a bad revision: 404 with X-Error-Code: RevisionNotFound;
- a gated repo: 401 with X-Error-Code: GatedRepo without a token, 403 with one (as the real Hub does);
- a private repo: 401 RepoNotFound unless `Authorization: Bearer <its token>` is sent;
- a token starting with hf_invalid: 401 "Invalid credentials in Authorization header" for any repo;
- a slow repo: sleeps `delay` seconds before answering (interrupted when the server stops).
Misbehaving repos, for the deadline of wizard.sources.hub (HEAD answers stay correct, so the probe succeeds;
`only` limits the misbehaviour to some files, by default every file):
- trickle: a GET body is sent one byte every `delay` seconds;
- stall-get: a GET waits `delay` seconds before sending anything (a stall after a good HEAD);
- truncate: a GET announces the whole Content-Length but sends half of the body, then closes the connection;
- redirect-loop: every request is answered 302 with Location: the same URL.
Every request is logged as a Request(method, path, auth, range) in `FakeHub.requests`.
"""

from __future__ import annotations

import hashlib
import json
import math
import struct
import threading
from dataclasses import dataclass, field
from typing import NamedTuple
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import unquote, urlsplit

BITS = {"F32": 32, "F16": 16, "BF16": 16, "I32": 32, "U8": 8, "F8_E4M3": 8}


def safetensors_file(tensors: dict[str, tuple[str, list[int]]]) -> bytes:
    """A valid .safetensors file: 8-byte header length, JSON header, zeroed data of the right length."""
    header: dict = {"__metadata__": {"format": "pt"}}
    offset = 0
    for name, (dtype, shape) in tensors.items():
        size = math.prod(shape) * BITS[dtype] // 8
        header[name] = {"dtype": dtype, "shape": shape, "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # the format pads the header to a multiple of 8 bytes
    return struct.pack("<Q", len(raw)) + raw + bytes(offset)


def llama_config(layers: int) -> dict:
    """A tiny Llama config.json matching the tensors of `llama_tensors`."""
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "hidden_size": 64,
        "num_hidden_layers": layers,
        "num_attention_heads": 4,
        "num_key_value_heads": 2,
        "intermediate_size": 128,
        "vocab_size": 128,
        "max_position_embeddings": 2048,
        "tie_word_embeddings": False,
        "torch_dtype": "bfloat16",
    }


def layer_tensors(i: int) -> dict[str, tuple[str, list[int]]]:
    p = f"model.layers.{i}."
    return {
        p + "self_attn.q_proj.weight": ("BF16", [64, 64]),
        p + "self_attn.k_proj.weight": ("BF16", [32, 64]),
        p + "self_attn.v_proj.weight": ("BF16", [32, 64]),
        p + "self_attn.o_proj.weight": ("BF16", [64, 64]),
        p + "mlp.gate_proj.weight": ("BF16", [128, 64]),
        p + "mlp.up_proj.weight": ("BF16", [128, 64]),
        p + "mlp.down_proj.weight": ("BF16", [64, 128]),
        p + "input_layernorm.weight": ("F32", [64]),
        p + "post_attention_layernorm.weight": ("F32", [64]),
    }


EMBED = {"model.embed_tokens.weight": ("BF16", [128, 64])}
HEAD = {"model.norm.weight": ("F32", [64]), "lm_head.weight": ("BF16", [128, 64])}

# Dense: one model.safetensors. Sharded: two shards and model.safetensors.index.json.
DENSE_TENSORS = {**EMBED, **layer_tensors(0), **HEAD}
SHARD_1 = {**EMBED, **layer_tensors(0)}
SHARD_2 = {**layer_tensors(1), **HEAD}
SHARD_NAMES = ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors")

MODELOPT_QUANT = {
    "producer": {"name": "modelopt", "version": "0.23.0"},
    "quantization": {"quant_algo": "FP8", "kv_cache_quant_algo": "FP8", "exclude_modules": ["lm_head"]},
}


class Request(NamedTuple):
    method: str
    path: str
    auth: str | None  # the Authorization header
    range: str | None  # the Range header


@dataclass
class Repo:
    files: dict[str, bytes]
    commit: str
    mode: str = "ok"  # ok | gated | private | slow | trickle | stall-get | truncate | redirect-loop
    token: str | None = None  # private: the token that opens it
    delay: float = 0.0  # slow, stall-get: seconds before answering; trickle: seconds between two bytes
    only: tuple[str, ...] = ()  # trickle, stall-get, truncate: the files that misbehave (empty: all)


@dataclass
class FakeHub:
    """The server and its repos; start() / stop(), or use as a context manager."""

    repos: dict[str, Repo] = field(default_factory=lambda: default_repos())
    requests: list[Request] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._stopping = threading.Event()
        hub = self

        class Handler(BaseHTTPRequestHandler):
            def do_HEAD(self) -> None:  # noqa: N802
                self._answer(body=False)

            def do_GET(self) -> None:  # noqa: N802
                self._answer(body=True)

            def _answer(self, *, body: bool) -> None:
                try:
                    hub._serve(self, body=body)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

            def log_message(self, *args: object) -> None:
                pass

        class Server(ThreadingHTTPServer):
            daemon_threads = True
            block_on_close = False

            def handle_error(self, request: object, client_address: object) -> None:
                pass

        self._server = Server(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> FakeHub:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> FakeHub:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---- request handling ----

    def _serve(self, h: BaseHTTPRequestHandler, *, body: bool) -> None:
        path = unquote(urlsplit(h.path).path)
        auth = h.headers.get("Authorization")
        self.requests.append(Request(h.command, path, auth, h.headers.get("Range")))
        parts = path.strip("/").split("/")
        if len(parts) < 5 or parts[2] != "resolve":
            return self._error(h, 404, "", "Not found")
        repo_id, revision, filename = f"{parts[0]}/{parts[1]}", parts[3], "/".join(parts[4:])
        if auth and auth.startswith("Bearer hf_invalid"):
            return self._error(h, 401, "", "Invalid credentials in Authorization header")
        repo = self.repos.get(repo_id)
        if repo is None:
            return self._error(h, 404, "RepoNotFound", "Repository not found")
        if repo.mode == "slow" and self._stopping.wait(repo.delay):
            return None
        if repo.mode == "gated":
            message = f"Access to model {repo_id} is restricted. You must have access to it and be authenticated."
            return self._error(h, 403 if auth else 401, "GatedRepo", message)
        if repo.mode == "private" and auth != f"Bearer {repo.token}":
            return self._error(h, 401, "RepoNotFound", "Repository not found")
        if repo.mode == "redirect-loop":
            h.send_response(302)
            h.send_header("Location", h.path)
            h.send_header("Content-Length", "0")
            h.end_headers()
            return None
        if revision not in ("main", repo.commit):
            return self._error(h, 404, "RevisionNotFound", "Invalid rev id: " + revision)
        data = repo.files.get(filename)
        if data is None:
            return self._error(h, 404, "EntryNotFound", "Entry not found", commit=repo.commit)
        start, end, status = 0, len(data) - 1, 200
        ranged = h.headers.get("Range")
        if ranged and body and ranged.startswith("bytes="):
            a, _, b = ranged[6:].partition("-")
            start, end, status = int(a), min(int(b) if b else len(data) - 1, len(data) - 1), 206
        chunk = data[start : end + 1]
        misbehave = body and (not repo.only or filename in repo.only)
        if misbehave and repo.mode == "stall-get" and self._stopping.wait(repo.delay):
            return None
        h.send_response(status)
        h.send_header("X-Repo-Commit", repo.commit)
        h.send_header("ETag", '"' + hashlib.sha1(data).hexdigest() + '"')
        h.send_header("Accept-Ranges", "bytes")
        h.send_header("Content-Type", "application/octet-stream")
        h.send_header("Content-Length", str(len(chunk) if body else len(data)))
        if status == 206:
            h.send_header("Content-Range", f"bytes {start}-{end}/{len(data)}")
        h.end_headers()
        if misbehave and repo.mode == "trickle":
            for i in range(len(chunk)):
                h.wfile.write(chunk[i : i + 1])
                h.wfile.flush()
                if self._stopping.wait(repo.delay):
                    return None
        elif misbehave and repo.mode == "truncate":
            h.wfile.write(chunk[: len(chunk) // 2])
            h.wfile.flush()
            h.close_connection = True
        elif body:
            h.wfile.write(chunk)
        return None

    @staticmethod
    def _error(h: BaseHTTPRequestHandler, status: int, code: str, message: str, commit: str | None = None) -> None:
        payload = json.dumps({"error": message}).encode()
        h.send_response(status)
        if code:
            h.send_header("X-Error-Code", code)
        h.send_header("X-Error-Message", message)
        if commit:
            h.send_header("X-Repo-Commit", commit)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(payload)))
        h.end_headers()
        if h.command != "HEAD":
            h.wfile.write(payload)


def _commit(name: str) -> str:
    return hashlib.sha1(name.encode()).hexdigest()


def _json(data: dict) -> bytes:
    return json.dumps(data, indent=2).encode()


def default_repos() -> dict[str, Repo]:
    index = {
        "metadata": {"total_size": 0},
        "weight_map": {**{n: SHARD_NAMES[0] for n in SHARD_1}, **{n: SHARD_NAMES[1] for n in SHARD_2}},
    }
    dense = {"config.json": _json(llama_config(1)), "model.safetensors": safetensors_file(DENSE_TENSORS)}
    return {
        "fake/dense": Repo(dense, _commit("dense")),
        "fake/sharded": Repo(
            {
                "config.json": _json(llama_config(2)),
                "model.safetensors.index.json": _json(index),
                SHARD_NAMES[0]: safetensors_file(SHARD_1),
                SHARD_NAMES[1]: safetensors_file(SHARD_2),
            },
            _commit("sharded"),
        ),
        "fake/modelopt": Repo(
            {"config.json": _json(llama_config(1)), "hf_quant_config.json": _json(MODELOPT_QUANT)}, _commit("modelopt")
        ),
        "fake/broken": Repo({"config.json": b'{"model_type": "llama", '}, _commit("broken")),
        "fake/no-config": Repo({"README.md": b"# nothing here\n"}, _commit("no-config")),
        "fake/gated": Repo(dict(dense), _commit("gated"), mode="gated"),
        "fake/private": Repo(dict(dense), _commit("private"), mode="private", token="hf_fake_private"),
        "fake/slow": Repo(dict(dense), _commit("slow"), mode="slow", delay=3.0),
        # the deadline: each would keep huggingface_hub busy far longer than the tests' 2 s
        "fake/trickle": Repo(dict(dense), _commit("trickle"), mode="trickle", delay=0.5),
        "fake/trickle-header": Repo(dict(dense), _commit("trickle-header"), mode="trickle", delay=0.5,
                                    only=("model.safetensors",)),
        "fake/stall-get": Repo(dict(dense), _commit("stall-get"), mode="stall-get", delay=30.0),
        "fake/truncate": Repo(dict(dense), _commit("truncate"), mode="truncate"),
        "fake/truncate-header": Repo(dict(dense), _commit("truncate-header"), mode="truncate",
                                     only=("model.safetensors",)),
        "fake/redirect-loop": Repo(dict(dense), _commit("redirect-loop"), mode="redirect-loop"),
        # bad files behind a well-behaved server
        "fake/nested-config": Repo({"config.json": b"[" * 100_000 + b"]" * 100_000}, _commit("nested-config")),
        "fake/huge-config": Repo({"config.json": b" " * (17 * 2**20) + b"{}"}, _commit("huge-config")),
        "fake/nul-weights": Repo({"config.json": _json(llama_config(1)), "model.safetensors": bytes(4096)},
                                 _commit("nul-weights")),
        "fake/long-header": Repo({"config.json": _json(llama_config(1)),
                                  "model.safetensors": struct.pack("<Q", 50_000) + b"{}"}, _commit("long-header")),
        "fake/nested-header": Repo({"config.json": _json(llama_config(1)),
                                    "model.safetensors": _raw_safetensors(b"[" * 100_000 + b"]" * 100_000)},
                                   _commit("nested-header")),
        "fake/bad-shape": Repo({"config.json": _json(llama_config(1)), "model.safetensors": _raw_safetensors(
            json.dumps({"w": {"dtype": "BF16", "shape": ["64", 64], "data_offsets": [0, 8192]}}).encode(), bytes(8192))},
            _commit("bad-shape")),
        "fake/absurd-shape": Repo({"config.json": _json(llama_config(1)), "model.safetensors": _raw_safetensors(
            json.dumps({"w": {"dtype": "BF16", "shape": [10**9, 10**9], "data_offsets": [0, 2 * 10**18]}}).encode())},
            _commit("absurd-shape")),
        "fake/escaping-index": Repo({"config.json": _json(llama_config(2)), "model.safetensors.index.json": _json(
            {"weight_map": {"model.embed_tokens.weight": "../../../../etc/passwd"}})}, _commit("escaping-index")),
        "fake/many-shards": Repo({"config.json": _json(llama_config(2)), "model.safetensors.index.json": _json(
            {"weight_map": {f"t{i}": f"s{i}.safetensors" for i in range(100_001)}})}, _commit("many-shards")),
    }


def _raw_safetensors(header: bytes, data: bytes = b"") -> bytes:
    """A file whose 8-byte length prefix announces `header` (anything: the tests' malformed headers), then `data`."""
    return struct.pack("<Q", len(header)) + header + data
