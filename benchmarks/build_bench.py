"""Build-stage figures on the environments of the default `agent-world mine`.

    PYTHONPATH=. python benchmarks/build_bench.py [--iterations 3] [--max-tools 40]

Per environment: candidate tools, validated tools, write share, tests kept, source tools covered
by the database and implemented + validated, rejections by reason, cross-validation time
(sandbox on: designs compile in the sandbox, tests run through the tool worker). Then a mutation
check of the tests: for every kept tool one deliberately broken variant (a skipped write for
write tools, a dropped WHERE clause for filtering tools, a changed constant otherwise) must fail
its tests; the kill rate is printed (killed: at least one test fails; rejected: the variant
would also fail cross-validation's > 50 % rule).
"""

from __future__ import annotations

import argparse
import ast
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.design.cross_validation import (  # noqa: E402
    KEEP_RATIO,
    SandboxCompiler,
    cross_validate,
    validation_runtime,
)
from agent_world.design.tool_designer import design_tools  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.envs.episode import EnvRuntime  # noqa: E402
from agent_world.envs.spec import EnvSpec, ToolSpec  # noqa: E402
from agent_world.envs.testing import run_tool_test  # noqa: E402


# ---- mutants -------------------------------------------------------------------------------
class _SkipWrite(ast.NodeTransformer):
    """`_insert(...)` / `_update(...)` return what they would have written without writing;
    a DELETE statement is dropped."""

    done = False

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        name = getattr(node.func, "id", None)
        if name == "_insert" and len(node.args) == 4:
            self.done = True
            return ast.Call(ast.Name("dict", ast.Load()), [node.args[3]], [])
        if name == "_update" and len(node.args) == 5:
            self.done = True
            return ast.Dict([None, None], [ast.Name("row", ast.Load()), node.args[4]])
        return node

    def visit_Expr(self, node: ast.Expr) -> ast.AST | None:
        call = node.value
        if isinstance(call, ast.Call) and getattr(call.func, "attr", None) == "execute" and \
                call.args and isinstance(call.args[0], ast.Constant) and \
                str(call.args[0].value).lstrip().upper().startswith(("DELETE", "UPDATE",
                                                                     "INSERT")):
            self.done = True
            return ast.Pass()
        return node


def _drop_where(fn: ast.FunctionDef) -> bool:
    """Remove the first filter: its `clauses.append` and `params.append` (or, for a keyed
    lookup, the key condition of `_row`)."""
    for node in ast.walk(fn):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for i, stmt in enumerate(body):
            if _is_append(stmt, "clauses"):
                rest = body[i + 1:]
                j = next((k for k, s in enumerate(rest) if _is_append(s, "params")), None)
                if j is not None:
                    del body[i + 1 + j]
                    del body[i]
                    if not body:
                        body.append(ast.Pass())
                    return True
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "_row" \
                and len(node.args) == 6:
            table, key = node.args[1], node.args[2]
            if isinstance(table, ast.Constant) and isinstance(key, ast.Constant):
                node.func = ast.Attribute(ast.Name("ctx", ast.Load()), "one", ast.Load())
                node.args = [ast.Constant(f'SELECT * FROM "{table.value}" ORDER BY '
                                          f'"{key.value}" LIMIT 1')]
                return True
    return False


def _is_append(stmt: ast.stmt, target: str) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call) and \
        isinstance(stmt.value.func, ast.Attribute) and stmt.value.func.attr in ("append",
                                                                                "extend") \
        and getattr(stmt.value.func.value, "id", None) == target


def _change_constant(fn: ast.FunctionDef) -> bool:
    """The first numeric constant (in code or SQL text) moves by one; else the first value
    string written or compared is altered."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            sql = node.value
            if "count(*)" in sql:
                node.value = sql.replace("count(*)", "count(*) + 1", 1)
                return True
            if "total(" in sql and ", 2)" in sql:
                node.value = sql.replace(", 2)", ", 0)", 1)
                return True
    for node in ast.walk(fn):
        if isinstance(node, ast.Constant) and isinstance(node.value, int) \
                and not isinstance(node.value, bool):
            node.value += 1
            return True
    return False


def mutate(tool: ToolSpec) -> tuple[str, str] | None:
    """(operator, mutated source) for one tool, or None when no operator applies."""
    tree = ast.parse(tool.source)
    fn = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == tool.name)
    if tool.mutates:
        t = _SkipWrite()
        t.visit(fn)
        op = "skipped write" if t.done else None
    elif _drop_where(fn):
        op = "dropped WHERE"
    elif _change_constant(fn):
        op = "changed constant"
    else:
        op = None
    return (op, ast.unparse(tree) + "\n") if op else None


def mutation_check(spec: EnvSpec, runtime: EnvRuntime) -> Counter:
    out: Counter = Counter()
    for tool in spec.tools:
        tests = [t for t in spec.tests if t.tool == tool.name]
        mutant = mutate(tool)
        if mutant is None or not tests:
            out["no operator"] += 1
            continue
        op, source = mutant
        broken = spec.model_copy(update={"tools": [
            t.model_copy(update={"source": source}) if t.name == tool.name else t
            for t in spec.tools], "tests": tests})
        with runtime.open(broken) as ep:
            passed = sum(run_tool_test(ep, t)[0] for t in tests)
        out[f"{op} total"] += 1
        out["total"] += 1
        if passed < len(tests):
            out[f"{op} killed"] += 1
            out["killed"] += 1
        if passed / len(tests) <= KEEP_RATIO:
            out["rejected"] += 1
    return out


# ---- the run -------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--max-tools", type=int, default=40)
    args = parser.parse_args(argv)
    console = Console()
    home = Path(tempfile.mkdtemp(prefix="build-bench-"))
    from agent_world.graphs import mine_graph as mine
    from agent_world.graphs.runner import invoke

    t0 = time.perf_counter()
    invoke(mine.build_graph(), {"iterations": args.iterations}, home=home)
    console.print(f"mined the default sources in {time.perf_counter() - t0:.1f} s")
    cat = Catalog.open(home)
    specs = [cat.get_env_at_stage(e.name, "mined") for e in cat.list_envs()]
    specs = [s for s in specs if s is not None]
    compiler, runtime = SandboxCompiler(), validation_runtime()
    table = Table(title="Build: designed, cross-validated tools per environment")
    # src: source tools the database covers; src ok: of those, implemented and validated
    for col in ("env", "cand", "kept", "write%", "tests", "src", "src ok", "rejected", "s"):
        table.add_column(col, justify="left" if col in ("env", "rejected") else "right",
                         no_wrap=col == "env")
    totals: Counter = Counter()
    reasons: Counter = Counter()
    kills: Counter = Counter()
    validate_s = 0.0
    for spec in specs:
        design = design_tools(spec, max_tools=args.max_tools)
        validation, built, _ = cross_validate(spec, design, compiler=compiler, runtime=runtime)
        validate_s += validation.seconds
        kept = {v.tool for v in validation.kept}
        cov = (spec.provenance.stats or {}).get("tool_coverage") or {"tools": {}}
        covered = [n for n, e in cov["tools"].items() if e.get("covered")]
        valid_src = [n for n in covered if n in kept]
        writes = sum(v.write for v in validation.kept)
        reasons.update(validation.rejections())
        totals.update(candidates=len(validation.verdicts), kept=len(kept), writes=writes,
                      covered=len(covered), valid_src=len(valid_src), envs=1,
                      tests=validation.tests_kept)
        table.add_row(spec.name, str(len(validation.verdicts)), str(len(kept)),
                      f"{100 * writes / max(1, len(kept)):.0f}", str(validation.tests_kept),
                      str(len(covered)), str(len(valid_src)),
                      ", ".join(f"{k} {v}" for k, v in validation.rejections().items()) or "-",
                      f"{validation.seconds:.1f}")
        if built is not None:
            kills.update(mutation_check(built, runtime))
    compiler.close()
    runtime.close()
    console.print(table)
    n = max(1, totals["envs"])
    summary = Table(title="Figures")
    summary.add_column("figure")
    summary.add_column("value", justify="right")
    summary.add_column("target", justify="right")
    rows = [
        ("validated tools per environment", f"{totals['kept'] / n:.1f}", "≥ 20"),
        ("covered source tools implemented and validated",
         f"{100 * totals['valid_src'] / max(1, totals['covered']):.0f} %", "≥ 90 %"),
        ("write tools", f"{100 * totals['writes'] / max(1, totals['kept']):.0f} %", "≥ 30 %"),
        ("acceptance rate", f"{100 * totals['kept'] / max(1, totals['candidates']):.0f} %", ""),
        ("rejections by reason", ", ".join(f"{k} {v}" for k, v in reasons.items()) or "none",
         ""),
        ("tests kept per environment", f"{totals['tests'] / n:.1f}", ""),
        ("tools cross-validated per second (sandbox on)",
         f"{totals['candidates'] / max(validate_s, 1e-9):.1f}", ""),
        ("mutation kill rate (a test fails)",
         f"{100 * kills['killed'] / max(1, kills['total']):.0f} % of {kills['total']}", "≥ 80 %"),
        ("mutants rejected by the > 50 % rule",
         f"{100 * kills['rejected'] / max(1, kills['total']):.0f} %", ""),
    ]
    for op in ("skipped write", "dropped WHERE", "changed constant"):
        if kills[f"{op} total"]:
            rows.append((f"  kill rate: {op}", f"{100 * kills[f'{op} killed'] / kills[f'{op} total']:.0f} % "
                         f"of {kills[f'{op} total']}", ""))
    if kills["no operator"]:
        rows.append(("  tools with no applicable mutant", str(kills["no operator"]), ""))
    for r in rows:
        summary.add_row(*r)
    console.print(summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
