"""'did you mean X?' (#16): a model, a GPU id or an answers key that names nothing is refused with one line ending
with the nearest catalog id or key; `models ID` shows one model's provenance; `gpus --json` lists the GPU catalog.

No test reaches the network: test_hub's fixtures refuse any connection that is not the loopback interface and
point huggingface_hub at a fake Hub on 127.0.0.1 (or switch it offline); a model name that must never reach the
Hub is resolved with wizard.sources.hub.load_hub replaced by a failure.
"""

from __future__ import annotations

import io
import json
import socket

import pytest

from cli_run import assert_one_line_error, run_main
from test_hub import go_offline, hub, no_network, point_at, server  # noqa: F401  (fixtures: no network, fake Hub)
from wizard.sources.catalog import DATA, gpu_catalog, model_entries
from wizard.sources.suggest import did_you_mean, gpu_suggestions, model_suggestions

GPU_IDS = [g["id"] for g in json.loads((DATA / "gpus.json").read_text(encoding="utf-8"))["gpus"]]
TYPO, MEANT = "Qwen/Qwen2.5-7B-Instuct", "Qwen/Qwen2.5-7B-Instruct"


def line(run) -> str:
    return run.err.strip()


@pytest.fixture
def no_hub(monkeypatch):
    """The Hub must not even be asked (a bare name, a catalog lookup)."""
    import wizard.sources.hub

    def refuse(*args, **kwargs):
        raise AssertionError(f"the Hub was asked for {args}")

    monkeypatch.setattr(wizard.sources.hub, "load_hub", refuse)


@pytest.fixture
def offline(hub, monkeypatch):  # noqa: F811
    """huggingface_hub offline (HF_HUB_OFFLINE), with an empty cache of this test's own."""
    go_offline(monkeypatch)
    return hub


def closed_port() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}"


# ---------------------------------------------------------------- the model argument


@pytest.mark.parametrize("bare", ["Qwen2.5-7B-Instruct", "qwen2.5-7b-instruct", "Qwen2.5-7B-Instuct"])
def test_a_bare_name_suggests_the_catalog_id_without_asking_the_hub(no_hub, bare):
    r = run_main("size", bare)
    assert_one_line_error(r, "model", repr(bare), "owner/name")
    assert line(r).endswith(f"did you mean {MEANT}?"), line(r)


def test_a_bare_name_of_a_llama_suggests_its_owner(no_hub):
    r = run_main("size", "Llama-3.1-8B-Instruct", "--json")
    assert_one_line_error(r, "model")
    assert line(r).endswith("did you mean meta-llama/Llama-3.1-8B-Instruct?"), line(r)


def test_a_typo_offline_suggests_the_catalog_id(offline):
    r = run_main("size", TYPO, "--json")
    assert_one_line_error(r, "model", repr(TYPO), "HF_HUB_OFFLINE")
    assert line(r).endswith(f"did you mean {MEANT}?"), line(r)
    assert "use a bundled catalog id" not in line(r)  # the suggestion is the way out: not said twice
    assert offline.requests == []


def test_a_typo_the_hub_does_not_know_is_looked_up_first_then_suggested(hub):  # noqa: F811
    r = run_main("size", TYPO)
    assert_one_line_error(r, "model", "repo not found on the Hugging Face Hub")
    assert line(r).endswith(f"did you mean {MEANT}?"), line(r)
    assert any(TYPO in q.path for q in hub.requests)  # a Hub id one letter off may be a real model: asked first


def test_a_typo_with_the_hub_unreachable_suggests_the_catalog_id(hub, monkeypatch):  # noqa: F811
    point_at(monkeypatch, closed_port())
    r = run_main("size", TYPO)
    assert_one_line_error(r, "model", "unreachable")
    assert line(r).endswith(f"did you mean {MEANT}?"), line(r)


def test_a_hub_model_one_letter_off_a_catalog_id_is_read_from_the_hub(hub, monkeypatch):  # noqa: F811
    monkeypatch.setitem(hub.repos, TYPO, hub.repos["fake/dense"])
    r = run_main("size", TYPO, "--json")
    assert r.code == 0, r.err
    assert r.json()["model"]["id"] == TYPO


def test_a_gated_repo_exists_so_nothing_is_suggested(hub, monkeypatch):  # noqa: F811
    monkeypatch.setitem(hub.repos, TYPO, hub.repos["fake/gated"])
    r = run_main("size", TYPO)
    assert_one_line_error(r, "model", "gated")
    assert "did you mean" not in line(r)


def test_nothing_close_means_no_suggestion(offline):
    r = run_main("size", "someone/not-in-the-catalog")
    assert_one_line_error(r, "model", "catalog")
    assert "did you mean" not in line(r)
    assert model_suggestions("gpt2") == [] and model_suggestions("x/y") == []


def test_a_stray_slash_is_no_folder_but_suggests_the_id(no_hub):
    r = run_main("size", MEANT + "/")
    assert_one_line_error(r, "model", "no such folder")
    assert line(r).endswith(f"did you mean {MEANT}?"), line(r)


def test_the_answers_file_and_set_model_get_the_suggestion(no_hub, tmp_path):
    f = tmp_path / "answers.yaml"
    f.write_text("model: Qwen2.5-7B-Instruct\n")
    r = run_main("plan", "--answers", str(f))
    assert_one_line_error(r, "model", "'Qwen2.5-7B-Instruct'")
    assert line(r).endswith(f"did you mean {MEANT}?"), line(r)
    f.write_text(f"model: {MEANT}\n")
    r = run_main("plan", "--answers", str(f), "--set", "model=Qwen3-8B", "--json")
    assert_one_line_error(r, "model", "'Qwen3-8B'")
    assert line(r).endswith("did you mean Qwen/Qwen3-8B?"), line(r)


def test_ask_shows_the_suggestion_and_asks_again(no_hub, monkeypatch, tmp_path):
    from prompt_toolkit.input import create_pipe_input
    from prompt_toolkit.output import DummyOutput
    from rich.console import Console

    from wizard.prompts import run_ask

    monkeypatch.setenv("WIZARD_STATE_DIR", str(tmp_path / "state"))
    buf = io.StringIO()
    with create_pipe_input() as pipe:
        pipe.send_text("\x15Qwen2.5-7B-Instruct\r\x03")  # clear the default, type, Enter; then Ctrl+C
        code = run_ask(pipe, DummyOutput(), console=Console(file=buf, width=300))
    assert code == 130
    text = buf.getvalue()
    assert f"model: 'Qwen2.5-7B-Instruct' is not accepted; a Hub repo id has an owner (owner/name); did you mean " \
           f"{MEANT}?" in text
    assert text.count("[1] Which model do you want to serve?") == 2


def test_the_wizard_shows_the_suggestion_inline(no_hub):
    import asyncio

    from textual.widgets import Input

    from wizard.tui.app import WizardApp

    async def run():
        app = WizardApp(resume=False, cursor_blink=False)
        async with app.run_test(size=(140, 32)) as pilot:
            app.screen.query_one("#answer", Input).value = "Qwen2.5-7B-Instruct"
            await pilot.press("enter")
            await pilot.pause()
            return str(app.screen.query_one("#error").render()), app.session.question.var

    message, now = asyncio.run(run())
    assert now == "model"
    assert message.endswith(f"did you mean {MEANT}?"), message


# ---------------------------------------------------------------- GPU ids


def test_a_gpu_family_suggests_its_cards():
    r = run_main("size", MEANT, "--gpu", "h100")
    assert_one_line_error(r, "gpu", "'h100'")
    assert line(r).endswith("did you mean one of h100-sxm-80gb, h100-pcie-80gb, h100-nvl-94gb?"), line(r)
    assert "a100" not in line(r)  # the suggestion, not the list of all ids


@pytest.mark.parametrize(("typed", "expected"), [
    ("H100 SXM", ["h100-sxm-80gb"]),
    ("h20", ["h20-96gb"]),  # word by word: not h200-sxm-141gb
    ("4090", ["rtx4090-24gb"]),
    ("rtx pro 6000", ["rtxpro6000-server-96gb", "rtxpro6000-ws-96gb"]),
    ("a100-80gb", ["a100-sxm-80gb", "a100-pcie-80gb"]),
    ("h100-sxm5-80gb", ["h100-sxm-80gb"]),
])
def test_gpu_suggestions(typed, expected):
    assert gpu_suggestions(typed, GPU_IDS) == expected


def test_a_gpu_id_near_nothing_lists_the_accepted_ids():
    r = run_main("size", MEANT, "--gpu", "tpu")
    assert_one_line_error(r, "gpu", "'tpu'", "accepted: " + ", ".join(GPU_IDS))
    assert "did you mean" not in line(r)


def test_check_log_gpu_gets_the_suggestion_too(tmp_path):
    log = tmp_path / "vllm.log"
    log.write_text("INFO 01-01 00:00:00 [__init__.py:1] vLLM API server version 0.11.0\n")
    r = run_main("check-log", str(log), "--model", MEANT, "--gpu", "h100")
    assert_one_line_error(r, "gpu", "did you mean one of h100-sxm-80gb, h100-pcie-80gb, h100-nvl-94gb?")


# ---------------------------------------------------------------- answers-file keys


def test_a_misspelt_answers_key_suggests_the_key(tmp_path):
    f = tmp_path / "answers.yaml"
    f.write_text(f"model: {MEANT}\npeak_concurency: 4\n")
    r = run_main("plan", "--answers", str(f))
    assert_one_line_error(r, "answers.yaml: peak_concurency", "unknown key")
    assert line(r).endswith("did you mean peak_concurrency?"), line(r)
    assert "accepted keys" not in line(r) and "ttft_p99_ms" not in line(r)  # one key, not the list of all
    f.write_text(f"model: {MEANT}\n")
    r = run_main("plan", "--answers", str(f), "--set", "peak_concurency=4")
    assert_one_line_error(r, "--set: peak_concurency", "unknown key")
    assert line(r).endswith("did you mean peak_concurrency?"), line(r)


# ---------------------------------------------------------------- models ID


def test_models_id_shows_the_provenance(no_hub, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    r = run_main("models", "meta-llama/Llama-3.1-8B")
    assert r.code == 0, r.err
    for words in ("meta-llama/Llama-3.1-8B (bundled catalog)", "Llama 3.1 · released 2024-07",
                  "meta-llama/Meta-Llama-3.1-8B", "meta-llama__Meta-Llama-3.1-8B.json",
                  "the Hub repo's config.json", "LlamaForCausalLM", "8,030,261,248 (8.0 B)",
                  "counted from the model definition", "131,072 tokens", "bf16", "vLLM 0.33.0 serves it"):
        assert words in r.out, (words, r.out)


def test_models_id_says_when_vllm_does_not_serve_it(no_hub, monkeypatch):
    monkeypatch.setenv("COLUMNS", "250")
    r = run_main("models", "meta-llama/Llama-3.2-90B-Vision-Instruct")
    assert r.code == 0, r.err
    assert "not served" in r.out and "MllamaForConditionalGeneration" in r.out


def test_models_id_json(no_hub):
    r = run_main("models", "qwen/qwen2.5-7b-instruct-awq", "--json")  # any case, as every catalog lookup
    assert r.code == 0, r.err
    d = r.json()
    assert d["id"] == "Qwen/Qwen2.5-7B-Instruct-AWQ" and d["family"] == "Qwen2.5"
    assert d["architecture"] == "Qwen2ForCausalLM" and d["checkpoint_format"] == "int4"
    assert d["max_context_tokens"] == 32768
    assert d["config_file"] == "Qwen__Qwen2.5-7B-Instruct-AWQ.json" and "vramfit" in d["config_source"]
    assert d["config_of"] is None and d["served"] is True and d["unserved"] is None
    assert d["params"] > 7e9 and d["params_source"] == "computed from config.json (tensor shapes)"
    assert d["params_stated"] is False and d["vllm_version"] == "0.33.0" and "AWQ" in d["note"]
    listed = {m["id"]: m for m in run_main("models", "--json").json()}[d["id"]]
    for key in ("family", "aliases", "architecture", "params", "active_params", "released", "unserved"):
        assert d[key] == listed[key], key  # the same figures as the listing


def test_models_id_json_of_every_entry_says_where_its_facts_come_from(no_hub):
    keys = None
    for e in model_entries():
        r = run_main("models", e.id, "--json")
        assert r.code == 0, (e.id, r.err)
        d = r.json()
        keys = keys or set(d)
        assert set(d) == keys, e.id
        assert d["config_source"] and d["params_source"] and d["params"] > 0, e.id
        assert d["params_stated"] == bool(e.params), e.id
        assert (d["config_of"] is None) == (e.config_of is None), e.id


def test_models_takes_a_bare_name_of_one_catalog_id(no_hub):
    r = run_main("models", "Qwen2.5-7B-Instruct", "--json")  # the catalog is all `models` looks in
    assert r.code == 0, r.err
    assert r.json()["id"] == MEANT


@pytest.mark.parametrize("args", [(TYPO,), (TYPO, "--json"), ("Qwen2.5-7B-Instuct",)])
def test_models_unknown_id_is_one_line_with_the_suggestion(no_hub, args):
    r = run_main("models", *args)
    assert_one_line_error(r, "model", "not in the bundled catalog")
    assert line(r).endswith(f"did you mean {MEANT}?"), line(r)


def test_models_unknown_id_far_from_everything(no_hub):
    r = run_main("models", "zzz")
    assert_one_line_error(r, "model", "'zzz'", "not in the bundled catalog")
    assert "did you mean" not in line(r)


def test_models_id_and_family_together_are_refused(no_hub):
    assert_one_line_error(run_main("models", MEANT, "--family", "Qwen2.5"), "--family", "not both")


# ---------------------------------------------------------------- gpus --json


def test_gpus_json_lists_every_catalog_gpu_with_every_field():
    r = run_main("gpus", "--json")
    assert r.code == 0, r.err
    listed = r.json()
    assert [g["id"] for g in listed] == GPU_IDS == [g.id for g in gpu_catalog()]
    documented = {"id", "name", "vendor", "memory_reported_bytes", "memory_marketed_bytes", "memory_reported_source",
                  "memory_type", "mem_bw_bytes_s", "bf16_flops", "fp8_flops", "fp4_flops", "int8_ops", "fp8_support",
                  "fp4_support", "interconnect", "interconnect_bytes_s", "nvlink", "pcie_p2p", "gpus_per_node", "tdp_w",
                  "compute_capability", "notes", "sources"}
    for g in listed:
        assert set(g) == documented, g["id"]
        assert isinstance(g["memory_reported_bytes"], int) and g["memory_reported_bytes"] > 0, g["id"]
        assert g["sources"], g["id"]
    text = (DATA.parents[2] / "docs" / "json-output.md").read_text(encoding="utf-8")
    section = text[text.index("## `gpus --json`"):]
    for field in documented:
        assert f"`{field}`" in section, field


def test_did_you_mean_wording():
    assert did_you_mean([]) == ""
    assert did_you_mean(["a"]) == "did you mean a?"
    assert did_you_mean(["a", "b"]) == "did you mean one of a, b?"


def test_a_gpu_answer_in_an_answers_file_suggests_the_close_ids(tmp_path):
    answers = tmp_path / "a.yaml"
    answers.write_text("model: Qwen/Qwen3-8B\ngpu: h100\npeak_concurrency: 8\n")
    r = run_main("plan", "--answers", str(answers))
    assert_one_line_error(r, "gpu", "did you mean one of h100-sxm-80gb, h100-pcie-80gb, h100-nvl-94gb?")
