"""Offline batch of meta-llama/Llama-3.1-70B-Instruct with vLLM 0.33.0's offline API: no server, no probes (guide §12).

Usage: python serve/batch.py INPUT.jsonl OUTPUT.jsonl [--shard I --shards N] [--chunk-size R] [--max-tokens T]

Input: one JSON object per line, either
  {"prompt": "..."}            sent as is (llm.generate): plain text, no chat template;
  {"messages": [{"role": "user", "content": "..."}, ...]}
                               sent through the model's chat template (llm.chat): use this for instruct and
                               chat models, which answer badly to raw text.
An optional "id" names the row (default: its line number); other keys are copied to the output line, which adds
"output" and "finish_reason".

Streaming and resuming: rows are processed in chunks of --chunk-size and every chunk is appended to OUTPUT and
flushed before the next one starts. Run the same command again after an interruption: the ids already in OUTPUT are
skipped (a line cut off by the interruption is dropped and redone).

Copies: the plan runs one copy. To split the job over N copies (more GPUs), start copy I of N with
`--shard I --shards N` and its own CUDA_VISIBLE_DEVICES: it takes the rows whose line index (0-based) % N == I
and writes OUTPUT.I-of-N.jsonl beside OUTPUT; concatenate the parts at the end.
Layout from the plan: TP 4 x PP 1.
Engine limits: those the plan sized (RATIONALE.md), passed to LLM(...) below; the LLM class has other defaults
than `vllm serve`.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from vllm import LLM, SamplingParams

MODEL = "meta-llama/Llama-3.1-70B-Instruct"
SHARDS = 1  # copies of the job in the plan (replicas: enough for the deadline)
MAX_TOKENS = 512
CHUNK_ROWS = 256  # >= 4 x max_num_seqs: the engine's batch stays full inside a chunk
ENGINE = {
    "max_model_len": 8192,
    "max_num_seqs": 64,
    "gpu_memory_utilization": 0.9,
    "tensor_parallel_size": 4,
    "max_num_batched_tokens": 8192,
}


class InputProblem(Exception):
    """A row of the input that cannot be processed: one line for the user, exit 2."""


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0], epilog="See the module docstring.")
    parser.add_argument("input", type=Path, help="JSONL: one {\"prompt\": ...} or {\"messages\": [...]} per line")
    parser.add_argument("output", type=Path, help="JSONL the results are appended to (resumed if it exists)")
    parser.add_argument("--shard", type=int, default=0, help="which copy this is, 0 .. shards-1 (default 0)")
    parser.add_argument("--shards", type=int, default=SHARDS, help=f"copies of the job (default {SHARDS}: the plan's)")
    parser.add_argument("--chunk-size", type=int, default=CHUNK_ROWS, help=f"rows per chunk (default {CHUNK_ROWS})")
    parser.add_argument("--max-tokens", type=int, default=MAX_TOKENS,
                        help=f"output tokens per row (default {MAX_TOKENS})")
    parser.add_argument("--temperature", type=float, default=0.0, help="sampling temperature (default 0: greedy)")
    args = parser.parse_args(argv)
    if args.shards < 1:
        parser.error(f"--shards {args.shards}: expected 1 or more")
    if not 0 <= args.shard < args.shards:
        parser.error(f"--shard {args.shard}: expected 0 .. {args.shards - 1} (--shards {args.shards})")
    if args.chunk_size < 1:
        parser.error(f"--chunk-size {args.chunk_size}: expected 1 or more")
    if args.max_tokens < 1:
        parser.error(f"--max-tokens {args.max_tokens}: expected 1 or more")
    if not args.input.is_file():
        parser.error(f"input {args.input}: no such file")
    return args


def shard_output(output: Path, shard: int, shards: int) -> Path:
    """OUTPUT itself for one copy, else OUTPUT.I-of-N.jsonl beside it."""
    if shards == 1:
        return output
    stem = output.name[: -len(".jsonl")] if output.name.endswith(".jsonl") else output.name
    return output.with_name(f"{stem}.{shard}-of-{shards}.jsonl")


def key(row_id: object) -> str:
    return json.dumps(row_id, sort_keys=True, ensure_ascii=False)


def read_rows(path: Path, shard: int, shards: int):
    """(id, row) of this copy's rows, in input order; every row of the file is checked."""
    seen: set[str] = set()
    with path.open(encoding="utf-8") as f:
        for index, line in enumerate(f):
            if not line.strip():
                continue
            where = f"{path}:{index + 1}"
            try:
                row = json.loads(line)
            except json.JSONDecodeError as e:
                raise InputProblem(f"{where}: not JSON ({e.msg})") from None
            if not isinstance(row, dict):
                raise InputProblem(f"{where}: expected an object with \"prompt\" or \"messages\"")
            has_prompt, has_messages = "prompt" in row, "messages" in row
            if has_prompt == has_messages:
                raise InputProblem(f"{where}: expected exactly one of \"prompt\" (text) and \"messages\" (chat)")
            if has_prompt and not isinstance(row["prompt"], str):
                raise InputProblem(f"{where}: \"prompt\" must be a string")
            if has_messages and not (isinstance(row["messages"], list) and row["messages"]
                                     and all(isinstance(m, dict) and "role" in m for m in row["messages"])):
                raise InputProblem(f"{where}: \"messages\" must be a non-empty list of "
                                   "{\"role\": ..., \"content\": ...} objects")
            row_id = row.get("id", index + 1)
            if key(row_id) in seen:
                raise InputProblem(f"{where}: id {key(row_id)} appears twice: ids must be unique to resume")
            seen.add(key(row_id))
            if index % shards == shard:
                yield row_id, row


def done_ids(path: Path) -> set[str]:
    """Ids already in the output; a last line cut off by an interruption is removed (it is redone)."""
    done: set[str] = set()
    if not path.exists():
        return done
    good = 0  # bytes up to the end of the last complete line
    with path.open("rb") as f:
        for line in f:
            if not line.endswith(b"\n"):
                break  # the last line, cut off by an interruption
            try:
                done.add(key(json.loads(line)["id"]))
            except (ValueError, KeyError, TypeError):
                raise InputProblem(f"{path}: the line at byte {good} is not an output of this script") from None
            good += len(line)
    if good < path.stat().st_size:
        with path.open("rb+") as f:
            f.truncate(good)
    return done


def run_chunk(llm: LLM, params: SamplingParams, chunk: list[tuple[object, dict]]) -> list[dict]:
    """Outputs of one chunk in input order: prompts through generate, conversations through chat."""
    texts = [(i, row["prompt"]) for i, (_, row) in enumerate(chunk) if "prompt" in row]
    chats = [(i, row["messages"]) for i, (_, row) in enumerate(chunk) if "messages" in row]
    results: list = [None] * len(chunk)
    if texts:
        for (i, _), out in zip(texts, llm.generate([p for _, p in texts], params, use_tqdm=False), strict=True):
            results[i] = out
    if chats:
        for (i, _), out in zip(chats, llm.chat([m for _, m in chats], params, use_tqdm=False), strict=True):
            results[i] = out
    lines = []
    for (row_id, row), out in zip(chunk, results, strict=True):
        first = out.outputs[0]
        reason = getattr(first, "finish_reason", None)  # "length": cut at --max-tokens
        lines.append({**row, "id": row_id, "output": first.text, "finish_reason": reason})
    return lines


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    target = shard_output(args.output, args.shard, args.shards)
    try:
        done = done_ids(target)
        total = pending = 0
        for row_id, _ in read_rows(args.input, args.shard, args.shards):  # check every row before loading the model
            total += 1
            pending += key(row_id) not in done
    except InputProblem as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    label = f"shard {args.shard}/{args.shards}: " if args.shards > 1 else ""
    print(f"{label}{total - pending}/{total} rows already in {target}, {pending} to do", file=sys.stderr, flush=True)
    if not pending:
        return 0
    llm = LLM(model=MODEL, **ENGINE)
    params = SamplingParams(max_tokens=args.max_tokens, temperature=args.temperature)
    finished, start = total - pending, time.monotonic()
    with target.open("a", encoding="utf-8") as out:
        chunk: list[tuple[object, dict]] = []
        rows = ((i, r) for i, r in read_rows(args.input, args.shard, args.shards) if key(i) not in done)
        for item in rows:
            chunk.append(item)
            if len(chunk) < args.chunk_size:
                continue
            finished = write_chunk(llm, params, chunk, out, finished)
            progress(label, finished, total, pending - (total - finished), start)
            chunk = []
        if chunk:
            finished = write_chunk(llm, params, chunk, out, finished)
            progress(label, finished, total, pending - (total - finished), start)
    return 0


def write_chunk(llm: LLM, params: SamplingParams, chunk: list[tuple[object, dict]], out, finished: int) -> int:
    for line in run_chunk(llm, params, chunk):
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    out.flush()
    os.fsync(out.fileno())
    return finished + len(chunk)


def progress(label: str, finished: int, total: int, done_now: int, start: float) -> None:
    rate = done_now / max(time.monotonic() - start, 1e-9)
    eta = (total - finished) / rate if rate else 0.0
    print(f"{label}{finished}/{total} rows ({100 * finished / total:.1f}%), {rate:.2f} rows/s, "
          f"about {eta / 60:.0f} min left", file=sys.stderr, flush=True)


if __name__ == "__main__":
    raise SystemExit(main())
