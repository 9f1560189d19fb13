"""The toolkit authoring API: an environment's tools as typed, decorated Python functions.

    from typing import Annotated, Literal
    from pydantic import Field
    from agent_world.envs.toolkit import Ctx, ToolError, tool

    def _loan(ctx, loan_id):                      # a helper: found and shipped automatically
        row = ctx.one("SELECT * FROM loans WHERE id = ?", (loan_id,))
        if row is None:
            raise ToolError(f"No loan {loan_id}.")
        return row

    @tool(write=True)
    def renew_loan(ctx: Ctx, loan_id: Annotated[int, Field(ge=1)], days: int = 14) -> dict:
        '''Renew a loan by some days; refused when the loan is overdue.

        Args:
            loan_id: Id of the loan.
            days: How many days to add.
        '''

`compile_tools()` turns such functions into `ToolSpec`s: the argument JSON schema comes from the
type hints (Pydantic; `Annotated[..., Field(...)]` adds constraints) and the docstring's `Args:`
section, the description from the docstring's text before its sections. Helpers are found by
static analysis of each tool's free names (module functions, stdlib imports, literal
constants), recursively; a name that resolves to nothing is a `ToolkitError` at build time, as
is a read tool whose code holds a write statement. The shipped source has no decorators and no
annotations: the worker runs it with `ctx` and `ToolError` and nothing from this module.
"""

from __future__ import annotations

import ast
import builtins
import inspect
import io
import re
import symtable
import sys
import textwrap
import tokenize
import typing
from collections.abc import Callable
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from pydantic import ConfigDict, Field, PydanticUserError, create_model

from agent_world import pysource
from agent_world.envs.spec import ToolSpec
from agent_world.envs.tool_context import ToolContext, ToolError
from agent_world.errors import ToolkitError

Ctx = ToolContext  # the type of a tool's first argument

_SECTIONS = re.compile(r"^(Args|Arguments|Parameters|Params|Returns|Return|Raises|Yields|"
                       r"Examples?|Notes?|See Also)\s*:\s*$")
_WRITE_SQL = re.compile(r"^\s*(INSERT|UPDATE|DELETE|REPLACE)\b", re.IGNORECASE)
_PROVIDED = frozenset({"ToolError"})  # globals the worker gives every tool


@dataclass(frozen=True)
class ToolMeta:
    write: bool
    name: str | None = None
    description: str | None = None
    require_any: tuple[str, ...] = ()


def tool(fn: Callable | None = None, *, write: bool = False, name: str | None = None,
         description: str | None = None, require_any: tuple[str, ...] | list[str] = ()
         ) -> Any:
    """Mark a function as a tool. `write=True`: it may change the database (a read tool that
    tries is refused by the worker). `require_any`: at least one of these arguments must be
    given. The function itself is returned unchanged, so authors and tests can call it."""

    def mark(f: Callable) -> Callable:
        f.__tool__ = ToolMeta(write=write, name=name, description=description,  # type: ignore[attr-defined]
                              require_any=tuple(require_any))
        return f

    return mark(fn) if fn is not None else mark


def tool_meta(obj: Any) -> ToolMeta | None:
    meta = getattr(obj, "__tool__", None)
    return meta if isinstance(meta, ToolMeta) else None


def tools_in(module: ModuleType) -> list[Callable]:
    """The @tool functions defined in `module`, in source order."""
    found = [v for v in vars(module).values()
             if inspect.isfunction(v) and tool_meta(v) and v.__module__ == module.__name__]
    return sorted(found, key=lambda f: f.__code__.co_firstlineno)


# ---- docstrings ----------------------------------------------------------------------------
def parse_docstring(doc: str | None) -> tuple[str, dict[str, str]]:
    """(description, {argument: description}) from a Google-style docstring."""
    if not doc:
        return "", {}
    lines = inspect.cleandoc(doc).splitlines()
    text: list[str] = []
    args: dict[str, list[str]] = {}
    section = None
    current: str | None = None
    for line in lines:
        head = _SECTIONS.match(line)
        if head and not line.startswith(" "):
            section = head.group(1)
            current = None
            continue
        if section is None:
            text.append(line)
        elif section in ("Args", "Arguments", "Parameters", "Params"):
            m = re.match(r"^\s{1,8}(\*{0,2}\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", line)
            indent = len(line) - len(line.lstrip())
            if m and (current is None or indent <= _arg_indent(lines, section)):
                current = m.group(1).lstrip("*")
                args[current] = [m.group(3).strip()]
            elif current and line.strip():
                args[current].append(line.strip())
    paragraphs = "\n".join(text).strip().split("\n\n")
    description = "\n\n".join(" ".join(p.split()) for p in paragraphs if p.strip())
    return description, {k: " ".join(" ".join(v).split()) for k, v in args.items()}


def _arg_indent(lines: list[str], section: str) -> int:
    """Indentation of the argument names under a section (continuations are deeper)."""
    start = next(i for i, ln in enumerate(lines) if _SECTIONS.match(ln)
                 and ln.split(":")[0].strip() == section)
    for ln in lines[start + 1:]:
        if ln.strip():
            return len(ln) - len(ln.lstrip())
    return 4


# ---- argument schema -------------------------------------------------------------------------
def parameters_schema(fn: Callable, arg_docs: dict[str, str] | None = None,
                      require_any: tuple[str, ...] = ()) -> dict[str, Any]:
    """The JSON schema of a tool's arguments (everything after `ctx`)."""
    qual = f"tool {fn.__name__!r}"
    sig = inspect.signature(fn)
    params = list(sig.parameters.values())
    if not params or params[0].name != "ctx":
        raise ToolkitError(f"{qual}: the first parameter must be 'ctx'")
    try:
        hints = typing.get_type_hints(fn, include_extras=True)
    except Exception as exc:  # an annotation naming something undefined
        raise ToolkitError(f"{qual}: cannot resolve its type hints: {exc}") from None
    arg_docs = arg_docs or {}
    fields: dict[str, Any] = {}
    required: list[str] = []
    for i, p in enumerate(params[1:]):
        if p.kind not in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            raise ToolkitError(f"{qual}: argument {p.name!r} must be a plain or keyword "
                               "argument (no *args/**kwargs)")
        if p.name not in hints:
            raise ToolkitError(f"{qual}: argument {p.name!r} has no type hint")
        extra: dict[str, Any] = {"alias": p.name}
        if p.name in arg_docs:
            extra["description"] = arg_docs[p.name]
        annotation = typing.Annotated[hints[p.name], Field(**extra)]
        if p.default is p.empty:
            required.append(p.name)
            fields[f"a{i}"] = (annotation, ...)
        else:
            fields[f"a{i}"] = (annotation, p.default)
    unknown = [a for a in [*arg_docs, *require_any]
               if a not in {p.name for p in params[1:]}]
    if unknown:
        raise ToolkitError(f"{qual}: docstring or require_any names unknown argument(s) "
                           f"{sorted(set(unknown))}")
    try:
        model = create_model(f"{fn.__name__}_arguments",
                             __config__=ConfigDict(extra="forbid"), **fields)
        raw = model.model_json_schema(by_alias=True)
    except (PydanticUserError, TypeError, ValueError) as exc:
        raise ToolkitError(f"{qual}: cannot derive a JSON schema from its type hints: "
                           f"{exc}") from None
    defs = raw.get("$defs", {})
    props = {k: _clean(v, defs) for k, v in raw.get("properties", {}).items()}
    schema: dict[str, Any] = {"type": "object", "properties": props, "required": required,
                              "additionalProperties": False}
    if require_any:
        schema["anyOf"] = [{"required": [a]} for a in require_any]
    return schema


def _clean(node: Any, defs: dict[str, Any]) -> Any:
    """Pydantic's schema, tidied for tool calling: no titles, references inlined, optional
    values as their plain type, objects closed to unknown keys."""
    if isinstance(node, list):
        return [_clean(x, defs) for x in node]
    if not isinstance(node, dict):
        return node
    if "$ref" in node:
        target = defs[node["$ref"].rsplit("/", 1)[-1]]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        return _clean({**target, **rest}, defs)
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("title", "$defs"):
            continue
        if key == "properties":
            out[key] = {k: _clean(v, defs) for k, v in value.items()}
        else:
            out[key] = _clean(value, defs)
    branches = out.get("anyOf")
    if isinstance(branches, list) and {"type": "null"} in branches:
        others = [b for b in branches if b != {"type": "null"}]
        if len(others) == 1 and out.get("default", 0) is None:
            merged = {**others[0], **{k: v for k, v in out.items() if k != "anyOf"}}
            out = merged
    if "default" in out and out["default"] is None:
        del out["default"]
    if out.get("type") == "object" and "properties" in out:
        out.setdefault("additionalProperties", False)
    return out


# ---- shipped source ----------------------------------------------------------------------------
def _function_node(source: str, name: str) -> ast.FunctionDef | ast.ClassDef:
    tree = pysource.parse(source)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.ClassDef) and node.name == name:
            return node
    raise ToolkitError(f"cannot find the definition of {name!r} in its source")


def _source_of(obj: Any) -> str:
    try:
        return textwrap.dedent(inspect.getsource(obj))
    except (OSError, TypeError) as exc:
        raise ToolkitError(f"cannot read the source of {obj.__qualname__!r}: {exc}") from None


def plain_source(obj: Any, *, keep_docstring: bool = True) -> str:
    """A function's source without decorators and annotations (what the worker runs)."""
    source = _source_of(obj)
    node = _function_node(source, obj.__name__)
    lines = source.splitlines(keepends=True)
    source = "".join(lines[node.lineno - 1:])  # drop decorators
    if isinstance(node, ast.ClassDef):
        return source.rstrip() + "\n"
    node = _function_node(source, obj.__name__)
    assert isinstance(node, ast.FunctionDef)
    end = _header_end(source)
    body = source[end:]
    doc = node.body[0] if node.body else None
    if not keep_docstring and isinstance(doc, ast.Expr) and isinstance(doc.value, ast.Constant) \
            and isinstance(doc.value.value, str) and len(node.body) > 1:
        body_lines = source.splitlines(keepends=True)
        rest = body_lines[doc.end_lineno:]
        while rest and not rest[0].strip():
            rest = rest[1:]
        body = "\n" + "".join(rest)
    if not _annotated(node):
        return (source[:end] + body).rstrip() + "\n"
    return (_header(node, source) + body).rstrip() + "\n"


def _annotated(node: ast.FunctionDef) -> bool:
    a = node.args
    return node.returns is not None or any(
        x is not None and x.annotation is not None
        for x in [*a.posonlyargs, *a.args, *a.kwonlyargs, a.vararg, a.kwarg])


def _header(node: ast.FunctionDef, source: str) -> str:
    """`def name(a, b=1, *, c=None):` from the original parameters minus their annotations,
    wrapped like hand-written code (continuation lines aligned after the parenthesis)."""
    a = node.args

    def default(expr: ast.expr) -> str:
        return ast.get_source_segment(source, expr) or ast.unparse(expr)

    parts: list[str] = []
    positional = [*a.posonlyargs, *a.args]
    first_default = len(positional) - len(a.defaults)
    for i, arg in enumerate(positional):
        text = arg.arg if i < first_default else f"{arg.arg}={default(a.defaults[i - first_default])}"
        parts.append(text)
        if a.posonlyargs and i == len(a.posonlyargs) - 1:
            parts.append("/")
    if a.vararg is not None:
        parts.append(f"*{a.vararg.arg}")
    elif a.kwonlyargs:
        parts.append("*")
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        parts.append(arg.arg if d is None else f"{arg.arg}={default(d)}")
    if a.kwarg is not None:
        parts.append(f"**{a.kwarg.arg}")
    head = f"def {node.name}("
    lines = [head]
    for i, part in enumerate(parts):
        piece = part + ("," if i < len(parts) - 1 else "):")
        if len(lines[-1]) + len(piece) + 1 > 100 and lines[-1].strip() != head.strip():
            lines[-1] = lines[-1].rstrip()
            lines.append(" " * len(head))
        lines[-1] += piece + (" " if i < len(parts) - 1 else "")
    if not parts:
        lines[-1] += "):"
    return "\n".join(lines)


def _header_end(source: str) -> int:
    """Offset just past the ':' that ends the first `def` header in `source`."""
    depth = 0
    seen_def = False
    line_starts = [0]
    for line in source.splitlines(keepends=True):
        line_starts.append(line_starts[-1] + len(line))
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.NAME and tok.string == "def":
            seen_def = True
        elif seen_def and tok.type == tokenize.OP:
            if tok.string in "([{":
                depth += 1
            elif tok.string in ")]}":
                depth -= 1
            elif tok.string == ":" and depth == 0:
                row, col = tok.end
                return line_starts[row - 1] + col
    raise ToolkitError("cannot find the end of a function header")


# ---- helper collection -------------------------------------------------------------------------
@dataclass
class Shipped:
    """What a set of tools needs besides their own source, in a stable order."""

    imports: dict[str, str] = field(default_factory=dict)  # bound name -> import statement
    constants: dict[str, str] = field(default_factory=dict)  # name -> assignment
    functions: dict[str, tuple[tuple[str, int], str]] = field(default_factory=dict)

    def render(self, names: set[str] | None = None) -> str:
        keep = (lambda n: True) if names is None else (lambda n: n in names)
        parts = []
        imports = [s for n, s in sorted(self.imports.items()) if keep(n)]
        if imports:
            parts.append("\n".join(imports))
        consts = [s for n, s in sorted(self.constants.items()) if keep(n)]
        if consts:
            parts.append("\n".join(consts))
        funcs = sorted((k, src) for n, (k, src) in self.functions.items() if keep(n))
        parts.extend(src.rstrip() for _, src in funcs)
        return "\n\n\n".join(parts) + ("\n" if parts else "")


def _global_names(source: str, name: str) -> set[str]:
    """Names a function (and its nested scopes) reads from the module's globals."""
    table = symtable.symtable(source, "<toolkit>", "exec")
    out: set[str] = set()

    def walk(t: symtable.SymbolTable) -> None:
        for sym in t.get_symbols():
            if sym.is_referenced() and sym.is_global():
                out.add(sym.get_name())
        for child in t.get_children():
            walk(child)

    for child in table.get_children():
        if child.get_name() == name:
            walk(child)
    node = _function_node(source, name)
    if isinstance(node, ast.FunctionDef):  # defaults are evaluated at definition time
        for d in [*node.args.defaults, *node.args.kw_defaults]:
            if d is not None:
                out |= {n.id for n in ast.walk(d) if isinstance(n, ast.Name)}
    return out


def _stdlib(module_name: str) -> bool:
    return module_name.split(".")[0] in sys.stdlib_module_names


def _literal(value: Any) -> str | None:
    if isinstance(value, set | frozenset):
        inner = ", ".join(sorted(repr(v) for v in value))
        return f"frozenset({{{inner}}})" if value else "frozenset()"
    text = repr(value)
    try:
        return text if ast.literal_eval(text) == value else None
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _line_of(source: str, name: str) -> int:
    for n in ast.walk(pysource.parse(source)):
        if isinstance(n, ast.Name) and n.id == name:
            return n.lineno
    return 0


def collect(fn: Callable, shipped: Shipped, *, owner: str | None = None) -> set[str]:
    """Add everything `fn` needs to `shipped`; the names it needs (transitively)."""
    owner = owner or fn.__name__
    needed: set[str] = set()
    stack: list[Any] = [fn]
    visited: set[int] = set()
    while stack:
        obj = stack.pop()
        if id(obj) in visited:
            continue
        visited.add(id(obj))
        source = textwrap.dedent(_source_of(obj))
        source = "".join(source.splitlines(keepends=True)[
            _function_node(source, obj.__name__).lineno - 1:])
        glb = getattr(obj, "__globals__", None) or vars(sys.modules[obj.__module__])
        for name in sorted(_global_names(source, obj.__name__)):
            if name in _PROVIDED or (name == obj.__name__ and obj is fn):
                continue
            if name not in glb:
                if hasattr(builtins, name):
                    continue
                where = f"{obj.__module__}.{obj.__name__}, line {obj.__code__.co_firstlineno - 1 + _line_of(source, name)}" \
                    if hasattr(obj, "__code__") else obj.__name__
                raise ToolkitError(f"tool {owner!r} uses {name!r}, which is not defined "
                                   f"({where}): add the helper or import it")
            value = glb[name]
            needed.add(name)
            if value is ToolError:
                needed.discard(name)
                continue
            if inspect.ismodule(value):
                if not _stdlib(value.__name__):
                    raise ToolkitError(f"tool {owner!r} uses module {value.__name__!r}: tools "
                                       "may import only the standard library")
                stmt = (f"import {value.__name__}" if value.__name__ == name
                        else f"import {value.__name__} as {name}")
                shipped.imports[name] = stmt
            elif inspect.isfunction(value) or inspect.isclass(value):
                mod = getattr(value, "__module__", "") or ""
                if _stdlib(mod) or mod == "builtins":
                    stmt = f"from {mod} import {value.__qualname__}"
                    shipped.imports[name] = stmt + ("" if value.__qualname__ == name
                                                    else f" as {name}")
                    continue
                if value.__name__ != name:
                    raise ToolkitError(f"tool {owner!r} uses {name!r}, an alias of "
                                       f"{value.__name__!r}: call helpers by their own name")
                if mod.startswith("agent_world."):
                    raise ToolkitError(f"tool {owner!r} uses {name!r} from {mod}: tools run "
                                       "apart from the project; only ctx and ToolError are given")
                key = (mod, value.__code__.co_firstlineno if inspect.isfunction(value) else 0)
                shipped.functions[name] = (key, plain_source(value))
                stack.append(value)
            elif callable(value) and _stdlib(getattr(value, "__module__", "") or ""):
                shipped.imports[name] = (f"from {value.__module__} import {value.__name__}"
                                         + ("" if value.__name__ == name else f" as {name}"))
            else:
                text = _literal(value)
                if text is None:
                    raise ToolkitError(
                        f"tool {owner!r} uses global {name!r} of type {type(value).__name__}: "
                        "tools may use helper functions, standard-library imports and literal "
                        "constants only")
                shipped.constants[name] = f"{name} = {text}"
    return needed


# ---- compiling tools -----------------------------------------------------------------------------
def _write_statements(source: str) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(pysource.parse(source)):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            m = _WRITE_SQL.match(node.value)
            if m:
                out.append((node.lineno, m.group(1).upper()))
    return out


@dataclass
class CompiledTools:
    tools: list[ToolSpec]
    helpers: str  # the shared helper module (one per environment)
    helper_names: dict[str, list[str]]  # tool -> helpers it uses


def compile_tools(functions: list[Callable], *, inline_helpers: bool = False) -> CompiledTools:
    """ToolSpecs from @tool functions. Helpers go into one shared module (`helpers`), or, with
    `inline_helpers`, in front of each tool's own source."""
    shipped = Shipped()
    specs: list[ToolSpec] = []
    uses: dict[str, list[str]] = {}
    seen: set[str] = set()
    for fn in functions:
        meta = tool_meta(fn)
        if meta is None:
            raise ToolkitError(f"{fn.__qualname__!r} is not marked with @tool")
        name = meta.name or fn.__name__
        if name != fn.__name__:
            raise ToolkitError(f"tool {fn.__name__!r}: a tool is named after its function")
        if name in seen:
            raise ToolkitError(f"two tools are named {name!r}")
        seen.add(name)
        text, arg_docs = parse_docstring(fn.__doc__)
        description = meta.description or text
        if not description:
            raise ToolkitError(f"tool {name!r} has no description: give it a docstring")
        parameters = parameters_schema(fn, arg_docs, meta.require_any)
        needed = collect(fn, shipped)
        own = plain_source(fn, keep_docstring=False)
        if not meta.write:
            helper_src = shipped.render({n for n in needed if n in shipped.functions})
            for where, src in (("", own), (" (in a helper)", helper_src)):
                writes = _write_statements(src) if src else []
                if writes:
                    line, verb = writes[0]
                    raise ToolkitError(
                        f"read tool {name!r} holds a write statement ({verb}, line {line})"
                        f"{where}: declare it @tool(write=True) or drop the write")
        uses[name] = sorted(n for n in needed if n in shipped.functions)
        source = shipped.render(needed) + "\n\n" + own if inline_helpers and needed else own
        try:
            specs.append(ToolSpec(name=name, description=description, parameters=parameters,
                                  source=source, mutates=meta.write))
        except ValueError as exc:
            raise ToolkitError(f"tool {name!r}: {exc}") from None
    return CompiledTools(tools=specs, helpers=shipped.render(), helper_names=uses)


__all__ = ["Ctx", "ToolError", "ToolMeta", "compile_tools", "parameters_schema",
           "parse_docstring", "plain_source", "tool", "tool_meta", "tools_in"]
