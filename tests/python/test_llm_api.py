"""LLM runs and parallel modes from Python: npusim.llm(...) against `npusim llm`, simulate(...,
parallel=) against `npusim run --parallel`, and load(..., kv_cache=) for ONNX decoders.

Run through CTest (PYTHONPATH=build/python, NPUSIM_BINARY=build/npusim, NPUSIM_DECODER_ONNX=a
cached-attention decoder step written by tests/python/write_decoder_onnx.cpp).
"""
import json
import os
import subprocess

import pytest

import npusim

NPUSIM = os.environ.get("NPUSIM_BINARY", "npusim")
DECODER = os.environ.get("NPUSIM_DECODER_ONNX", "")

# A small Llama (GQA group 2, tied head): hidden 256, 4 layers, 8 heads of 32 over 4 KV heads
# (tests/engine/test_llm_run.cpp's kSmall).
SMALL = {"model_type": "llama", "hidden_size": 256, "num_hidden_layers": 4, "num_attention_heads": 8,
         "num_key_value_heads": 4, "intermediate_size": 768, "vocab_size": 2048,
         "max_position_embeddings": 4096, "tie_word_embeddings": True}


@pytest.fixture(scope="module")
def small_model(tmp_path_factory):
    path = tmp_path_factory.mktemp("llm") / "config.json"
    path.write_text(json.dumps(SMALL))
    return str(path)


def cli(*args):
    proc = subprocess.run([NPUSIM, *args], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return proc


def without_wall(summary):
    """summary.json's content without the run's wall time (the one figure two runs differ in)."""
    doc = json.loads(json.dumps(summary))
    doc["llm"].pop("wall_seconds")
    return doc


def test_llm_gives_the_figures_npusim_llm_gives(small_model, tmp_path):
    # The same spec both ways: int4 weights in groups of 64, KV cache int8, batch 2, 3 of 4
    # decode steps simulated (first, last, one between) and one interpolated.
    out = tmp_path / "cli"
    cli("llm", "--quiet", "--model", small_model, "--config", "edge-s", "--set", "npu.sram.capacity=1MiB",
        "--prompt", "32", "--generate", "4", "--batch", "2", "--weight-dtype", "int4", "--group-size", "64",
        "--kv-dtype", "int8", "--decode-samples", "3", "--out", str(out))
    expected = json.loads((out / "summary.json").read_text())
    hw = npusim.Config("edge-s", set={"npu.sram.capacity": "1MiB"})
    folder = tmp_path / "py"
    r = npusim.llm(small_model, hw, prompt=32, generate=4, batch=2, weight_dtype="int4", group_size=64,
                   kv_dtype="int8", decode_samples=3, out=folder, quiet=True)
    assert without_wall(r.summary) == without_wall(expected)  # every figure, exactly
    assert r.ttft_seconds == expected["llm"]["ttft_seconds"]
    assert r.tokens_per_second == expected["llm"]["decode"]["tokens_per_second"]
    # tokens/s = batch x generate / decode seconds = 2 x 4 / the steps' sum.
    assert r.tokens_per_second == pytest.approx(8 / sum(s.seconds for s in r.steps))
    # Samples at steps 0 and 3, then the midpoint 0 + 3 // 2 = 1; step 2 interpolated between 1 and 3.
    assert [s.simulated for s in r.steps] == [True, True, False, True]
    assert [s.context for s in r.steps] == [33, 34, 35, 36]
    assert r.widths.weights == expected["llm"]["widths"]["weights"]
    # out= writes the folder `npusim llm --out` writes.
    assert json.loads((folder / "summary.json").read_text())["llm"]["ttft_seconds"] == r.ttft_seconds
    assert (folder / "prefill" / "summary.json").is_file() and (folder / "decode" / "summary.json").is_file()


def test_llm_steps_as_a_table(small_model):
    pandas = pytest.importorskip("pandas")
    r = npusim.llm(small_model, "edge-s", prompt=16, generate=2, quiet=True)
    df = r.to_pandas()
    assert isinstance(df, pandas.DataFrame)
    assert list(df["context"]) == [17, 18]
    assert "npusim.LlmResult" in repr(r)


def test_llm_context_runs_the_decode_after_cached_tokens(small_model):
    # 40 cached tokens + a 16-token prompt: the two decode steps run at contexts 57 and 58.
    r = npusim.llm(small_model, "edge-s", prompt=16, generate=2, context=40, quiet=True)
    assert r.block["context"] == 40
    assert [s["context"] for s in r.block["decode"]["steps"]] == [57, 58]
    with pytest.raises(npusim.InputError, match=r"^context: expected an integer from 0 to 1000000, found -1"):
        npusim.llm(small_model, "edge-s", context=-1)


def test_llm_expert_routing_is_checked_and_recorded(small_model):
    # A dense model takes the routing (it has no experts to route); an unknown one is refused.
    with pytest.raises(npusim.InputError, match=r"^expert_routing random: expected uniform or concentrated"):
        npusim.llm(small_model, "edge-s", prompt=8, generate=1, expert_routing="random")
    with pytest.raises(TypeError, match=r"^expert_routing: expected uniform or concentrated"):
        npusim.llm(small_model, "edge-s", expert_routing=2)


def test_llm_bad_arguments_name_the_argument(small_model, tmp_path):
    with pytest.raises(npusim.InputError) as e:
        npusim.llm(small_model, "edge-s", weight_dtype="int3")
    assert str(e.value).startswith("weight_dtype int3: expected int4, int8, fp16, bf16 or fp32, found 'int3'")
    assert "--" not in str(e.value)
    with pytest.raises(npusim.InputError, match=r"^act_dtype int4: expected int8, fp16 or bf16"):
        npusim.llm(small_model, "edge-s", act_dtype="int4")
    with pytest.raises(npusim.InputError, match=r"^prompt: expected an integer from 1 to 1000000, found 0"):
        npusim.llm(small_model, "edge-s", prompt=0)
    with pytest.raises(npusim.InputError, match=r"^prompt: expected an integer from 1 to 1000000, found 1180591620717411303424"):
        npusim.llm(small_model, "edge-s", prompt=2**70)
    with pytest.raises(npusim.InputError, match=r"^decode_samples: expected 0 \(every step\) or at least 2"):
        npusim.llm(small_model, "edge-s", decode_samples=1)
    with pytest.raises(npusim.InputError, match=r"^fusion"):
        npusim.llm(small_model, "edge-s", fusion="greediest")
    with pytest.raises(TypeError, match=r"^prompt: expected an integer, found str '128'"):
        npusim.llm(small_model, "edge-s", prompt="128")
    with pytest.raises(TypeError, match=r"^zero_point: expected True or False, found int"):
        npusim.llm(small_model, "edge-s", zero_point=1)
    with pytest.raises(npusim.InputError, match="Mistral-9000"):
        npusim.llm("Mistral-9000", "edge-s")
    # Nothing was written for a refused call.
    with pytest.raises(npusim.InputError):
        npusim.llm(small_model, "edge-s", weight_dtype="int3", out=tmp_path / "never")
    assert not (tmp_path / "never").exists()


# -- parallel= -----------------------------------------------------------------------------

# Two 3x3 convs of 16 channels on a batch of 4 (tests/npu/test_multicore.cpp's CNN, smaller).
CNN = """name: cnn
inputs:
  - {name: image, shape: [4, 16, 28, 28]}
ops:
  - {name: conv1, op: conv2d, inputs: [image], out_channels: 16, kernel: 3, stride: 1, padding: 1}
  - {name: relu1, op: relu, inputs: [conv1]}
  - {name: conv2, op: conv2d, inputs: [relu1], out_channels: 16, kernel: 3, stride: 1, padding: 1}
  - {name: relu2, op: relu, inputs: [conv2]}
outputs: [relu2]
"""


@pytest.mark.parametrize("mode", ["data", "pipeline", "tensor", "auto"])
def test_simulate_parallel_gives_the_figures_of_npusim_run_parallel(tmp_path, mode):
    path = tmp_path / "cnn.yaml"
    path.write_text(CNN)
    out = tmp_path / "cli"
    # fusion none: four groups, so pipeline has a stage for each core.
    cli("run", "-w", str(path), "--config", "edge-m", "--set", "npu.cores=2", "--fusion", "none", "--parallel", mode,
        "--out", str(out))
    expected = json.loads((out / "summary.json").read_text())
    r = npusim.simulate(npusim.load(str(path)), npusim.Config("edge-m", set={"npu.cores": 2}), fusion="none",
                        parallel=mode)
    for key in ("cycles", "macs", "dram_read_bytes", "dram_write_bytes", "energy_j", "parallel", "cores"):
        assert r.summary.get(key) == expected.get(key), key
    # data: 2 copies of batch 2 on 2 cores; pipeline: 4 inputs through 2 stages; tensor: one
    # graph, each conv's 16 output channels split 8 + 8 (two segments, conv and relu each).
    assert r.summary["parallel"]["mode"] == mode
    assert r.summary["parallel"]["replicas"] == {"data": 2, "pipeline": 4, "tensor": 1, "auto": 1}[mode]
    if mode == "tensor":
        assert r.summary["parallel"]["segments"] == 2
    # auto: each conv is MAC-bound (7,225,344 MACs: 7.1 us at edge-m's 2.048e12 op/s, against
    # ~0.1 MB of DRAM traffic); split by channels or by batch both halve the MACs, channels also
    # reads the input twice and the output back, batch only the 2,304 B of weights twice: batch.
    if mode == "auto":
        assert r.summary["parallel"]["choice_counts"] == {"serial": 0, "channels": 0, "batch": 2}
        assert [c["split"] for c in r.summary["parallel"]["choices"]] == ["batch", "batch"]
    # Every MAC of the batch ran: 2 convs x 4 images x 28 x 28 x 16 x 16 x 9 = 14,450,688.
    assert r.macs == 2 * 4 * 28 * 28 * 16 * 16 * 9
    # One core, no parallel: the same MACs, and no parallel block.
    one = npusim.simulate(npusim.load(str(path)), "edge-m", fusion="none")
    assert one.macs == r.macs and "parallel" not in one.summary


def test_parallel_bad_mode_and_uneven_batch_name_the_argument(tmp_path):
    path = tmp_path / "cnn.yaml"
    path.write_text(CNN.replace("[4, 16", "[3, 16"))
    g = npusim.load(str(path))
    with pytest.raises(npusim.InputError, match=r"^parallel: expected none, data, pipeline, tensor or auto, found 'sideways'"):
        npusim.simulate(g, "edge-m", parallel="sideways")
    with pytest.raises(npusim.InputError) as e:
        npusim.simulate(g, npusim.Config("edge-m", set={"npu.cores": 2}), parallel="data")
    assert "npu.cores = 2, found batch 3" in str(e.value) and "--parallel" not in str(e.value)
    with pytest.raises(TypeError, match=r"^parallel: expected none, data, pipeline, tensor or auto, found int"):
        npusim.simulate(g, "edge-m", parallel=2)


# -- load(..., dims=, kv_cache=) -------------------------------------------------------------

needs_decoder = pytest.mark.skipif(not DECODER, reason="NPUSIM_DECODER_ONNX not set (run through CTest)")


@needs_decoder
def test_dims_and_kv_cache_load_a_decoder_step(tmp_path):
    # tests/workloads/decoder_models.h's cached_attention: x [1, 4, 16], 2 heads of 8, caches
    # [1, 2, past, 8]. past = 5: projections 3 x 4 x 16 x 16 = 3072 MACs, scores and context
    # 2 x (2 x 4 x 9 x 8) = 1152: 4224 MACs either way.
    append = npusim.load(DECODER, dims={"past": 5})
    copy = npusim.load(DECODER, dims={"past": 5}, kv_cache="copy")
    assert append.macs == copy.macs == 4224
    kinds = lambda g: [op.kind for op in g.ops()]
    assert kinds(append).count("concat") == 0  # the new rows appended in place
    assert kinds(copy).count("concat") == 2    # the whole caches copied, as --kv-cache copy
    # An empty cache (past = 0, a prefill) loads: 3072 + 2 x (2 x 4 x 4 x 8) = 3584 MACs.
    assert npusim.load(DECODER, dims={"past": 0}).macs == 3584
    # Simulated, each equals `npusim run --dim past=5 --kv-cache MODE` figure for figure; the
    # copy writes the whole caches on top: present [1, 2, 9, 8] = 144 int8 bytes each, in
    # whole 64-byte bursts (192 B) x 2 = 384 B more.
    writes = {}
    for mode, graph in (("append", append), ("copy", copy)):
        r = npusim.simulate(graph, "edge-s", fusion="none")
        out = tmp_path / mode
        cli("run", "-w", DECODER, "--config", "edge-s", "--fusion", "none", "--dim", "past=5", "--kv-cache", mode,
            "--out", str(out))
        expected = json.loads((out / "summary.json").read_text())
        for key in ("cycles", "macs", "dram_read_bytes", "dram_write_bytes"):
            assert r.summary[key] == expected[key], (mode, key)
        writes[mode] = r.dram_write_bytes
    assert writes["copy"] - writes["append"] == 2 * 192


@needs_decoder
def test_kv_cache_and_dims_bad_values_name_the_argument():
    with pytest.raises(npusim.InputError, match=r"^kv_cache: expected append or copy, found 'rewrite'"):
        npusim.load(DECODER, dims={"past": 5}, kv_cache="rewrite")
    with pytest.raises(npusim.InputError, match=r"past_len=3: expected the name of a symbolic dimension"):
        npusim.load(DECODER, dims={"past_len": 3})
    with pytest.raises(TypeError, match=r"^dims: expected a mapping"):
        npusim.load(DECODER, dims=[("past", 5)])


def test_llm_speculative_decoding_with_a_draft(small_model):
    # The model drafting for itself at acceptance 1 keeps every draft: 2 + 1 = 3 tokens a round,
    # so 6 tokens take 2 rounds of two draft steps and one 3-token verify step each.
    r = npusim.llm(small_model, "edge-s", prompt=8, generate=6, draft=small_model, draft_tokens=2, acceptance=1.0,
                   decode_samples=0, quiet=True)
    sp = r.speculative
    assert sp["tokens_per_round"] == 3.0
    assert sp["rounds"] == 2.0
    assert [x["context"] for x in sp["round_list"]] == [8, 11]
    assert sp["tokens_per_second"] == 6 / sp["seconds"]
    assert sp["speedup"] == sp["tokens_per_second"] / r.tokens_per_second
    assert r.memory_bytes["draft"] == r.weight_bytes + sp["kv_cache_bytes"]


def test_llm_speculative_arguments_are_checked(small_model):
    with pytest.raises(npusim.InputError, match=r"^acceptance: expected a probability from 0 to 1, found 1.5"):
        npusim.llm(small_model, "edge-s", draft=small_model, acceptance=1.5)
    with pytest.raises(TypeError, match=r"^acceptance: expected a probability from 0 to 1, found bool"):
        npusim.llm(small_model, "edge-s", draft=small_model, acceptance=True)
    with pytest.raises(npusim.InputError, match=r"^draft_tokens: expected an integer from 1 to 64, found 0"):
        npusim.llm(small_model, "edge-s", draft=small_model, draft_tokens=0)


def test_llm_int4_kv_cache_takes_a_group_size_only_beside_it(small_model):
    r = npusim.llm(small_model, "edge-s", prompt=8, generate=1, kv_dtype="int4", kv_group_size=64, quiet=True)
    assert r.widths["kv_cache"] == "int4-g64"
    with pytest.raises(npusim.InputError, match=r"^kv_group_size: expected kv_dtype 'int4' beside it"):
        npusim.llm(small_model, "edge-s", kv_dtype="int8", kv_group_size=64)


def test_llm_every_layer_simulates_all_layers_as_the_cli_flag_does(small_model):
    # By default the decode step of the 4-layer model simulates layers 0 .. 2 and gives layer 3
    # layer 2's share; its prefill's layers 1 and 2 differ by more than 0.5 % (fusion groups span
    # the small layers), so the prefill simulates all four. every_layer=True simulates all four
    # in both, as `npusim llm --every-layer`.
    shared = npusim.llm(small_model, "edge-m", prompt=16, generate=1, quiet=True)
    every = npusim.llm(small_model, "edge-m", prompt=16, generate=1, every_layer=True, quiet=True)
    assert shared.block["decode"]["last_step"]["layers"]["simulated"] == 3
    assert shared.block["prefill"]["layers"]["simulated"] == 4
    assert shared.block["prefill"]["layers"]["largest_departure"] > 0.005
    for phase in (every.block["prefill"], every.block["decode"]["last_step"]):
        assert phase["layers"] == {"total": 4, "simulated": 4, "period": 1, "last_apart": False,
                                   "query_blocks_stood_in": 0, "gemm_iterations_stood_in": 0,
                                   "largest_departure": None}
    assert shared.block["prefill"]["macs"] == every.block["prefill"]["macs"]
    with pytest.raises(TypeError, match=r"^every_layer: expected True or False"):
        npusim.llm(small_model, "edge-m", every_layer=1)


def test_llm_image_encodes_before_the_prefill_as_the_cli_flag_does():
    # tests/data/qwen2_vl_tiny.json: a 56x56 image is 16 patches, 4 tokens (docs/llm.md).
    model = os.path.join(os.path.dirname(__file__), "..", "data", "qwen2_vl_tiny.json")
    r = npusim.llm(model, "edge-s", prompt=8, generate=1, image="56x56", quiet=True)
    vision = r.block["vision"]
    assert (vision["image"], vision["patches"], vision["tokens"]) == ([56, 56], 16, 4)
    assert r.block["prefill"]["tokens"] == 12
    assert r.block["ttft_seconds"] == pytest.approx(vision["seconds"] + r.block["prefill"]["seconds"])
    with pytest.raises(npusim.InputError, match=r"^image: expected WIDTHxHEIGHT in pixels"):
        npusim.llm(model, "edge-s", image="abc")
    with pytest.raises(TypeError, match=r"^image: expected WIDTHxHEIGHT"):
        npusim.llm(model, "edge-s", image=448)
