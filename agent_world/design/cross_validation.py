"""Cross-validation: designed tools and tests run, and only the tools that pass are kept.

A candidate tool is kept only if it compiles, passes every test its behaviour contract requires
(the tests showing what a source tool does: its effects on the right rows and its result) and
more than half of all its tests; a failing
candidate gets up to `max_repairs` repair attempts with its error; an environment is kept only
if it is left with at least one tool and one test. Every rejection (a tool, a test, the whole
environment) goes to the ledger with its reason.

Designed code is not the project's own, so it never runs in this process:

* compiling the toolkit module (importing it to read type hints, docstrings and helpers)
  happens in a sandbox (`agent_world.sandbox.get_sandbox`: E2B or local bubblewrap),
  into which the toolkit compiler's own source is copied;
* the tests run through episodes, whose tool worker is a separate process that runs each call
  in one transaction under an authorizer and a time limit (`validation_runtime` is the one
  place that chooses how that worker is confined).
"""

from __future__ import annotations

import ast
import itertools
import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, ValidationError

from agent_world import pysource
from agent_world.design.argument_use import unread_arguments
from agent_world.design.tool_designer import UNWRITTEN, Design
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec, ToolTest
from agent_world.envs.testing import run_tool_test
from agent_world.errors import AgentWorldError, BuildError
from agent_world.sandbox import get_sandbox

KEEP_RATIO = 0.5  # a tool must pass more than this share of its tests
# an environment must serve at least this share of its source's tools: what a browser's
# clicks, key presses and screenshots act on is no table, and with 2 of its 12 tools left
# browsermcp was dropdown options edited by lookups and updates the arena adds
SOURCE_SHARE = 0.5
DEFAULT_REPAIRS = 2
TOOL_TIMEOUT_S = 2.0
_PACKAGE_ROOT = Path(__file__).resolve().parents[1]
# The toolkit compiler and what it imports, copied into the sandbox (it has no agent_world).
_SHIM = ("errors.py", "pysource.py", "envs/arguments.py", "envs/spec.py", "envs/table_spec.py",
         "envs/spec_limits.py", "envs/frames.py", "envs/tool_sql.py", "envs/host_channel.py",
         "envs/tool_context.py", "envs/toolkit.py")

_COMPILE = '''
import importlib.util, json, sys
if "." not in sys.path:
    sys.path.insert(0, ".")
from agent_world.envs.toolkit import compile_tools, tools_in

def _compile(path, name, only):
    out = {"tools": [], "helpers": "", "errors": {}, "module_error": None, "helper_names": {}}
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as exc:
        out["module_error"] = f"{type(exc).__name__}: {exc}"
        return out
    good = []
    for fn in tools_in(module):
        if only is not None and fn.__name__ not in only:
            continue
        try:
            compile_tools([fn])
            good.append(fn)
        except Exception as exc:
            out["errors"][fn.__name__] = f"{type(exc).__name__}: {exc}"
    if good:
        compiled = compile_tools(good)
        out["tools"] = [t.model_dump() for t in compiled.tools]
        out["helpers"] = compiled.helpers
        out["helper_names"] = compiled.helper_names
    return out
'''


class Compiled(BaseModel):
    tools: list[dict[str, Any]] = Field(default_factory=list)
    helpers: str = ""
    errors: dict[str, str] = Field(default_factory=dict)  # tool -> why it does not compile
    module_error: str | None = None
    helper_names: dict[str, list[str]] = Field(default_factory=dict)


class SandboxCompiler:
    """Compiles designed toolkit modules inside one warm sandbox."""

    def __init__(self, sandbox: Any | None = None):
        self._sandbox = sandbox
        self._ready = False
        self._starts: int | None = None  # the kernel start the set-up was made in
        self._ids = itertools.count()

    def _prepare(self) -> Any:
        if self._sandbox is None:
            self._sandbox = get_sandbox()
        sbx = self._sandbox
        if hasattr(sbx, "starts"):  # the local sandbox: a kernel that died since the last
            sbx.start()  # compile (killed from outside, say) starts afresh here, and has
            if sbx.starts != self._starts:  # none of the set-up below: do it again
                self._ready = False
        if not self._ready:
            sbx.run_code("import os\nos.makedirs('agent_world/envs', exist_ok=True)")
            sbx.files.write("agent_world/__init__.py", "")
            sbx.files.write("agent_world/envs/__init__.py", "")
            for rel in _SHIM:
                sbx.files.write(f"agent_world/{rel}", (_PACKAGE_ROOT / rel).read_text())
            self._check(sbx.run_code(_COMPILE, timeout=60))
            self._ready = True
            self._starts = getattr(sbx, "starts", None)
        return self._sandbox

    @staticmethod
    def _check(execution: Any) -> None:
        if execution.error is not None:
            raise BuildError(f"the sandbox cannot compile tools: {execution.error.name}: "
                             f"{execution.error.value}")

    def compile(self, module: str, only: list[str] | None = None) -> Compiled:
        sbx = self._prepare()
        n = next(self._ids)
        sbx.files.write(f"designed_{n}.py", module)
        code = (f"_out = _compile('designed_{n}.py', 'designed_{n}', {only!r})\n"
                f"open('compiled_{n}.json', 'w').write(json.dumps(_out))\nTrue")
        execution = sbx.run_code(code, timeout=60)
        if execution.error is not None:
            if execution.error.name in ("SandboxKilled", "TimeoutError"):
                self._ready = False  # a fresh kernel: set the compiler up again
            return Compiled(module_error=f"{execution.error.name}: {execution.error.value}")
        return Compiled.model_validate(json.loads(sbx.files.read(f"compiled_{n}.json")))

    def close(self) -> None:
        if self._sandbox is not None:
            self._sandbox.kill()
            self._sandbox = None
            self._ready = False


def validation_runtime() -> EnvRuntime:
    """The episode runtime that runs designed tools: a separate worker process per runtime,
    every call a transaction under an authorizer and a time limit (and inside the sandbox
    wherever the engine confines its workers)."""
    return EnvRuntime(tool_timeout_s=TOOL_TIMEOUT_S)


# ---- verdicts ----------------------------------------------------------------------------------
class ToolVerdict(BaseModel):
    tool: str
    kept: bool
    passed: int = 0
    total: int = 0
    # kept, compile_error, module_error, ignores_argument, no_tests, contract, failed_tests
    category: str = "kept"
    reason: str = "ok"
    repairs: int = 0
    write: bool = False
    source_tool: bool = False


class Validation(BaseModel):
    env: str
    verdicts: list[ToolVerdict] = Field(default_factory=list)
    tests_total: int = 0
    tests_kept: int = 0
    dropped_tests: list[dict[str, str]] = Field(default_factory=list)
    dropped: str | None = None  # why the whole environment was dropped
    seconds: float = 0.0

    @property
    def kept(self) -> list[ToolVerdict]:
        return [v for v in self.verdicts if v.kept]

    def rejections(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for v in self.verdicts:
            if not v.kept:
                out[v.category] = out.get(v.category, 0) + 1
        return out


def _valid_tests(tests: list[dict[str, Any]], tools: set[str]
                 ) -> tuple[list[ToolTest], list[dict[str, str]]]:
    good, bad = [], []
    for i, raw in enumerate(tests):
        try:
            t = ToolTest.model_validate(raw)
        except ValidationError as exc:
            bad.append({"tool": str(raw.get("tool")), "test": str(raw.get("name", i)),
                        "reason": f"invalid test: {str(exc)[:300]}"})
            continue
        if t.tool in tools:
            good.append(t)
    return good, bad


def _candidate(spec: EnvSpec, compiled: Compiled, tests: list[ToolTest]) -> EnvSpec:
    data = spec.model_dump()
    data.update(tools=compiled.tools, helpers=compiled.helpers,
                tests=[t.model_dump() for t in tests])
    return EnvSpec.from_dict(data, origin=f"candidate {spec.name}")


def run_tests(spec: EnvSpec, runtime: EnvRuntime) -> list[tuple[ToolTest, bool, str]]:
    """Every test of `spec` on a freshly reset episode."""
    out = []
    with runtime.open(spec, seed=0) as episode:
        for test in spec.tests:
            ok, reason = run_tool_test(episode, test)
            out.append((test, ok, reason))
    return out


def _round(spec: EnvSpec, design: Design, compiler: SandboxCompiler, runtime: EnvRuntime
           ) -> tuple[Compiled, dict[str, list[tuple[ToolTest, bool, str]]], list[dict]]:
    compiled = compiler.compile(design.module)
    names = {t["name"] for t in compiled.tools}
    tests, bad = _valid_tests(design.tests, names)
    results: dict[str, list[tuple[ToolTest, bool, str]]] = {n: [] for n in names}
    if compiled.tools:
        try:
            candidate = _candidate(spec, compiled, tests)
        except AgentWorldError as exc:
            compiled.module_error = f"candidate spec invalid: {exc}"
            return compiled, {}, bad
        for test, ok, reason in run_tests(candidate, runtime):
            results[test.tool].append((test, ok, reason))
    return compiled, results, bad


def _asked(schema: dict[str, Any]) -> list[str]:
    """The required arguments that carry a choice: one allowed value (a router's `action`
    fixed to the operation its tool performs) leaves nothing to read."""
    props = schema.get("properties") or {}
    return [a for a in schema.get("required") or []
            if "const" not in (props.get(a) or {})
            and len((props.get(a) or {}).get("enum") or [None, None]) != 1]


def _judge(name: str, compiled: Compiled, results: dict[str, list], write: bool,
           source: bool, repairs: int, required: frozenset[str] = frozenset()) -> ToolVerdict:
    v = ToolVerdict(tool=name, kept=False, write=write, source_tool=source, repairs=repairs)
    if compiled.module_error:
        v.category, v.reason = "module_error", f"module does not load: {compiled.module_error}"
        return v
    if name in compiled.errors:
        v.category, v.reason = "compile_error", f"does not compile: {compiled.errors[name]}"
        return v
    tool = next((t for t in compiled.tools if t.get("name") == name), None)
    unread = unread_arguments(tool["source"], name, _asked(tool["parameters"])) if tool else []
    if unread:
        v.category = "ignores_argument"
        v.reason = (f"never reads its required argument(s) {', '.join(unread)}: it cannot do "
                    "what they ask")
        return v
    runs = results.get(name, [])
    v.total, v.passed = len(runs), sum(ok for _, ok, _ in runs)
    broken = next(((t, why) for t, ok, why in runs if not ok and t.name in required), None)
    if not runs:
        v.category, v.reason = "no_tests", "no tests"
    elif broken is not None:
        v.category = "contract"
        v.reason = (f"does not do what its contract says ({v.passed}/{v.total} tests pass); "
                    f"{broken[0].name}: {broken[1]}")
    elif v.passed / v.total <= KEEP_RATIO:
        first = next(f"{t.name}: {why}" for t, ok, why in runs if not ok)
        v.category = "failed_tests"
        v.reason = f"passes {v.passed}/{v.total} tests (needs > {KEEP_RATIO:.0%}); {first}"
    else:
        v.kept, v.category, v.reason = True, "kept", "ok"
    return v


RepairFn = Callable[[Design, str, str], Design | None]
Outcomes = dict[str, list[list[Any]]]  # tool -> [[test name, passed, reason], ...]


def evaluate(spec: EnvSpec, design: Design, *, compiler: SandboxCompiler, runtime: EnvRuntime,
             repairs: dict[str, int] | None = None) -> tuple[Validation, Outcomes]:
    """One round: compile the design in the sandbox, run every test, judge every tool."""
    t0 = time.perf_counter()
    compiled, results, bad = _round(spec, design, compiler, runtime)
    verdicts = _verdicts(design, compiled, results, _write_flags(design),
                         set(design.source_tools), repairs or {})
    for v in verdicts:  # a source tool must meet its contract, not just a share of its tests
        if v.category in ("kept", "failed_tests") and design.required.get(v.tool):
            verdict = _judge(v.tool, compiled, results, v.write, v.source_tool, v.repairs,
                             frozenset(design.required[v.tool]))
            v.kept, v.category, v.reason = verdict.kept, verdict.category, verdict.reason
    outcomes = {tool: [[t.name, ok, why[:300]] for t, ok, why in runs]
                for tool, runs in results.items()}
    validation = Validation(env=spec.name, verdicts=verdicts, dropped_tests=bad,
                            tests_total=len(design.tests),
                            seconds=round(time.perf_counter() - t0, 3))
    return validation, outcomes


def repair_failing(design: Design, validation: Validation, repair: RepairFn,
                   repairs: dict[str, int]) -> tuple[Design, bool]:
    """Ask for a repair of every rejected tool once; (new design, whether anything changed)."""
    changed = False
    for v in validation.verdicts:
        if v.kept:
            continue
        fixed = repair(design, v.tool, v.reason)
        if fixed is not None:
            design, changed = fixed, True
            repairs[v.tool] = repairs.get(v.tool, 0) + 1
    return design, changed


def cross_validate(spec: EnvSpec, design: Design, *, compiler: SandboxCompiler,
                   runtime: EnvRuntime, repair: RepairFn | None = None,
                   max_repairs: int = DEFAULT_REPAIRS,
                   ) -> tuple[Validation, EnvSpec | None, Design]:
    """Validate `design` against the mined `spec` with up to `max_repairs` repair rounds:
    (verdicts, the built spec or None when the environment is dropped, the final design)."""
    t0 = time.perf_counter()
    repairs: dict[str, int] = {}
    validation, outcomes = evaluate(spec, design, compiler=compiler, runtime=runtime)
    for _ in range(max_repairs):
        if repair is None or all(v.kept for v in validation.verdicts):
            break
        design, changed = repair_failing(design, validation, repair, repairs)
        if not changed:
            break
        validation, outcomes = evaluate(spec, design, compiler=compiler, runtime=runtime,
                                        repairs=repairs)
    built = finish(spec, design, validation, outcomes, compiler=compiler, runtime=runtime)
    validation.seconds = round(time.perf_counter() - t0, 3)
    return validation, built, design


def _write_flags(design: Design) -> dict[str, bool]:
    flags = {}
    try:
        tree = pysource.parse(design.module)
    except SyntaxError:
        return flags
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            for d in node.decorator_list:
                if isinstance(d, ast.Call) and getattr(d.func, "id", None) == "tool":
                    flags[node.name] = any(k.arg == "write" and isinstance(k.value, ast.Constant)
                                           and k.value.value is True for k in d.keywords)
    return flags


def _verdicts(design: Design, compiled: Compiled, results: dict[str, list],
              writes: dict[str, bool], sources: set[str], repairs: dict[str, int]
              ) -> list[ToolVerdict]:
    names = list(dict.fromkeys([*design.tool_names(), *compiled.errors,
                                *(t["name"] for t in compiled.tools)]))
    return [_judge(n, compiled, results, writes.get(n, False), n in sources, repairs.get(n, 0))
            for n in names]


def finish(spec: EnvSpec, design: Design, validation: Validation, outcomes: Outcomes, *,
           compiler: SandboxCompiler, runtime: EnvRuntime) -> EnvSpec | None:
    """The built spec: the kept tools (recompiled alone, so helpers hold only what they use)
    with their passing tests, checked once more as a whole. None when the environment is
    left without a tool or a test (`validation.dropped` says why)."""
    kept = [v.tool for v in validation.kept]
    passed = {(tool, name) for tool in kept for name, ok, _ in outcomes.get(tool, []) if ok}
    for tool in kept:
        for name, ok, why in outcomes.get(tool, []):
            if not ok:
                validation.dropped_tests.append({"tool": tool, "test": name, "reason": why})
    if not kept:
        validation.dropped = "no tool passed cross-validation"
        return None
    # what the designer found no table or plan for (a chat model's omission is no finding)
    unserved = [t for t, why in design.not_implemented.items() if why != UNWRITTEN]
    served = [t for t in design.source_tools if t in kept]
    sources = [*design.source_tools, *unserved]
    if unserved and len(served) < SOURCE_SHARE * len(sources):
        missing = [t for t in sources if t not in served]
        validation.dropped = (f"serves {len(served)} of its source's {len(sources)} tools "
                              f"(not {', '.join(missing[:4])}{', ...' if len(missing) > 4 else ''})"
                              ": the rest would be the arena's own tools, not the service's")
        return None
    final = compiler.compile(design.module, only=kept)
    if final.module_error or final.errors:
        validation.dropped = f"kept tools do not compile alone: {final.module_error or final.errors}"
        return None
    tests, _ = _valid_tests(design.tests, set(kept))
    tests = [t for t in tests if (t.tool, t.name) in passed]
    built = _candidate(spec, final, tests)
    failing = {(t.tool, t.name) for t, ok, _ in run_tests(built, runtime) if not ok}
    if failing:
        for tool, name in sorted(failing):
            validation.dropped_tests.append({"tool": tool, "test": name,
                                             "reason": "fails in the built spec"})
        built = _candidate(spec, final, [t for t in tests if (t.tool, t.name) not in failing])
    validation.tests_kept = len(built.tests)
    if not built.tests:
        validation.dropped = "no test passed cross-validation"
        return None
    return built


__all__ = ["Compiled", "DEFAULT_REPAIRS", "KEEP_RATIO", "SOURCE_SHARE", "Outcomes",
           "SandboxCompiler", "ToolVerdict", "Validation", "cross_validate", "evaluate", "finish",
           "repair_failing", "run_tests", "validation_runtime"]
