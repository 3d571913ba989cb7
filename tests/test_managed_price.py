"""A managed price for every model (issue #11), and every price's real provenance.

A model the price list names gets its listed price. Any other model gets an estimate from the listed models of
the nearest active-parameter size, of its own catalog family when that family is listed (all listed models
otherwise): between the nearest smaller and larger listed sizes the price is interpolated linearly in
log(active parameters),

    price = p_lo + (p_hi − p_lo) × ln(a / a_lo) / ln(a_hi / a_lo)

beyond the listed range it is the nearest listed size's price, and several listed models of one size are averaged.
managed_usd_per_mtok overrides both. The listed figures below are the inputs (wizard/sources/data/prices.json);
the arithmetic is this file's.
"""

from __future__ import annotations

import json
import math

import pytest

from wizard.session.computes import Context
from wizard.sizing.params import count_params
from wizard.sources.catalog import find_entry, load_catalog_model
from wizard.sources.prices import DATA, estimate_managed_price, gpu_prices, managed_price, retrieved

RAW = json.loads(DATA.read_text(encoding="utf-8"))
LISTED = {e["model"]: e for e in RAW["managed_per_mtok"]}


def spec(model_id: str):
    return load_catalog_model(find_entry(model_id))


def test_listed_sizes_and_families_are_the_catalogs_own():
    """The estimate's reference points: each listed model's active parameters and family, recounted here from the
    catalog's config.json (a stored figure that drifted from its config would fail)."""
    for model_id, e in LISTED.items():
        entry = find_entry(model_id)
        assert entry is not None, model_id
        assert e["family"] == entry.family, model_id
        assert e["active_params"] == count_params(load_catalog_model(entry)).active, model_id


def test_a_listed_model_keeps_its_listed_price_and_provenance():
    p = managed_price("meta-llama/Llama-3.1-70B-Instruct")
    e = LISTED["meta-llama/Llama-3.1-70B-Instruct"]
    assert (p.usd_per_mtok_input, p.usd_per_mtok_output) == (e["usd_per_mtok_input"], e["usd_per_mtok_output"])
    assert p.basis == "listed" and p.provider == "together_ai" and p.date == retrieved() == "2026-11-30"
    # read from litellm's community map: named as the aggregator it is, not as Together AI's page
    assert "litellm" in p.via and "aggregator" in p.via


def test_an_unlisted_model_of_a_listed_family_takes_the_nearest_size_of_that_family():
    """Qwen/Qwen3-32B: 31.98 B active (64 layers of 5,120 wide, untied 151,936-token head). Its family, Qwen3,
    lists one model, Qwen3-235B-A22B at 21.57 B active: above the family's range, so that model's price."""
    p = estimate_managed_price("Qwen/Qwen3-32B", count_params(spec("Qwen/Qwen3-32B")).active, "Qwen3")
    ref = LISTED["Qwen/Qwen3-235B-A22B"]
    assert (p.usd_per_mtok_input, p.usd_per_mtok_output) == (ref["usd_per_mtok_input"], ref["usd_per_mtok_output"])
    assert p.basis == "estimated" and p.estimated_from == ("Qwen/Qwen3-235B-A22B (deepinfra)",)
    assert p.provider == "" and "Qwen3" in p.note and "21.57 B" in p.note and "31.98 B" in p.note
    assert p.date == retrieved() and "aggregator" in p.via


def test_an_unlisted_family_is_interpolated_between_the_nearest_listed_sizes():
    """mistralai/Mistral-7B-v0.1, family Mistral (not listed). Active parameters by hand: 32 layers × (q 4096² +
    k, v 4096 × 1024 each + o 4096² = 41,943,040; MLP 3 × 4096 × 14,336 = 176,160,768; 2 norms × 4096) =
    32 × 218,112,000 = 6,979,584,000, + final norm 4,096 + head 32,000 × 4,096 = 131,072,000 → 7,110,660,096.
    Nearest listed sizes: openai/gpt-oss-120b 5,132,849,472 ($0.15 / $0.60) below, Llama-3.1-8B-Instruct
    7,504,924,672 ($0.18 / $0.18) above; t = ln(7.1107 / 5.1328) / ln(7.5049 / 5.1328) = 0.858."""
    active = 32 * (4096 * 4096 * 2 + 4096 * 1024 * 2 + 3 * 4096 * 14336 + 2 * 4096) + 4096 + 32000 * 4096
    assert active == 7_110_660_096 == count_params(spec("mistralai/Mistral-7B-v0.1")).active
    t = math.log(active / 5_132_849_472) / math.log(7_504_924_672 / 5_132_849_472)
    assert t == pytest.approx(0.858, abs=0.001)
    p = estimate_managed_price("mistralai/Mistral-7B-v0.1", active, "Mistral")
    assert p.usd_per_mtok_input == pytest.approx(0.15 + t * (0.18 - 0.15), abs=1e-4)  # ≈ $0.1757
    assert p.usd_per_mtok_output == pytest.approx(0.60 + t * (0.18 - 0.60), abs=1e-4)  # ≈ $0.2397
    assert p.estimated_from == ("openai/gpt-oss-120b (together_ai)", "meta-llama/Llama-3.1-8B-Instruct (together_ai)")
    assert "interpolated" in p.note and "none of its family, Mistral, is listed" in p.note


def test_a_listed_size_is_that_sizes_price_and_ties_are_averaged():
    # the base Llama-3.1-70B has the Instruct model's architecture: same family, same size, same price
    base = estimate_managed_price("meta-llama/Llama-3.1-70B", count_params(spec("meta-llama/Llama-3.1-70B")).active,
                                  "Llama 3.1")
    assert (base.usd_per_mtok_input, base.usd_per_mtok_output) == (0.88, 0.88)
    assert base.estimated_from == ("meta-llama/Llama-3.1-70B-Instruct (together_ai)",)
    # a model of no catalog family at exactly 70B's size: Llama 3.1 and 3.3 70B ($0.88, $1.04) → (0.88 + 1.04) / 2
    tie = estimate_managed_price("someone/fine-tune", 69_503_033_344, "")
    assert tie.usd_per_mtok_input == tie.usd_per_mtok_output == pytest.approx(0.96)
    assert len(tie.estimated_from) == 2 and "not in the catalog" in tie.note


def test_beyond_the_listed_range_the_nearest_size_is_used_not_extrapolated():
    big = estimate_managed_price("someone/huge", 2_000_000_000_000, "")
    assert (big.usd_per_mtok_input, big.usd_per_mtok_output) == (3.5, 3.5)  # Llama-3.1-405B, the largest listed
    small = estimate_managed_price("someone/tiny", 100_000_000, "")
    assert (small.usd_per_mtok_input, small.usd_per_mtok_output) == (0.05, 0.2)  # gpt-oss-20b, the smallest
    assert estimate_managed_price("someone/empty", 0, "") is None


def test_the_plans_managed_price_is_listed_else_estimated_else_given():
    ctx = Context()
    assert ctx.managed_price(spec("meta-llama/Llama-3.1-8B-Instruct")).basis == "listed"
    assert ctx.managed_price(spec("Qwen/Qwen3-8B")).basis == "estimated"
    own = Context({"managed_usd_per_mtok": {"input": 0.5, "output": 1.5}}).managed_price(spec("Qwen/Qwen3-8B"))
    assert (own.basis, own.usd_per_mtok_input, own.usd_per_mtok_output) == ("given", 0.5, 1.5)
    # every catalog model gets a figure: listed or estimated, never none
    from wizard.sources.catalog import model_entries
    for e in model_entries():
        p = ctx.managed_price(load_catalog_model(e))
        assert p is not None and p.usd_per_mtok_input > 0 and p.usd_per_mtok_output > 0, e.id


def test_gpu_prices_name_the_aggregator_they_were_read_from():
    for gpu, p in gpu_prices().items():
        assert p.via, gpu  # every default was read through an aggregator, blog or mirror: it says which
        if "aggregator" in p.source:
            assert "aggregator" in p.via, gpu
    assert gpu_prices()["h100-sxm-80gb"].provider == "RunPod"
    assert gpu_prices()["h100-sxm-80gb"].via == "deploybase.ai, an aggregator"
