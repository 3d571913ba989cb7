"""The artifact checks pass small correct manifests and scripts, and catch each planted defect."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from artifact_checks import (check_bash, check_lws, check_manifests, check_scaled_object, check_vllm_args,
                             check_yaml_lint, custom_checks, custom_problems, extended_checks, extended_problems,
                             lws_problems, manifest_problems, serve_command)

SERVED = "llama-8b"
MODEL = "meta-llama/Llama-3.1-8B-Instruct"
# deploy-checklist §2.3: the readiness probe is one real 1-token inference with the served name and the API key.
READY = ("import json,os,sys,urllib.request as u\nh={'Content-Type':'application/json'}\n"
         "k=os.environ.get('VLLM_API_KEY')\nh.update({'Authorization':'Bearer '+k} if k else {})\n"
         "b=json.dumps({'model':os.environ['SERVED_MODEL_NAME'],'prompt':'ping','max_tokens':1,"
         "'temperature':0}).encode()\n"
         "r=u.urlopen(u.Request('http://127.0.0.1:8000/v1/completions',b,h),timeout=20)\n"
         "sys.exit(0 if r.status==200 else 1)\n")


def secret(name: str, key: str) -> dict[str, Any]:
    return {"secretKeyRef": {"name": name, "key": key, "optional": True}}


def vllm_container(args: list[str], *, gpus: int, shm_mem: str, headless: bool = False) -> dict[str, Any]:
    c: dict[str, Any] = {
        "name": "vllm",
        "image": "vllm/vllm-openai:v0.33.0",
        "command": ["vllm", "serve"],
        "args": args,
        "ports": [{"name": "http", "containerPort": 8000}],
        "env": [
            {"name": "SERVED_MODEL_NAME", "value": SERVED},
            {"name": "VLLM_ENGINE_READY_TIMEOUT_S", "value": "900"},
            {"name": "HF_TOKEN", "valueFrom": secret("hf-token", "token")},
            {"name": "VLLM_API_KEY", "valueFrom": secret("vllm-api-key", "key")},
            {"name": "HOME", "value": "/cache/home"},
            {"name": "HF_HOME", "value": "/cache/hf"},
            {"name": "VLLM_CACHE_ROOT", "value": "/cache/vllm"},
            {"name": "XDG_CACHE_HOME", "value": "/cache/xdg"},
        ],
        "resources": {"requests": {"cpu": "6", "memory": shm_mem, "nvidia.com/gpu": gpus},
                      "limits": {"memory": shm_mem, "nvidia.com/gpu": gpus}},
        "volumeMounts": [{"name": "dshm", "mountPath": "/dev/shm"}, {"name": "cache", "mountPath": "/cache"}],
        "securityContext": {"runAsNonRoot": True, "allowPrivilegeEscalation": False,
                            "capabilities": {"drop": ["ALL"]}, "seccompProfile": {"type": "RuntimeDefault"}},
    }
    if not headless:
        c |= {
            "startupProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10,
                             "timeoutSeconds": 5, "failureThreshold": 90},
            "readinessProbe": {"exec": {"command": ["python3", "-c", READY]}, "periodSeconds": 30,
                               "timeoutSeconds": 25, "failureThreshold": 3},
            "livenessProbe": {"httpGet": {"path": "/health", "port": "http"}, "periodSeconds": 10,
                              "timeoutSeconds": 5, "failureThreshold": 3},
            "lifecycle": {"preStop": {"sleep": {"seconds": 15}}},
        }
    return c


def pod_spec(container: dict[str, Any], shm: str) -> dict[str, Any]:
    return {
        "enableServiceLinks": False,
        "terminationGracePeriodSeconds": 60,
        "containers": [container],
        "volumes": [{"name": "dshm", "emptyDir": {"medium": "Memory", "sizeLimit": shm}},
                    {"name": "cache", "persistentVolumeClaim": {"claimName": "model-cache"}}],
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
        "nodeSelector": {"nvidia.com/gpu.product": "NVIDIA-L4"},
    }


SERVE_ARGS = [MODEL, "--served-model-name", "$(SERVED_MODEL_NAME)", "--host", "0.0.0.0", "--port", "8000",
              "--max-model-len", "8192", "--max-num-seqs", "64", "--gpu-memory-utilization", "0.9",
              "--shutdown-timeout", "30", "--disable-access-log-for-endpoints", "/health,/metrics"]


def single_node() -> list[dict[str, Any]]:
    """Deployment + Service + PDB + HPA of a correct one-GPU repo."""
    labels = {"app.kubernetes.io/name": "llama"}
    return [
        {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "llama", "labels": labels},
         "spec": {"replicas": 2, "selector": {"matchLabels": labels}, "progressDeadlineSeconds": 1500,
                  "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 1}},
                  "template": {"metadata": {"labels": labels},
                               "spec": pod_spec(vllm_container(list(SERVE_ARGS), gpus=1, shm_mem="40Gi"), "2Gi")}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "llama-api"},
         "spec": {"selector": labels, "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}},
        {"apiVersion": "policy/v1", "kind": "PodDisruptionBudget", "metadata": {"name": "llama"},
         "spec": {"maxUnavailable": 1, "selector": {"matchLabels": labels}}},
        {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": "llama"},
         "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "llama"},
                  "minReplicas": 1, "maxReplicas": 4,
                  "metrics": [{"type": "Pods", "pods": {"metric": {"name": "vllm_num_requests_waiting"},
                                                        "target": {"type": "AverageValue", "averageValue": "5"}}}],
                  "behavior": {"scaleDown": {"stabilizationWindowSeconds": 600}}}},
    ]


def scaled_object() -> dict[str, Any]:
    return {"apiVersion": "keda.sh/v1alpha1", "kind": "ScaledObject", "metadata": {"name": "llama"},
            "spec": {"scaleTargetRef": {"name": "llama"}, "minReplicaCount": 1, "maxReplicaCount": 4,
                     "cooldownPeriod": 360,
                     "triggers": [{"type": "prometheus", "metadata": {
                         "serverAddress": "http://prometheus.monitoring:9090",
                         "query": f'sum(vllm:num_requests_waiting{{model_name="{SERVED}"}})', "threshold": "5"}}]}}


def multi_node() -> list[dict[str, Any]]:
    """LeaderWorkerSet (mp launch, TP 8 × PP 2 on 2 nodes) + leader Service."""
    dist = ["-tp", "8", "-pp", "2", "--distributed-executor-backend", "mp", "--nnodes", "$(LWS_GROUP_SIZE)",
            "--master-addr", "$(LWS_LEADER_ADDRESS)", "--master-port", "29501"]
    leader = vllm_container(SERVE_ARGS + dist + ["--node-rank", "0"], gpus=8, shm_mem="200Gi")
    worker = vllm_container(SERVE_ARGS + dist + ["--node-rank", "$(LWS_WORKER_INDEX)", "--headless"], gpus=8,
                            shm_mem="200Gi", headless=True)
    host_ip = {"name": "VLLM_HOST_IP", "valueFrom": {"fieldRef": {"fieldPath": "status.podIP"}}}
    leader["env"].append(host_ip)
    worker["env"].append(host_ip)
    worker_spec = pod_spec(worker, "16Gi")
    worker_spec["terminationGracePeriodSeconds"] = 30
    return [
        {"apiVersion": "leaderworkerset.x-k8s.io/v1", "kind": "LeaderWorkerSet", "metadata": {"name": "llama-70b"},
         "spec": {"replicas": 1, "startupPolicy": "LeaderCreated",
                  "leaderWorkerTemplate": {
                      "size": 2, "restartPolicy": "RecreateGroupOnPodRestart",
                      "leaderTemplate": {"metadata": {"labels": {"role": "leader"}},
                                         "spec": pod_spec(leader, "16Gi")},
                      "workerTemplate": {"spec": worker_spec}}}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "llama-70b-api"},
         "spec": {"selector": {"leaderworkerset.sigs.k8s.io/name": "llama-70b", "role": "leader"},
                  "ports": [{"name": "http", "port": 80, "targetPort": "http"}]}},
    ]


def write(tmp_path: Path, name: str, docs: list[dict[str, Any]]) -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump_all(docs, sort_keys=False), encoding="utf-8")
    return path


def deployment(docs: list[dict[str, Any]]) -> dict[str, Any]:
    return next(d for d in docs if d["kind"] in ("Deployment", "LeaderWorkerSet"))


def container_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    d = deployment(docs)
    if d["kind"] == "Deployment":
        return d["spec"]["template"]["spec"]["containers"][0]
    return d["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]


def pod_of(docs: list[dict[str, Any]]) -> dict[str, Any]:
    d = deployment(docs)
    if d["kind"] == "Deployment":
        return d["spec"]["template"]["spec"]
    return d["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]


# ---------------------------------------------------------------------------------------------- passing repos


def test_single_node_repo_passes_every_check(tmp_path):
    docs = single_node()
    paths = [write(tmp_path, "deployment.yaml", docs[:2]), write(tmp_path, "scaling.yaml", docs[2:]),
             write(tmp_path, "keda.yaml", [scaled_object()])]
    parsed = check_manifests(paths)  # one in-process kubernetes-validate pass over all files
    assert [d["kind"] for d in parsed] == ["Deployment", "Service", "PodDisruptionBudget",
                                           "HorizontalPodAutoscaler", "ScaledObject"]
    check_yaml_lint(paths)
    custom_checks(parsed)
    extended_checks(parsed)
    check_vllm_args(SERVE_ARGS)


def test_multi_node_repo_passes_every_check(tmp_path):
    docs = multi_node()
    parsed = check_manifests([write(tmp_path, "lws.yaml", docs)])
    check_lws(parsed[0])
    custom_checks(parsed)
    extended_checks(parsed)


def test_ray_leader_script_is_read_for_its_vllm_argv():
    script = ('set -euo pipefail\nray start --head --port=6379\n'
              'until [ "$(ray status 2>/dev/null | grep -c node_)" -ge "$LWS_GROUP_SIZE" ]; do sleep 5; done\n'
              'exec vllm serve "$MODEL" --served-model-name "$(SERVED_MODEL_NAME)" \\\n'
              '  --max-model-len "$MAX_MODEL_LEN" -tp 8 -pp 2 --distributed-executor-backend ray\n')
    argv, source = serve_command({"command": ["/bin/bash", "-c", script]})
    assert source == "script"
    assert argv == ["$MODEL", "--served-model-name", "$(SERVED_MODEL_NAME)", "--max-model-len", "$MAX_MODEL_LEN",
                    "-tp", "8", "-pp", "2", "--distributed-executor-backend", "ray"]
    check_vllm_args(argv)


# ---------------------------------------------------------------------------------------------- schemas


def test_strict_validation_catches_a_typo_in_a_core_manifest():
    docs = single_node()
    container_of(docs)["startupProbe"]["failureThresholds"] = 90
    problems = manifest_problems(docs)
    assert len(problems) == 1
    assert "Deployment/llama" in problems[0] and "failureThresholds" in problems[0]
    assert "Additional properties are not allowed" in problems[0]


def test_check_manifests_raises_on_files(tmp_path):
    docs = single_node()
    docs[1]["spec"]["ports"][0]["port"] = "eighty"
    with pytest.raises(AssertionError, match="Service/llama-api.*eighty"):
        check_manifests([write(tmp_path, "bad.yaml", docs)])


def test_a_kind_without_schema_is_not_silently_valid():
    monitor = {"apiVersion": "monitoring.coreos.com/v1", "kind": "ServiceMonitor", "metadata": {"name": "m"},
               "spec": {"endpoints": [{"port": "http"}]}}
    assert "not validated" in manifest_problems([monitor])[0]
    assert manifest_problems([monitor], allow_unvalidated=["ServiceMonitor"]) == []


def test_lws_schema_reports_every_error():
    lws = multi_node()[0]
    lws["spec"]["startupPolicy"] = "LeaderFirst"
    lws["spec"]["leaderWorkerTemplate"]["size"] = "two"
    lws["spec"]["leaderWorkerTemplate"]["sise"] = 2
    pod_of([lws])["containers"][0]["readinessProbe"]["periodSecond"] = 30
    lws["metadata"]["lables"] = {"app": "x"}
    text = "\n".join(lws_problems(lws))
    assert "'LeaderFirst' is not one of ['LeaderCreated', 'LeaderReady']" in text
    assert "'two' is not of type 'integer'" in text
    assert "'sise' was unexpected" in text
    assert "'periodSecond' was unexpected" in text
    assert "metadata: Additional properties are not allowed ('lables' was unexpected)" in text


def test_lws_leader_ready_is_refused_by_check_lws_and_custom_checks():
    docs = multi_node()
    docs[0]["spec"]["startupPolicy"] = "LeaderReady"
    with pytest.raises(AssertionError, match="LeaderReady deadlocks"):
        check_lws(docs[0])
    assert any("[item 20]" in p and "LeaderReady" in p for p in custom_problems(docs))


def test_lws_wrong_api_version_is_reported():
    lws = multi_node()[0]
    lws["apiVersion"] = "leaderworkerset.x-k8s.io/v1beta1"
    assert "is not served" in lws_problems(lws)[0]


def test_scaled_object_schema():
    check_scaled_object(scaled_object())
    bad = scaled_object()
    bad["spec"]["triggers"][0]["metadata"]["threshold"] = 5  # KEDA metadata values are strings
    bad["spec"]["minReplicas"] = 1  # HPA spelling, not KEDA's
    with pytest.raises(AssertionError) as e:
        check_scaled_object(bad)
    assert "5 is not of type 'string'" in str(e.value) and "'minReplicas' was unexpected" in str(e.value)


# ---------------------------------------------------------------------------------------------- shell and YAML


def test_shellcheck_passes_a_clean_script_and_flags_an_unquoted_variable(tmp_path):
    good = tmp_path / "serve.sh"
    good.write_text('#!/usr/bin/env bash\nset -euo pipefail\nMODEL="${MODEL:-meta-llama/Llama-3.1-8B}"\n'
                    'exec vllm serve "$MODEL" --max-model-len "${MAX_MODEL_LEN:-8192}"\n')
    bad = tmp_path / "bad.sh"
    bad.write_text('#!/usr/bin/env bash\nMODEL=$1\ncd /models\nvllm serve $MODEL\n')
    check_bash(good)
    with pytest.raises(AssertionError) as e:
        check_bash(good, bad)
    assert "SC2086" in str(e.value) and "bad.sh" in str(e.value) and "serve.sh" not in str(e.value)


def test_bash_syntax_error_is_reported(tmp_path):
    broken = tmp_path / "broken.sh"
    broken.write_text('#!/usr/bin/env bash\nif [ -n "$1" ]; then\n  echo hi\n')
    with pytest.raises(AssertionError, match="bash -n"):
        check_bash(broken)


def test_yamllint_catches_duplicate_keys_that_pyyaml_accepts(tmp_path):
    dup = tmp_path / "dup.yaml"
    dup.write_text("apiVersion: v1\nkind: Service\nmetadata:\n  name: a\n  name: b\n")
    with pytest.raises(AssertionError, match="key-duplicates"):
        check_yaml_lint([dup])


# ---------------------------------------------------------------------------------------------- custom rules


def _set_args(docs, args):
    container_of(docs)["args"] = args


def _gpu_requests_ne_limits(docs):
    container_of(docs)["resources"]["requests"]["nvidia.com/gpu"] = 2


def _gpu_only_in_requests(docs):
    del container_of(docs)["resources"]["limits"]["nvidia.com/gpu"]


def _service_named_vllm(docs):
    docs[1]["metadata"]["name"] = "vllm"


def _service_links_on(docs):
    del pod_of(docs)["enableServiceLinks"]


def _grace_too_short(docs):
    pod_of(docs)["terminationGracePeriodSeconds"] = 45  # == 15 s preStop + 30 s --shutdown-timeout


def _no_prestop(docs):
    del container_of(docs)["lifecycle"]


def _engine_timeout_short(docs):
    next(e for e in container_of(docs)["env"] if e["name"] == "VLLM_ENGINE_READY_TIMEOUT_S")["value"] = "600"


def _engine_timeout_unset(docs):
    container_of(docs)["env"] = [e for e in container_of(docs)["env"] if e["name"] != "VLLM_ENGINE_READY_TIMEOUT_S"]


def _no_startup_probe(docs):
    del container_of(docs)["startupProbe"]


def _initial_delay(docs):
    container_of(docs)["readinessProbe"]["initialDelaySeconds"] = 120


def _readiness_on_health(docs):
    container_of(docs)["readinessProbe"] = {"httpGet": {"path": "/health", "port": "http"}}


def _liveness_runs_inference(docs):
    container_of(docs)["livenessProbe"] = copy.deepcopy(container_of(docs)["readinessProbe"])


def _served_name_mismatch(docs):
    next(e for e in container_of(docs)["env"] if e["name"] == "SERVED_MODEL_NAME")["value"] = "other"
    _set_args(docs, [MODEL, "--served-model-name", SERVED] + SERVE_ARGS[3:])


def _probe_priority_without_policy(docs):
    script = READY.replace("'max_tokens':1", "'max_tokens':1,'priority':-1").replace('"max_tokens": 1', '"max_tokens": 1, "priority": -1')
    assert "priority" in script
    container_of(docs)["readinessProbe"]["exec"]["command"] = ["python3", "-c", script]


def test_a_priority_probe_passes_when_the_server_schedules_by_priority():
    """vLLM rejects a request priority unless --scheduling-policy priority: the probe may carry one only then."""
    docs = single_node()
    _probe_priority_without_policy(docs)
    assert any("must not send a priority" in p for p in custom_problems(docs))
    container_of(docs)["args"] = list(container_of(docs)["args"]) + ["--scheduling-policy", "priority"]
    assert custom_problems(docs) == []


def _probe_without_key(docs):
    script = READY.replace("k=os.environ.get('VLLM_API_KEY')\nh.update({'Authorization':'Bearer '+k} if k else {})\n",
                           "")
    container_of(docs)["readinessProbe"]["exec"]["command"] = ["python3", "-c", script]


def _probe_timeout_short(docs):
    container_of(docs)["readinessProbe"]["timeoutSeconds"] = 10


def _tp_mismatch(docs):
    _set_args(docs, SERVE_ARGS + ["--tensor-parallel-size", "2"])


def _shm_not_in_limit(docs):
    container_of(docs)["resources"]["limits"]["memory"] = "2Gi"


def _no_shm(docs):
    container_of(docs)["volumeMounts"] = container_of(docs)["volumeMounts"][1:]


def _removed_flag(docs):
    _set_args(docs, SERVE_ARGS + ["--swap-space", "4"])


def _api_key_flag(docs):
    _set_args(docs, SERVE_ARGS + ["--api-key", "sk-123"])


def _literal_hf_token(docs):
    next(e for e in container_of(docs)["env"] if e["name"] == "HF_TOKEN").update(value="hf_abc", valueFrom=None)
    next(e for e in container_of(docs)["env"] if e["name"] == "HF_TOKEN").pop("valueFrom")


def _no_command(docs):
    c = container_of(docs)
    c["args"] = ["vllm", "serve"] + c["args"]
    del c["command"]


def _deprecated_entrypoint(docs):
    container_of(docs)["command"] = ["python3", "-m", "vllm.entrypoints.openai.api_server"]
    _set_args(docs, ["--model", MODEL] + SERVE_ARGS[1:])


def _selector_mismatch(docs):
    docs[0]["spec"]["selector"]["matchLabels"] = {"app": "other"}


def _service_selects_nothing(docs):
    docs[1]["spec"]["selector"] = {"app": "typo"}


def _service_target_port(docs):
    docs[1]["spec"]["ports"][0]["targetPort"] = "web"


def _stale_metric(docs):
    docs[3]["spec"]["metrics"][0]["pods"]["metric"]["name"] = "vllm_gpu_cache_usage_perc"


def _colon_metric(docs):
    docs[3]["spec"]["metrics"][0]["pods"]["metric"]["name"] = "vllm:num_requests_waiting"


def _cpu_metric(docs):
    docs[3]["spec"]["metrics"] = [{"type": "Resource", "resource": {
        "name": "cpu", "target": {"type": "Utilization", "averageUtilization": 70}}}]


def _short_stabilization(docs):
    docs[3]["spec"]["behavior"]["scaleDown"]["stabilizationWindowSeconds"] = 60


def _hpa_target_missing(docs):
    docs[3]["spec"]["scaleTargetRef"]["name"] = "llama-old"


def _keda_model_label(docs):
    docs.append(scaled_object())
    docs[-1]["spec"]["triggers"][0]["metadata"]["query"] = 'sum(vllm:num_requests_waiting{model="llama-8b"})'


def _keda_stale_metric(docs):
    docs.append(scaled_object())
    docs[-1]["spec"]["triggers"][0]["metadata"]["query"] = "avg(vllm:gpu_cache_usage_perc)"


def _keda_scale_to_zero(docs):
    docs.append(scaled_object())
    del docs[-1]["spec"]["minReplicaCount"]


DEFECTS: list[tuple[Callable[[list[dict[str, Any]]], None], str]] = [
    (_gpu_requests_ne_limits, "[item 7] nvidia.com/gpu requests (2) != limits (1)"),
    (_gpu_only_in_requests, "[item 7] nvidia.com/gpu is requested but not limited"),
    (_service_named_vllm, "[item 14] never name a Service `vllm`"),
    (_service_links_on, "[item 14] set enableServiceLinks: false"),
    (_grace_too_short, "[item 13] terminationGracePeriodSeconds 45 must exceed preStop 15 s + --shutdown-timeout 30"),
    (_no_prestop, "[item 13] add a preStop sleep"),
    (_engine_timeout_short, "[item 4] VLLM_ENGINE_READY_TIMEOUT_S 600 < the startup budget 900 s"),
    (_engine_timeout_unset, "[item 4] VLLM_ENGINE_READY_TIMEOUT_S unset (default 600) < the startup budget 900 s"),
    (_no_startup_probe, "[item 3] add a startupProbe"),
    (_initial_delay, "[item 3] readinessProbe has initialDelaySeconds 120"),
    (_readiness_on_health, "[item 5] the readinessProbe must run a real inference"),
    (_liveness_runs_inference, "[item 6] the livenessProbe must not run inference"),
    (_served_name_mismatch, "[item 5] SERVED_MODEL_NAME 'other' != --served-model-name 'llama-8b'"),
    (_probe_without_key, "[item 5] an API key is set but the readinessProbe sends none"),
    (_probe_priority_without_policy, "[probes] the readinessProbe must not send a priority"),
    (_probe_timeout_short, "[probes] readinessProbe timeoutSeconds 10 must exceed the in-script timeout 20"),
    (_tp_mismatch, "[item 7] TP 2 × PP 1 = 2 GPUs, but the group has 1 GPU(s) per pod × 1 pod(s)"),
    (_shm_not_in_limit, "[item 8] memory limit 2Gi does not include the /dev/shm sizeLimit 2Gi"),
    (_no_shm, "[item 8] mount a Memory emptyDir at /dev/shm"),
    (_removed_flag, "[item 2] vllm serve: --swap-space: removed from vLLM"),
    (_api_key_flag, "[item 2] vllm serve: --api-key: the API key must not be on the command line"),
    (_literal_hf_token, "[item 11] HF_TOKEN is a literal value"),
    (_no_command, "[item 1] set command explicitly"),
    (_deprecated_entrypoint, "[item 1] python -m vllm.entrypoints.openai.api_server is deprecated"),
    (_selector_mismatch, "[consistency] spec.selector"),
    (_service_selects_nothing, "Service/llama-api: [consistency] selector {'app': 'typo'} matches no pod template"),
    (_service_target_port, "[item 15] targetPort 'web' is not a port of the selected containers"),
    (_stale_metric, "[item 19] HPA metric 'vllm_gpu_cache_usage_perc' is not a vLLM 0.33.0 metric"),
    (_colon_metric, "[item 19] HPA metric 'vllm:num_requests_waiting': custom metric names cannot carry ':'"),
    (_cpu_metric, "[item 19] scale on vLLM queue metrics, not Resource cpu"),
    (_short_stabilization, "[item 19] scaleDown stabilizationWindowSeconds 60 < 300"),
    (_hpa_target_missing, "[consistency] scaleTargetRef Deployment/llama-old is not in the repo"),
    (_keda_model_label, "[item 19] query filters on label `model`"),
    (_keda_stale_metric, "[item 19] 'vllm:gpu_cache_usage_perc' is not a vLLM 0.33.0 metric"),
    (_keda_scale_to_zero, "[item 19] minReplicaCount 0"),
]


@pytest.mark.parametrize(("plant", "expected"), DEFECTS, ids=[f.__name__.strip("_") for f, _ in DEFECTS])
def test_custom_checks_catch_each_planted_defect(plant, expected):
    docs = single_node()
    assert custom_problems(docs) == []
    plant(docs)
    problems = custom_problems(docs)
    assert any(expected in p for p in problems), "\n".join(problems)
    with pytest.raises(AssertionError):
        custom_checks(docs)


def test_lws_defects():
    docs = multi_node()
    assert custom_problems(docs) == []
    worker = docs[0]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]["containers"][0]
    worker["livenessProbe"] = {"httpGet": {"path": "/health", "port": "http"}}
    docs[0]["spec"]["leaderWorkerTemplate"]["restartPolicy"] = "None"
    docs[0]["spec"]["leaderWorkerTemplate"]["size"] = 3  # TP 8 × PP 2 = 16 GPUs, not 8 × 3
    docs[1]["spec"]["selector"] = {"leaderworkerset.sigs.k8s.io/name": "llama-70b"}  # selects workers too
    text = "\n".join(custom_problems(docs))
    assert "(worker) container vllm: [probes] a worker (LWS worker or --headless rank) serves no HTTP" in text
    assert "[item 20] restartPolicy None" in text
    assert "TP 8 × PP 2 = 16 GPUs, but the group has 8 GPU(s) per pod × 3 pod(s)" in text
    assert "[item 20] the Service also selects LWS workers" in text


def test_serve_argv_override_is_checked():
    docs = single_node()
    problems = custom_problems(docs, serve_argv=SERVE_ARGS + ["--dtype", "bf16"])
    assert any("--dtype 'bf16': not one of the choices" in p for p in problems)


def test_extended_checks_catch_design_defects():
    docs = single_node()
    pod = pod_of(docs)
    del pod["tolerations"]
    pod["volumes"][1] = {"name": "cache", "emptyDir": {}}
    del container_of(docs)["securityContext"]["runAsNonRoot"]
    docs[0]["spec"]["replicas"] = 1
    docs[2]["spec"] = {"minAvailable": 1, "selector": docs[2]["spec"]["selector"]}
    del docs[0]["spec"]["strategy"]
    text = "\n".join(extended_problems(docs))
    assert "[item 16] tolerate the nvidia.com/gpu taint" in text
    assert "[item 10] HF cache /cache/hf is an emptyDir" in text
    assert "[item 12] runAsNonRoot: true" in text
    assert "[item 18] minAvailable 1 with 1 replica(s) blocks node drains" in text
    assert "[item 17] choose the rollout strategy explicitly" in text


def test_check_vllm_args_lists_every_problem():
    with pytest.raises(AssertionError) as e:
        check_vllm_args([MODEL, "--swap-space", "4", "--dtype", "bf16"])
    assert "--swap-space: removed" in str(e.value) and "bf16" in str(e.value)


def ray_multi_node() -> list[dict[str, Any]]:
    """The LWS of multi_node() on the Ray path: the leader runs a bash script, workers only `ray start`."""
    docs = multi_node()
    lwt = docs[0]["spec"]["leaderWorkerTemplate"]
    leader = lwt["leaderTemplate"]["spec"]["containers"][0]
    leader["command"] = ["/bin/bash", "-c", (
        'set -euo pipefail\nray start --head --port=6379\n'
        'until [ "$(ray status 2>/dev/null | grep -c node_)" -ge "$LWS_GROUP_SIZE" ]; do sleep 5; done\n'
        f'exec vllm serve {MODEL} --served-model-name "$(SERVED_MODEL_NAME)" --shutdown-timeout 30 \\\n'
        '  --max-model-len "$MAX_MODEL_LEN" -tp 8 -pp 2 --distributed-executor-backend ray\n')]
    del leader["args"]
    leader["env"].append({"name": "MAX_MODEL_LEN", "value": "8k"})
    worker = lwt["workerTemplate"]["spec"]["containers"][0]
    worker["command"] = ["/bin/bash", "-c", 'ray start --address="$LWS_LEADER_ADDRESS:6379" --block']
    del worker["args"]
    return docs


def test_ray_path_lws_passes_and_its_workers_are_checked_too():
    docs = ray_multi_node()
    assert manifest_problems(docs) == [] and custom_problems(docs) == [] and extended_problems(docs) == []
    worker = docs[0]["spec"]["leaderWorkerTemplate"]["workerTemplate"]["spec"]
    worker["containers"][0]["volumeMounts"] = []
    del worker["enableServiceLinks"]
    leader = docs[0]["spec"]["leaderWorkerTemplate"]["leaderTemplate"]["spec"]["containers"][0]
    next(e for e in leader["env"] if e["name"] == "MAX_MODEL_LEN")["value"] = "8 thousand"
    text = "\n".join(custom_problems(docs))
    assert "LeaderWorkerSet/llama-70b (worker) container vllm: [item 8] mount a Memory emptyDir at /dev/shm" in text
    assert "LeaderWorkerSet/llama-70b (worker): [item 14] set enableServiceLinks: false" in text
    assert "(leader) container vllm: [item 2] vllm serve: --max-model-len '8 thousand': not an integer" in text
