"""The sizing core's KV budget against every public vLLM start-up log in tests/data (issue #13's table).

For each log of tests/data/vllm_logs/index.yaml: its version and engine profile, then — where checks.yaml says
how to re-run it (the catalog model and card the thread names) — the predicted and logged headline figure
("GPU KV cache size" tokens, else the available KV memory) and the error. Rows the data cannot predict say why.
Usage: python benchmarks/kv_logs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wizard.session.check_log import check_log  # noqa: E402
from wizard.sizing.engines import profile_for  # noqa: E402

DATA = ROOT / "tests" / "data" / "vllm_logs"


def main() -> int:
    index = yaml.safe_load((DATA / "index.yaml").read_text(encoding="utf-8"))
    checks = yaml.safe_load((DATA / "checks.yaml").read_text(encoding="utf-8"))
    print(f"{'row':48} {'version':>9} {'profile':>10} {'figure':>16} {'predicted':>10} {'logged':>10} {'error':>8}")
    within = counted = 0
    for row in index:
        spec = checks.get(row["id"])
        if spec is None:
            print(f"{row['id']:48} {'':>9} {'':>10} not predictable: no catalog model and card in the log or thread")
            continue
        o = dict(spec["options"])
        version = str(o.pop("vllm_version"))
        c = check_log(DATA / row["file"], model=o.pop("model"), gpu=o.pop("gpu"), vllm_version=version, run=o)
        head = next((i for i in c.items if i.name == "kv_tokens"), None) or next(
            (i for i in c.items if i.name == "available_kv_gib"), None)
        if head is None:
            print(f"{row['id']:48} {version:>9} {profile_for(c.vllm_version).id:>10} {c.verdict}")
            continue
        counted += 1
        within += abs(head.difference) <= 0.03
        print(f"{row['id']:48} {c.vllm_version:>9} {profile_for(c.vllm_version).id:>10} {head.name:>16} "
              f"{head.predicted:>10,} {head.logged:>10,} {head.difference:>+8.1%}")
    print(f"{within}/{counted} predictable rows within 3 %; {len(index) - counted} rows not predictable from their data")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
