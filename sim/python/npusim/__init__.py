"""npusim from Python: load a network, plan its fusion, simulate it on an edge NPU.

The same C++ engine as the ``npusim`` command line: loading and planning run in this process;
every simulation runs in a forked child process (SystemC elaborates once per process), so any
number of ``simulate`` calls work in one interpreter and this process's memory does not grow
with them.

>>> import npusim
>>> hw = npusim.Config("edge-m", set={"npu.mac_array.rows": 64})
>>> g = npusim.load("mobilenet_v2")                  # a zoo name, or .onnx / .yaml / .csv path
>>> plan = npusim.plan(g, hw, fusion="greedy")      # groups, tiles, why neighbours were not fused
>>> r = npusim.simulate(g, hw, fusion="greedy")     # summary.json's figures as attributes
>>> r.cycles, r.dram_bytes, r.op("conv1").cycles
>>> m = npusim.llm("Qwen2.5-0.5B", "edge-m", prompt=128, generate=32, weight_dtype="int4")
>>> m.ttft_seconds, m.tokens_per_second                # summary.json's llm block

Errors are :class:`InputError` (bad input: the message names the file, line, field or node;
``.where`` holds the place) and :class:`SimulationError`, with the command line's messages. An
argument of the wrong Python type raises :class:`TypeError` naming the argument; nothing else
(no bare ValueError, AttributeError or FileNotFoundError) escapes for bad input.
"""
from __future__ import annotations

import json
import os
from typing import Any, Dict, Iterable, Iterator, List, Mapping, NamedTuple, Optional, Sequence, Union

from . import _core

__all__ = [
    "Config", "Graph", "Op", "Plan", "Group", "Schedule", "Result", "Roofline", "Comparison",
    "Record", "InputError", "SimulationError", "load", "plan", "simulate", "compare", "zoo", "llm", "LlmResult",
    "FusionPolicy", "fusion_policies", "run_options",
]

InputError = _core.InputError
InputError.__doc__ = "Bad input (a file, a field, a schedule): exit code 2 on the command line."
SimulationError = _core.SimulationError
SimulationError.__doc__ = "The simulation or analysis could not complete (exit code 1 on the command line)."

PathLike = Union[str, "os.PathLike[str]"]


class Record(dict):
    """A JSON object of summary.json or roofline.json: items by key or by attribute."""

    def __getattr__(self, key: str) -> Any:
        try:
            return self[key]
        except KeyError:
            raise AttributeError(key) from None

    def __dir__(self) -> List[str]:
        return list(self.keys()) + list(super().__dir__())


def _records(value: Any) -> Any:
    """JSON (dicts and lists) as Records, recursively."""
    if isinstance(value, dict):
        return Record((k, _records(v)) for k, v in value.items())
    if isinstance(value, list):
        return [_records(v) for v in value]
    return value


def _type_name(value: Any) -> str:
    return type(value).__name__


def _check_type(value: Any, types: Any, where: str, expected: str) -> None:
    """TypeError naming the argument, what it should be and what it is (a wrong Python type)."""
    if not isinstance(value, types):
        raise TypeError(f"{where}: expected {expected}, found {_type_name(value)} {value!r:.60}")


def _value_text(value: Any) -> str:
    """A --set value as the command line spells it (True -> "true")."""
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


# ---------------------------------------------------------------------------------------------
# Hardware


class Config:
    """A hardware config: a preset name (``edge-s``, ``edge-m``, ``edge-l``) or a YAML path,
    with overrides as ``npusim run --set`` takes them (units allowed: ``"2MiB"``, ``"20ns"``).

    Bad keys or values raise :class:`InputError` here, naming the key.
    """

    def __init__(self, spec: PathLike = "edge-m", set: Optional[Mapping[str, Any]] = None) -> None:
        _check_type(spec, (str, os.PathLike), "Config: spec", "a preset name or a YAML path")
        if set is not None:
            _check_type(set, Mapping, "Config: set",
                        'a mapping of config keys to values, e.g. {"npu.sram.capacity": "2MiB"}')
        self._set: Dict[str, Any] = dict(set or {})
        overrides = [f"{k}={_value_text(v)}" for k, v in self._set.items()]
        self._core = _core.Config(os.fspath(spec), overrides)

    @property
    def spec(self) -> str:
        """The preset name or file path this config was read from."""
        return self._core.spec

    @property
    def overrides(self) -> Dict[str, Any]:
        """The ``set`` overrides, as given."""
        return dict(self._set)

    @property
    def name(self) -> str:
        """The config's name (the preset's, or the file's ``name``)."""
        return self._core.name

    def derive(self, set: Mapping[str, Any]) -> "Config":
        """A copy with more overrides (later keys win)."""
        merged = dict(self._set)
        merged.update(set)
        return Config(self.spec, merged)

    def resolved(self) -> Record:
        """Every value of the config after presets and overrides, units spelled out."""
        return _records(json.loads(self._core.resolved()))

    def __repr__(self) -> str:
        extra = f", set={self._set!r}" if self._set else ""
        return f"npusim.Config({self.spec!r}{extra})"


def _config(config: Union[Config, PathLike, None]) -> Config:
    if config is None:
        return Config()
    _check_type(config, (Config, str, os.PathLike), "config", "an npusim.Config, a preset name or a YAML path")
    return config if isinstance(config, Config) else Config(config)


# ---------------------------------------------------------------------------------------------
# Workloads


class Op(Record):
    """One op of a graph: ``name``, ``kind``, ``inputs``, ``outputs`` (tensor names), ``macs``,
    ``vector_ops``, ``input_bytes``, ``weight_bytes``, ``output_bytes`` (bytes with the config's
    element width)."""


class Graph:
    """An operator graph: loaded by :func:`load`, or built here op by op.

    A built graph uses the workload YAML format's op kinds and attributes
    (docs/workload-format.md): ``add_op("conv2d", "conv1", ["x"], out_channels=16, kernel=3)``
    creates ``conv1.weight`` as the YAML loader does, and every op's output tensor is named
    like the op. The graph is checked (shapes inferred, names resolved) by the same loader when
    it is first used; errors name the op. :meth:`to_yaml` shows the file it amounts to.
    """

    def __init__(self, name: str = "graph") -> None:
        self.name = name
        self._inputs: List[Dict[str, Any]] = []
        self._constants: List[Dict[str, Any]] = []
        self._ops: List[Dict[str, Any]] = []
        self._outputs: List[str] = []
        self._built: Optional[Any] = None
        self._loaded = False

    @classmethod
    def _from_core(cls, core: Any) -> "Graph":
        g = cls(core.name)
        g._built = core
        g._loaded = True
        return g

    # -- building --

    def _edit(self) -> None:
        if self._loaded:
            raise InputError("a loaded graph cannot be edited; build a new npusim.Graph() instead")
        self._built = None

    def add_input(self, name: str, shape: Sequence[int]) -> str:
        """Adds a graph input (an activation) and returns its name."""
        return self.add_tensor(name, shape, constant=False)

    def add_constant(self, name: str, shape: Sequence[int]) -> str:
        """Adds a constant tensor (a parameter an op can read, e.g. a scale) and returns its name."""
        return self.add_tensor(name, shape, constant=True)

    def add_tensor(self, name: str, shape: Sequence[int], constant: bool = False) -> str:
        """Adds an input (``constant=False``) or a constant tensor; returns its name."""
        self._edit()
        entry = {"name": name, "shape": [int(d) for d in shape]}
        (self._constants if constant else self._inputs).append(entry)
        return name

    def add_op(self, kind: str, name: str, inputs: Sequence[str], **attrs: Any) -> str:
        """Adds an op of ``kind`` (``conv2d``, ``matmul``, ``relu``, ``add``, ...) reading the
        named tensors; ``attrs`` are the kind's attributes. Returns the output tensor's name."""
        self._edit()
        entry: Dict[str, Any] = {"name": name, "op": kind, "inputs": list(inputs)}
        entry.update(attrs)
        self._ops.append(entry)
        return name

    def mark_outputs(self, *names: str) -> None:
        """Declares the graph's result tensors (default: every op result nobody reads)."""
        self._edit()
        self._outputs.extend(names)

    def to_yaml(self) -> str:
        """The workload YAML file this graph amounts to (one entry per line)."""
        if self._loaded:
            raise InputError("a loaded graph has no YAML of its own; it was read from a file")
        lines = [f"name: {json.dumps(self.name)}", "inputs:"]
        lines += [f"  - {json.dumps(t)}" for t in self._inputs]
        if self._constants:
            lines.append("constants:")
            lines += [f"  - {json.dumps(t)}" for t in self._constants]
        lines.append("ops:")
        lines += [f"  - {json.dumps(op)}" for op in self._ops]
        if self._outputs:
            lines.append(f"outputs: {json.dumps(self._outputs)}")
        return "\n".join(lines) + "\n"

    def _core_graph(self) -> Any:
        if self._built is None:
            self._built = _core.parse_yaml(self.to_yaml(), f"<npusim.Graph '{self.name}'>")
        return self._built

    # -- reading --

    def ops(self, config: Union[Config, PathLike, None] = None) -> List[Op]:
        """Every op with its MACs, vector ops and minimum bytes (element width of ``config``'s
        dtype; edge-m's int8 by default)."""
        elem_bytes = _config(config)._core.elem_bytes
        return [Op(_records(d)) for d in self._core_graph().ops(elem_bytes)]

    def tensors(self) -> List[Record]:
        """Every tensor: ``name``, ``shape``, ``constant``, ``producer`` (op name or None)."""
        return [_records(d) for d in self._core_graph().tensors()]

    @property
    def macs(self) -> int:
        """Multiply-accumulates of the whole graph."""
        return int(self._core_graph().totals(1)["macs"])

    def __repr__(self) -> str:
        return f"npusim.Graph({self.name!r}, {len(self._core_graph().ops(1))} ops)"


def load(spec: PathLike, input_shapes: Optional[Mapping[str, Sequence[int]]] = None,
         skip_unsupported: bool = False, dims: Optional[Mapping[str, int]] = None,
         kv_cache: str = "append") -> Graph:
    """Loads a workload as ``npusim run --workload`` does: an ONNX model (``.onnx``), our YAML
    format (``.yaml``), a SCALE-Sim topology (``.csv``), or a zoo name (see :func:`zoo`).

    ``input_shapes`` fixes symbolic ONNX input dimensions (``--input-shape``); ``dims`` binds
    symbolic dimensions by name in every input (``--dim``, e.g. ``{"past_len": 1024}``);
    ``skip_unsupported`` runs past unsupported ONNX operators (``--skip-unsupported``);
    ``kv_cache`` reads an ONNX decoder's ``present = Concat(past, new)`` as an append of the new
    rows in place (``"append"``, the default) or as a copy of the whole cache (``"copy"``,
    ``--kv-cache copy``; docs/llm.md).
    """
    _check_type(spec, (str, os.PathLike), "spec", "a zoo name or a workload path")
    if input_shapes is not None:
        _check_type(input_shapes, Mapping, "input_shapes", 'a mapping of input names to shapes, e.g. {"x": [1, 3]}')
    if dims is not None:
        _check_type(dims, Mapping, "dims", 'a mapping of symbolic dimension names to sizes, e.g. {"past_len": 16}')
    kv_options = _option("kv_cache", "run")
    _check_type(kv_cache, str, "kv_cache", kv_options["values_text"])
    if kv_cache not in kv_options["values"]:
        raise InputError(f"kv_cache: expected {kv_options['values_text']}, found '{kv_cache}'")
    shapes = {k: [int(d) for d in v] for k, v in (input_shapes or {}).items()}
    named = {k: int(v) for k, v in (dims or {}).items()}
    return Graph._from_core(_core.load(os.fspath(spec), shapes, bool(skip_unsupported), named, kv_cache == "copy"))


def zoo() -> List[str]:
    """Names of the zoo's networks (``load`` takes them)."""
    return list(_core.zoo_names())


class FusionPolicy(NamedTuple):
    """A row of npusim's one table of fusion policies (``sim/scheduler/policy.h``, the table the
    command line, sweep files and the server read): ``name`` (what ``fusion=`` takes), a one-line
    ``description``, whether it ``simulates_finalists`` (``search``: takes ``objective``) and
    whether :func:`llm` takes it."""
    name: str
    description: str
    simulates_finalists: bool
    llm: bool


def fusion_policies() -> List[FusionPolicy]:
    """The fusion policies ``fusion=`` takes, in the table's order (``npusim run --help``'s);
    besides them, ``file:PATH`` runs a schedule file."""
    return [FusionPolicy(*row) for row in _core.fusion_policies()]


_POLICY_NAMES = "a policy name (" + ", ".join(p.name for p in fusion_policies()) + ", file:PATH)"


def _graph(graph: Union[Graph, PathLike]) -> Graph:
    _check_type(graph, (Graph, str, os.PathLike), "graph", "an npusim.Graph, a zoo name or a workload path")
    return graph if isinstance(graph, Graph) else load(graph)


# ---------------------------------------------------------------------------------------------
# Plans and schedules


class Group(Record):
    """A fused group of a plan, as schedule.json has it: ``name``, ``ops``, ``fusion``
    (``none``, ``epilogue``, ``chain``, ``layer``, ``depth_first``, ``attention``), ``segments``
    (head op + epilogue, with tiles and working set), ``tiles``, ``sram_bytes``, ``dram_bytes``,
    ``dataflow``, ``resident_tensors``."""


class Plan:
    """The scheduler's decision for a graph on a config (schedule.json's content).

    ``groups`` in execution order; ``not_fused`` the boundaries between neighbouring ops with
    the reason each was not fused (capacity with bytes, policy, branch, ...).
    """

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self._doc = json.loads(json.dumps(doc))
        self.policy: str = self._doc.get("policy", "file")
        self.groups: List[Group] = [Group(_records(g)) for g in self._doc.get("groups", [])]
        self.not_fused: List[Record] = [_records(b) for b in self._doc.get("not_fused", [])]
        self.search: Optional[Record] = _records(self._doc["search"]) if "search" in self._doc else None

    def group_of(self, op: str) -> Group:
        """The group that runs ``op``; KeyError if the plan has no such op."""
        for g in self.groups:
            if op in g.ops:
                return g
        raise KeyError(f"op '{op}' is in no group of this plan")

    def why_not_fused(self, a: str, b: str) -> Optional[str]:
        """Why ops ``a`` and ``b`` are in different groups (None when they share one). For direct
        neighbours this is the boundary's reason; otherwise the reasons of the boundaries on the
        way from ``a``'s group to ``b``'s, joined."""
        ga, gb = self.group_of(a), self.group_of(b)
        if ga is gb:
            return None
        for edge in self.not_fused:
            if {edge["from"], edge["to"]} == {a, b}:
                return edge["reason"]
        index = {g.name: i for i, g in enumerate(self.groups)}
        lo, hi = sorted((index[ga.name], index[gb.name]))
        between = {op for g in self.groups[lo:hi + 1] for op in g.ops}
        reasons = [f"{e['from']} -> {e['to']}: {e['reason']}" for e in self.not_fused
                   if e["from"] in between and e["to"] in between
                   and self.group_of(e["from"]) is not self.group_of(e["to"])]
        return "; ".join(reasons) if reasons else "not neighbours: no edge joins their groups"

    def to_json(self) -> str:
        """schedule.json's text (runs back unchanged with ``fusion="file:PATH"`` or as a Schedule)."""
        return json.dumps(self._doc, indent=2) + "\n"

    def to_schedule(self) -> "Schedule":
        """This plan as a user schedule (to edit and run again)."""
        return Schedule(self._doc)

    def __repr__(self) -> str:
        return f"npusim.Plan(policy={self.policy!r}, {len(self.groups)} groups)"


class Schedule:
    """A fusion schedule a compiler hands in: a schedule.json document (docs/schedule-format.md).

    It is validated as schedule files are — ops exist and are in one group each, every group is
    connected and convex, tiles fit, SRAM suffices — when it is planned or simulated on a config
    (:meth:`check`, :func:`plan`, :func:`simulate`); a violation raises :class:`InputError`
    naming the group and the rule.
    """

    def __init__(self, doc: Mapping[str, Any], name: str = "schedule") -> None:
        _check_type(doc, Mapping, "Schedule: doc", "a schedule.json document (a mapping with 'groups')")
        _check_type(name, str, "Schedule: name", "a string")
        self.doc: Dict[str, Any] = json.loads(json.dumps(doc))
        self.doc.setdefault("format", "npusim-schedule")
        self.doc.setdefault("version", 1)
        #: What results, comparisons and messages call this schedule (a file's name by default).
        self.name = name

    @classmethod
    def from_groups(cls, graph: Graph, groups: Sequence[Sequence[str]],
                    dataflow: Optional[Mapping[Union[int, str], str]] = None,
                    tiles: Optional[Mapping[str, Mapping[str, int]]] = None,
                    name: str = "schedule") -> "Schedule":
        """A schedule from lists of op names, one list per group (ops not listed run unfused).

        ``dataflow`` maps a group (its index, or the name of an op in it) to ``"WS"``, ``"OS"``
        or ``"IS"``; ``tiles`` maps a segment head op to ``{"rows", "cols", "in_channels"}``.
        """
        _check_type(graph, Graph, "Schedule.from_groups: graph", "an npusim.Graph")
        if isinstance(groups, (str, bytes)) or not isinstance(groups, Sequence):
            raise TypeError(f"Schedule.from_groups: groups: expected a list of groups (each a list of op names), "
                            f"found {_type_name(groups)} {groups!r:.60}")
        for i, group in enumerate(groups):
            # A bare string would be split into characters: one op name is ["name"], not "name".
            if isinstance(group, (str, bytes)) or not isinstance(group, Sequence):
                raise TypeError(f"Schedule.from_groups: groups[{i}]: expected a list of op names, found "
                                f"{_type_name(group)} {group!r:.60}" +
                                (f" (write [{group!r}] for a group of one op)" if isinstance(group, str) else ""))
            for k, op in enumerate(group):
                _check_type(op, str, f"Schedule.from_groups: groups[{i}][{k}]", "an op name")
        known = {op.name for op in graph.ops()}
        entries: List[Dict[str, Any]] = [{"ops": list(g)} for g in groups]
        for key, flow in (dataflow or {}).items():
            if isinstance(key, int):
                if not 0 <= key < len(entries):
                    raise InputError(f"dataflow: expected a group index below {len(entries)}, found {key}")
                entries[key]["dataflow"] = flow
                continue
            hits = [e for e in entries if key in e["ops"]]
            if not hits:
                where = "no group lists it" if key in known else f"no op '{key}' in graph '{graph.name}'"
                raise InputError(f"dataflow['{key}']: expected a group index or an op of a group, found {where}")
            hits[0]["dataflow"] = flow
        for head, shape in (tiles or {}).items():
            hits = [e for e in entries if head in e["ops"]]
            if not hits:
                raise InputError(f"tiles['{head}']: expected an op of a group, found no group lists it")
            hits[0].setdefault("tiles", {})[head] = dict(shape)
        return cls({"groups": entries}, name)

    @classmethod
    def from_file(cls, path: PathLike) -> "Schedule":
        """Reads a schedule.json file as ``--fusion file:PATH`` does (the same messages for a
        missing file, bad JSON or a key written twice: :class:`InputError`); its groups are
        checked when used, with the file's name in messages."""
        _check_type(path, (str, os.PathLike), "Schedule.from_file: path", "a file path")
        doc = json.loads(_core.read_schedule_text(os.fspath(path)))
        _check_type(doc, Mapping, os.fspath(path), "a JSON object with 'groups'")
        return cls(doc, os.path.basename(os.fspath(path)))

    def to_json(self) -> str:
        return json.dumps(self.doc, indent=2) + "\n"

    def save(self, path: PathLike) -> None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(self.to_json())

    def check(self, graph: Graph, config: Union[Config, PathLike, None] = None) -> Plan:
        """Validates this schedule for ``graph`` on ``config`` and returns the plan it makes."""
        text = _core.check_schedule(graph._core_graph(), _config(config)._core, self.to_json(), self.name)
        return Plan(json.loads(text))

    def __repr__(self) -> str:
        return f"npusim.Schedule({self.name!r}, {len(self.doc.get('groups', []))} groups)"


ScheduleLike = Union[Schedule, Mapping[str, Any]]


def run_options() -> List[Record]:
    """npusim's one table of run options (``sim/engine/run_options.h``, the table the command line,
    sweep files and the server read), one record per option: ``command`` (``run`` or ``llm``),
    ``key`` (the keyword this module takes), ``flag``, ``kind``, ``default``, ``unit``,
    ``description``, the front ends that take it (``serve``, ``sweep``, ``python``), and ``min``/``max``
    or ``values`` where it has them."""
    return [_records(o) for o in json.loads(_core.run_options())]


_OPTIONS = {(o["command"], o["key"]): o for o in json.loads(_core.run_options())}


def _option(key: str, command: str = "llm") -> Dict[str, Any]:
    """The row of the run options' table this module checks ``key`` against."""
    return _OPTIONS[(command, key)]


def _range_text(key: str) -> str:
    """An integer option's range as the engine's messages give it: "from 1 to 64"."""
    o = _option(key)
    return f"from {o['min']} to {o['max']}"


def _schedule(schedule: Any, where: str = "schedule") -> Schedule:
    """A Schedule, or a schedule.json document as a mapping (named "schedule")."""
    if isinstance(schedule, Schedule):
        return schedule
    _check_type(schedule, Mapping, where, "an npusim.Schedule or a schedule.json document (a mapping)")
    return Schedule(schedule)


def _run_arguments(fusion: Optional[str], objective: Optional[str], schedule: Any) -> str:
    """The checks ``npusim run``/``schedule`` make on --fusion and --objective (the engine's own,
    same rules and messages), plus: ``fusion`` and ``schedule`` are two ways to say what runs, so
    giving both is an error rather than one silently winning. Returns the policy."""
    if fusion is not None:
        _check_type(fusion, str, "fusion", _POLICY_NAMES)
    if objective is not None:
        _check_type(objective, str, "objective", _option("objective", "run")["values_text"])
    if schedule is not None:
        if fusion is not None:
            raise InputError(f"fusion {fusion}: expected fusion or schedule, found both "
                             f"(schedule= runs the schedule; leave fusion out)")
        if objective:
            raise InputError(f"objective {objective}: expected with fusion search, found schedule=")
        return "file"
    policy = "greedy" if fusion is None else fusion
    _core.check_arguments([policy], objective or "")
    return policy


def plan(graph: Union[Graph, PathLike], config: Union[Config, PathLike, None] = None,
         fusion: Optional[str] = None, objective: Optional[str] = None,
         schedule: Optional[ScheduleLike] = None) -> Plan:
    """The plan of ``graph`` on ``config`` under ``fusion`` (a name of :func:`fusion_policies`:
    ``none``, ``epilogue``, ``greedy`` (the default), ``search`` with ``objective``
    ``cycles``/``energy``/``dram-bytes``, ``as-is``; or ``file:PATH``), or of a user ``schedule``
    (not both), without simulating (``npusim schedule``)."""
    policy = _run_arguments(fusion, objective, schedule)
    g, hw = _graph(graph), _config(config)
    if schedule is not None:
        return _schedule(schedule).check(g, hw)
    return Plan(json.loads(_core.plan(g._core_graph(), hw._core, policy, objective or "")))


# ---------------------------------------------------------------------------------------------
# Results


class Roofline:
    """roofline.json: ``roofs`` (compute and memory roofs with their values and units),
    ``points`` (per op, group and network, one per memory level), ``violations``."""

    def __init__(self, doc: Mapping[str, Any]) -> None:
        self.doc = _records(dict(doc))
        self.roofs: List[Record] = self.doc.get("roofs", [])
        self.points: List[Record] = self.doc.get("points", [])
        self.violations: List[str] = self.doc.get("violations", [])

    def network(self, level: str = "dram") -> Record:
        """The whole network's point at one memory level (``dram`` or ``sram``)."""
        for p in self.points:
            if p.get("scope") == "network" and p.get("level") == level:
                return p
        raise KeyError(f"no network point at level '{level}'")


class Result:
    """One simulated run: summary.json's figures (docs/outputs.md) as attributes, its roofline,
    and the plan that ran. ``summary`` is the whole document."""

    def __init__(self, reply: Mapping[str, Any], label: str, plan_: Optional[Plan] = None) -> None:
        self.label: str = label
        self.summary: Record = _records(dict(reply["summary"]))
        self.roofline: Roofline = Roofline(reply["roofline"])
        self.plan: Optional[Plan] = plan_

    def __getattr__(self, key: str) -> Any:
        """Any other summary.json field (docs/outputs.md) by name; the headline figures below
        are typed properties."""
        summary = self.__dict__.get("summary")
        if summary is not None and key in summary:
            return summary[key]
        raise AttributeError(f"npusim.Result has no attribute '{key}' (summary.json has no such field)")

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__.get("summary", {}).keys()))

    # summary.json's headline figures, typed (units and definitions: docs/outputs.md).
    @property
    def workload(self) -> str:
        """The workload's name."""
        return str(self.summary["workload"])

    @property
    def fusion(self) -> str:
        """The fusion policy that ran (``file`` for a schedule)."""
        return str(self.summary["fusion"])

    @property
    def config_name(self) -> str:
        """The hardware config's name."""
        return str(self.summary["config_name"])

    @property
    def cycles(self) -> int:
        """Run time in NPU core cycles."""
        return int(self.summary["cycles"])

    @property
    def seconds(self) -> float:
        """Run time (s)."""
        return float(self.summary["seconds"])

    @property
    def macs(self) -> int:
        """Multiply-accumulates executed."""
        return int(self.summary["macs"])

    @property
    def vector_ops(self) -> int:
        """Vector-unit element ops executed."""
        return int(self.summary["vector_ops"])

    @property
    def dram_read_bytes(self) -> int:
        """Bytes read from DRAM."""
        return int(self.summary["dram_read_bytes"])

    @property
    def dram_write_bytes(self) -> int:
        """Bytes written to DRAM."""
        return int(self.summary["dram_write_bytes"])

    @property
    def sram_read_bytes(self) -> int:
        """Bytes read from SRAM."""
        return int(self.summary["sram_read_bytes"])

    @property
    def sram_write_bytes(self) -> int:
        """Bytes written to SRAM."""
        return int(self.summary["sram_write_bytes"])

    @property
    def mac_utilization(self) -> float:
        """Share of the MAC array's multiply slots used over the run (0..1)."""
        return float(self.summary["mac_utilization"])

    @property
    def arithmetic_intensity(self) -> Optional[float]:
        """Ops per DRAM byte; None when no DRAM byte moved."""
        v = self.summary.get("arithmetic_intensity")
        return None if v is None else float(v)

    @property
    def energy_j(self) -> Optional[float]:
        """Energy of the run (J); None without an energy model."""
        v = self.summary.get("energy_j")
        return None if v is None else float(v)

    @property
    def bound(self) -> str:
        """The run's bound class (compute, memory, latency; docs/outputs.md)."""
        return str(self.summary["bound"])

    @property
    def provenance(self) -> Record:
        """``version``, ``commit`` and ``config_hash``: which npusim ran it, on which config."""
        return self.summary["provenance"]

    @property
    def dram_bytes(self) -> int:
        """DRAM bytes read plus written (bytes)."""
        return int(self.summary["dram_read_bytes"]) + int(self.summary["dram_write_bytes"])

    @property
    def ops(self) -> List[Record]:
        """One entry per op of the graph, in graph order (summary.json's ``ops``)."""
        return self.summary["ops"]

    @property
    def groups(self) -> List[Record]:
        """One entry per scheduled group (summary.json's ``groups``)."""
        return self.summary["groups"]

    def op(self, name: str) -> Record:
        """The ``ops`` entry of one op."""
        for o in self.summary["ops"]:
            if o["name"] == name:
                return o
        raise KeyError(f"no op '{name}' in this run")

    def to_pandas(self, scope: str = "ops") -> Any:
        """A pandas DataFrame of ``ops``, ``groups`` or the roofline ``points`` (needs pandas:
        Debian's python3-pandas). Nested figures (energy, stalls) become dotted columns."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("Result.to_pandas needs pandas (apt-get install python3-pandas)") from e
        rows = {"ops": self.ops, "groups": self.groups, "points": self.roofline.points}
        if scope not in rows:
            raise InputError(f"scope: expected one of {', '.join(rows)}, found {scope!r}")
        return pandas.json_normalize([dict(r) for r in rows[scope]])

    def __repr__(self) -> str:
        return (f"npusim.Result({self.label!r}: {self.summary['cycles']} cycles, "
                f"{self.dram_bytes} DRAM bytes)")


def _raise_for(reply: Mapping[str, Any]) -> None:
    """The error a child process reported (its {"error", "message"} reply), raised."""
    if "error" in reply:
        error = InputError if reply["error"] == "input" else SimulationError
        raise error(reply["message"])


def _out_dir(out: Optional[PathLike]) -> str:
    if out is not None:
        _check_type(out, (str, os.PathLike), "out", "a folder path")
    return os.fspath(out) if out is not None else ""


def _run(g: Graph, hw: Config, fusion: str, objective: Optional[str], schedule: Optional[Schedule],
         out: Optional[PathLike], label: Optional[str] = None, parallel: Optional[str] = None) -> Result:
    out_dir = _out_dir(out)
    if parallel is not None:
        _check_type(parallel, str, "parallel", _option("parallel", "run")["values_text"])
    mode = parallel or ""
    if schedule is not None:
        text = schedule.to_json()
        reply = json.loads(_core.simulate_schedule(g._core_graph(), hw._core, text, schedule.name, out_dir, mode))
    else:
        reply = json.loads(_core.simulate(g._core_graph(), hw._core, fusion, objective or "", out_dir, mode))
    _raise_for(reply)
    return Result(reply, label if label is not None else (schedule.name if schedule is not None else fusion))


def simulate(graph: Union[Graph, PathLike], config: Union[Config, PathLike, None] = None,
             fusion: Optional[str] = None, objective: Optional[str] = None,
             schedule: Optional[ScheduleLike] = None, out: Optional[PathLike] = None,
             parallel: Optional[str] = None) -> Result:
    """Simulates ``graph`` on ``config`` under a fusion policy (as :func:`plan`; ``greedy`` by
    default) or a user ``schedule`` (not both); ``out`` also writes the run folder ``npusim run
    --out`` writes (summary.json, trace.json, report.html, ...). ``parallel`` spreads the
    workload over the config's ``npu.cores`` as ``npusim run --parallel`` does: ``"data"`` splits
    the batch, ``"pipeline"`` streams the inputs through stages of consecutive groups,
    ``"tensor"`` splits each GEMM's output channels over the cores, ``"auto"`` splits each GEMM
    by channels, by batch or not at all by its estimate at the roofs (docs/multicore.md; summary's
    ``parallel`` and ``cores``); ``None``/``"none"``: one core.
    The plan (or schedule) is the one of a copy's graph. Runs in a child process: see the
    module's docstring."""
    policy = _run_arguments(fusion, objective, schedule)
    sched = _schedule(schedule) if schedule is not None else None
    return _run(_graph(graph), _config(config), policy, objective, sched, out, parallel=parallel)


class Comparison:
    """Several runs of one graph side by side (``npusim compare``)."""

    def __init__(self, results: List[Result]) -> None:
        self.results = results

    def __iter__(self) -> Iterator[Result]:
        return iter(self.results)

    def __getitem__(self, label: Union[int, str]) -> Result:
        if isinstance(label, int):
            return self.results[label]
        for r in self.results:
            if r.label == label:
                return r
        raise KeyError(label)

    def table(self) -> str:
        """A text table: cycles, DRAM MB, MAC utilisation and speed-up over the first run."""
        base = self.results[0].summary["cycles"] if self.results else 0
        lines = [f"{'run':<16}{'cycles':>14}{'DRAM MB':>12}{'MAC util %':>12}{'speed-up':>10}"]
        for r in self.results:
            s = r.summary
            speed = base / s["cycles"] if s["cycles"] else 0.0
            lines.append(f"{r.label:<16}{s['cycles']:>14}{r.dram_bytes / 1e6:>12.3f}"
                         f"{100 * s['mac_utilization']:>12.1f}{speed:>9.2f}x")
        return "\n".join(lines)

    def aligned_groups(self) -> List[Record]:
        """The runs' groupings aligned by ops, as ``npusim compare`` gives them (compare.json's
        ``aligned_groups``, docs/outputs.md): one entry per block of ops that is whole groups in
        every run, with ``ops``, ``first_op``, ``runs`` (per run: ``name``, ``groups``,
        ``seconds``, ``dram_bytes``, ``sram_bytes``, ``ops``, ``arithmetic_intensity``, ``bound``)
        and ``speedup`` (the first run's seconds / each run's)."""
        runs = [(r.label, json.dumps(r.summary)) for r in self.results]
        return _records(json.loads(_core.align_groups(runs)))

    def to_pandas(self) -> Any:
        """One row per run with its headline figures (needs pandas)."""
        import pandas
        keys = ["cycles", "seconds", "macs", "dram_read_bytes", "dram_write_bytes", "mac_utilization",
                "arithmetic_intensity", "energy_j", "bound"]
        return pandas.DataFrame([{"run": r.label, **{k: r.summary.get(k) for k in keys}} for r in self.results])

    def __repr__(self) -> str:
        return self.table()


def _unique_labels(names: List[str]) -> List[str]:
    """Run labels as given, a repeated one numbered ("schedule", "schedule#2"), so no two rows
    of a comparison share a name."""
    seen: Dict[str, int] = {}
    out = []
    for n in names:
        seen[n] = seen.get(n, 0) + 1
        out.append(n if seen[n] == 1 else f"{n}#{seen[n]}")
    return out


def compare(graph: Union[Graph, PathLike], config: Union[Config, PathLike, None] = None,
            runs: Iterable[Union[str, ScheduleLike]] = ("none", "greedy"), objective: Optional[str] = None) -> Comparison:
    """Simulates ``graph`` under each of ``runs`` (any number of policy names, Schedules or
    schedule documents) on one config; each result is labelled by its policy or its schedule's
    name (a repeated label gets ``#2``, ``#3``). Every run is planned first, so bad input raises
    before any simulation starts."""
    if isinstance(runs, (str, bytes)) or not isinstance(runs, Iterable):
        raise TypeError(f"compare: runs: expected a list of policies or schedules, found {_type_name(runs)} {runs!r:.60}")
    g, hw = _graph(graph), _config(config)
    items: List[Union[str, Schedule]] = [r if isinstance(r, str) else _schedule(r, f"runs[{i}]") for i, r in enumerate(runs)]
    if not items:
        raise InputError("runs: expected at least one policy or schedule, found none")
    if objective is not None:
        _check_type(objective, str, "objective", _option("objective", "run")["values_text"])
    _core.check_arguments([r for r in items if isinstance(r, str)] or ["file"], objective or "")
    for r in items:
        if isinstance(r, Schedule):
            r.check(g, hw)
        elif r != "search":  # search simulates its finalists: planned once, in its run
            _core.plan(g._core_graph(), hw._core, r, "")
    labels = _unique_labels([r.name if isinstance(r, Schedule) else r for r in items])
    results = []
    for r, label in zip(items, labels):
        if isinstance(r, Schedule):
            results.append(_run(g, hw, "file", None, r, None, label))
        else:
            results.append(_run(g, hw, r, objective if r == "search" else None, None, None, label))
    return Comparison(results)


# ---------------------------------------------------------------------------------------------
# Language models


class LlmResult:
    """A language model's prefill and decode on one config (``npusim llm``): summary.json's
    content, whose ``llm`` block (docs/outputs.md, docs/llm.md) gives the typed figures below.
    ``summary`` is the whole document, ``block`` its ``llm`` block."""

    def __init__(self, summary: Mapping[str, Any]) -> None:
        self.summary: Record = _records(dict(summary))
        self.block: Record = self.summary["llm"]

    def __getattr__(self, key: str) -> Any:
        """Any other field of the ``llm`` block by name (``widths``, ``model_type``, ...)."""
        block = self.__dict__.get("block")
        if block is not None and key in block:
            return block[key]
        raise AttributeError(f"npusim.LlmResult has no attribute '{key}' (the llm block has no such field)")

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self.__dict__.get("block", {}).keys()))

    @property
    def model(self) -> str:
        """The model's name (the config.json's folder or the shipped name)."""
        return str(self.block["model"])

    @property
    def config_name(self) -> str:
        """The hardware config's name."""
        return str(self.summary["config_name"])

    @property
    def params(self) -> int:
        """Parameters of the model."""
        return int(self.block["params"])

    @property
    def weight_bytes(self) -> int:
        """Bytes of the weights at their widths, group scales and zero points included (bytes)."""
        return int(self.block["weight_bytes"])

    @property
    def kv_cache_bytes(self) -> int:
        """Bytes of the KV cache at the final context, every sequence of the batch (bytes)."""
        return int(self.block["kv_cache_bytes"])

    @property
    def ttft_seconds(self) -> float:
        """Time to first token: the prefill's time (s)."""
        return float(self.block["ttft_seconds"])

    @property
    def total_seconds(self) -> float:
        """Prefill plus every decode step (s)."""
        return float(self.block["total_seconds"])

    @property
    def prefill(self) -> Record:
        """The prefill phase: ``tokens``, ``seconds``, ``cycles``, ``macs``, ``dram_bytes``, ``energy_j``."""
        return self.block["prefill"]

    @property
    def decode(self) -> Record:
        """The decode phase: ``tokens``, ``seconds``, ``tokens_per_second``, ``energy_j``,
        ``energy_per_token_j``, ``simulated_steps``, ``steps``."""
        return self.block["decode"]

    @property
    def tokens_per_second(self) -> Optional[float]:
        """Generated tokens (batch x generate) per second of decode (tokens/s); None without decode."""
        v = self.block["decode"].get("tokens_per_second")
        return None if v is None else float(v)

    @property
    def energy_per_token_j(self) -> Optional[float]:
        """Decode energy per generated token (J/token); None without an energy model."""
        v = self.block["decode"].get("energy_per_token_j")
        return None if v is None else float(v)

    @property
    def steps(self) -> List[Record]:
        """One entry per decode step: ``context``, ``seconds``, ``dram_bytes``, ``macs``,
        ``energy_j``, ``simulated`` (False: interpolated between simulated neighbours)."""
        return self.block["decode"]["steps"]

    def to_pandas(self) -> Any:
        """A pandas DataFrame of the decode steps (needs pandas: Debian's python3-pandas)."""
        try:
            import pandas
        except ImportError as e:
            raise ImportError("LlmResult.to_pandas needs pandas (apt-get install python3-pandas)") from e
        return pandas.DataFrame([dict(s) for s in self.steps])

    def __repr__(self) -> str:
        tps = self.tokens_per_second
        return (f"npusim.LlmResult({self.model!r} on {self.config_name!r}: TTFT {self.ttft_seconds * 1e3:.3f} ms, "
                f"{'-' if tps is None else f'{tps:.2f}'} tokens/s)")


def _whole(value: Any, where: str) -> int:
    """An integer argument (bool is not one): TypeError naming it otherwise."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{where}: expected an integer, found {_type_name(value)} {value!r:.60}")
    return value


def _dtype(value: Optional[str], where: str) -> str:
    if value is None:
        return ""
    _check_type(value, str, where, "a width name such as int4, int8, fp16 or bf16")
    return value


def llm(model: PathLike, config: Union[Config, PathLike, None] = None, prompt: int = 128, generate: int = 32,
        batch: int = 1, weight_dtype: Optional[str] = None, group_size: int = 128, kv_dtype: Optional[str] = None,
        act_dtype: Optional[str] = None, zero_point: bool = False, wide_head: bool = False,
        all_logits: bool = False, fusion: str = "greedy", decode_samples: int = 5,
        decode_tolerance: float = 0.005, out: Optional[PathLike] = None, quiet: bool = False,
        context: int = 0, expert_routing: Optional[str] = None, draft: Optional[PathLike] = None,
        draft_tokens: int = 4, acceptance: float = 0.7, kv_group_size: Optional[int] = None,
        every_layer: bool = False, image: Optional[str] = None, prefill_chunk: int = 0) -> LlmResult:
    """Simulates a decoder-only language model's prefill of ``prompt`` tokens and ``generate``
    decode steps for ``batch`` sequences on ``config``, as ``npusim llm`` does (docs/llm.md):
    ``model`` is a Hugging Face config.json path or a shipped name (``Llama-3.2-1B``,
    ``Qwen2.5-0.5B``, ``SmolLM2-360M``, ...). Widths: ``weight_dtype`` int4, int8, fp16, bf16
    with ``group_size`` weights per fp16 scale (``zero_point``: a zero point per group too);
    ``kv_dtype`` int4 (one fp16 scale per ``kv_group_size`` elements, None: 32), int8, fp16, bf16 and
    ``act_dtype`` int8, fp16, bf16 (None: the config's dtype); ``wide_head``
    keeps the LM head and embedding at fp16; ``all_logits`` computes the LM head for every
    prompt token. ``context`` tokens are already in each sequence's KV cache before the prompt
    (earlier turns, never prefilled): the prefill attends to them and decode step i runs at
    context ``context + prompt + i + 1``. ``prefill_chunk`` (0: the whole prompt in one step) runs
    the prompt as chunks of that many tokens, each attending to the cache the earlier ones wrote,
    sampled as decode steps are, as ``--prefill-chunk`` (the block's ``prefill.chunks``).
    ``expert_routing`` (mixture-of-experts models):
    ``"uniform"`` (None: the default) or ``"concentrated"``, as ``--expert-routing``. ``draft``
    (a config.json path or shipped name with the model's vocabulary) adds speculative decoding
    beside plain decode: ``draft_tokens`` proposals a round, each accepted with probability
    ``acceptance`` when the ones before it were (the block's ``speculative``). At most
    ``decode_samples`` steps are simulated (0: all): the first, the last, then midpoints while a
    midpoint lies more than ``decode_tolerance`` (a fraction) off the line through its
    interval's ends; the rest are interpolated. Layers of one kind share their timing: a phase
    simulates the first layers until each kind has occurred twice after layer 0, and each later
    layer takes the last simulated layer of its kind's figures (``every_layer``: simulate all).
    ``image`` (``"448x448"``, a vision-language model such as ``Qwen2-VL-2B-Instruct``) encodes
    an image of that many pixels before the prefill, whose prompt gains the image's tokens, as
    ``--image``: the block's ``vision`` and a TTFT of both phases.
    ``out`` also writes the folder ``npusim llm --out`` writes. ``quiet`` drops the progress
    line (drawn on stderr when it is a terminal).

    Runs in a child process (each phase in one of its own); a bad argument raises
    :class:`InputError` naming it (``weight_dtype int3: expected ...``) before anything runs."""
    _check_type(model, (str, os.PathLike), "model", "a config.json path or a shipped model name")
    hw = _config(config)
    # Python integers are unbounded: one beyond C++'s range is refused here with the engine's words.
    for name, v in (("prompt", prompt), ("generate", generate), ("batch", batch), ("context", context),
                    ("prefill_chunk", prefill_chunk)):
        if not -2**63 <= _whole(v, name) < 2**63:
            raise InputError(f"{name}: expected an integer {_range_text(name)}, found {v}")
    if kv_group_size is not None:  # scales belong to the int4 cache only: refused beside any other
        if kv_dtype != "int4":
            raise InputError(f"kv_group_size: expected kv_dtype 'int4' beside it (the KV format with scales), "
                             f"found {kv_dtype!r}")
        kv_group = _option("kv_group_size")
        if not kv_group["min"] <= _whole(kv_group_size, "kv_group_size") <= kv_group["max"]:
            raise InputError(f"kv_group_size: expected a whole number {_range_text('kv_group_size')}, "
                             f"found {kv_group_size}")
    if not 0 <= _whole(group_size, "group_size") < 2**32:
        raise InputError(f"group_size: expected at most 1048576, found {group_size}")
    if not -2**31 <= _whole(decode_samples, "decode_samples") < 2**31:
        raise InputError(f"decode_samples: expected 0 (every step) or at least 2, found {decode_samples}")
    if isinstance(decode_tolerance, bool):  # bool is an int to Python, never a fraction
        raise TypeError(f"decode_tolerance: expected a fraction above 0 and at most 1, found bool {decode_tolerance}")
    _check_type(decode_tolerance, (int, float), "decode_tolerance", "a fraction above 0 and at most 1")
    if not 0 < decode_tolerance <= 1:
        raise InputError(f"decode_tolerance: expected a fraction above 0 and at most 1, found {decode_tolerance}")
    _check_type(fusion, str, "fusion", _POLICY_NAMES)
    _core.check_arguments([fusion], "")
    if expert_routing is not None:
        _check_type(expert_routing, str, "expert_routing", _option("expert_routing")["values_text"])
    if draft is not None:
        _check_type(draft, (str, os.PathLike), "draft", "a config.json path or a shipped model name")
    if image is not None:
        _check_type(image, str, "image", "WIDTHxHEIGHT in pixels, such as '448x448'")
    tokens = _option("draft_tokens")
    if not tokens["min"] <= _whole(draft_tokens, "draft_tokens") <= tokens["max"]:
        raise InputError(f"draft_tokens: expected an integer {_range_text('draft_tokens')}, found {draft_tokens}")
    if isinstance(acceptance, bool):  # bool is an int to Python, never a probability
        raise TypeError(f"acceptance: expected a probability from 0 to 1, found bool {acceptance}")
    _check_type(acceptance, (int, float), "acceptance", "a probability from 0 to 1")
    if not 0 <= acceptance <= 1:
        raise InputError(f"acceptance: expected a probability from 0 to 1, found {acceptance}")
    for name, v in (("zero_point", zero_point), ("wide_head", wide_head), ("all_logits", all_logits),
                    ("quiet", quiet), ("every_layer", every_layer)):
        _check_type(v, bool, name, "True or False")
    reply = json.loads(_core.llm(os.fspath(model), hw._core, prompt, generate, batch,
                                 _dtype(weight_dtype, "weight_dtype"), group_size, _dtype(kv_dtype, "kv_dtype"),
                                 _dtype(act_dtype, "act_dtype"), zero_point, wide_head, all_logits, fusion,
                                 decode_samples, float(decode_tolerance), _out_dir(out), quiet, context,
                                 "" if expert_routing is None else expert_routing,
                                 "" if draft is None else os.fspath(draft), draft_tokens, float(acceptance),
                                 32 if kv_group_size is None else kv_group_size, every_layer,
                                 "" if image is None else image, prefill_chunk))
    _raise_for(reply)
    return LlmResult(reply)
