"""Hostile environment specs: schema references that would reach the network, JSON nested past
any sensible depth, and patterns whose compilation would exhaust the stack or the memory. Each
is refused with one line naming the field, never fetched, never a traceback."""

from __future__ import annotations

import copy
import http.server
import json
import threading

import pytest
from typer.testing import CliRunner

from agent_world.cli import app
from agent_world.envs.arguments import CompiledArguments, argument_problem
from agent_world.envs.spec import EnvSpec
from agent_world.envs.spec_limits import MAX_SCHEMA_DEPTH, MAX_SPEC_DEPTH
from agent_world.errors import SpecError

runner = CliRunner()


@pytest.fixture()
def listener():
    """An HTTP server on a free loopback port that records every request it gets."""
    seen: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):  # noqa: N802 (http.server's naming)
            seen.append(self.path)
            body = json.dumps({"type": "integer"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}", seen
    server.shutdown()
    server.server_close()
    thread.join()


def _raw(notes_spec) -> dict:
    return json.loads(notes_spec.to_json())


def _with_user_id_schema(notes_spec, schema: dict, **extra) -> dict:
    raw = _raw(notes_spec)
    params = raw["tools"][0]["parameters"]  # list_notes
    params["properties"]["user_id"] = schema
    params.update(extra)
    return raw


def _import(tmp_path, raw_or_text) -> object:
    path = tmp_path / "env.json"
    path.write_text(raw_or_text if isinstance(raw_or_text, str) else json.dumps(raw_or_text))
    return runner.invoke(app, ["env", "import", str(path)])


def _one_error_line(result) -> str:
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.output
    return lines[0]


# ---- schema references ----------------------------------------------------------------------

@pytest.mark.parametrize("key", ["$ref", "$dynamicRef"])
def test_a_remote_ref_is_refused_at_import_and_never_fetched(home, tmp_path, notes_spec,
                                                             listener, key):
    url, seen = listener
    raw = _with_user_id_schema(notes_spec, {key: f"{url}/user_id.json"})
    line = _one_error_line(_import(tmp_path, raw))
    assert "tools[0].parameters" in line and "'list_notes'" in line
    assert "properties.user_id" in line and f"{url}/user_id.json" in line
    with pytest.raises(SpecError, match="only local references"):
        EnvSpec.from_dict(raw)
    assert seen == []


@pytest.mark.parametrize("ref", ["other.json#/x", "//127.0.0.1:9/x", "urn:x:y"])
def test_relative_and_other_non_local_refs_are_refused(notes_spec, ref):
    with pytest.raises(SpecError, match="only local references"):
        EnvSpec.from_dict(_with_user_id_schema(notes_spec, {"$ref": ref}))


def test_an_id_that_moves_the_base_uri_is_refused(notes_spec, listener):
    url, seen = listener
    raw = _with_user_id_schema(notes_spec, {"$ref": "#/$defs/id"}, **{
        "$id": f"{url}/root.json", "$defs": {"id": {"type": "integer"}}})
    with pytest.raises(SpecError, match=r"\$id"):
        EnvSpec.from_dict(raw)
    assert seen == []


def test_checking_arguments_never_retrieves_a_reference(listener):
    # a schema that did not come through spec validation (the API takes any schema): the
    # validator's registry refuses to retrieve, so the check cannot reach the network
    url, seen = listener
    checker = CompiledArguments({"type": "object",
                                 "properties": {"n": {"$ref": f"{url}/n.json"}}})
    problem = argument_problem(checker, {"n": 1})
    assert problem is not None and f"{url}/n.json" in problem and "not resolve" in problem
    assert seen == []


def test_local_refs_work_and_a_dangling_one_is_refused(runtime, notes_spec):
    raw = _with_user_id_schema(notes_spec, {"$ref": "#/$defs/user_id"},
                               **{"$defs": {"user_id": {"type": "integer", "minimum": 1}}})
    spec = EnvSpec.from_dict(raw)
    ep = runtime.open(spec)
    assert ep.step("list_notes", {"user_id": 1}).ok
    obs = ep.step("list_notes", {"user_id": 0})
    assert obs.error.kind == "invalid_arguments" and "minimum" in obs.error.message
    ep.close()
    raw["tools"][0]["parameters"]["properties"]["user_id"]["$ref"] = "#/$defs/missing"
    with pytest.raises(SpecError, match=r"'#/\$defs/missing'.*does not resolve"):
        EnvSpec.from_dict(raw)


@pytest.mark.parametrize("name", ["default", "enum", "const", "examples"])
def test_a_property_named_like_a_data_keyword_is_still_a_schema(notes_spec, name):
    raw = _raw(notes_spec)
    raw["tools"][0]["parameters"]["properties"][name] = {"$ref": "http://127.0.0.1:9/x"}
    with pytest.raises(SpecError, match="only local references"):
        EnvSpec.from_dict(raw)
    raw["tools"][0]["parameters"]["properties"][name] = {"type": "string", "pattern": "(" * 40}
    with pytest.raises(SpecError, match="groups"):
        EnvSpec.from_dict(raw)


def test_a_ref_inside_data_keywords_is_data_not_a_reference(notes_spec):
    spec = EnvSpec.from_dict(_with_user_id_schema(
        notes_spec, {"type": "object", "default": {"$ref": "http://example.invalid/x"},
                     "examples": [{"$ref": "elsewhere"}]}))
    assert spec.tools[0].parameters["properties"]["user_id"]["default"]["$ref"]


# ---- nesting --------------------------------------------------------------------------------

def test_a_spec_nested_100k_deep_is_one_error_line(home, tmp_path, notes_spec):
    text = json.dumps(_raw(notes_spec))[:-1] + ', "x": ' + "[" * 100_000 + "]" * 100_000 + "}"
    line = _one_error_line(_import(tmp_path, text))
    assert "nested" in line and str(MAX_SPEC_DEPTH) in line
    with pytest.raises(SpecError, match="nested"):
        EnvSpec.from_json(text)


def test_nesting_past_the_limit_names_where(notes_spec):
    raw = _raw(notes_spec)
    value: object = 1
    for _ in range(MAX_SPEC_DEPTH + 5):
        value = [value]
    raw["rows"]["notes"][0]["body"] = value  # deep enough to say where, shallow enough to read
    with pytest.raises(SpecError, match=r"rows\.notes\[0\]\.body\[0\].*nested more than"):
        EnvSpec.from_dict(raw)
    text = json.dumps(raw)
    with pytest.raises(SpecError, match=r"rows\.notes\[0\]\.body"):
        EnvSpec.from_json(text)


@pytest.mark.parametrize("levels", [MAX_SCHEMA_DEPTH, 150, 900])
def test_a_deeply_nested_argument_schema_is_refused(home, tmp_path, notes_spec, levels):
    raw = _with_user_id_schema(notes_spec, {"type": "integer"})
    schema: dict = {"type": "integer"}
    for _ in range(levels):
        schema = {"type": "array", "items": schema}
    raw["tools"][0]["parameters"]["properties"]["user_id"] = "@@"
    text = json.dumps(raw).replace('"@@"', json.dumps(schema))  # past json.dumps' own depth
    line = _one_error_line(_import(tmp_path, text))
    assert "tools[0].parameters" in line and "nested more than" in line
    with pytest.raises(SpecError, match="nested more than"):
        EnvSpec.from_json(text)


def test_a_schema_just_within_the_limit_checks_arguments(runtime, notes_spec):
    schema: dict = {"type": "integer"}
    value: object = 1
    # parameters, properties and user_id's own schema are three levels: this ends at the limit
    for _ in range(MAX_SCHEMA_DEPTH - 3):
        schema, value = {"type": "array", "items": schema}, [value]
    raw = _with_user_id_schema(notes_spec, schema)
    raw["tools"][0]["source"] = "def list_notes(ctx, user_id):\n    return 'ok'\n"
    ep = runtime.open(EnvSpec.from_dict(raw))
    assert ep.step("list_notes", {"user_id": value}).result == "ok"
    assert ep.step("list_notes", {"user_id": 1}).error.kind == "invalid_arguments"
    ep.close()


# ---- patterns -------------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["pattern", "patternProperties"])
def test_a_pattern_of_5000_open_parens_is_one_error_line(home, tmp_path, notes_spec, where):
    if where == "pattern":
        raw = _with_user_id_schema(notes_spec, {"type": "string", "pattern": "(" * 5000})
    else:
        raw = _with_user_id_schema(notes_spec, {"type": "integer"},
                                   patternProperties={"(" * 5000: {}})
    line = _one_error_line(_import(tmp_path, raw))
    assert "tools[0].parameters" in line and "'list_notes'" in line and "groups" in line
    assert len(line) < 600  # the pattern is quoted clipped
    with pytest.raises(SpecError, match="groups"):
        EnvSpec.from_dict(raw)


@pytest.mark.parametrize("pattern", [
    "(?:(?:(?:a{1000}){1000}){1000})",  # 31 characters, a billion states once expanded
    "a{4294967294}",
    "(){1000000}",  # an empty group: regex's compiler loops on it for minutes
    "x" * 200_000,
    "[" + "a" * 200_000 + "]",  # one class, compiled in seconds
])
def test_a_pattern_too_large_to_compile_is_refused_before_compiling(notes_spec, pattern):
    raw = _with_user_id_schema(notes_spec, {"type": "string", "pattern": pattern})
    with pytest.raises(SpecError, match="too large"):
        EnvSpec.from_dict(raw)


@pytest.mark.parametrize("pattern", [
    r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$",
    r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$", r"^[A-Z]{2}\d{2,30}$", r"^[^\]x]{1,64}$",
    r"^(?:[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*)@example\.com$",
    r"[{}]", r"a{,3}", r"\{1000000\}",
])
def test_ordinary_patterns_still_pass(notes_spec, pattern):
    EnvSpec.from_dict(_with_user_id_schema(notes_spec, {"type": "string", "pattern": pattern}))


def test_a_large_flat_schema_is_fine(notes_spec):
    # size alone (many properties, a long enum) costs time in proportion and is allowed
    raw = _with_user_id_schema(notes_spec, {"type": "string",
                                            "enum": [f"v{i}" for i in range(20_000)]})
    raw["tools"][0]["parameters"]["properties"].update(
        {f"p{i}": {"type": "string"} for i in range(500)})
    spec = EnvSpec.from_dict(raw)
    assert len(spec.tools[0].parameters["properties"]) == 501


def test_one_bad_field_is_one_line(notes_spec):
    raw = copy.deepcopy(_raw(notes_spec))
    raw["tools"][0]["parameters"]["type"] = "array"
    with pytest.raises(SpecError) as info:
        EnvSpec.from_dict(raw, origin="bad.json")
    assert str(info.value).count("\n") == 0
    assert str(info.value).startswith("bad.json: invalid environment spec: tools[0].parameters")
