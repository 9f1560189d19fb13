"""The tool designer: a mined environment (schema, seed rows, coverage map of the source's
tools) → candidate tools in the toolkit form plus unit tests for them.

    design = design_tools(spec)                  # LLM when a designer model is configured
    design.module                                # a toolkit-form Python module (untrusted)
    design.tests                                 # ToolTest dicts, expectations from seed rows
    repaired = repair_tool(spec, design, "renew_loan", "TypeError: ...")

Both strategies start from the same artefact: a behaviour contract per source tool
(agent_world.design.offline.contracts: entity, verb, effects on the entity and the rows
coupled to it, guards, result), derived from the source's name, description and arguments. The
source tools' tests are written from those contracts over the seed rows, never from an
implementation, and the tests showing the contract's effects are `required`: cross-validation
rejects a tool that fails one, however many other tests it passes.

LLM path: the `designer` chat model (agent_world.models) is given each source tool's contract
and signature, writes the module and tests for the tools it adds with structured output (one
JSON object in the reply for a model without it: `agent_world.plain_chat`); an
answer that does not parse or validate is sent back with the error, up to `retries` times.
Offline strategy (agent_world.design.offline): renders every contract, then lookups,
filters, aggregates and actions from the schema, and derives the tests in Python.

Nothing here runs the designed code: compiling and testing it is cross-validation's job, in the
sandbox (agent_world.design.cross_validation).
"""

from __future__ import annotations

import ast
import json
from typing import Any, Literal

from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from agent_world import models, pysource
from agent_world.design import designer_prompts as prompts
from agent_world.design.offline import design_offline
from agent_world.design.offline.contracts import Contract
from agent_world.design.offline.expectations import design_tests
from agent_world.design.offline.plans import ToolPlan
from agent_world.design.offline.render import render_tool
from agent_world.design.offline.source_plans import plan_tools
from agent_world.envs.spec import EnvSpec, ToolTest
from agent_world.errors import BuildError
from agent_world.mining.offline.naming import tool_identifier
from agent_world.plain_chat import ask_structured

DEFAULT_TOOLS = 40


# why a source tool the chat model left out is missing: an omission, not a finding that the
# database cannot hold what the tool acts on
UNWRITTEN = "the designer did not write it"


class Design(BaseModel):
    """Candidate tools of one environment, before cross-validation."""

    env: str
    strategy: Literal["offline", "llm"]
    module: str  # toolkit-form source: helpers + @tool functions
    tests: list[dict[str, Any]] = Field(default_factory=list)
    source_tools: list[str] = Field(default_factory=list)  # source tools it implements
    not_implemented: dict[str, str] = Field(default_factory=dict)  # source tool -> why
    contracts: dict[str, dict[str, Any]] = Field(default_factory=dict)  # tool -> its contract
    required: dict[str, list[str]] = Field(default_factory=dict)  # tool -> tests it must pass

    def tool_names(self) -> list[str]:
        """Names of the @tool functions in the module (by reading it, not running it)."""
        try:
            tree = pysource.parse(self.module)
        except SyntaxError:
            return []
        return [n.name for n in tree.body if isinstance(n, ast.FunctionDef)
                and any(_is_tool_decorator(d) for d in n.decorator_list)]


def _is_tool_decorator(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Name) and target.id == "tool"


# ---- structured output of the LLM path ---------------------------------------------------------
class LLMTest(BaseModel):
    name: str
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, Any] = Field(default_factory=dict)


class LLMDesign(BaseModel):
    """The designed environment: one toolkit-form module and the tool tests."""

    module: str = Field(description="The whole Python module in the toolkit form.")
    tests: list[LLMTest] = Field(description="Tool tests with expectations from seed rows.")


class LLMRepair(BaseModel):
    """A repaired tool."""

    source: str = Field(description="Python source of the repaired @tool function and any "
                                    "helper functions it needs.")


def required_tests(plans: list[ToolPlan], tests: list[dict[str, Any]]) -> dict[str, list[str]]:
    """Per source tool, the tests that show its contract's effects and results (every test
    expecting success): a tool that fails one does not do what its source says."""
    sources = {p.name for p in plans if p.source_tool}
    out: dict[str, list[str]] = {}
    for t in tests:
        expect = t.get("expect") or {}
        if t.get("tool") in sources and expect.get("ok", True) and not expect.get("error_kind"):
            out.setdefault(t["tool"], []).append(t["name"])
    return out


def _contracts(plans: list[ToolPlan]) -> dict[str, dict[str, Any]]:
    return {p.name: p.contract.model_dump() for p in plans if p.contract is not None}


def _source_tools(spec: EnvSpec) -> dict[str, Any]:
    """The covered source tools under the names the environment serves them by."""
    coverage = (spec.provenance.stats or {}).get("tool_coverage") or {}
    return {tool_identifier(k): v for k, v in (coverage.get("tools") or {}).items()
            if v.get("covered", True)}


def _schema_text(spec: EnvSpec) -> str:
    lines = []
    for t in spec.tables:
        cols = []
        for c in t.columns:
            flags = [c.type] + (["pk"] if c.primary_key else []) + \
                (["not null"] if not c.nullable and not c.primary_key else []) + \
                (["unique"] if c.unique else []) + \
                ([f"-> {c.foreign_key}"] if c.foreign_key else []) + \
                ([f"one of {c.enum}"] if c.enum else [])
            cols.append(f"{c.name} ({', '.join(flags)})")
        lines.append(f"- {t.name}: " + "; ".join(cols))
    return "\n".join(lines)


def _rows_text(spec: EnvSpec, per_table: int = 3) -> str:
    return "\n".join(f"- {t}: {json.dumps(rows[:per_table], default=str)}"
                     for t, rows in spec.rows.items())


def _validate_llm(answer: Any) -> tuple[str, list[dict[str, Any]]]:
    if isinstance(answer, dict):
        answer = LLMDesign.model_validate(answer)
    if not isinstance(answer, LLMDesign):
        raise ValueError(f"expected an LLMDesign, got {type(answer).__name__}")
    try:
        pysource.parse(answer.module)
    except SyntaxError as exc:
        raise ValueError(f"the module does not parse: {exc.msg} (line {exc.lineno})") from None
    tests = []
    for t in answer.tests:
        data = t.model_dump()
        ToolTest.model_validate(data)  # raises with the field at fault
        tests.append(data)
    if not tests:
        raise ValueError("no tests")
    return answer.module, tests


def contract_prompt(spec: EnvSpec, plans: list[ToolPlan]) -> str:
    """Each source tool's signature and behaviour contract, as the LLM designer reads them."""
    blocks = []
    for p in plans:
        if p.contract is None:
            continue
        head = render_tool(spec, p).split('    """', 1)[0].strip()
        blocks.append(f"{head}\n{p.contract.text()}")
    return "\n\n".join(blocks) or "(none)"


def _llm_design(spec: EnvSpec, model: Any, count: int, retries: int) -> Design:
    sources = _source_tools(spec)
    plans, skipped = plan_tools(spec, max_tools=0)  # the source tools' contracts only
    plans = [p for p in plans if p.source_tool]
    contract_tests = design_tests(spec, plans)
    coverage = contract_prompt(spec, plans)
    messages: list[Any] = [
        SystemMessage(prompts.SYSTEM.replace("{clock}", spec.clock_start)),
        HumanMessage(prompts.DESIGN.format(
            name=spec.name, theme=spec.theme.name, description=spec.theme.description,
            schema=_schema_text(spec), rows=_rows_text(spec), coverage=coverage, count=count))]
    error = "no answer"
    for _ in range(retries + 1):
        try:
            answer = ask_structured(model, LLMDesign, messages)
            module, tests = _validate_llm(answer)
        except (ValidationError, ValueError) as exc:
            error = str(exc)[:1500]
            messages += [AIMessage(content=str(locals().get("answer", ""))[:4000]),
                         HumanMessage(prompts.RETRY.format(error=error))]
            continue
        design = Design(env=spec.name, strategy="llm", module=module, tests=tests)
        names = set(design.tool_names())
        contracted = {p.name for p in plans}
        # the source tools are judged by their contracts' tests, not by tests the model wrote
        # for its own code; its tests stay for the tools it added
        design.tests = [t for t in tests if t["tool"] not in contracted] + \
            [t for t in contract_tests if t["tool"] in names]
        design.source_tools = [s for s in sources if s in names]
        design.not_implemented = {**skipped, **{s: UNWRITTEN
                                                for s in sources if s not in names
                                                and s not in skipped}}
        design.contracts = _contracts(plans)
        design.required = {k: v for k, v in required_tests(plans, contract_tests).items()
                           if k in names}
        return design
    raise BuildError(f"{spec.name}: the designer model gave no usable design after "
                     f"{retries + 1} attempts: {error}")


def design_tools(spec: EnvSpec, *, model: Any | None = None, max_tools: int = DEFAULT_TOOLS,
                 retries: int = 2) -> Design:
    """Candidate tools and tests for a mined environment. `model`: a chat model (default:
    the configured `designer` role; None → the offline strategy)."""
    model = model if model is not None else models.chat_model("designer")
    if model is not None:
        return _llm_design(spec, model, max_tools, retries)
    module, tests, skipped, plans = design_offline(spec, max_tools=max_tools)
    return Design(env=spec.name, strategy="offline", module=module, tests=tests,
                  source_tools=[p.source_tool for p in plans if p.source_tool],
                  not_implemented=skipped, contracts=_contracts(plans),
                  required=required_tests(plans, tests))


# ---- repair ------------------------------------------------------------------------------------
def _contract_text(design: Design, tool: str) -> str:
    raw = design.contracts.get(tool)
    return Contract.model_validate(raw).text() if raw else "(none: a tool the designer added)"


def function_source(module: str, name: str) -> str | None:
    """The text of the top-level function `name` (decorators included) in `module`."""
    try:
        tree = pysource.parse(module)
    except SyntaxError:
        return None
    lines = module.splitlines(keepends=True)
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            start = min([d.lineno for d in node.decorator_list] + [node.lineno])
            return "".join(lines[start - 1:node.end_lineno])
    return None


def replace_functions(module: str, source: str) -> str:
    """`module` with every top-level function defined in `source` replaced (or appended)."""
    new = pysource.parse(source)
    out = module
    for node in new.body:
        if not isinstance(node, ast.FunctionDef):
            continue
        lines = source.splitlines(keepends=True)
        start = min([d.lineno for d in node.decorator_list] + [node.lineno])
        text = "".join(lines[start - 1:node.end_lineno]).rstrip() + "\n"
        old = function_source(out, node.name)
        out = out.replace(old, text) if old else out.rstrip() + "\n\n\n" + text
    return out


def repair_tool(spec: EnvSpec, design: Design, tool: str, error: str, *,
                model: Any | None = None, retries: int = 1) -> Design | None:
    """A new design with `tool` rewritten given its error, or None when the strategy has no
    repair. The offline strategy has none: its tools are derived, not guessed, so one that
    fails is rejected (and the failure ledgered) rather than patched."""
    model = model if model is not None else models.chat_model("designer")
    if model is None:
        return None

    tests = [t for t in design.tests if t.get("tool") == tool]
    messages: list[Any] = [
        SystemMessage(prompts.SYSTEM.replace("{clock}", spec.clock_start)),
        HumanMessage(prompts.REPAIR.format(tool=tool, error=error,
                                           contract=_contract_text(design, tool),
                                           source=function_source(design.module, tool) or "",
                                           tests=json.dumps(tests, default=str)[:4000]))]
    for _ in range(retries + 1):
        try:
            answer = ask_structured(model, LLMRepair, messages)
            if isinstance(answer, dict):
                answer = LLMRepair.model_validate(answer)
            module = replace_functions(design.module, answer.source)
            pysource.parse(module)
        except (ValidationError, ValueError, SyntaxError, AttributeError) as exc:
            messages.append(HumanMessage(prompts.RETRY.format(error=str(exc)[:1000])))
            continue
        return design.model_copy(update={"module": module})
    return None


__all__ = ["DEFAULT_TOOLS", "UNWRITTEN", "Design", "LLMDesign", "LLMRepair", "contract_prompt",
           "design_tools", "function_source", "repair_tool", "replace_functions",
           "required_tests"]
