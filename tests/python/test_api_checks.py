"""One argument checker for the CLI and Python (the same rules and the same messages),
npusim.InputError or TypeError for every bad argument (never a bare ValueError, AttributeError or
FileNotFoundError), typed Result attributes visible to dir(), named schedules.

Run through CTest (PYTHONPATH=build/python, NPUSIM_BINARY=build/npusim).
"""
import inspect
import os
import subprocess

import pytest

import npusim

NPUSIM = os.environ.get("NPUSIM_BINARY", "npusim")
CHAIN = os.path.join(os.path.dirname(__file__), "..", "data", "conv_chain3.yaml")


def cli_stderr(*args):
    proc = subprocess.run([NPUSIM, *args], capture_output=True, text=True)
    assert proc.returncode == 2, proc.stderr
    return proc.stderr


@pytest.fixture(scope="module")
def chain():
    return npusim.load(CHAIN)


def test_objective_without_search_is_refused_as_the_cli_refuses_it(chain):
    with pytest.raises(npusim.InputError) as e:
        npusim.plan(chain, "edge-m", fusion="greedy", objective="energy")
    assert str(e.value) == "objective energy: expected with fusion search, found fusion greedy"
    cli = cli_stderr("schedule", "--workload", CHAIN, "--fusion", "greedy", "--objective", "energy")
    assert "--objective energy: expected with --fusion search, found --fusion greedy" in cli
    with pytest.raises(npusim.InputError, match="objective energy: expected with fusion search"):
        npusim.compare(chain, "edge-m", ["none", "greedy"], objective="energy")
    with pytest.raises(npusim.InputError, match="objective: expected a search objective .*found 'fastest'"):
        npusim.plan(chain, "edge-m", fusion="search", objective="fastest")
    with pytest.raises(npusim.InputError, match="fusion"):
        npusim.plan(chain, "edge-m", fusion="greediest")


def test_fusion_policies_are_the_table_the_cli_reads(chain):
    policies = npusim.fusion_policies()
    names = [p.name for p in policies]
    assert names == ["none", "epilogue", "greedy", "search", "as-is"]
    assert all(p.description for p in policies)
    assert [p.name for p in policies if p.simulates_finalists] == ["search"]
    assert [p.name for p in policies if not p.llm] == ["as-is"]
    # --help lists the same names, and every one plans (search simulates its finalists: left out).
    help_text = subprocess.run([NPUSIM, "schedule", "--help"], capture_output=True, text=True).stdout
    assert "fusion policy: " + ", ".join(names) + ", or file:PATH" in " ".join(help_text.split())
    for p in policies:
        if not p.simulates_finalists:
            assert npusim.plan(chain, "edge-m", fusion=p.name).policy == p.name
    # An unknown name is refused with the table's names, as the CLI refuses it.
    expected = "expected a fusion policy (" + ", ".join(names) + ", file:PATH), found 'greediest'"
    with pytest.raises(npusim.InputError) as e:
        npusim.plan(chain, "edge-m", fusion="greediest")
    assert expected in str(e.value)
    assert expected in cli_stderr("schedule", "--workload", CHAIN, "--fusion", "greediest")
    with pytest.raises(npusim.InputError, match="found 'greediest'"):
        npusim.llm("SmolLM2-360M", "edge-s", fusion="greediest")
    with pytest.raises(TypeError) as t:
        npusim.plan(chain, "edge-m", fusion=3)
    assert "fusion: expected a policy name (" + ", ".join(names) + ", file:PATH)" in str(t.value)


def test_fusion_and_schedule_together_are_refused(chain):
    mine = npusim.Schedule.from_groups(chain, [["c1", "c2"]], name="mine")
    with pytest.raises(npusim.InputError, match="expected fusion or schedule, found both"):
        npusim.plan(chain, "edge-m", fusion="none", schedule=mine)
    with pytest.raises(npusim.InputError, match="expected fusion or schedule, found both"):
        npusim.simulate(chain, "edge-m", fusion="greedy", schedule=mine)
    # Either alone is fine; greedy stays the default policy.
    assert npusim.plan(chain, "edge-m", schedule=mine).groups[0].ops == ["c1", "c2"]
    assert npusim.plan(chain, "edge-m").policy == "greedy"


def test_from_groups_refuses_a_bare_string_instead_of_splitting_it(chain):
    with pytest.raises(TypeError) as e:
        npusim.Schedule.from_groups(chain, ["c1"])
    assert "groups[0]: expected a list of op names, found str 'c1' (write ['c1'] for a group of one op)" in str(e.value)
    with pytest.raises(TypeError, match=r"groups\[0\]\[1\]: expected an op name, found int"):
        npusim.Schedule.from_groups(chain, [["c1", 2]])
    with pytest.raises(TypeError, match="groups: expected a list of groups"):
        npusim.Schedule.from_groups(chain, "c1")


def test_config_set_of_the_wrong_type_is_a_type_error():
    with pytest.raises(TypeError) as e:
        npusim.Config("edge-m", set=["npu.sram.capacity=2MiB"])
    assert str(e.value).startswith("Config: set: expected a mapping of config keys to values")
    assert "found list" in str(e.value)
    with pytest.raises(npusim.InputError):  # a bad key is bad input, as on the command line
        npusim.Config("edge-m", set={"npu.sram.capacityy": "2MiB"})


def test_a_schedule_document_may_be_a_dict_and_anything_else_is_a_type_error(chain):
    doc = {"groups": [{"ops": ["c1", "c2"]}]}
    assert npusim.plan(chain, "edge-m", schedule=doc).groups[0].ops == ["c1", "c2"]
    with pytest.raises(TypeError, match="schedule: expected an npusim.Schedule or a schedule.json document"):
        npusim.plan(chain, "edge-m", schedule=[["c1", "c2"]])


def test_a_missing_schedule_file_is_the_same_input_error_everywhere(tmp_path, chain):
    missing = str(tmp_path / "missing.json")
    with pytest.raises(npusim.InputError) as via_file:
        npusim.Schedule.from_file(missing)
    with pytest.raises(npusim.InputError) as via_policy:
        npusim.plan(chain, "edge-m", fusion="file:" + missing)
    assert str(via_file.value) == str(via_policy.value) == f"{missing}: cannot open file for reading (No such file or directory)"
    dup = tmp_path / "dup.json"
    dup.write_text('{"groups": [{"ops": ["c1"], "ops": ["c2"]}]}')
    with pytest.raises(npusim.InputError, match=r"groups\[0\]: duplicate key 'ops'"):
        npusim.Schedule.from_file(dup)


def test_result_attributes_are_typed_and_listed_by_dir(chain):
    r = npusim.simulate(chain, "edge-m", fusion="none")
    names = dir(r)
    for field in ("cycles", "seconds", "macs", "dram_read_bytes", "mac_utilization", "energy_j", "bound",
                  "provenance", "ops", "groups", "stalls"):
        assert field in names, field
    assert isinstance(r.cycles, int) and r.cycles == r.summary["cycles"]
    assert isinstance(r.seconds, float)
    # conv_chain3: three 3x3 convs 8 -> 8 on 32x32: 3 * 32*32*8 * 3*3*8 = 1,769,472 MACs.
    assert r.macs == 1769472
    hints = {name: inspect.signature(getattr(npusim.Result, name).fget).return_annotation
             for name in ("cycles", "seconds", "macs", "mac_utilization", "energy_j", "bound")}
    assert hints == {"cycles": "int", "seconds": "float", "macs": "int", "mac_utilization": "float",
                     "energy_j": "Optional[float]", "bound": "str"}
    with pytest.raises(AttributeError, match="summary.json has no such field"):
        r.cyclez


def test_schedules_have_names_and_compare_rows_never_collide(tmp_path, chain):
    a = npusim.Schedule.from_groups(chain, [["c1", "c2"]])
    b = npusim.Schedule.from_groups(chain, [["c2", "c3"]])
    assert a.name == "schedule"
    path = tmp_path / "mine.json"
    npusim.Schedule({"groups": [{"ops": ["c1", "c2", "c3"]}]}).save(path)
    c = npusim.compare(chain, "edge-m", ["none", a, b, npusim.Schedule.from_file(path)])
    assert [r.label for r in c] == ["none", "schedule", "schedule#2", "mine.json"]
    # Each label is its own run: the first schedule fuses c1+c2, the second c2+c3.
    assert [g["members"] for g in c["schedule"].groups][0] == ["c1", "c2"]
    assert [g["members"] for g in c["schedule#2"].groups][0] == ["c1"]


def test_python_compare_aligns_groupings_as_the_cli_does(tmp_path, chain):
    """`npusim compare` from Python: N runs, per-group diff aligned by ops, the CLI's blocks."""
    a, b = tmp_path / "a.json", tmp_path / "b.json"
    npusim.Schedule({"groups": [{"name": "c1c2", "ops": ["c1", "c2"]}]}).save(a)
    npusim.Schedule({"groups": [{"name": "c2c3", "ops": ["c2", "c3"]}]}).save(b)
    c = npusim.compare(chain, "edge-m", ["none", npusim.Schedule.from_file(a), npusim.Schedule.from_file(b)])
    blocks = c.aligned_groups()
    # a fuses c1+c2 and b c2+c3: one block, {c1, c2, c3}, whole groups in all three runs.
    assert len(blocks) == 1 and blocks[0].ops == 3
    assert [r.groups for r in blocks[0].runs][1:] == [["c1c2", "c3"], ["c1", "c2c3"]]
    assert [r.name for r in blocks[0].runs] == ["none", "a.json", "b.json"]
    out = tmp_path / "cli"
    proc = subprocess.run([NPUSIM, "compare", "--config", "edge-m", "--workload", CHAIN, "--fusion",
                           f"none,file:{a},file:{b}", "--out", str(out)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    import json
    cli = json.load(open(out / "compare.json"))["aligned_groups"]
    strip = lambda bs: [[{k: v for k, v in r.items() if k != "name"} for r in blk["runs"]] for blk in bs]
    assert strip(cli) == strip(blocks)
