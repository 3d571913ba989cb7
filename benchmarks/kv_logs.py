"""The sizing core's KV budget against every public vLLM start-up log in tests/data (issue #13's table).

For each log of tests/data/vllm_logs/index.yaml: its version and engine profile, then — where checks.yaml says
how to re-run it (the catalog model and card the thread names) — the predicted and logged headline figure
("GPU KV cache size" tokens, else the available KV memory) and the error. Rows the data cannot predict say why.
Then the start-up figures published in reports rather than logs (reports.yaml), checked the same way.
Usage: python benchmarks/kv_logs.py
"""

from __future__ import annotations

import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from wizard.session.check_log import check_log, check_startup  # noqa: E402
from wizard.sizing.engines import profile_for, release  # noqa: E402
from wizard.sources.vllm_log import StartupLog  # noqa: E402

DATA = ROOT / "tests" / "data" / "vllm_logs"


def _why_not(row: dict) -> str:
    """Why a row of index.yaml has no check: what its log and thread leave unknown."""
    from wizard.sources.catalog import find_entry

    missing = []
    model = row.get("model")
    if not model or " " in str(model):
        missing.append("the exact model is not named")
    elif find_entry(str(model)) is None:
        missing.append(f"{model} is not in the catalog")
    if not row.get("gpu"):
        missing.append("the card is not named")
    return "; ".join(missing) or "its flags are not all known"


def main() -> int:
    index = yaml.safe_load((DATA / "index.yaml").read_text(encoding="utf-8"))
    checks = yaml.safe_load((DATA / "checks.yaml").read_text(encoding="utf-8"))
    print(f"{'row':48} {'version':>9} {'profile':>10} {'figure':>16} {'predicted':>10} {'logged':>10} {'error':>8}")
    within = counted = fitted = 0
    full: list[tuple[str, bool, bool]] = []  # (row, within 3 %, fitted) of the rows the index grades full
    reports = yaml.safe_load((DATA / "reports.yaml").read_text(encoding="utf-8"))
    for row in [*index, *reports]:
        spec = row if "stated" in row else checks.get(row["id"])
        if spec is None:
            print(f"{row['id']:48} {'':>9} {'':>10} not predictable: {_why_not(row)}")
            continue
        o = dict(spec["options"])
        version = str(o.pop("vllm_version"))
        given = dict(model=o.pop("model"), gpu=o.pop("gpu", None), vllm_version=version,
                     weights_from_log=bool(o.pop("weights_from_log", False)), run=o)
        c = (check_startup(StartupLog(**row["stated"]), row["id"], **given) if "stated" in row
             else check_log(DATA / row["file"], **given))
        head = next((i for i in c.items if i.name == "kv_tokens"), None) or next(
            (i for i in c.items if i.name in ("available_kv_gib", "kv_tokens_at_logged_memory", "kv_needed_gib")), None)
        if head is None:
            print(f"{row['id']:48} {version:>9} {profile_for(c.vllm_version).id:>10} {c.verdict}")
            continue
        fit = bool(spec.get("fit"))
        if row.get("completeness", "full") == "full":
            full.append((row["id"], abs(head.difference) <= 0.03, fit))
        if fit:  # a constant was measured on this row: it checks the arithmetic, it is no test of the model
            fitted += 1
        else:
            counted += 1
            within += abs(head.difference) <= 0.03
        shown = ".".join(map(str, release(c.vllm_version)))  # a dev build's release, without its local label
        print(f"{row['id']:48} {shown:>9} {profile_for(c.vllm_version).id:>10} {head.name.replace('kv_tokens_at_logged_memory', 'kv_tokens@logged').replace('kv_needed_gib', 'kv_needed@len'):>16} "
              f"{head.predicted:>10,} {head.logged:>10,} {head.difference:>+8.1%}" + ("  (fit)" if fit else "")
              + ("  (KV bytes per token only: no card)" if spec.get("per_token_only") else "")
              + (f"  ({head.predicted - head.logged:+.2f} GiB; a start that (nearly) failed is scored against its "
                 "budget, total × utilization)" if head.name == "available_kv_gib" and head.logged <= 2 else ""))
    print(f"{within}/{counted} held-out predictable rows within 3 % (+ {fitted} row a constant was measured on); "
          f"{len(index) + len(reports) - counted - fitted} rows not predictable from their data")
    off = [rid for rid, ok, _ in full if not ok]
    unchecked = [r["id"] for r in index if r["id"] not in checks and r.get("completeness", "full") == "full"]
    print(f"full rows (the index's completeness: full, and the reports): {len(full) - len(off)}/{len(full)} within 3 %"
          f" ({sum(fitted for _, _, fitted in full)} of them rows a constant was measured on)"
          + (f"; off: {', '.join(off)}" if off else "")
          + (f"; full rows without a check: {', '.join(unchecked)}" if unchecked else
             "; every row not predictable is a partial fragment (check-log parses it; its model or card is not named)"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
