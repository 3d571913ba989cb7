#!/usr/bin/env bash
# Worker node of one 2-node replica of meta-llama/Llama-3.1-405B-Instruct (vLLM 0.33.0, Ray backend).
# Waits until the head (serve/head.sh) answers, then joins its Ray cluster and stays up.
set -euo pipefail

HEAD_ADDRESS="${HEAD_ADDRESS:?set HEAD_ADDRESS to the head node address}"
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

if ! command -v ray >/dev/null 2>&1; then
  echo "error: ray is not installed: vLLM's Ray backend needs it (pip install ray)" >&2
  exit 1
fi

# A worker that starts before the head's GCS is up never joins: wait for it.
deadline=$((SECONDS + JOIN_TIMEOUT_S))
until ray health-check --address "$HEAD_ADDRESS:$RAY_PORT" >/dev/null 2>&1; do
  if [ "$SECONDS" -ge "$deadline" ]; then
    echo "error: the head at $HEAD_ADDRESS:$RAY_PORT did not answer within ${JOIN_TIMEOUT_S}s" >&2
    exit 1
  fi
  sleep 5
done

exec ray start --address="$HEAD_ADDRESS:$RAY_PORT" --node-ip-address="$VLLM_HOST_IP" \
  --object-store-memory=8589934592 --block
