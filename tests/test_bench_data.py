"""The calibration rows of tests/data/throughput-bench.yaml keep their own rules: one id per row in order, the count
their header states, and the fit/held-out split fixed before any row was predicted (tests/data/throughput-bench.README.md:
a row is fitted when its sweep has at least three points and its index in the sweep is a multiple of three)."""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

DATA = Path(__file__).parent / "data" / "throughput-bench.yaml"


@pytest.fixture(scope="module")
def bench():
    return yaml.safe_load(DATA.read_text())


def test_rows_are_numbered_in_order_and_counted_in_the_header(bench):
    rows = bench["rows"]
    assert [r["id"] for r in rows] == [f"tb-{i:03d}" for i in range(1, len(rows) + 1)]
    assert bench["_meta"]["count"] == len(rows)


def test_the_split_follows_the_sweep_rule_and_not_the_results(bench):
    sweeps = defaultdict(list)
    for row in bench["rows"]:
        sweeps[row["sweep_id"]].append(row)
    for sweep, rows in sweeps.items():
        assert sorted(r["sweep_index"] for r in rows) == list(range(len(rows))), sweep
        for row in rows:
            assert row["fit"] is (len(rows) >= 3 and row["sweep_index"] % 3 == 0), row["id"]


def test_every_row_names_its_source_and_its_release_basis(bench):
    """Every row says where it was read and how its release is known (stated, or inferred from an image tag or a
    date: the basis says which)."""
    for row in bench["rows"]:
        # a link, or (a file whose repository the search index did not resolve) the file's own title and read id
        assert str(row.get("source_url") or "").startswith("http") or str(row.get("source_ref") or "").strip(), row["id"]
        assert str(row.get("vllm_version_basis") or "").strip(), row["id"]
        # a string, as written (YAML would read an unquoted 0.10 as the number 0.1)
        assert row["vllm_version"] is None or (isinstance(row["vllm_version"], str)
                                               and re.match(r"^\d+\.\d+", row["vllm_version"])), row["id"]
