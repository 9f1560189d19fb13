"""A REST pass-through server (Bitbucket's and Jira's MCP servers: `bb_get`, `bb_post`, ...
each taking an API `path`, a JSON `body` and response options) is mined as resources keyed by
their path, and its methods are built as reads and writes of the resource at that path."""

from __future__ import annotations

import pytest

from agent_world.design.cross_validation import SandboxCompiler, cross_validate, validation_runtime
from agent_world.design.tool_designer import design_tools
from agent_world.envs.testing import verify_spec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources.base import SourceDocument, ToolDescription
from agent_world.models import set_chat_model

_OPTIONS = {
    "queryParams": {"type": "object", "additionalProperties": {"type": "string"},
                    "description": "Optional query parameters as key-value pairs."},
    "jq": {"type": "string", "description": "JMESPath expression to filter the response."},
    "outputFormat": {"type": "string", "enum": ["toon", "json"],
                     "description": "Output format: \"toon\" (default) or \"json\"."},
}
_PATH = {"type": "string", "minLength": 1,
         "description": "The API endpoint path (without base URL). Examples: \"/workspaces\"."}
_BODY = {"type": "object", "additionalProperties": {},
         "description": "Request body as a JSON object. Example for PR: "
                        "{\"title\": \"My PR\", \"source\": {\"branch\": {\"name\": \"x\"}}}"}


def _tool(method: str, what: str, body: bool) -> ToolDescription:
    props = {"path": _PATH, **_OPTIONS, **({"body": _BODY} if body else {})}
    return ToolDescription(name=f"bb_{method}", description=f"{what} Bitbucket resources.",
                           read_only=method == "get",
                           input_schema={"type": "object", "properties": props,
                                         "required": ["path", *(["body"] if body else [])]})


@pytest.fixture(scope="module")
def mined():
    set_chat_model("miner", None)
    doc = SourceDocument(name="bitbucket", kind="tool-list", reference="bitbucket.json", tools=[
        _tool("get", "Read any", False), _tool("post", "Create", True),
        _tool("put", "Replace", True), _tool("patch", "Partially update", True),
        _tool("delete", "Delete", False)])
    return mine_theme(doc, iterations=1, seed=0).spec


def test_methods_act_on_resources_keyed_by_path_not_on_records_named_after_them(mined):
    names = [t.name for t in mined.tables]
    assert "resources" in names and "posts" not in names
    table = mined.table("resources")
    cols = {c.name: c for c in table.columns}
    assert cols["path"].unique and cols["body"].type == "json"
    # response options and an example's quoted keys are no fields of the resource
    assert not {"jq", "output_format", "query_params"} & set(cols)
    assert cols["body"].enum is None
    paths = [r["path"] for r in mined.rows["resources"]]
    assert len(set(paths)) == len(paths)


def test_the_methods_are_built_and_find_the_resource_by_its_path(mined):
    compiler, runtime = SandboxCompiler(), validation_runtime()
    try:
        validation, built, _ = cross_validate(mined, design_tools(mined), compiler=compiler,
                                              runtime=runtime)
    finally:
        compiler.close()
        runtime.close()
    assert built is not None and verify_spec(built) == []
    kept = {t.name for t in built.tools}
    assert {"bb_get", "bb_post", "bb_put", "bb_patch", "bb_delete"} <= kept
    params = {t.name: t.parameters["properties"] for t in built.tools}
    assert params["bb_post"]["body"]["type"] == "object"  # the body is stored whole
    for name in ("bb_put", "bb_patch", "bb_delete"):
        # told which resource by its path, not by an id it was never given
        assert "resource_id" not in params[name]
        tests = [t for t in built.tests if t.tool == name and t.expect.ok is not False]
        assert tests and all("path" in t.arguments for t in tests)


def test_a_method_named_tool_without_a_path_is_no_rest_resource():
    """memcached's cache_get(key) / cache_delete(key) are no REST pass-through."""
    set_chat_model("miner", None)
    key = {"type": "object", "properties": {"key": {"type": "string"}}, "required": ["key"]}
    doc = SourceDocument(name="memcached", kind="tool-list", reference="memcached.json", tools=[
        ToolDescription(name=f"cache_{m}", description=f"{m.title()} a cache entry.",
                        input_schema=key) for m in ("get", "delete", "touch")])
    spec = mine_theme(doc, iterations=1, seed=0).spec
    assert "resources" not in [t.name for t in spec.tables]


def test_a_json_column_holds_the_source_s_example_or_nothing_invented(mined):
    """A JSON column got {"source": ..., "version": ...} whatever the service, and tasks asked
    for "the largest version" of the resources; now the description's own example, and an
    empty object where the source says nothing of what it holds."""
    bodies = [r["body"] for r in mined.rows["resources"]]
    assert bodies and all(b == {"title": "My PR", "source": {"branch": {"name": "x"}}}
                          for b in bodies)
    set_chat_model("miner", None)
    plain = {**_BODY, "description": "Request body as a JSON object."}
    doc = SourceDocument(name="bitbucket", kind="tool-list", reference="bitbucket.json", tools=[
        ToolDescription(name="bb_post", description="Create Bitbucket resources.",
                        input_schema={"type": "object", "properties": {
                            "path": _PATH, "body": plain}, "required": ["path", "body"]}),
        _tool("get", "Read any", False)])
    spec = mine_theme(doc, iterations=1, seed=0).spec
    assert all(r["body"] == {} for r in spec.rows["resources"])

