"""Hub source (wizard.sources.hub) against a fake Hub on 127.0.0.1; no test reaches the network.

huggingface_hub reads HF_ENDPOINT, HF_HOME, HF_HUB_OFFLINE, the timeouts... when it is imported
(constants.py; its docs: "All environment variables are read at import time"). The fixture therefore sets the
environment *and* patches huggingface_hub.constants, so the tests hold whatever imported it first.
One test runs a fresh interpreter with the environment only, as the CLI would.
"""

from __future__ import annotations

import math
import os
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from wizard.errors import InputError
from wizard.sources.resolve import resolve_model

from cli_run import assert_one_line_error, run_cli
from fake_hub import BITS, DENSE_TENSORS, SHARD_1, SHARD_2, FakeHub

ROOT = Path(__file__).resolve().parents[1]
LOCAL_HOSTS = {"127.0.0.1", "::1", "localhost"}

# Hand-computed from the fake tensors (tests/fake_hub.py), not from any code under test:
# one layer = q 64*64 + k 32*64 + v 32*64 + o 64*64 + gate/up/down 3 * 128*64 = 36,864 BF16 + 2 norms * 64 F32.
# dense = embed 128*64 + 1 layer + final norm 64 + lm_head 128*64
#       = 8,192 + (36,864 + 128) + 64 + 8,192 = 53,440 params
#       bytes: BF16 (8,192 + 36,864 + 8,192) * 2 = 106,496; F32 (128 + 64) * 4 = 768 -> 107,264
# sharded (2 layers) = dense + one more layer (36,992) = 90,432 params
#       bytes: BF16 (53,248 + 36,864) * 2 = 180,224; F32 (192 + 128) * 4 = 1,280 -> 181,504
DENSE_PARAMS, DENSE_BYTES = 53_440, 107_264
SHARDED_PARAMS, SHARDED_BYTES = 90_432, 181_504
# As served: vLLM loads float32 tensors into 16-bit parameters, so the F32 norms count 2 bytes each.
DENSE_SERVED = 106_496 + (128 + 64) * 2  # 106,880
SHARDED_SERVED = 180_224 + (192 + 128) * 2  # 180,864


def sums(*groups: dict) -> tuple[int, int]:
    params = sum(math.prod(shape) for g in groups for _, shape in g.values())
    size = sum(math.prod(shape) * BITS[dtype] // 8 for g in groups for dtype, shape in g.values())
    return params, size


def test_hand_sums_match_the_fake_tensors():
    assert sums(DENSE_TENSORS) == (DENSE_PARAMS, DENSE_BYTES)
    assert sums(SHARD_1, SHARD_2) == (SHARDED_PARAMS, SHARDED_BYTES)


# ---------------------------------------------------------------- fixtures


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    """Refuse any connection or name lookup that is not the loopback interface."""
    real_connect = socket.socket.connect
    real_getaddrinfo = socket.getaddrinfo

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and address[0] not in LOCAL_HOSTS:
            raise OSError(f"test tried to reach the network: {address}")
        return real_connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host not in LOCAL_HOSTS and host is not None:
            raise OSError(f"test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kwargs)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture(scope="module")
def server():
    with FakeHub() as hub:
        yield hub


def point_at(monkeypatch, endpoint: str) -> None:
    from huggingface_hub import constants

    monkeypatch.setenv("HF_ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "ENDPOINT", endpoint)
    monkeypatch.setattr(constants, "HUGGINGFACE_CO_URL_TEMPLATE", endpoint + "/{repo_id}/resolve/{revision}/{filename}")


def go_offline(monkeypatch) -> None:
    from huggingface_hub import constants

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_OFFLINE", True)


@pytest.fixture
def hub(server, tmp_path, monkeypatch):
    """The fake Hub as HF_ENDPOINT, an empty cache in tmp_path, no token, online, 2 s timeouts."""
    from huggingface_hub import constants

    home = tmp_path / "hf"
    for name in ("HF_TOKEN", "HUGGING_FACE_HUB_TOKEN", "HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_OIDC_RESOURCE"):
        monkeypatch.delenv(name, raising=False)
    env = {
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HF_HUB_DISABLE_TELEMETRY": "1",
        "HF_HUB_ETAG_TIMEOUT": "2",
        "HF_HUB_DOWNLOAD_TIMEOUT": "2",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    point_at(monkeypatch, server.url)
    for name, value in {
        "HF_HOME": str(home),
        "HF_HUB_CACHE": str(home / "hub"),
        "HF_TOKEN_PATH": str(home / "token"),
        "HF_STORED_TOKENS_PATH": str(home / "stored_tokens"),
        "HF_HUB_OFFLINE": False,
        "HF_HUB_DISABLE_TELEMETRY": True,
        "HF_HUB_DISABLE_IMPLICIT_TOKEN": False,
        "HF_HUB_ETAG_TIMEOUT": 2,
        "HF_HUB_DOWNLOAD_TIMEOUT": 2,
    }.items():
        monkeypatch.setattr(constants, name, value)
    server.requests.clear()
    return server


def failure(model: str) -> str:
    """The one-line message of the InputError that resolving `model` raises."""
    with pytest.raises(InputError) as info:
        resolve_model(model)
    message = str(info.value)
    assert "\n" not in message and message.startswith("model: ")
    return message


# ---------------------------------------------------------------- successes


def test_single_file_exact_sizes(hub):
    from wizard.sources.hub import load_hub

    spec = load_hub("fake/dense")
    assert spec.source == "hub"
    assert spec.id == "fake/dense"
    assert (spec.hidden_size, spec.num_layers, spec.num_kv_heads, spec.vocab_size) == (64, 1, 2, 128)
    assert spec.exact is not None
    assert (spec.exact.params, spec.exact.bytes) == (DENSE_PARAMS, DENSE_SERVED)
    assert spec.quant is None  # hf_quant_config.json answered 404: fine
    assert hub.url in spec.source_detail
    # the header was read with Range requests; the weights were never downloaded whole
    reads = [r for r in hub.requests if r.method == "GET" and r.path.endswith("/model.safetensors")]
    assert reads and all(r.range for r in reads)


def test_sharded_exact_sizes_through_resolve(hub):
    spec = resolve_model("fake/sharded")
    assert spec.source == "hub"
    assert spec.num_layers == 2
    assert (spec.exact.params, spec.exact.bytes) == (SHARDED_PARAMS, SHARDED_SERVED)
    fetched = {r.path.rsplit("/", 1)[1] for r in hub.requests if r.method == "GET"}
    shards = {"model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"}
    assert {"model.safetensors.index.json", *shards} <= fetched


def test_quant_config_and_no_safetensors(hub):
    spec = resolve_model("fake/modelopt")
    assert spec.source == "hub"
    assert spec.quant is not None and spec.quant.method == "modelopt" and spec.quant.bits == 8
    assert spec.exact is None  # no safetensors: estimates only, and nothing said about it
    assert not any("exact" in note for note in spec.notes)


def test_private_repo_with_hf_token(hub, monkeypatch):
    assert "not found" in failure("fake/private")
    monkeypatch.setenv("HF_TOKEN", "hf_fake_private")
    spec = resolve_model("fake/private")
    assert (spec.exact.params, spec.exact.bytes) == (DENSE_PARAMS, DENSE_SERVED)
    assert any(r.path.endswith("/fake/private/resolve/main/config.json") and r.auth == "Bearer hf_fake_private"
               for r in hub.requests)


# ---------------------------------------------------------------- failures: one line, with the way out


def test_gated_repo(hub):
    message = failure("fake/gated")
    assert "gated" in message and "HF_TOKEN" in message and "licence" in message
    assert f"{hub.url}/fake/gated" in message  # the model page to accept the licence on
    assert "catalog" in message


def test_gated_repo_with_a_token_that_has_no_access(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_not_granted")
    message = failure("fake/gated")
    assert "gated" in message and "HF_TOKEN" in message and "licence" in message
    assert any(r.path == "/fake/gated/resolve/main/config.json" and r.auth == "Bearer hf_not_granted"
               for r in hub.requests)


def test_invalid_token(hub, monkeypatch):
    monkeypatch.setenv("HF_TOKEN", "hf_invalid_token")
    message = failure("fake/dense")
    assert "401" in message and "HF_TOKEN" in message


def test_unexpected_error_is_still_one_line(hub, monkeypatch):
    from huggingface_hub import HfApi

    def boom(*args, **kwargs):
        raise RuntimeError("something odd\nwith a second line")

    monkeypatch.setattr(HfApi, "hf_hub_download", boom)
    message = failure("fake/dense")
    assert "RuntimeError: something odd" in message and "second line" not in message


def test_missing_repo(hub):
    message = failure("fake/does-not-exist")
    assert "not found" in message and "catalog" in message and "local folder" in message


def test_repo_without_config_json(hub):
    assert "no config.json" in failure("fake/no-config")


def test_unknown_revision(hub):
    from wizard.sources.hub import load_hub

    with pytest.raises(InputError, match="revision 'v9' was not found"):
        load_hub("fake/dense", revision="v9")


def test_broken_config_json(hub):
    message = failure("fake/broken")
    assert "config.json" in message and "not valid JSON" in message and "catalog" in message


def test_timeout(hub, monkeypatch):
    from huggingface_hub import constants

    monkeypatch.setattr(constants, "HF_HUB_ETAG_TIMEOUT", 0.3)
    monkeypatch.setattr(constants, "HF_HUB_DOWNLOAD_TIMEOUT", 0.3)
    start = time.monotonic()
    message = failure("fake/slow")  # the server sleeps 3 s
    assert time.monotonic() - start < 2.5
    assert "timeout" in message and "catalog" in message


def test_unreachable_hub(hub, monkeypatch):
    point_at(monkeypatch, f"http://127.0.0.1:{closed_port()}")
    message = failure("fake/dense")
    assert "unreachable" in message and "offline" in message and "catalog" in message


def test_offline_with_empty_cache(hub, monkeypatch):
    go_offline(monkeypatch)
    message = failure("fake/dense")
    assert "offline" in message and "HF_HUB_OFFLINE" in message and "catalog" in message
    assert hub.requests == []


# ---------------------------------------------------------------- the cache


def test_offline_after_download_uses_the_cache(hub, monkeypatch):
    online = resolve_model("fake/modelopt")
    go_offline(monkeypatch)
    hub.requests.clear()
    offline = resolve_model("fake/modelopt")
    assert hub.requests == []
    assert offline.source == "hub" and "local Hugging Face cache" in offline.source_detail
    assert offline.quant == online.quant  # hf_quant_config.json came from the cache too
    assert (offline.hidden_size, offline.num_layers) == (online.hidden_size, online.num_layers)
    # the safetensors headers were read over HTTP, not cached: the spec says exact sizes were skipped
    assert offline.exact is None and any("exact sizes skipped" in n for n in offline.notes)


def test_offline_reads_headers_of_cached_weights(hub, monkeypatch):
    from huggingface_hub import hf_hub_download

    resolve_model("fake/sharded")
    for name in ("model-00001-of-00002.safetensors", "model-00002-of-00002.safetensors"):
        hf_hub_download("fake/sharded", name)  # as vLLM would have, before going offline
    go_offline(monkeypatch)
    spec = resolve_model("fake/sharded")
    assert (spec.exact.params, spec.exact.bytes) == (SHARDED_PARAMS, SHARDED_SERVED)


def test_unreachable_after_download_uses_the_cache(hub, monkeypatch):
    resolve_model("fake/dense")
    point_at(monkeypatch, f"http://127.0.0.1:{closed_port()}")
    spec = resolve_model("fake/dense")
    assert spec.source == "hub" and spec.hidden_size == 64


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- as the CLI runs it: environment only


def test_fresh_process_honours_the_environment(hub, tmp_path):
    script = textwrap.dedent(
        """
        import sys
        import wizard.sources.resolve as r
        assert "huggingface_hub" not in sys.modules, "huggingface_hub imported before a Hub id was resolved"
        spec = r.resolve_model("fake/dense")
        print(spec.source, spec.exact.params, spec.exact.bytes)
        from wizard.errors import InputError
        try:
            r.resolve_model("fake/gated")
        except InputError as e:
            print(e)
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "HUGGING"))}
    env.update(
        PYTHONPATH=str(ROOT),
        HF_ENDPOINT=hub.url,
        HF_HOME=str(tmp_path / "fresh"),
        HF_HUB_DISABLE_TELEMETRY="1",
        HF_HUB_ETAG_TIMEOUT="2",
        HF_HUB_DOWNLOAD_TIMEOUT="2",
    )
    done = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.strip().splitlines()
    assert lines[0] == f"hub {DENSE_PARAMS} {DENSE_SERVED}"
    assert "gated" in lines[1] and "HF_TOKEN" in lines[1]
    assert (tmp_path / "fresh" / "hub" / "models--fake--dense").is_dir()  # HF_HOME's cache was used
    assert "Traceback" not in done.stderr

    env["HF_HUB_OFFLINE"] = "1"  # the same cache, offline
    offline = "import wizard.sources.resolve as r; s = r.resolve_model('fake/dense'); print(s.source, s.hidden_size)"
    hub.requests.clear()
    done = subprocess.run([sys.executable, "-c", offline], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["hub", "64"] and hub.requests == []


def test_cli_gated_error_is_one_line(hub, tmp_path):
    home = tmp_path / "cli"
    env = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.url, "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"),
           "HF_TOKEN": ""}
    run = run_cli("size", "fake/gated", env=env)
    assert_one_line_error(run, "gated", "HF_TOKEN", "licence", "catalog")
    offline = run_cli("size", "fake/dense", env={**env, "HF_HUB_OFFLINE": "1"})  # empty cache
    assert_one_line_error(offline, "offline", "HF_HUB_OFFLINE", "catalog")


def test_the_network_guard_works():
    with pytest.raises(OSError, match="tried to"):
        socket.create_connection(("huggingface.co", 443), timeout=1)


# ---------------------------------------------------------------- issue #10: an overall deadline, and bad files


def refusal(model: str) -> str:
    """The one-line message of the InputError that resolving `model` raises (any field)."""
    with pytest.raises(InputError) as info:
        resolve_model(model)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.fixture
def deadline(hub, monkeypatch):
    """WIZARD_HUB_DEADLINE of 2 s, and huggingface_hub's own timeouts far longer: only the deadline can stop it."""
    from huggingface_hub import constants

    monkeypatch.setenv("WIZARD_HUB_DEADLINE", "2")
    monkeypatch.setattr(constants, "HF_HUB_ETAG_TIMEOUT", 30)
    monkeypatch.setattr(constants, "HF_HUB_DOWNLOAD_TIMEOUT", 30)
    return hub


def hub_workers() -> list:
    import threading

    return [t for t in threading.enumerate() if t.name == "wizard-hub-load" and t.is_alive()]


@pytest.mark.parametrize(
    "repo",
    [
        "fake/trickle",  # config.json at one byte every 0.5 s: no read ever times out
        "fake/trickle-header",  # the same for the Range GET of the safetensors header
        "fake/stall-get",  # a good HEAD, then a GET that sends nothing for 30 s
        "fake/truncate",  # half the body, then the connection closes: huggingface_hub resumes and retries
    ],
)
def test_deadline_covers_the_whole_load(deadline, capfd, repo):
    start = time.monotonic()
    message = failure(repo)
    took = time.monotonic() - start
    assert 1.9 <= took < 3.5, took
    assert "did not finish within 2 s" in message and "WIZARD_HUB_DEADLINE" in message and "catalog" in message
    assert capfd.readouterr().err == ""  # no retry chatter, warnings or progress bars from huggingface_hub
    # The worker thread stops soon after (the HTTP hooks refuse new requests), and makes no more requests.
    seen = len(deadline.requests)
    for _ in range(30):
        if not hub_workers():
            break
        time.sleep(0.1)
    assert not hub_workers()
    assert len(deadline.requests) == seen
    assert capfd.readouterr().err == ""


def test_deadline_names_the_last_problem_huggingface_hub_reported(deadline):
    message = failure("fake/truncate")
    assert "last problem:" in message and "config.json" in message


def test_truncated_header_read_is_one_line(deadline):
    start = time.monotonic()
    message = failure("fake/truncate-header")  # a Range GET is not retried: the error is immediate
    assert time.monotonic() - start < 3
    assert "broke before a file had fully arrived" in message


def test_redirect_loop(deadline):
    start = time.monotonic()
    message = failure("fake/redirect-loop")
    assert time.monotonic() - start < 3
    assert "redirected in a loop" in message and "HF_ENDPOINT" in message


@pytest.mark.parametrize("value", ["abc", "0", "-1", "nan", "inf", "100000"])
def test_deadline_setting_is_checked(hub, monkeypatch, value):
    monkeypatch.setenv("WIZARD_HUB_DEADLINE", value)
    message = refusal("fake/dense")
    assert message.startswith(f"WIZARD_HUB_DEADLINE: {value!r} is not accepted") and "86,400" in message
    assert hub.requests == []


def test_deadline_setting_is_honoured(hub, monkeypatch):
    monkeypatch.setenv("WIZARD_HUB_DEADLINE", "0.5")
    start = time.monotonic()
    assert "within 0.5 s" in failure("fake/stall-get")
    assert time.monotonic() - start < 1.5


def test_nested_config_json(hub):
    message = failure("fake/nested-config")
    assert "config.json" in message and "nested too deeply" in message


def test_huge_config_json_is_not_downloaded(hub):
    message = failure("fake/huge-config")
    assert "17,825,794 bytes" in message and "16 MiB" in message
    assert not [r for r in hub.requests if r.method == "GET" and r.path.endswith("/config.json")]


@pytest.mark.parametrize(
    ("repo", "words"),
    [
        ("fake/nul-weights", ["fake/nul-weights/model.safetensors", "header length of 0"]),
        ("fake/long-header", ["fake/long-header/model.safetensors", "header of 50,000 bytes in a file of 10 bytes"]),
        ("fake/nested-header", ["fake/nested-header/model.safetensors", "nested"]),
        ("fake/bad-shape", ["fake/bad-shape/model.safetensors: tensor w", "dimensions"]),
        ("fake/absurd-shape", ["tensor w", "[1000000000, 1000000000]", "1,000,000,000,000,000 elements"]),
    ],
)
def test_bad_safetensors_headers_on_the_hub(hub, repo, words):
    message = refusal(repo)
    for w in words:
        assert w in message, (w, message)


def test_index_with_a_path_escape_is_refused_before_any_shard_request(hub):
    message = refusal("fake/escaping-index")
    assert "weight_map" in message and "../../../../etc/passwd" in message and "no / or .." in message
    assert not [r for r in hub.requests if "passwd" in r.path]


def test_index_with_too_many_shards_makes_no_request_storm(hub):
    message = refusal("fake/many-shards")
    assert "100,000 shards" in message
    assert not [r for r in hub.requests if r.path.endswith("/s1.safetensors")]


@pytest.mark.parametrize(
    ("error", "words"),
    [(MemoryError, "ran out of memory"), (RecursionError, "nested too deeply")],
)
def test_memory_and_recursion_errors_in_words(hub, monkeypatch, error, words):
    from huggingface_hub import HfApi

    def boom(*args, **kwargs):
        raise error()

    monkeypatch.setattr(HfApi, "hf_hub_download", boom)
    assert words in failure("fake/dense")


def test_cli_deadline_is_one_line(hub, tmp_path):
    home = tmp_path / "cli"
    env = {"HF_HUB_OFFLINE": "0", "HF_ENDPOINT": hub.url, "HF_HOME": str(home), "HF_HUB_CACHE": str(home / "hub"),
           "HF_TOKEN": "", "WIZARD_HUB_DEADLINE": "2", "HF_HUB_ETAG_TIMEOUT": "30", "HF_HUB_DOWNLOAD_TIMEOUT": "30"}
    for repo in ("fake/trickle", "fake/truncate"):  # the second makes huggingface_hub log retries
        start = time.monotonic()
        run = run_cli("size", repo, "--json", env=env)
        assert time.monotonic() - start < 15
        assert_one_line_error(run, "model", repo, "did not finish within 2 s", "WIZARD_HUB_DEADLINE")
