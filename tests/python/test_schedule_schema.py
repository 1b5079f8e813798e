"""docs/schedule.schema.json against what npusim writes and reads.

Every schedule.json npusim writes (each zoo workload that exercises a block: attention,
depth-first, prologue, two passes, search) validates against the schema; a field the reader
refuses is refused by the schema too. Run through CTest, or by hand:
NPUSIM_BINARY=build/npusim /usr/bin/python3 -m pytest tests/python/test_schedule_schema.py
"""
import copy
import json
import os
import pathlib
import subprocess

import jsonschema
import pytest

NPUSIM = os.environ.get("NPUSIM_BINARY", "npusim")
ROOT = pathlib.Path(__file__).resolve().parents[2]
SCHEMA = json.loads((ROOT / "docs" / "schedule.schema.json").read_text())
DATA = ROOT / "tests" / "data"


def schedule(tmp_path, workload, policy, config):
    out = tmp_path / f"{pathlib.Path(workload).stem}_{policy}_{config}.json"
    r = subprocess.run([NPUSIM, "schedule", "-w", workload, "-c", config, "-f", policy, "--out", str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    return json.loads(out.read_text())


CASES = [
    ("mobilenet_v2", "greedy", "edge-m"),
    ("resnet18", "none", "edge-m"),
    ("resnet50", "greedy", "edge-s"),  # depth-first groups
    ("vit_s16_block", "greedy", "edge-s"),  # attention groups
    ("small_cnn", "search", "edge-m"),  # the search block
    (str(DATA / "scale_matmul.yaml"), "greedy", "edge-m"),  # a prologue segment
    (str(DATA / "add_layer_norm.yaml"), "greedy", "edge-m"),
]


@pytest.mark.parametrize("workload,policy,config", CASES)
def test_written_schedules_validate(tmp_path, workload, policy, config):
    jsonschema.validate(schedule(tmp_path, workload, policy, config), SCHEMA)


def test_the_cases_cover_every_block(tmp_path):
    # The schema's nested objects are only checked if some written schedule has them.
    docs = [schedule(tmp_path, w, p, c) for w, p, c in CASES]
    groups = [g for d in docs for g in d["groups"]]
    segments = [s for g in groups for s in g.get("segments", [])]
    assert any("search" in d for d in docs)
    assert any(d.get("not_fused") for d in docs)
    assert any("attention" in g for g in groups)
    assert any("depth_first" in g for g in groups)
    assert any("prologue" in s for s in segments)


def mutations(doc):
    """(where, a copy of doc with an unknown field added there)."""
    def at(path):
        d = copy.deepcopy(doc)
        node = d
        for k in path:
            node = node[k]
        node["tile_sise"] = 1
        return d
    yield "top level", at([])
    yield "group", at(["groups", 0])
    seg_group = next(i for i, g in enumerate(doc["groups"]) if g.get("segments"))
    yield "segment", at(["groups", seg_group, "segments", 0])
    if doc.get("not_fused"):
        yield "not_fused entry", at(["not_fused", 0])
    if "search" in doc:
        yield "search", at(["search"])


def test_an_unknown_field_fails_the_schema_and_the_reader_alike(tmp_path):
    doc = schedule(tmp_path, "small_cnn", "search", "edge-m")
    for where, bad in mutations(doc):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, SCHEMA)
        path = tmp_path / "bad.json"
        path.write_text(json.dumps(bad))
        r = subprocess.run([NPUSIM, "schedule", "-w", "small_cnn", "-f", f"file:{path}"], capture_output=True, text=True)
        assert r.returncode == 2, where
        assert "unknown field 'tile_sise'" in r.stderr, (where, r.stderr)
