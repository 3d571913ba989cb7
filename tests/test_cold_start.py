"""Cold start of one replica, stage by stage (wizard.sizing.cold_start, DOMAIN §7), against hand arithmetic.

    GPU node bring-up the cluster adding a GPU node (an assumption, 0 where nodes are kept up)
    image pull        image bytes / registry bandwidth
    weight download   weight bytes / network bandwidth; 0 when the weights are already on the node
    load to GPU       weight bytes / nodes / disk read speed (nodes load in parallel)
    engine init       compile + CUDA graphs (none when eager) + per-node init × (nodes − 1)
    first inference   the given first-token time
Defaults are read from ColdStartAssumptions (they are assumptions, shown with the figure); overridden
assumptions are explicit numbers here.
"""

from __future__ import annotations

import pytest

from wizard.sizing.cold_start import ColdStartAssumptions, cold_start

GB = 1e9
LLAMA_8B_BYTES = 2 * 8_030_261_248  # bf16 weights of Llama-3.1-8B
LLAMA_405B_BYTES = 810e9
NAMES = ["GPU node bring-up", "image pull", "weight download", "load to GPU", "engine init", "first inference"]


def stages(cs) -> dict[str, float]:
    assert [s.name for s in cs.stages] == NAMES
    return {s.name: s.seconds for s in cs.stages}


def approx(x):
    return pytest.approx(x, rel=1e-12)


def test_default_assumptions_written_out():
    a = ColdStartAssumptions()
    cs = cold_start(LLAMA_8B_BYTES, 1, 0.07)
    got = stages(cs)
    assert got["GPU node bring-up"] == approx(a.node_bringup_s)
    assert got["image pull"] == approx(a.image_bytes / a.registry_bytes_s)
    assert got["weight download"] == approx(LLAMA_8B_BYTES / a.network_bytes_s)
    assert got["load to GPU"] == approx(LLAMA_8B_BYTES / a.disk_bytes_s)
    assert got["engine init"] == approx(a.compile_s + a.cuda_graphs_s)  # one node: no node groups
    assert got["first inference"] == approx(0.07)
    assert cs.total_s == approx(sum(got.values()))


def test_default_values_as_documented():
    """The documented defaults: a GPU node in 240 s, a 10 GB image pulled at 0.1 GB/s, 1 GB/s download, the model
    volume read at 0.5 GB/s, 55 s compile, 15 s graphs: minutes, not seconds."""
    cs = cold_start(LLAMA_8B_BYTES, 1, 0.5)
    got = stages(cs)
    assert got["GPU node bring-up"] == approx(240.0)
    assert got["image pull"] == approx(100.0)
    assert got["weight download"] == approx(16.060522496)
    assert got["load to GPU"] == approx(32.121044992)
    assert got["engine init"] == approx(70.0)
    assert cs.total_s == approx(240.0 + 100.0 + 16.060522496 + 32.121044992 + 70.0 + 0.5)


def test_overridden_assumptions():
    a = ColdStartAssumptions(image_bytes=6 * GB, registry_bytes_s=1.5 * GB, network_bytes_s=2.5 * GB,
                             disk_bytes_s=4 * GB, compile_s=30.0, cuda_graphs_s=5.0, per_node_init_s=20.0,
                             node_bringup_s=0.0)
    cs = cold_start(100 * GB, 1, 1.25, a=a)
    got = stages(cs)
    assert got == {"GPU node bring-up": 0.0, "image pull": approx(4.0), "weight download": approx(40.0),
                   "load to GPU": approx(25.0), "engine init": approx(35.0), "first inference": approx(1.25)}
    assert cs.total_s == approx(105.25)
    bases = {s.name: s.basis for s in cs.stages}
    assert "6 GB" in bases["image pull"] and "1.5 GB/s" in bases["image pull"]
    assert "100.0 GB" in bases["weight download"] and "2.5 GB/s" in bases["weight download"]
    assert "4 GB/s" in bases["load to GPU"]
    assert "compile 30 s" in bases["engine init"] and "CUDA graphs 5 s" in bases["engine init"]


def test_cached_weights_remove_the_download_only():
    cold = cold_start(LLAMA_8B_BYTES, 1, 0.5)
    warm = cold_start(LLAMA_8B_BYTES, 1, 0.5, a=ColdStartAssumptions(weights_cached=True))
    c, w = stages(cold), stages(warm)
    assert w["weight download"] == 0
    assert {k: v for k, v in w.items() if k != "weight download"} == {k: v for k, v in c.items() if k != "weight download"}
    assert warm.total_s == approx(cold.total_s - LLAMA_8B_BYTES / 1e9)
    assert "already on the node" in warm.stages[2].basis


@pytest.mark.parametrize("nodes", [2, 3, 4])
def test_multi_node_loads_in_parallel_and_adds_per_node_init(nodes):
    """810 GB over `nodes` machines: each loads 810 / nodes GB at 0.5 GB/s; each extra node adds 10 s of groups.
    The download is the whole checkpoint (every node fetches its share; modelled as one stream)."""
    cs = cold_start(LLAMA_405B_BYTES, nodes, 2.0)
    got = stages(cs)
    assert got["weight download"] == approx(810.0)
    assert got["load to GPU"] == approx(810e9 / nodes / 0.5e9)
    assert got["engine init"] == approx(55.0 + 15.0 + 10.0 * (nodes - 1))
    assert f"{nodes - 1} × 10 s" in cs.stages[4].basis
    one = cold_start(LLAMA_405B_BYTES, 1, 2.0)
    assert stages(one)["engine init"] == approx(70.0)
    assert "node groups" not in one.stages[4].basis


def test_per_node_init_override_multiplies_by_extra_nodes():
    cs = cold_start(LLAMA_405B_BYTES, 3, 2.0, a=ColdStartAssumptions(per_node_init_s=45.0))
    assert stages(cs)["engine init"] == approx(55.0 + 15.0 + 2 * 45.0)


def test_eager_removes_compile_and_graphs_but_keeps_node_groups():
    assert stages(cold_start(LLAMA_8B_BYTES, 1, 0.5, enforce_eager=True))["engine init"] == 0
    multi = cold_start(LLAMA_405B_BYTES, 2, 2.0, enforce_eager=True)
    assert stages(multi)["engine init"] == approx(10.0)
    assert "eager" in multi.stages[4].basis
    compiled = cold_start(LLAMA_8B_BYTES, 1, 0.5)
    eager = cold_start(LLAMA_8B_BYTES, 1, 0.5, enforce_eager=True)
    assert compiled.total_s - eager.total_s == approx(55.0 + 15.0)


def test_bigger_weights_never_start_faster():
    totals = [cold_start(b, 1, 0.5).total_s for b in (1e9, 16e9, 70e9, 140e9)]
    assert totals == sorted(totals)
    assert len(set(totals)) == len(totals)
