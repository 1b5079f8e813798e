"""The run options' table from Python (npusim.run_options(), sim/engine/run_options.h): every
option the table gives to Python is a keyword of the call that runs its command, and the
package's checks take their values and ranges from the table.

Run through CTest (PYTHONPATH=build/python).
"""
import inspect

import pytest

import npusim

# The calls that take a command's options as keywords.
CALLS = {"run": (npusim.load, npusim.plan, npusim.simulate), "llm": (npusim.llm,)}


def test_every_python_option_is_a_keyword_of_its_command():
    options = [o for o in npusim.run_options() if o.python]
    assert {o.command for o in options} == {"run", "llm"}
    for o in options:
        keywords = set()
        for call in CALLS[o.command]:
            keywords |= set(inspect.signature(call).parameters)
        assert o.key in keywords, (o.command, o.key)


def test_each_row_has_a_flag_a_description_and_its_values_or_range():
    for o in npusim.run_options():
        assert o.flag == "--" + o.key.replace("_", "-")
        assert o.description
        if o.kind == "choice":
            assert o["values"]
        if o.kind == "integer":
            assert o.min <= o.max


def test_checks_name_the_tables_range():
    draft_tokens = next(o for o in npusim.run_options() if o.command == "llm" and o.key == "draft_tokens")
    with pytest.raises(npusim.InputError,
                       match=rf"^draft_tokens: expected an integer from 1 to {draft_tokens.max}, found"):
        npusim.llm("SmolLM2-360M", "edge-s", draft="SmolLM2-360M", draft_tokens=draft_tokens.max + 1)
    kv_cache = next(o for o in npusim.run_options() if o.command == "run" and o.key == "kv_cache")
    with pytest.raises(npusim.InputError, match=rf"^kv_cache: expected {kv_cache.values_text}, found 'x'"):
        npusim.load("mobilenet_v2", kv_cache="x")
