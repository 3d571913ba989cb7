"""gateway/ of a basic team's starter repo (DOMAIN §6): nginx in front of the replicas on one machine, started by
Docker Compose. The nginx configuration is checked by the real nginx (`nginx -t`) and run in front of fake vLLM
servers on 127.0.0.1: keys, exposure, forwarding of vLLM's shared key, retries past a dead replica and the
rate limit. compose.yaml is checked structurally (no docker here: `docker compose config` cannot run).

nginx: skipped when it is not installed, except in CI (CI=true), where .ci/run installs it and a missing nginx fails.
"""

from __future__ import annotations

import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml

import artifact_checks as checks
from starter_repo import validate_repo
from wizard.artifacts import context as ctx_mod
from wizard.artifacts.render import render_repo
from wizard.artifacts.writer import write_repo
from wizard.session.answers import recorded, validate_answers
from wizard.session.plan import build_plan
from wizard.session.session import run_answers

ROOT = Path(__file__).resolve().parent.parent
GATEWAY_FILES = {"gateway/README.md", "gateway/nginx.conf", "gateway/compose.yaml", "gateway/keys.sh",
                 "gateway/.gitignore"}
# An 8B model for a basic team on H100s: several single-GPU replicas on one machine.
BASIC_8B = {"model": "meta-llama/Llama-3.1-8B-Instruct", "workload": "online", "peak_concurrency": 256,
            "context_tokens": 8192, "daily_requests": 600000, "prompt_tokens": 1024, "output_tokens": 256,
            "ttft_p99_ms": 1000, "tpot_p99_ms": 50, "ops_capability": "basic", "data_residency": True,
            "gpu": "h100-sxm-80gb"}
TINY = {"architectures": ["LlamaForCausalLM"], "model_type": "llama", "hidden_size": 256, "intermediate_size": 512,
        "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "vocab_size": 1000,
        "max_position_embeddings": 4096, "torch_dtype": "bfloat16"}


def nginx_or_skip() -> None:
    if checks.nginx_binary():
        return
    if os.environ.get("CI") == "true":
        pytest.fail("nginx is not installed: CI must install it (.ci/run installs nginx-light)")
    pytest.skip("nginx is not installed (apt-get install nginx-light); CI runs these tests")


def make_repo(raw: dict[str, Any], out: Path) -> tuple[Any, Path]:
    answers = validate_answers(raw)
    session = run_answers(answers)
    plan = build_plan(session)
    files = render_repo(plan, recorded(session.answers))
    return plan, write_repo(files, out)


@pytest.fixture(scope="module")
def basic_repo(tmp_path_factory):
    return make_repo(BASIC_8B, tmp_path_factory.mktemp("basic") / "repo")


def keyed_copy(repo: Path, where: Path) -> tuple[Path, str, str]:
    """A copy of gateway/ with keys made by its own keys.sh: (folder, a caller key, vLLM's shared key)."""
    gw = where / "gateway"
    shutil.copytree(repo / "gateway", gw)
    init = subprocess.run(["bash", str(gw / "keys.sh"), "init"], capture_output=True, text=True, check=False)
    assert init.returncode == 0, init.stderr
    add = subprocess.run(["bash", str(gw / "keys.sh"), "add", "team-a"], capture_output=True, text=True, check=False)
    assert add.returncode == 0, add.stderr
    key = add.stdout.strip()
    shared = (gw / ".env").read_text().strip().split("=", 1)[1]
    assert re.fullmatch(r"[0-9a-f]{64}", key) and re.fullmatch(r"[0-9a-f]{64}", shared) and key != shared
    return gw, key, shared


# ------------------------------------------------------------------------------------------------ which files


def test_a_basic_team_off_a_cluster_gets_the_gateway_and_the_others_do_not(basic_repo, tmp_path):
    plan, repo = basic_repo
    assert plan.exposure == "gateway" and plan.form == "single_gpu" and plan.replicas >= 3
    files = {str(p.relative_to(repo)) for p in repo.rglob("*") if p.is_file()}
    assert GATEWAY_FILES <= files and "serve/launch.sh" in files and not any(f.startswith("k8s/") for f in files)
    validate_repo(repo)
    platform = render_repo(*_plan_and_answers({**BASIC_8B, "ops_capability": "platform"}))
    assert "gateway/README.md" in platform and "gateway/nginx.conf" not in platform  # a platform runs its own
    assert "k8s/deployment.yaml" in platform
    kube = render_repo(*_plan_and_answers({**BASIC_8B, "ops_capability": "kubernetes"}))
    assert not any(p.startswith("gateway/") for p in kube)


def _plan_and_answers(raw: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    session = run_answers(validate_answers(raw))
    return build_plan(session), recorded(session.answers)


def test_the_top_readme_starts_the_gateway_and_the_gateway_readme_says_how_to_add_keys(basic_repo):
    _, repo = basic_repo
    top = (repo / "README.md").read_text()
    assert "bash gateway/keys.sh init" in top and "docker compose -f gateway/compose.yaml up -d" in top
    assert "VLLM_API_KEY=$(openssl" not in top  # callers use gateway keys, not vLLM's shared key
    text = (repo / "gateway" / "README.md").read_text()
    for part in ("## Start (in this order)", "keys.sh add", "keys.sh remove", "nginx -s reload", "## What is exposed",
                 "/metrics", "/invocations", "127.0.0.1", "401", "429"):
        assert part in text, part
    order = [text.index(s) for s in ("keys.sh init", "keys.sh add team-a", "up -d vllm-1", "compose.yaml up -d  ")]
    assert order == sorted(order)


# ------------------------------------------------------------------------------------------------ nginx.conf


def test_nginx_conf_numbers_come_from_the_plan(basic_repo):
    plan, repo = basic_repo
    conf = (repo / "gateway" / "nginx.conf").read_text()
    perf = plan.performance
    output_tokens = BASIC_8B["output_tokens"]
    request_s = (perf.ttft_ms + output_tokens * perf.tpot_ms) / 1000
    read_timeout = int(re.search(r"proxy_read_timeout (\d+)s;", conf).group(1))
    assert read_timeout > request_s and read_timeout >= 60
    servers = re.findall(r"server 127\.0\.0\.1:(\d+) max_fails=\d+ fail_timeout=\d+s;", conf)
    assert servers == [str(8001 + i) for i in range(plan.replicas)]  # one machine holds them all (8 per node)
    tries = int(re.search(r"proxy_next_upstream_tries (\d+);", conf).group(1))
    assert 2 <= tries <= plan.replicas
    assert "proxy_next_upstream error timeout http_502 http_503" in conf and "proxy_buffering off;" in conf
    concurrency = plan.replicas * plan.concurrency_per_replica
    rate = int(re.search(r"rate=(\d+)r/m;", conf).group(1))
    assert rate == math.floor(concurrency / request_s * 60)
    assert f"limit_conn per_key_conn {concurrency};" in conf and f"limit_conn all_conn {concurrency};" in conf
    assert "limit_req_zone $api_client" in conf and "limit_req_status 429;" in conf
    assert re.search(r"^\s*listen 8000;", conf, re.M)
    assert "include api-keys.conf;" in conf and "include upstream-auth.conf;" in conf


def test_replicas_beyond_one_machine_run_the_same_folder_on_several(tmp_path):
    plan, repo = make_repo({**BASIC_8B, "peak_concurrency": 1024, "daily_requests": 2000000}, tmp_path / "big")
    ctx = ctx_mod.build_context(plan, recorded(run_answers(validate_answers(
        {**BASIC_8B, "peak_concurrency": 1024, "daily_requests": 2000000})).answers))
    assert plan.replicas > 8 and ctx["gateway_hosts"] >= 2
    assert ctx["gateway_hosts"] * ctx["replicas_per_host"] >= plan.replicas
    conf = (repo / "gateway" / "nginx.conf").read_text()
    assert len(re.findall(r"server 127\.0\.0\.1:\d+ ", conf)) == ctx["replicas_per_host"] <= 8
    assert f"**{ctx['gateway_hosts']} machines**" in (repo / "gateway" / "README.md").read_text()
    validate_compose(plan, repo, ctx["replicas_per_host"])


def test_real_nginx_accepts_the_config(basic_repo, tmp_path):
    nginx_or_skip()
    _, repo = basic_repo
    gw, _, _ = keyed_copy(repo, tmp_path)
    checks.check_nginx(gw / "nginx.conf", tmp_path)


def test_real_nginx_refuses_a_broken_config(basic_repo, tmp_path):
    nginx_or_skip()
    _, repo = basic_repo
    gw, _, _ = keyed_copy(repo, tmp_path)
    (gw / "nginx.conf").write_text((gw / "nginx.conf").read_text().replace("proxy_buffering off;", "proxy_bufering off;"))
    with pytest.raises(AssertionError, match="proxy_bufering"):
        checks.check_nginx(gw / "nginx.conf", tmp_path)
    (gw / "api-keys.conf").unlink()
    (gw / "nginx.conf").write_text((repo / "gateway" / "nginx.conf").read_text())
    with pytest.raises(AssertionError, match="api-keys.conf"):  # no keys yet: nginx does not start (README: init)
        checks.check_nginx(gw / "nginx.conf", tmp_path)


# ------------------------------------------------------------------------------------------------ in operation


class FakeVllm(ThreadingHTTPServer):
    """A vLLM stand-in: /v1/* needs the shared key (as vLLM with VLLM_API_KEY), /health and /metrics are open."""

    daemon_threads = True

    def __init__(self, shared_key: str) -> None:
        self.shared_key = shared_key
        self.seen: list[tuple[str, str | None]] = []
        super().__init__(("127.0.0.1", 0), FakeHandler)


class FakeHandler(BaseHTTPRequestHandler):
    server: FakeVllm

    def log_message(self, *args: Any) -> None:
        pass

    def _reply(self, status: int, body: dict[str, Any]) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def _handle(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        if length:
            self.rfile.read(length)
        self.server.seen.append((self.path, self.headers.get("Authorization")))
        if self.path in ("/health", "/metrics", "/invocations"):
            return self._reply(200, {"upstream": self.path})
        if self.headers.get("Authorization") != f"Bearer {self.server.shared_key}":
            return self._reply(401, {"error": "bad upstream key"})
        if self.path == "/v1/models":
            return self._reply(200, {"object": "list", "data": [{"id": "fake", "port": self.server.server_port}]})
        if self.path == "/v1/completions":
            return self._reply(200, {"choices": [{"text": "hi"}], "port": self.server.server_port})
        return self._reply(404, {"error": "no route"})

    do_GET = _handle
    do_POST = _handle


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def call(port: int, path: str, key: str | None = None, body: dict | None = None) -> tuple[int, dict, dict]:
    headers = {"Content-Type": "application/json"}
    if key is not None:
        headers["Authorization"] = f"Bearer {key}"
    data = json.dumps(body).encode() if body is not None else None
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=data, headers=headers)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read() or b"{}"), dict(r.headers)
    except urllib.error.HTTPError as e:
        text = e.read()
        return e.code, json.loads(text) if text.strip().startswith(b"{") else {"raw": text.decode()}, dict(e.headers)


class RunningGateway:
    """The generated nginx.conf run by the real nginx on 127.0.0.1, its replicas' ports pointed at fake servers.
    Only the listen port and the upstream addresses are rewritten."""

    def __init__(self, repo: Path, where: Path, upstreams: list[int]) -> None:
        self.gw, self.key, self.shared = keyed_copy(repo, where)
        conf = (self.gw / "nginx.conf").read_text()
        replica_ports = re.findall(r"server 127\.0\.0\.1:(\d+) ", conf)
        assert len(replica_ports) >= len(upstreams), (replica_ports, upstreams)
        self.port = free_port()
        assert conf.count("listen 8000;") == 1
        conf = conf.replace("listen 8000;", f"listen 127.0.0.1:{self.port};")
        for i, original in enumerate(replica_ports):
            if i < len(upstreams):
                conf = conf.replace(f"server 127.0.0.1:{original} ", f"server 127.0.0.1:{upstreams[i]} ")
        conf = "\n".join(line for line in conf.splitlines()
                         if not re.match(r"\s*server 127\.0\.0\.1:80\d\d ", line)) + "\n"
        conf = conf.replace("worker_processes auto;", "worker_processes 1;")  # a small footprint in tests
        (self.gw / "nginx.conf").write_text(conf)
        self.prefix = where

    def __enter__(self) -> RunningGateway:
        checks.check_nginx(self.gw / "nginx.conf", self.prefix)
        argv = checks.nginx_argv(self.gw / "nginx.conf", self.prefix, "daemon off;")
        self.proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"nginx exited: {self.proc.stderr.read().decode()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.05)
        raise AssertionError("nginx did not start listening")

    def __exit__(self, *exc: object) -> None:
        self.proc.send_signal(signal.SIGQUIT)  # graceful stop of the master we started
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=5)
        self.proc.stdout.close()
        self.proc.stderr.close()


@pytest.fixture
def fake_pair():
    servers = []
    for _ in range(2):
        servers.append(FakeVllm(shared_key=""))
    threads = [threading.Thread(target=s.serve_forever, daemon=True) for s in servers]
    for t in threads:
        t.start()
    yield servers
    for s in servers:
        s.shutdown()
        s.server_close()


def test_the_gateway_in_operation(basic_repo, tmp_path, fake_pair):
    nginx_or_skip()
    _, repo = basic_repo
    dead = free_port()  # a replica still loading its weights: connection refused
    with RunningGateway(repo, tmp_path, [dead] + [s.server_port for s in fake_pair]) as gw:
        for s in fake_pair:
            s.shared_key = gw.shared
        status, body, headers = call(gw.port, "/v1/models")
        assert status == 401 and body["error"]["code"] == 401 and "Bearer" in headers.get("WWW-Authenticate", "")
        assert call(gw.port, "/v1/models", key="0" * 64)[0] == 401
        assert call(gw.port, "/v1/models", key=gw.shared)[0] == 401  # vLLM's key is not a caller key
        assert not any(s.seen for s in fake_pair)  # nothing unauthenticated reached a replica
        ports = set()
        for _ in range(6):  # the dead replica is skipped: every request still succeeds
            status, body, _ = call(gw.port, "/v1/models", key=gw.key)
            assert status == 200 and body["data"][0]["id"] == "fake"
            ports.add(body["data"][0]["port"])
        status, body, _ = call(gw.port, "/v1/completions", key=gw.key, body={"model": "fake", "prompt": "x"})
        assert status == 200 and body["choices"][0]["text"] == "hi"
        assert ports == {s.server_port for s in fake_pair}  # spread over the live replicas
        seen = [auth for s in fake_pair for _, auth in s.seen]
        assert seen and all(auth == f"Bearer {gw.shared}" for auth in seen)  # the caller's key never goes upstream
        before = sum(len(s.seen) for s in fake_pair)
        for path in ("/metrics", "/invocations", "/ping", "/version", "/docs", "/"):
            assert call(gw.port, path, key=gw.key)[0] == 404, path
            assert call(gw.port, path)[0] == 404, path
        status, body, _ = call(gw.port, "/health")
        assert status == 200 and body == {"status": "ok"}  # the gateway's own, not a replica's
        assert sum(len(s.seen) for s in fake_pair) == before


def test_the_rate_limit_answers_429_beyond_the_burst(tmp_path, fake_pair):
    nginx_or_skip()
    # data_residency: 2 replicas x 4 sequences, ~9 s a request: ~54 requests a minute, bursts of 8.
    plan, repo = make_repo(yaml.safe_load((ROOT / "tests" / "scenarios" / "data_residency.yaml").read_text()),
                           tmp_path / "repo")
    conf = (repo / "gateway" / "nginx.conf").read_text()
    burst = int(re.search(r"burst=(\d+) nodelay", conf).group(1))
    assert burst == plan.replicas * plan.concurrency_per_replica
    with RunningGateway(repo, tmp_path, [s.server_port for s in fake_pair]) as gw:
        for s in fake_pair:
            s.shared_key = gw.shared
        codes = [call(gw.port, "/v1/models", key=gw.key)[0] for _ in range(burst + 4)]
        assert codes.count(200) >= burst and 429 in codes, codes
        status, body, headers = call(gw.port, "/v1/models", key=gw.key)
        assert status == 429 and body["error"]["code"] == 429 and headers.get("Retry-After") == "1"
        assert call(gw.port, "/v1/models")[0] == 401  # a caller without a key is refused before any limit


# ------------------------------------------------------------------------------------------------ keys.sh


def test_keys_script_passes_shellcheck_and_refuses_bad_names(basic_repo, tmp_path):
    _, repo = basic_repo
    checks.check_bash(repo / "gateway" / "keys.sh")
    gw, key, _ = keyed_copy(repo, tmp_path)
    assert (gw / "api-keys.conf").read_text() == f'"Bearer {key}" team-a;\n'
    assert (gw / "api-keys.conf").stat().st_mode & 0o077 == 0 and (gw / ".env").stat().st_mode & 0o077 == 0
    for bad in ("a b", "x;y", "", "$(id)", '"q"'):
        r = subprocess.run(["bash", str(gw / "keys.sh"), "add", bad], capture_output=True, text=True, check=False)
        assert r.returncode == 2 and "key name" in r.stderr, bad
    again = subprocess.run(["bash", str(gw / "keys.sh"), "init"], capture_output=True, text=True, check=False)
    assert again.returncode == 1 and "exists already" in again.stderr  # never overwrites the shared key
    subprocess.run(["bash", str(gw / "keys.sh"), "add", "team-b"], capture_output=True, text=True, check=True)
    subprocess.run(["bash", str(gw / "keys.sh"), "remove", "team-a"], capture_output=True, text=True, check=True)
    lines = (gw / "api-keys.conf").read_text().splitlines()
    assert len(lines) == 1 and lines[0].endswith(" team-b;")
    assert set((repo / "gateway" / ".gitignore").read_text().split()) >= {".env", "upstream-auth.conf",
                                                                          "api-keys.conf"}


# ------------------------------------------------------------------------------------------------ compose.yaml


def validate_compose(plan: Any, repo: Path, replicas: int) -> dict[str, Any]:
    doc = checks.check_compose(repo / "gateway" / "compose.yaml")
    services = doc["services"]
    vllm = [name for name in services if name != "gateway"]
    assert vllm == [f"vllm-{i + 1}" for i in range(replicas)]
    assert services["gateway"]["image"] == ctx_mod.NGINX_IMAGE
    conf = (repo / "gateway" / "nginx.conf").read_text()
    upstream = re.findall(r"server 127\.0\.0\.1:(\d+) ", conf)
    gpus = plan.tp * plan.pp
    for name, port in zip(vllm, upstream):
        svc = services[name]
        # the one place that pins the vLLM image (context.IMAGE + the engine's version): the same as k8s/
        assert svc["image"] == f"{ctx_mod.IMAGE}:v{ctx_mod.VLLM_VERSION}"
        argv = svc["command"]
        assert argv[argv.index("--port") + 1] == port
        devices = svc["deploy"]["resources"]["reservations"]["devices"][0]
        assert devices["driver"] == "nvidia" and devices["capabilities"] == ["gpu"] and len(devices["device_ids"]) == gpus
        if plan.tp > 1:
            assert argv[argv.index("--tensor-parallel-size") + 1] == str(plan.tp)
    assert len(upstream) == len(vllm)
    return doc


def test_compose_runs_the_replicas_on_their_gpus_and_ports(basic_repo):
    plan, repo = basic_repo
    doc = validate_compose(plan, repo, plan.replicas)
    k8s = render_repo(*_plan_and_answers({**BASIC_8B, "ops_capability": "kubernetes"}))["k8s/deployment.yaml"]
    image = yaml.safe_load(k8s)["spec"]["template"]["spec"]["containers"][0]["image"]
    assert {s["image"] for n, s in doc["services"].items() if n != "gateway"} == {image}


def test_compose_with_tensor_parallel_replicas(tmp_path):
    raw = {**BASIC_8B, "tp": 4, "peak_concurrency": 16, "daily_requests": 30000}
    plan, repo = make_repo(raw, tmp_path / "tp")
    assert plan.form == "single_node_multi_gpu" and plan.tp == 4
    doc = validate_compose(plan, repo, plan.replicas)
    ids = [d for n, s in doc["services"].items() if n != "gateway"
           for d in s["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"]]
    assert ids == [str(i) for i in range(plan.replicas * 4)]
    assert doc["services"]["vllm-1"]["shm_size"] == "8gb"


def test_compose_checks_catch_planted_defects(basic_repo):
    _, repo = basic_repo
    doc = yaml.safe_load((repo / "gateway" / "compose.yaml").read_text())
    assert checks.compose_problems(doc) == []
    bad = json.loads(json.dumps(doc))
    bad["services"]["vllm-2"]["command"][bad["services"]["vllm-2"]["command"].index("--port") + 1] = "8001"
    bad["services"]["vllm-2"]["deploy"]["resources"]["reservations"]["devices"][0]["device_ids"] = ["0"]
    bad["services"]["vllm-1"]["command"][bad["services"]["vllm-1"]["command"].index("--host") + 1] = "0.0.0.0"
    bad["services"]["vllm-3"]["ports"] = ["8003:8003"]
    bad["services"]["vllm-3"]["command"].append("--swap-space")
    bad["services"]["gateway"]["image"] = "nginx:latest"
    bad["services"]["vllm-1"]["command"][0] = "my$model"
    bad["services"]["vllm-1"]["command"][2] = "50$"
    problems = "\n".join(checks.compose_problems(bad))
    for part in ("port 8001 is also", "GPU 0 is also", "not bound to 127.0.0.1", "publishes ports", "--swap-space",
                 "not pinned", "reads the variable model", "bare '$'"):
        assert part in problems, part
    with pytest.raises(AssertionError, match="VLLM_API_KEY is not set"):
        checks.compose_interpolate("${VLLM_API_KEY:?run init}", {})
    assert checks.compose_interpolate("a$$b${X:-d}", {}) == "a$bd"


# ------------------------------------------------------------------------------------------------ hostile input


HOSTILE = ["m;} server { listen 1; #", "x: y - z", "a$(id)${HOME}$$b", "q'\"`{}", "--port", "é # ; {"]


@pytest.mark.parametrize("name", HOSTILE)
def test_a_hostile_model_folder_cannot_change_nginx_conf_or_compose(tmp_path, name):
    folder = tmp_path / "models" / name
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(TINY))
    raw = {"model": str(folder), "peak_concurrency": 2, "context_tokens": 2048, "ops_capability": "basic",
           "data_residency": True, "gpu": "l4-24gb", "daily_requests": 1000,
           "served_model_name": "team/served:model-1.0_x"}
    plan, repo = make_repo(raw, tmp_path / "repo")
    assert plan.exposure == "gateway"
    validate_repo(repo)
    conf = (repo / "gateway" / "nginx.conf").read_text()
    clean = make_repo({**raw, "model": str(_tiny(tmp_path / "plain"))}, tmp_path / "plain-repo")[1]
    clean_conf = (clean / "gateway" / "nginx.conf").read_text()
    # the user's text is only in comments: every non-comment line is the same as for a plain folder name
    assert _code_lines(conf) == _code_lines(clean_conf)
    doc = validate_compose(plan, repo, plan.replicas)
    svc = doc["services"]["vllm-1"]
    argv = [checks.compose_interpolate(a, {"VLLM_API_KEY": "k"}) for a in svc["command"]]
    assert argv[0] == f"/models/{folder.name}" and argv[1:3] == ["--served-model-name", "team/served:model-1.0_x"]
    bind = next(v for v in svc["volumes"] if v["type"] == "bind")
    assert checks.compose_interpolate(bind["source"], {}) == str(folder)
    assert checks.compose_interpolate(bind["target"], {}) == f"/models/{folder.name}" and bind["read_only"] is True
    if checks.nginx_binary():
        gw, _, _ = keyed_copy(repo, tmp_path)
        checks.check_nginx(gw / "nginx.conf", tmp_path)


def _tiny(folder: Path) -> Path:
    folder.mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(TINY))
    return folder


def _code_lines(conf: str) -> list[str]:
    return [line for line in conf.splitlines() if line.strip() and not line.strip().startswith("#")]
