"""Plan search over GPU types × TP × PP (wizard.sizing.layout_search) in DOMAIN §1's fixed order.

§1: first "does it fit one card?"; only if not, split within a node (TP); only if a node is not enough, go
multi-node (TP inside the node, PP across, §3: never TP across nodes). §5: "if it fits, use replicas" — a TP
layout inside one node displaces one card only when it is cheaper for the same peak. Within a form, the
cheapest monthly total (cost.total_usd_month) wins; a GPU type without a price cannot be compared and ranks
after the priced ones.

Memory arithmetic used below (bf16, h100-sxm-80gb: 85,061,827,297 B reported × 0.90 = 76.6 GB usable per GPU,
8 per node, so at most 612 GB of one node):
    Llama-3.1-8B   2 × 8.03e9  = 16.1 GB   → one card
    Llama-3.1-70B  2 × 70.55e9 = 141.1 GB  → no card; 2 cards hold 70.6 GB each → one node
    Llama-3.1-405B 2 × 405.9e9 ≈ 811.7 GB  → no node (> 612 GB); TP 8 × PP 2 holds ≈ 50.7 GB per GPU
"""

from __future__ import annotations

import pytest

from wizard.errors import InputError
from wizard.sizing.fit import SizeInputs, size
from wizard.sizing.layout import divisors
from wizard.sizing.layout_search import (
    MULTI_NODE,
    ONE_NODE,
    SINGLE,
    Load,
    datacenter_gpus,
    form_of,
    search,
)
from wizard.sizing.performance import Workload
from wizard.sizing.replicas import Targets
from wizard.sources.catalog import find_entry, find_gpu, gpu_catalog, load_catalog_model
from wizard.sources.prices import gpu_prices
from wizard.specs import GpuPrice

W = Workload(1, 1000, 200)


def model(model_id: str):
    return load_catalog_model(find_entry(model_id))


def load(peak: float, targets: Targets = Targets(None, None), online: bool = True, **over) -> Load:
    return Load(peak, W, targets, online, "kubernetes", None, "steady", **over)


def price(gpu_id: str, usd: float) -> GpuPrice:
    return GpuPrice(gpu_id, usd, "given", "test", "", "explicit")


@pytest.fixture(scope="module")
def h100():
    return find_gpu("h100-sxm-80gb")


H100_PRICE = {"h100-sxm-80gb": price("h100-sxm-80gb", 2.0)}


def total(c) -> float:
    return c.cost.total_usd_month


# ---------------------------------------------------------------------------------- §1: the four forms
def test_a_model_that_fits_one_card_is_planned_on_one_card(h100):
    """Llama-3.1-8B at peak 4: one card carries all 4 (batch 4), 4/4 + 1 = 2 replicas = 2 GPUs; any TP layout
    needs 2 replicas of ≥ 2 GPUs, so it cannot be cheaper."""
    m = model("meta-llama/Llama-3.1-8B")
    assert size(m, h100, SizeInputs()).fits
    found = search(m, [h100], SizeInputs(), load(4), H100_PRICE)
    best = found[0]
    assert (best.form, best.tp, best.pp) == (SINGLE, 1, 1)
    assert (best.limit.batch, best.replicas.replicas, best.gpus_total) == (4, 2, 2)
    assert total(best) == pytest.approx(2.0 * 2 * 730 + best.cost.staff_usd_month)
    for c in found[1:]:
        assert total(c) > total(best)


def test_a_model_that_fits_one_card_gets_replicas_even_where_tp_looks_cheaper(h100):
    """§5 "if it fits, use replicas": Qwen2.5-32B (65.5 GB bf16) fits one H100 with little KV room left; at peak 40
    a TP 2 layout (far more KV per replica) needs fewer GPUs and costs less — the trap — yet the plan is single-GPU
    replicas, the TP layout an alternative."""
    m = model("Qwen/Qwen2.5-32B")
    for peak in (4, 40):
        found = search(m, [h100], SizeInputs(), load(peak, staff_usd_month=0.0), H100_PRICE)
        assert found[0].form == SINGLE, peak
    tp = [c for c in found if c.form == ONE_NODE and c.meets_targets]
    assert tp and min(total(c) for c in tp) < total(found[0]), "the cheaper-looking TP layout exists"


def test_tp_is_chosen_for_a_model_that_fits_when_one_card_misses_the_latency_target(h100):
    """§5 with §9 Q3: a card holds Qwen2.5-32B, but reading 65.5 GB per step on one H100 (3.35 TB/s) takes ~20 ms:
    a 15 ms TPOT target is out of reach at TP 1 and within reach at TP 2 or 4, so TP is chosen."""
    m = model("Qwen/Qwen2.5-32B")
    found = search(m, [h100], SizeInputs(), load(4, Targets(None, 15.0), staff_usd_month=0.0), H100_PRICE)
    singles = [c for c in found if c.form == SINGLE]
    assert singles and not any(c.meets_targets for c in singles)
    assert found[0].form == ONE_NODE and found[0].meets_targets


@pytest.mark.parametrize("peak", [1, 4, 20, 60])
@pytest.mark.parametrize("model_id", ["meta-llama/Llama-3.1-8B", "Qwen/Qwen2.5-32B", "Qwen/Qwen3-30B-A3B"])
def test_tp_never_wins_over_a_cheaper_or_equal_single_card(h100, model_id, peak):
    found = search(model(model_id), [h100, find_gpu("a100-sxm-80gb"), find_gpu("l40s-48gb")], SizeInputs(),
                   load(peak, Targets(3000.0, 60.0)), gpu_prices())
    best = found[0]
    singles = [c for c in found if c.form == SINGLE and c.meets_targets and total(c) is not None]
    if best.form != SINGLE and singles:
        assert total(best) < min(total(s) for s in singles)


def test_a_model_that_fits_no_card_gets_tp_inside_one_node(h100):
    m = model("meta-llama/Llama-3.1-70B")
    assert not size(m, h100, SizeInputs()).fits  # 141 GB of weights on a 76.6 GB budget
    found = search(m, [h100], SizeInputs(), load(8), H100_PRICE)
    assert found
    assert all(c.form == ONE_NODE and c.pp == 1 and 1 < c.tp <= 8 for c in found)
    assert found[0].nodes_per_copy == 1


def test_a_model_that_fits_no_node_gets_tp_of_a_whole_node_and_pp_across(h100):
    m = model("meta-llama/Llama-3.1-405B")
    assert not size(m, h100, SizeInputs(tp=8)).fits  # ≈ 101 GB per GPU at TP 8
    found = search(m, [h100], SizeInputs(), load(4), H100_PRICE)
    assert found
    best = found[0]
    assert (best.form, best.tp, best.pp) == (MULTI_NODE, 8, 2)
    assert best.nodes_per_copy == 2
    assert best.limit.result.weights.per_gpu == pytest.approx(811.7e9 / 16, rel=0.01)
    assert all(c.form == MULTI_NODE and c.tp == h100.gpus_per_node for c in found)


def test_one_node_beats_several_even_when_several_are_cheaper():
    """§1/§4: 405B fits one MI300X node (8 × 192 GB) but only two H100 nodes; a MI300X priced far above the
    H100s still comes first — multi-node is the last resort, not a price question."""
    m = model("meta-llama/Llama-3.1-405B")
    mi300x, h100 = find_gpu("mi300x-192gb"), find_gpu("h100-sxm-80gb")
    prices = {"mi300x-192gb": price("mi300x-192gb", 100.0), "h100-sxm-80gb": price("h100-sxm-80gb", 1.0)}
    found = search(m, [h100, mi300x], SizeInputs(), load(4), prices)
    best = found[0]
    assert (best.gpu.id, best.form) == ("mi300x-192gb", ONE_NODE)
    cheaper_multi = [c for c in found if c.form == MULTI_NODE and total(c) < total(best)]
    assert cheaper_multi, "the test needs a cheaper multi-node candidate to be meaningful"


@pytest.mark.parametrize("model_id", ["meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-70B",
                                      "meta-llama/Llama-3.1-405B"])
def test_never_tp_larger_than_a_node(model_id):
    found = search(model(model_id), datacenter_gpus(gpu_catalog()), SizeInputs(), load(8, Targets(3000.0, 100.0)),
                   gpu_prices())
    assert found
    for c in found:
        assert c.tp <= c.gpu.gpus_per_node, (c.gpu.id, c.tp)
        assert c.gpu.gpus_per_node % c.tp == 0
        assert c.form == form_of(c.tp, c.pp, c.gpu)
        if c.tp * c.pp > c.gpu.gpus_per_node:
            assert c.form == MULTI_NODE and c.nodes_per_copy > 1


def test_form_of_follows_gpus_and_nodes(h100):
    assert form_of(1, 1, h100) == SINGLE
    assert form_of(8, 1, h100) == ONE_NODE
    assert form_of(8, 2, h100) == MULTI_NODE


# ------------------------------------------------------------------------------------------- pricing
def _ranked_prefix(found):
    """The candidates the plan is chosen from: those meeting the targets, of the simplest form any of them has
    (§1, §5: single GPU before TP before several nodes)."""
    meets = [c for c in found if c.meets_targets]
    return [c for c in meets if c.form == meets[0].form] if meets else []


@pytest.mark.parametrize("model_id, peak", [("meta-llama/Llama-3.1-8B", 30), ("meta-llama/Llama-3.1-70B", 20),
                                            ("mistralai/Mixtral-8x7B-v0.1", 12)])
def test_the_chosen_candidate_is_the_cheapest_of_its_form_group(model_id, peak):
    found = search(model(model_id), datacenter_gpus(gpu_catalog()), SizeInputs(),
                   load(peak, Targets(2000.0, 50.0)), gpu_prices())
    best = found[0]
    assert best.meets_targets and total(best) is not None
    same_form = [c for c in found if c.form == best.form and c.meets_targets and total(c) is not None]
    assert total(best) == min(total(c) for c in same_form)
    # no simpler form meets the targets: a cheaper TP layout never displaces single-GPU replicas (§5)
    order = [SINGLE, ONE_NODE, MULTI_NODE]
    assert not [c for c in found if c.meets_targets and order.index(c.form) < order.index(best.form)]
    priced = [c for c in _ranked_prefix(found) if total(c) is not None]
    # and each candidate's total is price × its GPUs × 730 + staff
    for c in priced:
        p = gpu_prices()[c.gpu.id].usd_per_gpu_hour
        assert total(c) == pytest.approx(p * c.gpus_total * 730 + c.cost.staff_usd_month)


def test_results_are_ordered_targets_then_form_then_cost():
    found = search(model("meta-llama/Llama-3.1-70B"), datacenter_gpus(gpu_catalog()), SizeInputs(),
                   load(20, Targets(2000.0, 50.0)), gpu_prices())
    meets = [c.meets_targets for c in found]
    assert meets == sorted(meets, reverse=True)  # every candidate meeting the targets first
    met = [c for c in found if c.meets_targets]
    order = [SINGLE, ONE_NODE, MULTI_NODE]
    forms = [order.index(c.form) for c in met]
    assert forms == sorted(forms)  # then §1's order of forms
    for form in set(c.form for c in met):  # then the monthly total within a form
        priced = [total(c) for c in met if c.form == form and total(c) is not None]
        assert priced == sorted(priced)


def test_a_gpu_without_a_price_ranks_after_the_priced_ones():
    """gb200 has no catalog price and would carry the load on fewer GPUs; unpriced, it cannot be shown cheaper."""
    m = model("meta-llama/Llama-3.1-8B")
    h100, gb200 = find_gpu("h100-sxm-80gb"), find_gpu("gb200")
    found = search(m, [gb200, h100], SizeInputs(), load(30, Targets(2000.0, 30.0)), H100_PRICE)
    group = _ranked_prefix(found)
    ids = [c.gpu.id for c in group]
    assert ids[0] == "h100-sxm-80gb"
    assert "gb200" in ids
    first_unpriced = ids.index("gb200")
    assert all(total(c) is not None for c in group[:first_unpriced])
    assert all(total(c) is None for c in group[first_unpriced:])
    # priced cheaply, the same GPU goes first: the order above came from the missing price
    cheap = {**H100_PRICE, "gb200": price("gb200", 0.5)}
    assert search(m, [gb200, h100], SizeInputs(), load(30, Targets(2000.0, 30.0)), cheap)[0].gpu.id == "gb200"


def test_more_traffic_never_makes_the_best_plan_cheaper():
    """Every layout's cost grows with its replicas, which grow with the peak: the cheapest cannot fall."""
    gpus = [find_gpu(g) for g in ("h100-sxm-80gb", "a100-sxm-80gb", "l40s-48gb", "mi300x-192gb")]
    m = model("meta-llama/Llama-3.1-8B")
    previous = 0.0
    for peak in (1, 3, 8, 20, 50, 120):
        best = search(m, gpus, SizeInputs(), load(peak, Targets(2000.0, 40.0)), gpu_prices())[0]
        assert total(best) >= previous, (peak, best.gpu.id, total(best), previous)
        previous = total(best)


def test_offline_work_has_no_redundant_replica(h100):
    m = model("meta-llama/Llama-3.1-8B")
    online = search(m, [h100], SizeInputs(), load(4, online=True), H100_PRICE)[0]
    offline = search(m, [h100], SizeInputs(), load(4, online=False), H100_PRICE)[0]
    assert online.replicas.replicas == offline.replicas.replicas + 1
    assert offline.replicas.replicas == 1


def test_forced_replicas_are_kept_in_the_plan(h100):
    best = search(model("meta-llama/Llama-3.1-8B"), [h100], SizeInputs(), load(4, forced_replicas=1), H100_PRICE)[0]
    assert best.replicas.replicas == 1
    assert best.gpus_total == 1
    assert total(best) == pytest.approx(2.0 * 1 * 730 + best.cost.staff_usd_month)


# ------------------------------------------------------------------- PP when TP = node is not accepted
@pytest.mark.parametrize("model_id, gpu_id, accepted_tp", [
    # phi-4: 40 heads, 10 KV heads → vLLM accepts TP 1, 2 (not 4: 10 % 4 and 4 % 10 are both non-zero);
    # 29.3 GB bf16 does not fit one T4 (14.1 GB usable) nor TP 2 (14.7 GB each), but TP 2 × PP 2 does.
    ("microsoft/phi-4", "t4-16gb", 2),
    # Qwen2.5-72B AWQ (int4, group 128): intermediate 29568 / TP 2 = 14784 is not a multiple of 128, so only TP 1
    # loads; ≈ 41 GB does not fit one 40 GB A100 (38 GB usable) — PP 2 over two cards does.
    ("LDCC/Qwen2.5-72B-Instruct-ko-AWQ", "a100-sxm-40gb", 1),
])
def test_pp_still_found_when_the_engine_rejects_tp_of_a_whole_node(model_id, gpu_id, accepted_tp):
    m, gpu = model(model_id), find_gpu(gpu_id)
    accepted = []
    for tp in divisors(gpu.gpus_per_node):
        try:
            size(m, gpu, SizeInputs(tp=tp))
            accepted.append(tp)
        except InputError:  # the engine refuses this TP for the model
            pass
    assert max(accepted) == accepted_tp
    assert size(m, gpu, SizeInputs(tp=accepted_tp, pp=2)).kv_capacity_tokens >= 8192  # a layout that works
    found = search(m, [gpu], SizeInputs(), load(2), gpu_prices())
    assert found, f"{model_id} on {gpu_id}: no candidate, though TP {accepted_tp} × PP 2 holds it"
    assert found[0].pp >= 2 and found[0].tp <= accepted_tp


def test_pp_inside_one_node_is_one_node():
    """§1: "one node, several GPUs — split or copy across the cards of one machine". TP 2 × PP 2 on a 4-GPU T4
    node, or PP 2 on an 8-GPU A100 node, is one machine (nodes_per_copy 1), not the multi-node form with its
    failure domains and network (§4)."""
    assert form_of(2, 2, find_gpu("t4-16gb")) == ONE_NODE
    assert form_of(1, 2, find_gpu("a100-sxm-40gb")) == ONE_NODE
    assert form_of(4, 2, find_gpu("t4-16gb")) == MULTI_NODE  # 8 GPUs: two 4-GPU nodes


# ---------------------------------------------------------------- one cost: layout_cost prices every candidate
@pytest.mark.parametrize("exposure", ["gateway", "kubernetes", "none"])
def test_every_candidate_is_priced_once_at_the_exposure_it_really_gets(h100, exposure):
    """layout_cost is the one price of a layout: each candidate's Cost is layout_cost of its own GPUs, carried
    sequences and roofline request time, with the staff of load.exposure — $15,000 × 0.5 (gateway), 0.25
    (Kubernetes) or 0.1 (none, a batch job). Llama-3.1-8B at peak 4 on H100 at $2/h: one card, 2 replicas =
    2 × 2.0 × 730 = $2,920 + staff."""
    from wizard.sizing.layout_search import layout_cost

    ld = Load(4, W, Targets(None, None), True, exposure, None, "steady")
    found = search(model("meta-llama/Llama-3.1-8B"), [h100], SizeInputs(), ld, H100_PRICE)
    staff = {"gateway": 7500.0, "kubernetes": 3750.0, "none": 1500.0}[exposure]
    for c in found:
        again = layout_cost(ld, H100_PRICE["h100-sxm-80gb"], c.gpus_total, c.replicas.replicas * max(c.limit.batch, 1),
                            c.limit.performance)
        assert c.cost == again
        assert c.cost.exposure == exposure and c.cost.staff_usd_month == pytest.approx(staff)
        assert total(c) == pytest.approx(2.0 * c.gpus_total * 730 + staff)
    assert total(found[0]) == pytest.approx(2920.0 + staff)


def test_the_exposure_moves_every_total_by_the_same_staff_and_keeps_the_ranking(h100):
    """Staff is one figure per plan (the exposure's), so it never reorders layouts: the ranking at a gateway's
    $7,500 is the ranking at Kubernetes' $3,750, every total $3,750 higher."""
    m, gpus = model("Qwen/Qwen2.5-32B"), [h100, find_gpu("l40s-48gb")]
    by = {e: search(m, gpus, SizeInputs(), Load(40, W, Targets(2000.0, 60.0), True, e, None, "steady"), gpu_prices())
          for e in ("gateway", "kubernetes")}
    assert [(c.gpu.id, c.tp, c.pp, c.replicas.replicas) for c in by["gateway"]] == \
           [(c.gpu.id, c.tp, c.pp, c.replicas.replicas) for c in by["kubernetes"]]
    for g, k in zip(by["gateway"], by["kubernetes"]):
        assert total(g) == pytest.approx(total(k) + 3750.0)
