#!/usr/bin/env bash
# Start meta-llama/Llama-3.1-8B-Instruct with vLLM 0.33.0 on one node: single_gpu, TP 1 x PP 1.
# Written by llm-deploy-wizard; the numbers behind every flag are in RATIONALE.md.
# Requires: vllm==0.33.0 (pip install "vllm==0.33.0") and 1 GPU(s).
# The API key comes from the environment (VLLM_API_KEY), never from the command line.
# Extra vLLM flags given to this script are passed on.
set -euo pipefail

# shellcheck disable=SC2016,SC1003  # single-quoted literals: nothing in a model id or name expands
MODEL=meta-llama/Llama-3.1-8B-Instruct
# shellcheck disable=SC2016,SC1003
SERVED_MODEL_NAME=meta-llama/Llama-3.1-8B-Instruct
export VLLM_ENGINE_READY_TIMEOUT_S="${VLLM_ENGINE_READY_TIMEOUT_S:-600}"

if [ -z "${VLLM_API_KEY:-}" ]; then
  echo "warning: VLLM_API_KEY is not set: the API will answer requests without a key" >&2
fi

exec vllm serve "$MODEL" \
  --served-model-name "$SERVED_MODEL_NAME" \
  --host 0.0.0.0 \
  --port 8000 \
  --max-model-len 4096 \
  --max-num-seqs 209 \
  --gpu-memory-utilization 0.9 \
  --shutdown-timeout 30 \
  --disable-access-log-for-endpoints /health,/metrics \
  --scheduling-policy priority \
  "$@"
