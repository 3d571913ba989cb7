"""One plan per late-2026 family, walked to a starter repo on a card it fits, and every check of the repo run on
it (schemas, shellcheck, the vLLM 0.33 flag list, the plan against the manifests)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

from cli_run import run_main
from starter_repo import validate_repo

ONLINE = {"peak_concurrency": 8, "ttft_p99_ms": 3000, "tpot_p99_ms": 100, "ops_capability": "kubernetes"}

SCENARIOS = [  # family: (model, card)
    ("Qwen3.5", "Qwen/Qwen3.5-27B", "h100-sxm-80gb"),
    ("Qwen3.6", "nvidia/Qwen3.6-35B-A3B-NVFP4", "l40s-48gb"),
    ("Qwen3-Coder", "Qwen/Qwen3-Coder-480B-A35B-Instruct", "h200-sxm-141gb"),
    ("Gemma 4", "google/gemma-4-26B-A4B", "a100-sxm-80gb"),
    ("DeepSeek-V3.2", "deepseek-ai/DeepSeek-V3.2", "h200-sxm-141gb"),
    ("GLM-5", "zai-org/GLM-5-FP8", "b200-180gb"),
    ("Kimi K2", "moonshotai/Kimi-K2-Instruct", "b200-180gb"),
    ("MiniMax M2", "MiniMaxAI/MiniMax-M2.7", "h100-sxm-80gb"),
    ("Llama 4", "meta-llama/Llama-4-Scout-17B-16E-Instruct", "h100-sxm-80gb"),
]


@pytest.mark.parametrize(("family", "model", "gpu"), SCENARIOS, ids=[s[0] for s in SCENARIOS])
def test_each_family_plans_to_a_starter_repo_that_passes_its_checks(tmp_path: Path, family: str, model: str, gpu: str):
    answers = tmp_path / "answers.yaml"
    answers.write_text(yaml.safe_dump({**ONLINE, "model": model, "gpu": gpu}))
    out = tmp_path / "repo"
    r = run_main("plan", "--answers", str(answers), "--out", str(out))
    assert r.code == 0, r.err
    validate_repo(out)
    plan = json.loads((out / "plan.json").read_text())
    assert plan["gpu"] == gpu
    argv = run_launch(out, tmp_path)
    assert argv[:2] == ["serve", model]
    tp = int(argv[argv.index("--tensor-parallel-size") + 1]) if "--tensor-parallel-size" in argv else 1
    pp = int(argv[argv.index("--pipeline-parallel-size") + 1]) if "--pipeline-parallel-size" in argv else 1
    assert (tp, pp) == (plan["tp"], plan["pp"])


def run_launch(repo: Path, tmp_path: Path) -> list[str]:
    """The launch script run for real with a fake `vllm` first on PATH that prints the argv it was given."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "vllm"
    fake.write_text('#!/bin/sh\nfor a in "$@"; do printf \'%s\\n\' "$a"; done\n')
    fake.chmod(0o755)
    script = repo / "serve" / "launch.sh"
    if not script.exists():  # multi-node: the head's script starts the server
        pytest.skip("multi-node layout: head.sh needs a Ray cluster (covered in test_repo_operation)")
    done = subprocess.run(["bash", str(script)], capture_output=True, text=True, timeout=30,
                          env={"PATH": f"{bin_dir}:/usr/bin:/bin", "VLLM_API_KEY": "k", "HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    return done.stdout.splitlines()
