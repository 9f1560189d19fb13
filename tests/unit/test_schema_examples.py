"""Objects a JSON schema describes: what an object argument's JSON column holds."""

from __future__ import annotations

import json
import random
from datetime import datetime
from pathlib import Path

from agent_world.mining.offline.evidence import tool_arguments
from agent_world.mining.offline.schema_examples import schema_example
from agent_world.mining.sources.base import ToolDescription

CORPUS = Path(__file__).parents[2] / "agent_world" / "data" / "corpus"


def _excel_tool(name: str) -> ToolDescription:
    raw = next(t for t in json.loads((CORPUS / "excel.json").read_text())["tools"]
               if t["name"] == name)
    return ToolDescription(name=name, description=raw["description"],
                           input_schema=raw["inputSchema"])


def test_a_ref_typed_argument_is_the_object_its_definition_describes():
    props, required = tool_arguments(_excel_tool("add_data_validation"))
    rule = props["rule"]
    assert rule["type"] == "object" and "$ref" not in json.dumps(rule)
    assert "list" in rule["properties"]["type"]["enum"] and "rule" in required


def test_an_example_fills_required_fields_and_only_values_the_schema_gives():
    rule = tool_arguments(_excel_tool("add_data_validation"))[0]["rule"]
    for seed in range(20):
        value = schema_example(rule, random.Random(seed))
        assert isinstance(value, dict) and value
        assert set(value) <= set(rule["properties"])
        assert set(rule.get("required") or []) <= set(value)
        assert value.get("type", "list") in rule["properties"]["type"]["enum"]
    style = {"type": "object", "properties": {
        "bold": {"type": "boolean"},
        "font_size": {"type": "number", "minimum": 1, "maximum": 409},
        "font_color": {"type": "string", "description": "Hex, e.g. '#1F4E78'."},
        "note": {"type": "string"},  # says nothing: never invented
        "when": {"type": "string", "description": "e.g. '2025-02-30T10:00:00'"}},
        "required": ["bold", "when"]}
    for seed in range(20):
        v = schema_example(style, random.Random(seed))
        assert isinstance(v["bold"], bool) and "note" not in v
        assert 1 <= v.get("font_size", 1) <= 409
        assert v.get("font_color", "#000000").startswith("#")
        # an example date is redrawn as a real date, not digit by digit
        datetime.fromisoformat(v["when"])
    assert schema_example({"type": "string"}, random.Random(0)) is None
    assert schema_example({"const": "x"}, random.Random(0)) == "x"


def test_a_bound_at_the_types_own_limit_makes_no_value_of_it():
    """Plane's cycle counts are integers in [-(2^53 - 1), 2^53 - 1]: a cycle had
    -9007199254740987 backlog issues."""
    safe = 9007199254740991
    for seed in range(20):
        rng = random.Random(seed)
        assert 0 <= schema_example({"type": "integer", "minimum": -safe, "maximum": safe},
                                   rng) <= 100
        assert 0 <= schema_example({"type": "integer", "minimum": 0, "maximum": safe},
                                   rng) <= 100
        assert 5 <= schema_example({"type": "integer", "minimum": 5, "maximum": 9}, rng) <= 9
