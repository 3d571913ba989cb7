"""The 2026 catalog additions (B300, RTX PRO 6000 Server/Workstation, RTX 5090, H20, MI355X, DGX Spark / GB10), the
FP4 fields and the filled BF16 gaps: every card loads, its memory is what the driver reports, FP4 is claimed only by
cards with FP4 tensor cores, and each BF16 figure is the datasheet number named beside it."""

from __future__ import annotations

import json

import pytest

from wizard.cli import main
from wizard.sources.catalog import DATA, find_gpu, gpu_catalog
from wizard.specs import GpuSpec

NEW_CARDS = ("b300-sxm-288gb", "rtxpro6000-server-96gb", "rtxpro6000-ws-96gb", "rtx5090-32gb", "h20-96gb",
             "mi355x-288gb", "gb10-128gb")

# Cards with hardware FP4 tensor cores: Blackwell (B200, GB200, B300, RTX PRO 6000, RTX 5090, GB10) and AMD CDNA4.
FP4_CARDS = {"b200-180gb", "gb200", "b300-sxm-288gb", "rtxpro6000-server-96gb", "rtxpro6000-ws-96gb", "rtx5090-32gb",
             "gb10-128gb", "mi355x-288gb"}

# Dense BF16 FLOP/s as the datasheets state them (None: the card has no BF16 tensor figure).
DATASHEET_BF16 = {
    # NVIDIA HGX B300: 36 PFLOPS FP16/BF16 with sparsity per 8 GPUs -> 2.25 PFLOPS dense per GPU
    # (aiconfigurator-core 0.12.0 systems/b300_sxm.yaml; NVIDIA/cosmos-framework PR #114)
    "b300-sxm-288gb": 2.25e15,
    # NVIDIA aiconfigurator rtx_pro_6000_server.yaml: 467.8 TFLOPS dense scaled to the observed 2430 MHz SM clock
    # (NVIDIA's Server Edition datasheet gives no BF16 figure)
    "rtxpro6000-server-96gb": 467.8e12,
    # NVIDIA RTX PRO Blackwell architecture whitepaper, Table 4: Workstation Edition BF16 (FP32 accumulate) 503.8 dense
    "rtxpro6000-ws-96gb": 503.8e12,
    # NVIDIA RTX Blackwell architecture whitepaper, Table 3: RTX 5090 BF16 with FP32 accumulate 209.5 dense / 419 sparse
    "rtx5090-32gb": 209.5e12,
    # NVIDIA H20: 148 TFLOPS BF16/FP16 (no public NVIDIA datasheet; torchtitan get_peak_flops via Tom's Hardware)
    "h20-96gb": 148e12,
    # AMD Instinct MI355X product page: 2.5 PFLOPS BF16 matrix, dense (stas00/ml-engineering TFLOPS table; torchtitan)
    "mi355x-288gb": 2.5e15,
    # NVIDIA publishes only FP4 (1 PFLOP with sparsity) and ~31 TFLOPS FP32 for GB10: no BF16 figure
    "gb10-128gb": None,
    # NVIDIA H100 page, H100 NVL column: BF16 1,671 TFLOPS with sparsity -> 835.5 dense
    "h100-nvl-94gb": 835.5e12,
    # Baseten "NVIDIA A10 vs A10G": A10G tensor compute 70 TF (the A10's datasheet says 125); no NVIDIA A10G datasheet
    "a10g-24gb": 70e12,
    # NVIDIA RTX Blackwell whitepaper Table 3: RTX 3090 BF16 with FP32 accumulate 71.2 dense / 142.4 sparse
    "rtx3090-24gb": 71.2e12,
    # NVIDIA T4 datasheet: Turing has no BF16 tensor cores (65 TFLOPS is FP16 mixed precision)
    "t4-16gb": None,
}


@pytest.mark.parametrize("gpu_id", NEW_CARDS)
def test_each_new_card_loads_by_id(gpu_id):
    g = find_gpu(gpu_id)
    assert isinstance(g, GpuSpec) and g.id == gpu_id
    assert find_gpu(gpu_id.upper()) == g  # ids are case-insensitive like the rest of the catalog
    assert g.sources and all(s.strip() for s in g.sources)
    assert g.memory_reported_source.startswith(("observed:", "estimated:"))
    assert g.mem_bw_bytes_s > 0 and g.gpus_per_node >= 1


def _marketed_as_gib_bytes(g: GpuSpec) -> float:
    """The marketed figure read as GiB (vendors print binary capacities as "GB"): decimal GB x 2**30, or the bytes
    themselves when the catalog already stores GiB (MI355X, GB200)."""
    m = g.memory_marketed_bytes
    return m / 10**9 * 2**30 if m % 10**9 == 0 else m


@pytest.mark.parametrize("gpu", gpu_catalog(), ids=lambda g: g.id)
def test_reported_memory_never_exceeds_the_marketed_capacity_read_as_gib(gpu):
    # The header's rules: torch/HIP see less than the physical stacks or chips (driver, ECC, firmware reservations);
    # the "marketed rule" estimate is the marketed figure as GiB less 1% (AMD: x 191.98/192).
    assert gpu.memory_reported_bytes <= _marketed_as_gib_bytes(gpu)
    if "taken as GiB, less 1%" in gpu.memory_reported_source:
        assert gpu.memory_reported_bytes == pytest.approx(0.99 * _marketed_as_gib_bytes(gpu), rel=1e-6)


def test_observed_totals_of_the_new_cards():
    gib = 2**30
    assert find_gpu("b300-sxm-288gb").memory_reported_bytes == 287428771840  # 267.69 GiB of 288 GB
    assert find_gpu("rtx5090-32gb").memory_reported_bytes == 33668857856  # 31.36 GiB
    assert find_gpu("h20-96gb").memory_reported_bytes == 97285 * 2**20  # torch total_memory=97285MB
    assert find_gpu("rtxpro6000-server-96gb").memory_reported_bytes / gib == pytest.approx(94.97, abs=0.005)
    assert find_gpu("rtxpro6000-ws-96gb").memory_reported_bytes / gib == pytest.approx(95.59, abs=0.005)
    assert find_gpu("mi355x-288gb").memory_reported_bytes / gib == pytest.approx(287.98, abs=0.005)
    spark = find_gpu("gb10-128gb")
    assert spark.memory_reported_bytes / gib == pytest.approx(121.69, abs=0.005)
    for gpu_id in NEW_CARDS:
        assert find_gpu(gpu_id).memory_reported_source.startswith("observed:"), gpu_id


def test_the_unified_memory_card_says_what_share_cuda_reports():
    spark = find_gpu("gb10-128gb")
    assert spark.memory_type == "LPDDR5X" and spark.gpus_per_node == 1 and not spark.nvlink
    notes = " ".join(spark.notes)
    assert "121.69 GiB" in notes and "shared" in notes  # the share CUDA reports, and that the OS draws on the pool


def test_fp4_support_only_on_cards_with_fp4_tensor_cores():
    supported = {g.id for g in gpu_catalog() if g.fp4_support}
    assert supported == FP4_CARDS
    for g in gpu_catalog():
        if g.fp4_flops is not None:
            assert g.fp4_support, g.id  # a dense FP4 figure only where the hardware has FP4
            assert g.fp4_flops >= (g.fp8_flops or 0), g.id  # FP4 is never slower than FP8 on the same card
        if g.vendor == "nvidia" and g.compute_capability and int(g.compute_capability.split(".")[0]) < 10:
            assert not g.fp4_support, g.id  # Ampere, Ada, Hopper: no FP4 tensor cores
    assert find_gpu("b200-180gb").fp4_flops == 9.0e15
    assert find_gpu("gb200").fp4_flops == 1.0e16


def test_fp4_fields_default_when_an_entry_omits_them(tmp_path, monkeypatch):
    from wizard.sources import catalog

    raw = json.loads((DATA / "gpus.json").read_text(encoding="utf-8"))
    for g in raw["gpus"]:
        g.pop("fp4_flops", None)
        g.pop("fp4_support", None)
    (tmp_path / "gpus.json").write_text(json.dumps(raw), encoding="utf-8")
    monkeypatch.setattr(catalog, "DATA", tmp_path)
    catalog.gpu_catalog.cache_clear()
    try:
        gpus = catalog.gpu_catalog()
        assert gpus and all(g.fp4_flops is None and g.fp4_support is False for g in gpus)
    finally:
        catalog.gpu_catalog.cache_clear()  # the next caller reads the real catalog again


@pytest.mark.parametrize("gpu_id, bf16", DATASHEET_BF16.items())
def test_bf16_is_the_datasheet_number(gpu_id, bf16):
    assert find_gpu(gpu_id).bf16_flops == bf16


def test_no_catalog_card_lacks_bf16_without_saying_why():
    for g in gpu_catalog():
        if g.bf16_flops is None:
            assert any("bf16" in n.lower() for n in g.notes), g.id


def test_compute_capabilities_of_the_new_cards():
    # NVIDIA's CUDA GPUs page: B300 10.3, RTX PRO 6000 / RTX 5090 12.0, GB10 12.1; H20 reports 9.0 (torch); AMD: none
    expected = {"b300-sxm-288gb": "10.3", "rtxpro6000-server-96gb": "12.0", "rtxpro6000-ws-96gb": "12.0",
                "rtx5090-32gb": "12.0", "gb10-128gb": "12.1", "h20-96gb": "9.0", "mi355x-288gb": None}
    assert {i: find_gpu(i).compute_capability for i in expected} == expected
    assert {find_gpu(i).memory_type for i in ("rtxpro6000-server-96gb", "rtxpro6000-ws-96gb", "rtx5090-32gb")} == {"GDDR7"}
    assert {find_gpu(i).memory_type for i in ("b300-sxm-288gb", "h20-96gb", "mi355x-288gb")} == {"HBM"}


def test_gpus_command_lists_every_card(capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "240")
    assert main(["gpus"]) == 0
    out = capsys.readouterr().out
    for g in gpu_catalog():
        assert g.id in out, g.id
    assert main(["gpus", "--json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [g["id"] for g in listed] == [g.id for g in gpu_catalog()]
    assert set(NEW_CARDS) <= {g["id"] for g in listed}
    b300 = next(g for g in listed if g["id"] == "b300-sxm-288gb")
    assert b300["fp4_support"] is True and b300["fp4_flops"] == 14e15
