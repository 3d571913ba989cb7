"""Starter repos that would not start on the card they were sized for are refused, not written (the failures an
engineer would hit on the first deploy): int4/int8 asked of a 16-bit checkpoint, FP8 on a card that runs none, and a
model volume sized at the deployed precision instead of the bytes downloaded."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
import yaml

from cli_run import assert_one_line_error, run_main

ONLINE = {"peak_concurrency": 8, "ttft_p99_ms": 2000, "tpot_p99_ms": 100, "ops_capability": "kubernetes"}


def answers(tmp_path: Path, **values) -> Path:
    f = tmp_path / "answers.yaml"
    f.write_text(yaml.safe_dump({**ONLINE, **values}))
    return f


def test_int4_of_a_16_bit_checkpoint_writes_no_repo_and_names_the_quantized_sibling(tmp_path):
    """vLLM 0.33 does not quantize bf16 weights to int4 at load: the repo would serve 15 GB of bf16 weights where the
    plan sized 5 GB, and run out of memory. The plan still shows the what-if; the writer refuses with the ways out."""
    f = answers(tmp_path, model="Qwen/Qwen2.5-7B-Instruct", weight_precision="int4")
    out = tmp_path / "repo"
    r = run_main("plan", "--answers", str(f), "--out", str(out))
    assert_one_line_error(r, "weight_precision", "int4", "Qwen/Qwen2.5-7B-Instruct-AWQ", "fp8")
    assert not out.exists()
    shown = run_main("plan", "--answers", str(f), "--json")
    assert shown.code == 0 and "needs_quantized_checkpoint" in {w["id"] for w in shown.json()["warnings"]}
    # the quantized checkpoint itself writes its repo
    ok = run_main("plan", "--answers", str(answers(tmp_path, model="Qwen/Qwen2.5-7B-Instruct-AWQ")), "--out", str(out))
    assert ok.code == 0, ok.err
    assert (out / "serve" / "launch.sh").exists()


def test_fp8_on_a_card_below_compute_capability_8_is_refused_by_name(tmp_path):
    """T4 is compute capability 7.5: vLLM runs FP8 weights from 8.0 (weight-only Marlin) and 8.9 (tensor cores)."""
    r = run_main("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "t4-16gb", "--weight-precision", "fp8")
    assert_one_line_error(r, "weight_precision", "t4-16gb", "7.5")
    r = run_main("size", "Qwen/Qwen3-32B-FP8", "--gpu", "t4-16gb")  # the checkpoint is FP8: the card is the problem
    assert_one_line_error(r, "gpu", "t4-16gb", "checkpoint is FP8")
    r = run_main("plan", "--answers", str(answers(tmp_path, model="Qwen/Qwen3-8B", weight_precision="fp8", gpu="t4-16gb")))
    assert_one_line_error(r, "weight_precision", "compute capability 7.5")
    # Ampere (8.0) runs FP8 weight-only: sized, with the note that says how
    a100 = run_main("size", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "a100-sxm-80gb", "--weight-precision", "fp8", "--json")
    assert a100.code == 0 and any("Marlin" in n for n in a100.json()["notes"])


def test_the_model_volume_holds_the_checkpoint_downloaded_not_the_deployed_weights(tmp_path):
    """FP8 of Llama-3.1-70B-Instruct serves 70 GB of weights but downloads the 141 GB bf16 checkpoint: the volume
    is sized on the download (+ 20 %); on a cluster the pre-seed Job downloads it once, on bare machines each cold
    start counts the 141 GB download."""
    f = answers(tmp_path, model="meta-llama/Llama-3.1-70B-Instruct", weight_precision="fp8", gpu="h100-sxm-80gb")
    out = tmp_path / "repo"
    r = run_main("plan", "--answers", str(f), "--out", str(out))
    assert r.code == 0, r.err
    plan = (out / "plan.json").read_text()
    import json

    p = json.loads(plan)
    checkpoint = p["checkpoint_bytes"]
    assert 140e9 < checkpoint < 142e9  # bf16: 2 bytes × 70.6 B parameters
    deployed = p["memory"]["per_gpu_bytes"]["weights"] * p["gpus_per_replica"]
    assert deployed < 0.6 * checkpoint
    pvc = yaml.safe_load((out / "k8s" / "pvc.yaml").read_text())
    gi = int(pvc["spec"]["resources"]["requests"]["storage"].removesuffix("Gi"))
    assert gi * 2**30 >= 1.2 * checkpoint > (gi - 1) * 2**30
    # on the cluster the pre-seed Job downloads those bytes once: a replica's cold start reads the volume
    download = next(s for s in p["cold_start"]["stages"] if s["name"] == "weight download")
    assert download["seconds"] == 0 and "model volume" in download["basis"]
    job = yaml.safe_load((out / "k8s" / "preseed-job.yaml").read_text())
    env = {e["name"]: e.get("value") for e in job["spec"]["template"]["spec"]["containers"][0]["env"]}
    assert env["MODEL"] == "meta-llama/Llama-3.1-70B-Instruct" and env["HF_HOME"] == "/models/hf"
    # without a cluster (a basic team's machines) every start downloads them: 141.1 GB in the cold start
    bare = run_main("plan", "--answers", str(answers(tmp_path, model="meta-llama/Llama-3.1-70B-Instruct",
                                                     weight_precision="fp8", gpu="h100-sxm-80gb", ops_capability="basic")), "--json")
    stage = next(s for s in bare.json()["cold_start"]["stages"] if s["name"] == "weight download")
    assert f"{checkpoint / 1e9:,.1f} GB" in stage["basis"] and stage["seconds"] > 100


def test_an_amd_card_gets_vllms_rocm_image_and_the_amd_device_plugin(tmp_path):
    """MI300X: vLLM's ROCm image at the pinned release and amd.com/gpu — the CUDA image would not start on it."""
    from artifact_checks import check_manifests

    f = answers(tmp_path, model="meta-llama/Llama-3.1-70B-Instruct", gpu="mi300x-192gb", ttft_p99_ms=3000)
    out = tmp_path / "repo"
    r = run_main("plan", "--answers", str(f), "--out", str(out))
    assert r.code == 0, r.err
    from starter_repo import validate_repo

    validate_repo(out)  # every check of a generated repo: schemas, checklist rules, scripts, vLLM flags
    docs = check_manifests(sorted((out / "k8s").glob("*.yaml")), allow_unvalidated=["Kustomization"])
    containers = [c for d in docs if d.get("kind") == "Deployment" for c in d["spec"]["template"]["spec"]["containers"]]
    assert containers and all(c["image"] == "vllm/vllm-openai-rocm:v0.33.0" for c in containers)
    limits = containers[0]["resources"]["limits"]
    assert "amd.com/gpu" in limits and "nvidia.com/gpu" not in limits
    nvidia = tmp_path / "nv"
    ok = run_main("plan", "--answers", str(answers(tmp_path, model="meta-llama/Llama-3.1-8B-Instruct", gpu="h100-sxm-80gb")),
                  "--out", str(nvidia))
    assert ok.code == 0 and "vllm/vllm-openai:v0.33.0" in (nvidia / "k8s" / "deployment.yaml").read_text()


def test_a_gaudi_card_writes_no_repo_rather_than_a_cuda_pod(tmp_path):
    """Gaudi runs Intel's vLLM fork, image and habana.ai/gaudi runtime, which this tool does not write: refused by
    name, nothing written (the plan's numbers stay available with plan --json)."""
    f = answers(tmp_path, model="meta-llama/Llama-3.1-8B-Instruct", gpu="gaudi3-128gb")
    out = tmp_path / "repo"
    r = run_main("plan", "--answers", str(f), "--out", str(out))
    assert_one_line_error(r, "gpu", "gaudi3-128gb", "intel")
    assert not out.exists()
    assert run_main("plan", "--answers", str(f), "--json").code == 0


def test_the_readiness_probe_jumps_the_backlog_and_residency_sends_no_usage_stats(tmp_path):
    """At a peak a FCFS probe waits behind every queued request until all pods fail readiness together: the server
    schedules by priority and the probe asks -1 (vLLM: lower runs first). With data_residency, vLLM's usage
    reporter is off (VLLM_NO_USAGE_STATS, DO_NOT_TRACK); without it nothing is set."""
    out = tmp_path / "repo"
    f = answers(tmp_path, model="meta-llama/Llama-3.1-8B-Instruct", gpu="h100-sxm-80gb", data_residency=True)
    assert run_main("plan", "--answers", str(f), "--out", str(out)).code == 0
    dep = next(d for d in yaml.safe_load_all((out / "k8s" / "deployment.yaml").read_text()) if d)
    c = dep["spec"]["template"]["spec"]["containers"][0]
    args = c["args"]
    assert args[args.index("--scheduling-policy") + 1] == "priority"
    probe = " ".join(c["readinessProbe"]["exec"]["command"])
    assert '"priority": -1' in probe
    env = {e["name"]: e.get("value") for e in c["env"]}
    assert env["VLLM_NO_USAGE_STATS"] == "1" and env["DO_NOT_TRACK"] == "1"
    other = tmp_path / "other"
    g = answers(tmp_path, model="meta-llama/Llama-3.1-8B-Instruct", gpu="h100-sxm-80gb", data_residency=False)
    assert run_main("plan", "--answers", str(g), "--out", str(other)).code == 0
    assert "VLLM_NO_USAGE_STATS" not in (other / "k8s" / "deployment.yaml").read_text()


def test_the_network_policy_admits_the_api_port_and_a_replica_groups_own_traffic(tmp_path):
    """vLLM's --api-key guards only /v1 routes (/metrics and /invocations answer anyone), so the repo restricts who
    connects: the API port from its namespace and labelled namespaces; a multi-node group also reaches itself on
    every port (NCCL). The policy selects exactly the server's pods."""
    out = tmp_path / "one"
    f = answers(tmp_path, model="meta-llama/Llama-3.1-8B-Instruct", gpu="h100-sxm-80gb")
    assert run_main("plan", "--answers", str(f), "--out", str(out)).code == 0
    pol = yaml.safe_load((out / "k8s" / "networkpolicy.yaml").read_text())
    dep = next(d for d in yaml.safe_load_all((out / "k8s" / "deployment.yaml").read_text()) if d)
    pod_labels = dep["spec"]["template"]["metadata"]["labels"]
    assert all(pod_labels.get(k) == v for k, v in pol["spec"]["podSelector"]["matchLabels"].items())
    (rule,) = pol["spec"]["ingress"]
    assert rule["ports"] == [{"port": 8000, "protocol": "TCP"}]
    assert "networkpolicy.yaml" in (out / "k8s" / "kustomization.yaml").read_text()
    big = tmp_path / "big"
    scenario = Path(__file__).parent / "scenarios" / "very_large_model.yaml"
    assert run_main("plan", "--answers", str(scenario), "--out", str(big)).code == 0
    pol = yaml.safe_load((big / "k8s" / "networkpolicy.yaml").read_text())
    assert len(pol["spec"]["ingress"]) == 2 and "ports" not in pol["spec"]["ingress"][1]


def test_an_autoscaled_repo_leaves_the_count_to_the_hpa_and_ships_the_adapter_rule_it_needs():
    """Under an HPA a fixed `replicas:` is reset by every `kubectl apply`; and the HPA's pods metric only exists
    once prometheus-adapter maps vLLM's vllm:num_requests_waiting to the name the HPA asks for."""
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "repo"
        scenario = Path(__file__).parent / "scenarios" / "llama8b_high_traffic.yaml"
        assert run_main("plan", "--answers", str(scenario), "--out", str(out)).code == 0
        dep = next(d for d in yaml.safe_load_all((out / "k8s" / "deployment.yaml").read_text()) if d)
        hpa = yaml.safe_load((out / "k8s" / "hpa.yaml").read_text())
        assert "replicas" not in dep["spec"]
        assert dep["spec"]["template"]["metadata"]["annotations"]["prometheus.io/path"] == "/metrics"
        wanted = hpa["spec"]["metrics"][0]["pods"]["metric"]["name"]
        values = yaml.safe_load((out / "autoscaling" / "prometheus-adapter-values.yaml").read_text())
        (rule,) = values["rules"]["custom"]
        assert rule["name"]["as"] == wanted and "vllm:num_requests_waiting" in rule["seriesQuery"]
        assert "prometheus-adapter-values.yaml" in (out / "README.md").read_text()


def _fake_tools(bin_dir: Path, all_addresses: str) -> None:
    """hostname (-i loopback as on Debian/Ubuntu, -I the given list), ip (eth9: 10.9.9.9) and ray (records argv)."""
    import os
    import stat

    bin_dir.mkdir(parents=True, exist_ok=True)
    scripts = {
        "hostname": f'case "$1" in -i) echo 127.0.1.1 ;; -I) echo "{all_addresses}" ;; esac\n',
        "ip": 'echo "2: eth9    inet 10.9.9.9/24 brd 10.9.9.255 scope global eth9"\n',
        "ray": 'echo "ray $*" >> "$RAY_LOG"\n',
    }
    for name, body in scripts.items():
        p = bin_dir / name
        p.write_text("#!/usr/bin/env bash\n" + body)
        p.chmod(p.stat().st_mode | stat.S_IEXEC)
    assert os.access(bin_dir / "ray", os.X_OK)


def test_a_multi_node_worker_announces_its_routable_address_not_debians_loopback(tmp_path):
    """`hostname -i` is 127.0.1.1 on Debian/Ubuntu: a worker joining Ray with it is unreachable. worker.sh takes the
    host's first non-loopback address (or NETWORK_INTERFACE's) and refuses to start with none."""
    import os
    import subprocess

    out = tmp_path / "repo"
    scenario = Path(__file__).parent / "scenarios" / "very_large_model.yaml"
    assert run_main("plan", "--answers", str(scenario), "--out", str(out)).code == 0
    worker = out / "serve" / "worker.sh"

    def run(addresses: str, **env: str) -> tuple[subprocess.CompletedProcess, str]:
        bin_dir, log = tmp_path / f"bin{len(addresses)}{len(env)}", tmp_path / f"ray{len(addresses)}{len(env)}.log"
        _fake_tools(bin_dir, addresses)
        full = {"PATH": f"{bin_dir}:/usr/bin:/bin", "HEAD_ADDRESS": "10.0.0.1", "RAY_LOG": str(log), **env}
        p = subprocess.run(["bash", str(worker)], capture_output=True, text=True, env=full, timeout=30,
                           cwd=os.getcwd())
        return p, log.read_text() if log.exists() else ""

    p, log = run("10.1.2.3 172.17.0.1")
    assert p.returncode == 0, p.stderr
    assert "--node-ip-address=10.1.2.3" in log and "127.0.1.1" not in log
    p, log = run("10.1.2.3", NETWORK_INTERFACE="eth9")
    assert "--node-ip-address=10.9.9.9" in log
    p, log = run("")
    assert p.returncode == 1 and "VLLM_HOST_IP" in p.stderr and "start" not in log


def test_ranks_that_do_not_split_evenly_over_nodes_are_refused_not_billed_wrong(tmp_path):
    """TP 1 × PP 5 on 4-GPU T4 hosts needs 2 nodes: identical pods would ask 3 + 3 GPUs for 5 ranks and bill one
    nobody uses. Asked for, it is refused by name; the search never proposes such a layout."""
    from wizard.sizing.layout_search import uneven_ranks
    from wizard.sources.catalog import find_gpu

    t4, h100 = find_gpu("t4-16gb"), find_gpu("h100-sxm-80gb")
    assert uneven_ranks(t4, 1, 5) and not uneven_ranks(t4, 1, 4) and not uneven_ranks(t4, 2, 4)
    assert not uneven_ranks(h100, 1, 5)  # one node of 8: nothing to split
    assert uneven_ranks(h100, 4, 3) is False and uneven_ranks(h100, 1, 9) is True  # 12 = 6 + 6; 9 over 2 nodes
    f = answers(tmp_path, model="meta-llama/Llama-3.1-70B-Instruct", gpu="t4-16gb", tp=1, pp=5,
                ttft_p99_ms=5000, tpot_p99_ms=300)
    assert_one_line_error(run_main("plan", "--answers", str(f)), "pp", "5", "do not split evenly")


def test_the_drain_on_shutdown_covers_the_plans_longest_typical_request(tmp_path):
    """A pod stopped mid-request cuts it unless --shutdown-timeout lets it finish: the plan's P99 TTFT + its typical
    output tokens × P99 TPOT (× 1.2), at least 30 s; the grace period covers preStop + that drain."""
    import json
    import math

    out = tmp_path / "repo"
    f = answers(tmp_path, model="meta-llama/Llama-3.1-8B-Instruct", gpu="l4-24gb", output_tokens=2000,
                tpot_p99_ms=100)
    assert run_main("plan", "--answers", str(out.parent / "answers.yaml"), "--out", str(out)).code == 0, f
    p = json.loads((out / "plan.json").read_text())["performance"]
    longest = (p["ttft_p99_ms"] + 2000 * p["tpot_p99_ms"]) / 1000
    want = max(30, math.ceil(longest * 1.2))
    assert want > 30
    dep = next(d for d in yaml.safe_load_all((out / "k8s" / "deployment.yaml").read_text()) if d)
    args = dep["spec"]["template"]["spec"]["containers"][0]["args"]
    assert int(args[args.index("--shutdown-timeout") + 1]) == want
    assert dep["spec"]["template"]["spec"]["terminationGracePeriodSeconds"] >= want + 15


def _plan_repo(tmp_path: Path, name: str, **values) -> Path:
    out = tmp_path / name
    r = run_main("plan", "--answers", str(answers(tmp_path, **values)), "--out", str(out))
    assert r.code == 0, r.err
    return out


def _pod(doc: dict) -> dict:
    return doc["spec"]["template"]["spec"]


def test_pods_land_only_on_the_card_they_were_sized_for(tmp_path):
    """An L4 plan asks for L4 nodes as GPU Feature Discovery, GKE or EKS name them (any one term matches), not for
    any GPU node (nvidia.com/gpu.present, which GKE does not set and which would land it on a T4); a card with no known
    label keeps "any GPU node" and the README says to pin it."""
    out = _plan_repo(tmp_path, "l4", model="Qwen/Qwen3-8B", gpu="l4-24gb")
    pod = _pod(yaml.safe_load((out / "k8s" / "deployment.yaml").read_text()))
    terms = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    found = {t["matchExpressions"][0]["key"]: t["matchExpressions"][0]["values"] for t in terms}
    assert found["nvidia.com/gpu.product"] == ["NVIDIA-L4"]  # exact: a prefix would also take NVIDIA-L40S
    assert found["cloud.google.com/gke-accelerator"] == ["nvidia-l4"] and "g6.xlarge" in found["node.kubernetes.io/instance-type"]
    assert "nodeSelector" not in pod
    assert "kubectl get nodes -L nvidia.com/gpu.product" in (out / "README.md").read_text()
    amd = _pod(yaml.safe_load((_plan_repo(tmp_path, "mi", model="meta-llama/Llama-3.1-70B-Instruct", gpu="mi300x-192gb",
                                          ttft_p99_ms=3000) / "k8s" / "deployment.yaml").read_text()))
    keys = [t["matchExpressions"][0]["key"] for t in amd["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]]
    assert "amd.com/gpu.product-name" in keys
    unknown = _plan_repo(tmp_path, "mi355", model="meta-llama/Llama-3.1-70B-Instruct", gpu="mi355x-288gb", ttft_p99_ms=3000)
    assert "affinity" not in _pod(yaml.safe_load((unknown / "k8s" / "deployment.yaml").read_text()))
    assert "No node label of mi355x-288gb is known" in (unknown / "README.md").read_text()


def _run_script(container: dict, env: dict[str, str], bin_dir: Path, timeout: float = 20) -> subprocess.CompletedProcess:
    """A container's bash script run here, with its env (values given), fakes first on PATH."""
    script = container["args"][0]
    full = {"PATH": f"{bin_dir}:/usr/bin:/bin", **env}
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=timeout, env=full)


def test_the_weights_are_downloaded_once_by_a_job_the_servers_wait_for(tmp_path):
    """The pre-seed Job downloads into the volume and leaves the mark the servers' init container waits for; the
    servers run offline. Run for real: the Job's script with a fake `hf`, then the wait script, which returns only
    once the mark exists."""
    out = _plan_repo(tmp_path, "repo", model="Qwen/Qwen3-8B", gpu="l4-24gb")
    job = yaml.safe_load((out / "k8s" / "preseed-job.yaml").read_text())
    download = _pod(job)["containers"][0]
    server = _pod(yaml.safe_load((out / "k8s" / "deployment.yaml").read_text()))
    wait = server["initContainers"][0]
    env_of = lambda c: {e["name"]: e["value"] for e in c["env"] if "value" in e}  # noqa: E731
    mark = env_of(download)["WEIGHTS_MARK"]
    assert mark == env_of(wait)["WEIGHTS_MARK"] == "/models/.preseeded/Qwen--Qwen3-8B"
    assert env_of(server["containers"][0])["HF_HUB_OFFLINE"] == "1"
    assert "preseed-job.yaml" in yaml.safe_load((out / "k8s" / "kustomization.yaml").read_text())["resources"]
    # the Job's pod is no server: the Service, PDB and NetworkPolicy select app.kubernetes.io/name=<app>, not it
    assert _pod(job) and job["spec"]["template"]["metadata"]["labels"]["app.kubernetes.io/name"] == "qwen3-8b-preseed"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "hf-calls"
    (bin_dir / "hf").write_text(f'#!/bin/sh\necho "$@" >> {calls}\n')
    (bin_dir / "hf").chmod(0o755)
    local_mark = str(tmp_path / "models" / ".preseeded" / "Qwen--Qwen3-8B")
    env = {**env_of(download), "WEIGHTS_MARK": local_mark}
    waiting = subprocess.Popen(["bash", "-c", wait["args"][0].replace("sleep 10", "sleep 0.2")],
                               env={"PATH": "/usr/bin:/bin", "WEIGHTS_MARK": local_mark}, stdout=subprocess.PIPE, text=True)
    with pytest.raises(subprocess.TimeoutExpired):  # no mark yet: the server pod is still held
        waiting.wait(timeout=0.5)
    done = _run_script(download, env, bin_dir)
    assert done.returncode == 0, done.stderr
    assert calls.read_text().split() == ["download", "Qwen/Qwen3-8B", "--exclude", "original/*", "--exclude", "*.pth"]
    assert Path(local_mark).exists() and waiting.wait(timeout=10) == 0


def test_the_model_volume_is_shared_only_when_pods_share_it_and_takes_the_storage_class(tmp_path):
    """One replica: ReadWriteOnce from the default class; several: ReadWriteMany, from storage_class when given; a
    class name that is no Kubernetes name is refused in one line."""
    one = yaml.safe_load((_plan_repo(tmp_path, "one", model="Qwen/Qwen3-8B", gpu="h100-sxm-80gb", peak_concurrency=4, replicas=1)
                          / "k8s" / "pvc.yaml").read_text())
    assert one["spec"]["accessModes"] == ["ReadWriteOnce"] and "storageClassName" not in one["spec"]
    many = _plan_repo(tmp_path, "many", model="Qwen/Qwen3-8B", gpu="l4-24gb", peak_concurrency=64, storage_class="filestore-rwx")
    pvc = yaml.safe_load((many / "k8s" / "pvc.yaml").read_text())
    assert pvc["spec"]["accessModes"] == ["ReadWriteMany"] and pvc["spec"]["storageClassName"] == "filestore-rwx"
    bad = run_main("plan", "--answers", str(answers(tmp_path, model="Qwen/Qwen3-8B", storage_class="Fast SSD")),
                   "--out", str(tmp_path / "bad"))
    assert_one_line_error(bad, "storage_class", "Fast SSD")
    assert not (tmp_path / "bad").exists()


def test_the_server_image_is_pinned_by_tag_and_a_digest_or_mirror_replaces_it_everywhere(tmp_path):
    """By default vLLM's own image at the pinned release's tag, and the README says how to pin its digest; the
    answers key server_image (a mirror, a digest) is what every pod runs; a malformed reference is one line, exit 2,
    nothing written."""
    plain = _plan_repo(tmp_path, "plain", model="Qwen/Qwen3-8B", gpu="l4-24gb")
    images = {c["image"] for p in (plain / "k8s").glob("*.yaml") for d in yaml.safe_load_all(p.read_text())
              if d and d.get("kind") in ("Deployment", "Job")
              for c in (*_pod(d).get("initContainers", []), *_pod(d)["containers"])}
    assert images == {"vllm/vllm-openai:v0.33.0"}
    readme = " ".join((plain / "README.md").read_text().split())
    assert "pinned by its tag" in readme and "`server_image`" in readme and "crane digest vllm/vllm-openai:v0.33.0" in readme

    ref = "registry.example.com:5000/mirror/vllm-openai:v0.33.0@sha256:" + "0123456789abcdef" * 4
    pinned = _plan_repo(tmp_path, "pinned", model="Qwen/Qwen3-8B", gpu="l4-24gb", server_image=ref)
    images = {c["image"] for p in (pinned / "k8s").glob("*.yaml") for d in yaml.safe_load_all(p.read_text())
              if d and d.get("kind") in ("Deployment", "Job")
              for c in (*_pod(d).get("initContainers", []), *_pod(d)["containers"])}
    assert images == {ref}
    assert "pinned by digest" in (pinned / "README.md").read_text()
    assert yaml.safe_load((pinned / "answers.yaml").read_text())["server_image"] == ref  # replays

    out = tmp_path / "bad"
    for bad in ("vllm/vllm-openai:v0.33.0;rm -rf /", "Vllm/Upper:tag", "vllm/vllm-openai@sha256:abc"):
        r = run_main("plan", "--answers", str(answers(tmp_path, model="Qwen/Qwen3-8B", server_image=bad)), "--out", str(out))
        assert_one_line_error(r, "server_image", bad)
        assert not out.exists()
