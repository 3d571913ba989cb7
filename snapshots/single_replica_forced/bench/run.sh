#!/usr/bin/env bash
# Load test of the deployed Qwen/Qwen3-8B endpoint at the plan's peak, with vLLM 0.33.0's own client
# (`vllm bench serve`): 8 requests in flight, 1000-token prompts and 200-token outputs (the
# typical lengths the plan sized), 200 requests.
# The clients join one by one, Poisson arrivals at 1.81 requests/s (1.25 × the requests/s the plan
# predicts at the peak), so the peak is reached without sending every prompt at once: identical requests started
# together would finish and restart together, a burst of prompts every wave.
# The result JSON is what
# `llm-deploy-wizard check-bench RESULT.json --plan plan.json` compares with the plan's predictions and targets.
# Written by llm-deploy-wizard; the numbers are in RATIONALE.md.
#
# Every run sends new prompts (a fresh --seed; `vllm bench serve` would otherwise draw the same random prompts, seed
# 0, every time): vLLM keeps the KV of prompts it has served (prefix caching, on by default), so a second run of the
# same prompts against the same server prefills almost nothing and its TTFT would not measure the plan's.
# BENCH_SEED=N bench/run.sh repeats a run's prompts on purpose; the seed is saved in the result JSON.
#
# Usage: bench/run.sh [BASE_URL]   (the endpoint clients use: the Service, ingress or gateway in front of all the
# replicas — a `kubectl port-forward` reaches one pod, which would carry the whole peak alone; default
# http://127.0.0.1:8000)
# Needs: pip install "vllm==0.33.0" on the client machine; the key in VLLM_API_KEY (sent as OPENAI_API_KEY).
set -euo pipefail

BASE_URL="${1:-${BASE_URL:-http://127.0.0.1:8000}}"
RESULT="${RESULT:-bench/result.json}"
# shellcheck disable=SC2016,SC1003  # single-quoted literals: nothing in a model id or name expands
TOKENIZER=Qwen/Qwen3-8B
# shellcheck disable=SC2016,SC1003
SERVED_MODEL_NAME=Qwen/Qwen3-8B
export OPENAI_API_KEY="${OPENAI_API_KEY:-${VLLM_API_KEY:-}}"
BENCH_SEED="${BENCH_SEED:-$((RANDOM * 32768 + RANDOM))}"
case "$BENCH_SEED" in  # digits, at most ten of them, below 2^32 (numpy's seed range)
  *[!0-9]*|???????????*) SEED_OK=no ;;
  *) if (( 10#$BENCH_SEED < 4294967296 )); then SEED_OK=yes; else SEED_OK=no; fi ;;
esac
if [ "$SEED_OK" != yes ]; then
  echo "BENCH_SEED must be a whole number below 4294967296, got: $BENCH_SEED" >&2
  exit 2
fi
echo "prompts: seed $BENCH_SEED (BENCH_SEED=$BENCH_SEED bench/run.sh sends the same ones again)" >&2
mkdir -p "$(dirname "$RESULT")"

exec vllm bench serve \
  --backend openai-chat \
  --base-url "$BASE_URL" \
  --endpoint /v1/chat/completions \
  --model "$SERVED_MODEL_NAME" \
  --tokenizer "$TOKENIZER" \
  --dataset-name random \
  --seed "$BENCH_SEED" \
  --metadata "bench_seed=$BENCH_SEED" \
  --random-input-len 1000 \
  --random-output-len 200 \
  --ignore-eos \
  --num-prompts 200 \
  --request-rate 1.81 \
  --max-concurrency 8 \
  --percentile-metrics ttft,tpot,itl,e2el \
  --metric-percentiles 50,99 \
  --save-result \
  --result-dir "$(dirname "$RESULT")" \
  --result-filename "$(basename "$RESULT")"
