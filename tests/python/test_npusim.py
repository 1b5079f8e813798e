"""Tests of the Python module `npusim` against the CLI and against figures computed by hand.

Run through CTest (tests/CMakeLists.txt sets PYTHONPATH to build/python and NPUSIM_BINARY to
the CLI); by hand: PYTHONPATH=build/python NPUSIM_BINARY=build/npusim /usr/bin/python3 -m pytest tests/python
"""
import json
import os
import signal
import subprocess
import sys
import time

import pytest

import npusim

NPUSIM = os.environ.get("NPUSIM_BINARY", "npusim")
TEST_DATA = os.path.join(os.path.dirname(__file__), "..", "data")


def cli_run(tmp_path, *args):
    out = tmp_path / "cli"
    proc = subprocess.run([NPUSIM, "run", *args, "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(out / "summary.json") as f:
        return json.load(f)


def cli_error(*args):
    proc = subprocess.run([NPUSIM, *args], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    return proc.stderr


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def tiny_graph():
    # conv 1x3x32x32 -> 16 channels, 3x3, pad 1: 32*32 outputs * 16 channels * 3*3*3 = 442,368 MACs;
    # relu; global average pool to [1, 16, 1, 1]; flatten; a 16 -> 10 linear layer: 160 MACs.
    g = npusim.Graph("tiny")
    g.add_input("x", [1, 3, 32, 32])
    g.add_op("conv2d", "conv", ["x"], out_channels=16, kernel=3, padding=1, bias=True)
    g.add_op("relu", "act", ["conv"])
    g.add_op("global_avg_pool", "gap", ["act"])
    g.add_op("flatten", "flat", ["gap"])
    g.add_op("matmul", "fc", ["flat"], out_features=10)
    return g


def test_simulate_equals_the_cli_op_by_op(tmp_path):
    r = npusim.simulate("small_cnn", npusim.Config("edge-s"), fusion="greedy")
    cli = cli_run(tmp_path, "--workload", "small_cnn", "--config", "edge-s", "--fusion", "greedy")
    for key in ("cycles", "macs", "vector_ops", "dram_read_bytes", "dram_write_bytes", "sram_read_bytes"):
        assert r.summary[key] == cli[key], key
    assert r.dram_bytes == cli["dram_read_bytes"] + cli["dram_write_bytes"]
    assert [o["name"] for o in r.ops] == [o["name"] for o in cli["ops"]]
    for mine, theirs in zip(r.ops, cli["ops"]):
        for key in ("cycles", "macs", "dram_read_bytes", "dram_write_bytes", "group"):
            assert mine[key] == theirs[key], (mine["name"], key)
    assert len(r.groups) == len(cli["groups"])


def test_set_overrides_act_as_the_cli_set(tmp_path):
    hw = npusim.Config("edge-s", set={"npu.mac_array.rows": 32, "npu.sram.capacity": "512KiB"})
    r = npusim.simulate("small_cnn", hw, fusion="none")
    cli = cli_run(tmp_path, "--workload", "small_cnn", "--config", "edge-s", "--fusion", "none",
                  "--set", "npu.mac_array.rows=32", "--set", "npu.sram.capacity=512KiB")
    assert r.cycles == cli["cycles"]
    assert hw.resolved()["mac_array"]["rows"] == 32
    assert hw.resolved().mac_array.cols == 16  # the preset's, untouched


def test_hand_built_graph_counts_its_macs_by_hand():
    g = tiny_graph()
    assert g.macs == 32 * 32 * 16 * 3 * 3 * 3 + 16 * 10  # 442,368 + 160
    ops = {o.name: o for o in g.ops()}
    assert ops["conv"].macs == 442368
    assert ops["fc"].macs == 160
    assert ops["conv"].kind == "conv2d"
    # int8 (edge-m's default dtype): the conv writes 16*32*32 one-byte elements
    assert ops["conv"].output_bytes == 16 * 32 * 32
    r = npusim.simulate(g, "edge-s", fusion="none")
    assert r.macs == 442368 + 160
    assert [o.name for o in r.ops] == ["conv", "act", "gap", "flat", "fc"]


def test_hand_built_graph_errors_name_the_op():
    g = npusim.Graph("bad")
    g.add_input("x", [1, 3, 8, 8])
    g.add_op("relu", "r", ["y"])  # y is not defined
    with pytest.raises(npusim.InputError, match=r"op 'r'.*undefined 'y'"):
        g.ops()


def test_plan_reports_groups_and_why_neighbours_were_not_fused():
    g = npusim.load("small_cnn")
    none = npusim.plan(g, "edge-s", fusion="none")
    assert len(none.groups) == len(g.ops())  # every op alone
    assert none.why_not_fused("conv1", "conv1.relu") == "policy: none"
    greedy = npusim.plan(g, "edge-s", fusion="greedy")
    assert greedy.group_of("conv1") is greedy.group_of("conv1.relu")
    assert greedy.why_not_fused("conv1", "conv1.relu") is None
    assert len(greedy.groups) < len(none.groups)


def test_user_schedule_runs_with_its_dataflow_and_equals_the_file_policy(tmp_path):
    g = npusim.load("small_cnn")
    mine = npusim.Schedule.from_groups(g, [["conv1", "conv1.relu", "pool1"], ["conv2", "conv2.relu"]],
                                       dataflow={"conv2": "OS"})
    r = npusim.simulate(g, "edge-s", schedule=mine)
    groups = {grp["name"]: grp for grp in r.groups}
    flows = {tuple(grp["members"]): grp["dataflow"] for grp in groups.values()}
    assert flows[("conv2", "conv2.relu")] == "OS"
    path = tmp_path / "mine.json"
    mine.save(path)
    cli = cli_run(tmp_path, "--workload", "small_cnn", "--config", "edge-s", "--fusion", f"file:{path}")
    assert r.cycles == cli["cycles"]


def test_non_convex_schedule_raises_with_the_reason():
    g = npusim.load(os.path.join(TEST_DATA, "skip_triangle.yaml"))
    mine = npusim.Schedule.from_groups(g, [["a", "c"]])
    with pytest.raises(npusim.InputError, match="not convex") as e:
        npusim.simulate(g, "edge-m", schedule=mine)
    assert "a -> b -> c" in str(e.value)


def test_input_errors_carry_the_cli_message():
    with pytest.raises(npusim.InputError) as e:
        npusim.Config("edge-m", set={"npu.mac_array.rows": "many"})
    assert "npu.mac_array.rows" in str(e.value)
    assert str(e.value) in cli_error("schedule", "--set", "npu.mac_array.rows=many")
    assert e.value.where  # the place (the key) is an attribute too
    with pytest.raises(npusim.InputError, match="small_cnn"):  # the zoo's names are listed
        npusim.load("no_such_network")


def test_load_passes_dims_to_the_importer():
    # --dim's Python form reaches the loader: on a zoo (YAML) workload it is refused, not ignored.
    with pytest.raises(npusim.InputError, match="--dim seq: expected an ONNX workload"):
        npusim.load("small_cnn", dims={"seq": 16})


def test_compare_plans_first_and_fusion_saves_dram_bytes():
    c = npusim.compare("small_cnn", "edge-s", ["none", "greedy"])
    assert c["greedy"].dram_bytes < c["none"].dram_bytes
    assert c["none"].macs == c["greedy"].macs
    assert "speed-up" in c.table()
    with pytest.raises(npusim.InputError, match="fusion"):
        npusim.compare("small_cnn", "edge-s", ["none", "fastest"])


def test_out_writes_the_cli_folder(tmp_path):
    r = npusim.simulate("small_cnn", "edge-s", fusion="greedy", out=tmp_path / "run")
    with open(tmp_path / "run" / "summary.json") as f:
        assert json.load(f)["cycles"] == r.cycles
    assert (tmp_path / "run" / "trace.json").exists()
    # Written in a temporary sibling and renamed whole: nothing else is left beside it.
    assert sorted(os.listdir(tmp_path)) == ["run"]


def test_out_never_writes_into_a_folder_of_other_files(tmp_path):
    # The CLI's rule (docs/outputs.md): a folder that is not an earlier npusim output is refused.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    with pytest.raises(npusim.InputError) as e:
        npusim.simulate("small_cnn", "edge-s", fusion="greedy", out=mine)
    assert "found a folder with other files" in str(e.value)
    assert sorted(os.listdir(mine)) == ["notes.txt"]
    assert (mine / "notes.txt").read_text() == "keep me"
    assert sorted(os.listdir(tmp_path)) == ["mine"]  # no temporary or lock left beside it


def test_roofline_and_pandas():
    r = npusim.simulate("small_cnn", "edge-s", fusion="greedy")
    net = r.roofline.network("dram")
    assert net.ops_per_second == pytest.approx(r.achieved_ops_per_second, rel=1e-9)
    assert r.roofline.violations == []
    pandas = pytest.importorskip("pandas")
    df = r.to_pandas()
    assert isinstance(df, pandas.DataFrame)
    assert list(df["name"]) == [o["name"] for o in r.ops]
    assert df["macs"].sum() == r.macs


def test_a_hundred_simulations_in_one_process_stay_correct_and_bounded():
    g = tiny_graph()
    hw = npusim.Config("edge-s")
    first = npusim.simulate(g, hw, fusion="greedy")
    for _ in range(9):
        npusim.simulate(g, hw, fusion="greedy")
    warm = rss_bytes()
    for _ in range(90):
        r = npusim.simulate(g, hw, fusion="greedy")
        assert r.cycles == first.cycles
        assert r.dram_bytes == first.dram_bytes
    # Each simulation runs in its own child process: this process keeps only the results.
    assert rss_bytes() - warm < 16 * 1024 * 1024


def test_ctrl_c_raises_keyboard_interrupt_and_the_process_keeps_its_own_signal_handling(tmp_path):
    # SIGINT to a Python process simulating in a loop: a simulation in flight has its child
    # cancelled, and KeyboardInterrupt reaches the caller either way. npusim starts no signal
    # thread of its own in a process that hosts it (it would take SIGINT and end the process).
    script = tmp_path / "ctrl_c.py"
    script.write_text(
        "import os\n"
        "import npusim\n"
        "print('ready', flush=True)\n"
        "try:\n"
        "    while True:\n"
        "        npusim.simulate('resnet50', 'edge-s', fusion='none')\n"
        "except KeyboardInterrupt:\n"
        "    print('interrupted', flush=True)\n"
        "print('threads', len(os.listdir('/proc/self/task')), flush=True)\n"
    )
    proc = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline() == "ready\n"
    time.sleep(0.5)  # a simulation or two under way
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out == "interrupted\nthreads 1\n", err
