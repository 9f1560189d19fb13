"""The toolkit authoring API: schema from type hints and docstrings, helpers found by static
analysis, build-time errors (missing helper, read tool that writes), `env build PATH`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Literal, NotRequired

import pytest
from pydantic import Field
from typer.testing import CliRunner
from typing_extensions import TypedDict

from agent_world.cli import app
from agent_world.envs.authoring import build_env
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.testing import run_tool_test
from agent_world.envs.toolkit import compile_tools, parameters_schema, parse_docstring, tool
from agent_world.errors import SpecError, ToolkitError

ENVIRONMENT = '''
THEME = {"name": "Tiny library", "description": "Loans of books.",
         "taxonomy": {"l1": "Education", "l2": "Libraries", "l3": "tiny_library"}}
TABLES = [
    {"name": "books", "columns": [
        {"name": "id", "type": "integer", "primary_key": True},
        {"name": "title", "type": "text", "nullable": False},
        {"name": "copies", "type": "integer", "nullable": False}]},
    {"name": "loans", "columns": [
        {"name": "id", "type": "integer", "primary_key": True},
        {"name": "book_id", "type": "integer", "foreign_key": "books.id"},
        {"name": "member", "type": "text"},
        {"name": "due", "type": "date"}]},
]
ROWS = {"books": [{"id": 1, "title": "Dune", "copies": 1},
                  {"id": 2, "title": "Emma", "copies": 0}]}


def build_tests(rows, anchors):
    return [
        {"name": "finds", "tool": "get_book", "arguments": {"book_id": 1},
         "expect": {"contains": {"title": rows["books"][0]["title"]}}},
        {"name": "unknown", "tool": "get_book", "arguments": {"book_id": 99},
         "expect": {"ok": False, "error_kind": "tool_error"}},
        {"name": "lends", "tool": "lend", "arguments": {"book_id": 1, "member": "ann"},
         "expect": {"contains": {"due": "2026-01-29"}}},
        {"name": "none left", "tool": "lend", "arguments": {"book_id": 2, "member": "ann"},
         "expect": {"ok": False, "error_kind": "tool_error"}},
    ]
'''

TOOLS = '''
import datetime as dt
from typing import Annotated

from pydantic import Field

from agent_world.envs.toolkit import Ctx, ToolError, tool

LOAN_DAYS = 14


def _book(ctx, book_id):
    """The book row or ToolError."""
    row = ctx.one("SELECT * FROM books WHERE id = ?", (book_id,))
    if row is None:
        raise ToolError(f"No book {book_id}.")
    return row


def _due(ctx):
    return (dt.date.fromisoformat(ctx.today()) + dt.timedelta(days=LOAN_DAYS)).isoformat()


@tool
def get_book(ctx: Ctx, book_id: Annotated[int, Field(ge=1)]) -> dict:
    """One book by id.

    Args:
        book_id: Id of the book.
    """
    return _book(ctx, book_id)


@tool(write=True)
def lend(ctx: Ctx, book_id: int, member: Annotated[str, Field(min_length=1)]) -> dict:
    """Lend a copy of a book to a member for the loan period; refused when no copy is left.

    Args:
        book_id: Id of the book.
        member: Who borrows it.
    """
    book = _book(ctx, book_id)
    if book["copies"] < 1:
        raise ToolError(f"No copy of {book['title']!r} left.")
    ctx.execute("UPDATE books SET copies = copies - 1 WHERE id = ?", (book_id,))
    due = _due(ctx)
    cur = ctx.execute("INSERT INTO loans (book_id, member, due) VALUES (?, ?, ?)",
                      (book_id, member, due))
    return {"loan_id": cur.lastrowid, "due": due}
'''


def _write_env(root: Path, tools: str = TOOLS, environment: str = ENVIRONMENT) -> Path:
    folder = root / "tiny_library"
    folder.mkdir(parents=True)
    (folder / "environment.py").write_text(environment)
    (folder / "tools.py").write_text(tools)
    return folder


class Item(TypedDict):
    sku: Annotated[str, Field(pattern="^[A-Z]{3}$")]
    qty: NotRequired[int]


# ---- schema ---------------------------------------------------------------------------------
def test_docstring_sections_and_continuations():
    desc, args = parse_docstring('''Find things.

    More words
    here.

    Args:
        a: First
            continued.
        b (int): Second.
    Returns:
        nothing: not an argument.
    ''')
    assert desc == "Find things.\n\nMore words here."
    assert args == {"a": "First continued.", "b": "Second."}


def test_schema_from_type_hints_and_docstring():
    @tool(require_any=("name", "items"))
    def f(ctx, name: str | None = None, kind: Literal["a", "b"] = "a",
          limit: Annotated[int, Field(ge=1, le=50)] = 10,
          items: Annotated[list[Item], Field(min_length=1)] = None,
          flag: bool = False):
        """Doc.

        Args:
            name: The name.
            kind: Which kind.
        """

    schema = parameters_schema(f, parse_docstring(f.__doc__)[1], ("name", "items"))
    props = schema["properties"]
    assert schema["required"] == [] and schema["additionalProperties"] is False
    assert schema["anyOf"] == [{"required": ["name"]}, {"required": ["items"]}]
    assert props["name"] == {"type": "string", "description": "The name."}
    assert props["kind"] == {"type": "string", "enum": ["a", "b"], "default": "a",
                             "description": "Which kind."}
    assert props["limit"] == {"type": "integer", "minimum": 1, "maximum": 50, "default": 10}
    item = props["items"]["items"]
    assert item["required"] == ["sku"] and item["additionalProperties"] is False
    assert item["properties"]["sku"]["pattern"] == "^[A-Z]{3}$"
    assert "title" not in json.dumps(schema) and "$ref" not in json.dumps(schema)


def test_untyped_argument_and_missing_ctx_are_errors():
    @tool
    def untyped(ctx, x):
        """Doc."""

    @tool
    def no_ctx(x: int):
        """Doc."""

    with pytest.raises(ToolkitError, match="'x' has no type hint"):
        compile_tools([untyped])
    with pytest.raises(ToolkitError, match="first parameter must be 'ctx'"):
        compile_tools([no_ctx])


# ---- building a folder ------------------------------------------------------------------------
def test_folder_builds_a_working_environment(tmp_path):
    spec = build_env(_write_env(tmp_path))
    assert spec.name == "tiny_library"
    assert [t.name for t in spec.tools] == ["get_book", "lend"]
    assert [t.mutates for t in spec.tools] == [False, True]
    # helpers collected automatically, once, into the environment's helper module
    assert "def _book(ctx, book_id):" in spec.helpers and "def _due(ctx):" in spec.helpers
    assert "import datetime as dt" in spec.helpers and "LOAN_DAYS = 14" in spec.helpers
    lend = spec.tool("lend")
    assert lend.source.startswith("def lend(ctx, book_id, member):\n")
    assert "@tool" not in lend.source and "Annotated" not in lend.source
    assert "_book" not in lend.source.split("\n")[0]
    assert lend.parameters["properties"]["member"] == {
        "type": "string", "minLength": 1, "description": "Who borrows it."}
    with EnvRuntime() as runtime:
        episode = runtime.open(spec)
        results = [run_tool_test(episode, t) for t in spec.tests]
        assert all(ok for ok, _ in results), results
        episode.reset()
        assert episode.step("lend", {"book_id": 1, "member": "bo"}).ok
        assert episode.diff().counts() == {"books": {"inserted": 0, "updated": 1, "deleted": 0},
                                           "loans": {"inserted": 1, "updated": 0, "deleted": 0}}


def test_build_is_deterministic(tmp_path):
    a = build_env(_write_env(tmp_path / "a"))
    b = build_env(_write_env(tmp_path / "b"))
    assert a.fingerprint == b.fingerprint
    assert a.to_json().replace("/a/", "/b/") == b.to_json()


def test_missing_helper_is_a_build_error(tmp_path):
    broken = TOOLS.replace("return _book(ctx, book_id)", "return _lookup(ctx, book_id)")
    with pytest.raises(ToolkitError, match=r"'get_book' uses '_lookup', which is not defined"):
        build_env(_write_env(tmp_path, tools=broken))


def test_read_tool_that_writes_is_refused(tmp_path):
    # at build time: a write statement in a read tool's code
    broken = TOOLS.replace("@tool(write=True)", "@tool")
    with pytest.raises(ToolkitError, match=r"read tool 'lend' holds a write statement \(UPDATE"):
        build_env(_write_env(tmp_path / "a", tools=broken))
    # at run time: a write the static check cannot see is denied by the worker
    sneaky = TOOLS.replace("@tool(write=True)", "@tool").replace(
        '"UPDATE books SET copies', '"UP" + "DATE books SET copies')
    sneaky = sneaky.replace('"INSERT INTO loans', '"INS" + "ERT INTO loans')
    spec = build_env(_write_env(tmp_path / "b", tools=sneaky))
    with EnvRuntime() as runtime:
        episode = runtime.open(spec)
        obs = episode.step("lend", {"book_id": 1, "member": "bo"})
        assert not obs.ok and obs.error.kind == "permission_denied"
        assert episode.diff().empty


def test_non_stdlib_module_and_unsupported_global_are_errors(tmp_path):
    uses_yaml = TOOLS.replace("import datetime as dt", "import yaml as dt")
    with pytest.raises(ToolkitError, match="may import only the standard library"):
        build_env(_write_env(tmp_path / "a", tools=uses_yaml))
    uses_object = TOOLS.replace("LOAN_DAYS = 14", "LOAN_DAYS = object()")
    with pytest.raises(ToolkitError, match="global 'LOAN_DAYS' of type object"):
        build_env(_write_env(tmp_path / "b", tools=uses_object))


def test_bad_paths_are_spec_errors(tmp_path):
    with pytest.raises(SpecError, match="no such file"):
        build_env(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(SpecError, match="needs an environment.py"):
        build_env(tmp_path / "empty")


def test_cli_env_build_writes_verifies_and_imports(tmp_path):
    folder = _write_env(tmp_path)
    out = tmp_path / "out.json"
    home = tmp_path / "home"
    result = CliRunner().invoke(app, ["--home", str(home), "env", "build", str(folder),
                                      "-o", str(out), "--verify", "--import"])
    assert result.exit_code == 0, result.output
    assert "4/4 tool tests pass" in result.output
    assert json.loads(out.read_text())["name"] == "tiny_library"
    shown = CliRunner().invoke(app, ["--home", str(home), "env", "show", "tiny_library"])
    assert "lend" in shown.output
    broken = _write_env(tmp_path / "x", tools=TOOLS.replace("_book(ctx, book_id)\n\n\n@tool(",
                                                            "_bk(ctx, book_id)\n\n\n@tool("))
    result = CliRunner().invoke(app, ["--home", str(home), "env", "build", str(broken)])
    assert result.exit_code == 1 and "_bk" in result.output and "Traceback" not in result.output
