"""Offline batch of meta-llama/Llama-3.1-70B-Instruct with vLLM 0.33.0's offline API: no server, no probes (DOMAIN §12).

Usage: python serve/batch.py prompts.jsonl outputs.jsonl
Each input line is {"prompt": "..."} (other keys are copied to the output line); each output line adds "output".
Layout from the plan: TP 4 x PP 1.
"""

import json
import sys

from vllm import LLM, SamplingParams

MODEL = "meta-llama/Llama-3.1-70B-Instruct"
MAX_TOKENS = 512


def main() -> int:
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    source, target = sys.argv[1], sys.argv[2]
    with open(source, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    llm = LLM(
        model=MODEL,
        tensor_parallel_size=4,
        pipeline_parallel_size=1,
        max_model_len=8192,
        max_num_seqs=64,
        gpu_memory_utilization=0.9,
    )
    params = SamplingParams(max_tokens=MAX_TOKENS, temperature=0.0)
    outputs = llm.generate([row["prompt"] for row in rows], params)
    with open(target, "w", encoding="utf-8") as f:
        for row, out in zip(rows, outputs):
            f.write(json.dumps({**row, "output": out.outputs[0].text}, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
