"""`llm-deploy-wizard models` and the wizard's model question: families newest first (the `released` months of
families.json), models of a family by size (smallest first), `--family` narrowing to one family, `--json` with
the sizes and the month. The expected orders are computed here from index.json and families.json, whatever
entries the catalog holds when the tests run."""

from __future__ import annotations

import json
import re

import pytest

from wizard.cli import main
from wizard.sources.catalog import DATA, CatalogEntry, model_entries
from wizard.sources.families import ListedModel, billions, catalog_listing

INDEX = json.loads((DATA / "models" / "index.json").read_text(encoding="utf-8"))
FAMILIES = json.loads((DATA / "models" / "families.json").read_text(encoding="utf-8"))
RELEASED = {r["family"]: r["released"] for r in FAMILIES["families"]}
OLD_KEYS = {"id", "family", "aliases", "source", "architecture", "unserved"}  # the keys scripts already read
NEW_KEYS = {"params", "active_params", "released", "max_context_tokens", "checkpoint_format"}


def catalog_families() -> list[str]:
    """Every family of index.json, in catalog order (first appearance)."""
    return list(dict.fromkeys(e.get("family", "") for e in INDEX["models"]))


def expected_family_order(families: list[str]) -> list[str]:
    """families.json's rule: newest month first; same month in catalog order; no month after all, catalog order."""
    dated = [f for f in families if RELEASED.get(f)]
    undated = [f for f in families if not RELEASED.get(f)]
    by_month = sorted(dated, key=lambda f: (-int(RELEASED[f].replace("-", "")), families.index(f)))
    return by_month + undated


def run(capsys, *args: str) -> tuple[int, str, str]:
    code = main(["models", *args])
    out, err = capsys.readouterr()
    return code, out, err


def rows(capsys, *args: str) -> list[dict]:
    code, out, err = run(capsys, *args, "--json")
    assert code == 0, err
    return json.loads(out)


@pytest.fixture(autouse=True)
def _wide_terminal(monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")  # rich lays the table out at this width: one table row per line


# -- families.json


def test_every_catalog_family_has_a_record():
    missing = [f for f in catalog_families() if f not in RELEASED]
    assert not missing, f"families.json has no record for {missing}"


def test_records_are_dated_and_sourced_or_say_why_not():
    names = [r["family"] for r in FAMILIES["families"]]
    assert len(names) == len(set(names)), "a family has two records"
    for r in FAMILIES["families"]:
        if r["released"] is None:
            assert r.get("note"), f"{r['family']}: an undated family says why in its note"
        else:
            assert re.fullmatch(r"\d{4}-(0[1-9]|1[0-2])", r["released"]), r
            assert "2023-01" <= r["released"] <= "2026-12", r  # no month after the catalog was collected
            assert r["source"].startswith("https://"), r
            assert r.get("evidence"), r


# -- `models --json`


def test_json_keeps_its_keys_and_adds_the_sizes_and_month(capsys):
    listed = rows(capsys)
    assert len(listed) == len(INDEX["models"])
    assert {r["id"] for r in listed} == {e["id"] for e in INDEX["models"]}
    for r in listed:
        assert set(r) == OLD_KEYS | NEW_KEYS, r["id"]
        assert r["released"] == RELEASED.get(r["family"])
        assert r["params"] is None or (isinstance(r["params"], int) and r["params"] > 0), r
        if r["params"] is not None and r["active_params"] is not None:
            assert 0 < r["active_params"] <= r["params"], r["id"]
        if r["params"] is not None:  # the config was read: its context and checkpoint format with it
            assert isinstance(r["max_context_tokens"], int) and r["max_context_tokens"] >= 2048, r["id"]
            assert r["checkpoint_format"] in ("bf16", "fp8", "int8", "int4", "mxfp4", "nvfp4"), r["id"]
    stated = {e["id"]: e["params"] for e in INDEX["models"] if e.get("params")}
    for r in listed:
        if r["id"] in stated:  # a count a source states wins over the arithmetic, as in `size`
            assert r["params"] == stated[r["id"]], r["id"]


def test_families_come_newest_first_by_their_released_month(capsys):
    listed = rows(capsys)
    shown = list(dict.fromkeys(r["family"] for r in listed))
    assert shown == expected_family_order(catalog_families())
    # each family's models are together: no family appears in two runs
    runs = [r["family"] for i, r in enumerate(listed) if i == 0 or listed[i - 1]["family"] != r["family"]]
    assert len(runs) == len(set(runs))


def test_models_of_a_family_go_by_size_smallest_first(capsys):
    listed = rows(capsys)
    order = {e["id"]: i for i, e in enumerate(INDEX["models"])}
    for family in {r["family"] for r in listed}:
        members = [r for r in listed if r["family"] == family]
        keys = [(r["params"] is None, r["params"] or 0, order[r["id"]]) for r in members]
        assert keys == sorted(keys), (family, [(r["id"], r["params"]) for r in members])


def test_family_narrows_to_one_family_any_case(capsys):
    for family in catalog_families():
        listed = rows(capsys, "--family", family.upper())
        assert {r["family"] for r in listed} == {family}
        assert [r["id"] for r in listed] == [r["id"] for r in rows(capsys) if r["family"] == family]


def test_an_unknown_family_is_one_line_naming_the_families(capsys):
    code, out, err = run(capsys, "--family", "qwen")  # a prefix is not a family: Qwen3, Qwen3-Next, Qwen2.5 ...
    assert code == 2 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "--family" in lines[0] and "'qwen'" in lines[0]
    for family in catalog_families():
        assert family in lines[0]
    code, out, err = run(capsys, "--family", "nope", "--json")
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1


# -- the table


def test_the_table_shows_families_in_order_with_their_sizes(capsys):
    code, out, err = run(capsys)
    assert code == 0, err
    heads = re.findall(r"│ (\S.*?) · released (\d{4}-\d{2}|unknown)", out)
    assert [f for f, _ in heads] == expected_family_order(catalog_families())
    for family, month in heads:
        assert month == (RELEASED.get(family) or "unknown")
    positions = {}
    for m in catalog_listing():
        line = next(line for line in out.splitlines() if f"│ {m.entry.id} " in line)
        assert f" {m.size} │" in line, (m.entry.id, m.size, line)
        positions[m.entry.id] = out.index(line)
    assert list(positions) == sorted(positions, key=positions.__getitem__)  # the table keeps the listing order


def test_the_table_narrows_too(capsys):
    family = catalog_families()[0]
    code, out, err = run(capsys, "--family", family.lower())
    assert code == 0, err
    assert re.findall(r"│ (\S.*?) · released", out) == [family]


def test_size_labels():
    entry = model_entries()[0]
    assert ListedModel(entry, "2024-07", 8_030_261_248, 7_504_924_672, False).size == "8.0 B"
    assert ListedModel(entry, "2025-04", 235_093_634_560, 21_568_433_664, True).size == "235 B (21.6 B active)"
    assert ListedModel(entry, None, None, None, False).size == "—"
    assert billions(494_032_768) == "0.5 B" and billions(14_770_033_664) == "14.8 B"
    assert billions(99_960_000_000) == "100 B" and billions(1_026_000_000_000) == "1,026 B"


# -- the rules, on a made-up catalog (what the colleague adds must not break them)


def fake(entry_id: str, family: str, like: CatalogEntry) -> CatalogEntry:
    return like._replace(id=entry_id, aliases=(), family=family, params=None)


def test_undated_families_follow_the_dated_ones_in_catalog_order():
    by_id = {e.id: e for e in model_entries()}
    small, large = by_id["Qwen/Qwen3-0.6B"], by_id["Qwen/Qwen3-32B"]
    dated = [f for f in catalog_families() if RELEASED.get(f)]
    old, new = min(dated, key=lambda f: RELEASED[f]), max(dated, key=lambda f: RELEASED[f])
    entries = (fake("x/unknown-a-big", "Not A Family", large), fake("x/old", old, small),
               fake("x/unknown-a-small", "Not A Family", small), fake("x/unknown-b", "Also Unknown", small),
               fake("x/new-big", new, large), fake("x/new-small", new, small))
    listed = catalog_listing(entries)
    assert [m.entry.id for m in listed] == ["x/new-small", "x/new-big", "x/old", "x/unknown-a-small",
                                            "x/unknown-a-big", "x/unknown-b"]
    assert [m.released for m in listed][-3:] == [None, None, None]


def test_a_config_that_does_not_parse_is_listed_without_a_size():
    entry = model_entries()[0]._replace(id="x/broken", config="no-such-file.json", params=None)
    (m,) = catalog_listing((entry,))
    assert m.params is None and m.size == "—"


# -- the wizard's model question


def test_the_wizard_offers_the_same_order_with_family_and_size():
    from wizard.session.questions import choices_for
    from wizard.sizing.engine import unserved_reason
    from wizard.sources.catalog import entry_architecture
    from wizard.tree.loader import load_tree

    choices = choices_for(load_tree().nodes["model"])
    served = [m for m in catalog_listing() if not unserved_reason(entry_architecture(m.entry))]
    assert [c.value for c in choices] == [m.entry.id for m in served]
    for c, m in zip(choices, served):
        assert m.entry.family in c.label and m.size in c.label, c
    shown = list(dict.fromkeys(m.entry.family for m in served))
    assert shown == [f for f in expected_family_order(catalog_families()) if f in shown]
