#!/usr/bin/env bash
# Head node of one 2-node replica of meta-llama/Llama-3.1-405B-Instruct (vLLM 0.33.0, Ray backend):
# TP 8 inside each node, PP 2 across the nodes — never TP across nodes (guide §3, §4).
# Start this first, then serve/worker.sh on each of the 1 other node(s) with HEAD_ADDRESS set.
# Every node needs the same image, driver, vLLM 0.33.0, Ray, and the weights (guide §4).
# The API key comes from the environment (VLLM_API_KEY), never from the command line.
set -euo pipefail

# shellcheck disable=SC2016,SC1003  # single-quoted literals: nothing in a model id or name expands
MODEL=meta-llama/Llama-3.1-405B-Instruct
# shellcheck disable=SC2016,SC1003
SERVED_MODEL_NAME=meta-llama/Llama-3.1-405B-Instruct
NODES=2
RAY_PORT="${RAY_PORT:-6379}"
JOIN_TIMEOUT_S="${JOIN_TIMEOUT_S:-900}"
# The address the other nodes reach: NETWORK_INTERFACE's, else the host's first non-loopback one. (`hostname -i`
# answers 127.0.1.1 on Debian and Ubuntu: vLLM, NCCL and Gloo would listen where no other node can connect.)
if [ -z "${VLLM_HOST_IP:-}" ]; then
  if [ -n "${NETWORK_INTERFACE:-}" ]; then  # several NICs: the one between the nodes, e.g. eth0 or ib0
    VLLM_HOST_IP="$(ip -4 -o addr show dev "$NETWORK_INTERFACE" | awk '{split($4, a, "/"); print a[1]; exit}')"
  else
    VLLM_HOST_IP="$(hostname -I | awk '{print $1}')"
  fi
fi
case "${VLLM_HOST_IP:-}" in
  "" | 127.*)
    echo "error: no routable address for this node (got '${VLLM_HOST_IP:-}'): set VLLM_HOST_IP or NETWORK_INTERFACE" >&2
    exit 1
    ;;
esac
export VLLM_HOST_IP
if [ -n "${NETWORK_INTERFACE:-}" ]; then
  export NCCL_SOCKET_IFNAME="$NETWORK_INTERFACE" GLOO_SOCKET_IFNAME="$NETWORK_INTERFACE"
fi
export VLLM_ENGINE_READY_TIMEOUT_S="${VLLM_ENGINE_READY_TIMEOUT_S:-2560}"

if ! command -v ray >/dev/null 2>&1; then
  echo "error: ray is not installed: vLLM's Ray backend needs it (pip install ray)" >&2
  exit 1
fi

# Ray keeps its object store in /dev/shm: bound it so it fits (8 GiB).
ray start --head --port="$RAY_PORT" --node-ip-address="$VLLM_HOST_IP" --object-store-memory=8589934592

# vLLM must start only when every node has joined, or the workers never get GPUs.
deadline=$((SECONDS + JOIN_TIMEOUT_S))
alive_nodes() {
  python3 -c 'import ray; ray.init(address="auto", logging_level="ERROR"); print(sum(1 for n in ray.nodes() if n["Alive"]))'
}
until [ "$(alive_nodes)" -ge "$NODES" ]; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "error: only $(alive_nodes) of $NODES nodes joined within ${JOIN_TIMEOUT_S}s: check worker.sh on each node" >&2
    exit 1
  fi
  sleep 5
done

exec vllm serve "$MODEL" \
  --served-model-name "$SERVED_MODEL_NAME" \
  --distributed-executor-backend ray \
  --host 0.0.0.0 \
  --port 8000 \
  --max-model-len 8192 \
  --max-num-seqs 1 \
  --gpu-memory-utilization 0.9 \
  --shutdown-timeout 30 \
  --disable-access-log-for-endpoints /health,/metrics \
  --scheduling-policy priority \
  --tensor-parallel-size 8 \
  --pipeline-parallel-size 2 \
  "$@"
