"""Semantic audit: do the built tools do what their sources say?

    PYTHONPATH=. python benchmarks/semantic_audit.py [--iterations 3] [--walk 1000] [--no-unseen]
    PYTHONPATH=. python benchmarks/semantic_audit.py --home DIR   # audit what DIR has built

Without --home it mines the default sources (and the unseen-source fixtures in
tests/fixtures/sources/unseen) into a scratch home and builds them offline; with --home it
audits the `built` environments already there (an older designer's build, say). One table per
run, one row per environment:

* ``src``: source tools of the coverage map / built;
* ``contradict``: built source tools whose probed behaviour contradicts their behaviour
  contract (re-derived here from the source and the mined schema): called on a fresh episode
  with the contract's success arguments, the state change must be the contract's (its tables,
  its rows, its values, nothing else) and the result of the contract's kind; a read must not
  write, a search must take arguments (target 0);
* ``new viol.``: semantic violations (agent_world.mining.semantics.checker.check_semantics) of the state
  after ``--walk`` random write calls (tools and arguments drawn from the built tests), less
  those of the seed rows (target 0; cross-table invariants count here too);
* ``inv. seed/walk``: of those, the cross-table invariants the spec declares
  (``provenance.stats["invariants"]``: a copy on loan iff it has a live loan, one live
  appointment per slot, a state's field only in that state, a time zone of the row's
  country): violations in the seed rows, and new ones in the episode's database after the
  walk, read back with `invariant_violations(spec, db_path)` (targets 0);
* ``swap kill``: for every tool, its body replaced by another tool's (same read/write kind,
  same parameters where one exists): share of those mutants that fail at least one of the
  tool's tests, and share of the tests that fail (targets >= 90 %);
* ``drop kill``: for every coupled write of a contract (the loan a check-out opens, the slot a
  cancellation frees), the tool with that one statement removed: share of mutants caught
  (target >= 95 %).
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from agent_world.design.cross_validation import (  # noqa: E402
    SandboxCompiler,
    cross_validate,
    validation_runtime,
)
from agent_world.design.offline.contracts import Contract  # noqa: E402
from agent_world.design.offline.expectations import design_tests  # noqa: E402
from agent_world.design.offline.source_plans import contract_plan  # noqa: E402
from agent_world.design.tool_designer import design_tools  # noqa: E402
from agent_world.envs.catalog import Catalog  # noqa: E402
from agent_world.envs.episode import EnvRuntime  # noqa: E402
from agent_world.envs.spec import EnvSpec, ToolTest  # noqa: E402
from agent_world.envs.testing import run_tool_test  # noqa: E402
from agent_world.mining.semantics.checker import check_semantics  # noqa: E402
from agent_world.mining.semantics.invariants import invariant_violations  # noqa: E402

UNSEEN = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "sources" / "unseen"


# ---- contradictions ----------------------------------------------------------------------------
def contracts_of(spec: EnvSpec) -> dict[str, tuple[Contract, list[dict[str, Any]]]]:
    """Each covered source tool's contract and the tests written from it, derived afresh from
    the source's coverage map and the mined schema (whatever the build did)."""
    cov = ((spec.provenance.stats or {}).get("tool_coverage") or {}).get("tools") or {}
    out = {}
    for name, entry in cov.items():
        if not entry.get("covered", True):
            continue
        plan = contract_plan(spec, name, entry)
        if plan is None or plan.contract is None:
            continue
        out[name] = (plan.contract, design_tests(spec, [plan]))
    return out


def probe(spec: EnvSpec, contract: Contract, tests: list[dict[str, Any]], ep: Any) -> str | None:
    """Why the built tool contradicts its contract (None: it does what the contract says)."""
    tool = next((t for t in spec.tools if t.name == contract.tool), None)
    if tool is None:
        return "not built"
    props = tool.parameters.get("properties") or {}
    if contract.verb == "search" and not any(k != "limit" for k in props):
        return "a search without arguments"
    if contract.write and not tool.mutates:
        return f"declared read-only, but its contract is {contract.verb}"
    if not contract.write and tool.mutates:
        return f"declared a write, but its contract is {contract.verb}"
    positive = [t for t in tests if t["expect"].get("ok", True)
                and not t["expect"].get("error_kind")]
    for raw in positive:
        test = ToolTest.model_validate(raw)
        ok, why = run_tool_test(ep, test)
        if not ok:
            return f"{test.name}: {why}"[:160]
    refusals = [t for t in tests if t not in positive]
    for raw in refusals:
        ok, why = run_tool_test(ep, ToolTest.model_validate(raw))
        if not ok:
            return f"{raw['name']}: {why}"[:160]
    return None


# ---- random writes -------------------------------------------------------------------------
def violations_after_walk(spec: EnvSpec, runtime: EnvRuntime, steps: int, seed: int = 0
                          ) -> tuple[int, int, int]:
    """(violations new after `steps` random write calls, calls that succeeded, invariant
    violations new in the episode's database)."""
    writes = {t.name for t in spec.tools if t.mutates}
    calls = [t for t in spec.tests if t.tool in writes]
    if not calls or not steps:
        return 0, 0, 0
    before = {(v.rule, v.table, v.column, v.row) for v in check_semantics(spec)}
    rng = random.Random(seed)
    done = 0
    with runtime.open(spec, seed=seed) as ep:
        for _ in range(steps):
            test = rng.choice(calls)
            done += ep.step(test.tool, test.arguments).ok
        state = ep.dump()
        invariants = {(v.rule, v.table, v.column, v.row)
                      for v in invariant_violations(spec, ep.path)}
    rows = {t: [{k: v for k, v in r.items()} for r in rs] for t, rs in state.items()}
    after = check_semantics(spec.model_copy(update={"rows": rows}))
    return (len({(v.rule, v.table, v.column, v.row) for v in after} - before), done,
            len(invariants - before))


# ---- mutants -----------------------------------------------------------------------------------
def _rename(source: str, old: str, new: str) -> str:
    return re.sub(rf"^def {re.escape(old)}\(", f"def {new}(", source, count=1, flags=re.M)


def swap_mutants(spec: EnvSpec) -> list[tuple[str, str]]:
    """(tool, source with another tool's body): a partner with the same parameters where one
    exists, else the next tool of the same kind (read / write)."""
    out = []
    tools = spec.tools
    for i, t in enumerate(tools):
        same = [u for u in tools if u.name != t.name and u.mutates == t.mutates]
        params = set(t.parameters.get("properties") or {})
        twin = next((u for u in same if set(u.parameters.get("properties") or {}) == params
                     and u.source.split("\n", 1)[1] != t.source.split("\n", 1)[1]), None)
        partner = twin or (same[(i + 1) % len(same)] if same else None)
        if partner is not None:
            out.append((t.name, _rename(partner.source, partner.name, t.name)))
    return out


def drop_mutants(spec: EnvSpec, contracts: dict[str, tuple[Contract, list]]
                 ) -> list[tuple[str, str]]:
    """(tool, source without one coupled write): per coupled effect of each contract, the
    statement that performs it is removed (an inserted row becomes an empty dict)."""
    out = []
    for name, (contract, _) in contracts.items():
        tool = next((t for t in spec.tools if t.name == name), None)
        if tool is None:
            continue
        for e in contract.effects:
            if not e.coupled:
                continue
            lines = tool.source.splitlines()
            if e.op == "insert":
                hit = [i for i, ln in enumerate(lines) if f"_insert(ctx, '{e.table}'" in ln]
            else:
                hit = [i for i, ln in enumerate(lines) if f'UPDATE "{e.table}"' in ln
                       and ("!= ?" in ln) == (e.rows == "peers")
                       and (e.table != contract.entity or e.rows != "entity")]
            if not hit:
                continue
            i = hit[0]
            indent = lines[i][:len(lines[i]) - len(lines[i].lstrip())]
            head = lines[i].strip().split(" = ", 1)
            lines[i] = indent + (f"{head[0]} = {{}}" if e.op == "insert" else "pass")
            out.append((name, "\n".join(lines) + "\n"))
    return out


def kill(spec: EnvSpec, runtime: EnvRuntime, mutants: list[tuple[str, str]]
         ) -> tuple[int, int, int, int]:
    """(mutants killed, mutants, tests failed, tests run) over `mutants`."""
    killed = total = failed = run = 0
    for name, source in mutants:
        tests = [t for t in spec.tests if t.tool == name]
        if not tests:
            continue
        broken = spec.model_copy(update={"tools": [
            t.model_copy(update={"source": source}) if t.name == name else t
            for t in spec.tools], "tests": tests})
        with runtime.open(broken) as ep:
            passed = sum(run_tool_test(ep, t)[0] for t in tests)
        total += 1
        killed += passed < len(tests)
        failed += len(tests) - passed
        run += len(tests)
    return killed, total, failed, run


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.0f} %" if b else "-"


# ---- the run -----------------------------------------------------------------------------------
def _mine_and_build(home: Path, iterations: int, unseen: bool, console: Console
                    ) -> tuple[list[EnvSpec], int, int]:
    from agent_world.graphs import mine_graph as mine
    from agent_world.graphs.runner import invoke
    from agent_world.mining.sources import default_sources

    sources = [r.spec for r in default_sources(home)]
    if unseen:
        sources += [f"file:{p}" for p in sorted(UNSEEN.iterdir()) if p.is_file()]
    t0 = time.perf_counter()
    out = invoke(mine.build_graph(), {"sources": sources, "iterations": iterations}, home=home)
    summary = (out or {}).get("summary") or {}
    console.print(f"mined {summary.get('mined', '?')} of {len(sources)} sources in "
                  f"{time.perf_counter() - t0:.1f} s")
    with Catalog.open(home) as cat:
        mined = [cat.get_env_at_stage(e.name, "mined") for e in cat.list_envs()]
    compiler, runtime = SandboxCompiler(), validation_runtime()
    built = []
    t0 = time.perf_counter()
    try:
        for spec in mined:
            if spec is None:
                continue
            _, b, _ = cross_validate(spec, design_tools(spec, model=None), compiler=compiler,
                                     runtime=runtime)
            if b is not None:
                built.append(b)
    finally:
        compiler.close()
        runtime.close()
    console.print(f"built {len(built)} environments in {time.perf_counter() - t0:.1f} s")
    return built, int(summary.get("mined") or len(mined)), len(sources)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--iterations", type=int, default=3)
    parser.add_argument("--walk", type=int, default=1000, help="random write calls per env")
    parser.add_argument("--home", type=Path, help="audit the built environments of this home")
    parser.add_argument("--no-unseen", action="store_true", help="default sources only")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    console = Console(width=150)
    if args.home:
        with Catalog.open(args.home) as cat:
            specs = [cat.get_env_at_stage(e.name, "built") for e in cat.list_envs()]
        specs = [s for s in specs if s is not None]
        mined_n = given_n = len(specs)
    else:
        home = Path(tempfile.mkdtemp(prefix="semantic-audit-"))
        specs, mined_n, given_n = _mine_and_build(home, args.iterations, not args.no_unseen,
                                                  console)
    runtime = EnvRuntime(tool_timeout_s=2.0)
    table = Table(title=f"Semantic audit: {len(specs)} environments, sources mined "
                        f"{mined_n}/{given_n}")
    for col in ("env", "src", "contradict", "new viol.", "inv. seed/walk", "walk ok",
                "swap kill", "swap tests", "drop kill"):
        table.add_column(col, justify="left" if col == "env" else "right", no_wrap=True)
    totals: Counter = Counter()
    figures: dict[str, Any] = {"envs": {}, "sources_mined": mined_n, "sources_given": given_n}
    reasons: list[str] = []
    try:
        for spec in sorted(specs, key=lambda s: s.name):
            contracts = contracts_of(spec)
            bad = {}
            with runtime.open(spec) as ep:
                for name, (contract, tests) in contracts.items():
                    why = probe(spec, contract, tests, ep)
                    if why is not None:
                        bad[name] = why
            new, ok_calls, new_inv = violations_after_walk(spec, runtime, args.walk)
            seed_inv = sum(v.rule == "invariant" for v in check_semantics(spec))
            sk, st, sf, sr = kill(spec, runtime, swap_mutants(spec))
            dk, dt, _, _ = kill(spec, runtime, drop_mutants(spec, contracts))
            built_src = sum(1 for n in contracts if any(t.name == n for t in spec.tools))
            table.add_row(spec.name, f"{len(contracts)}/{built_src}", str(len(bad)), str(new),
                          f"{seed_inv}/{new_inv}", f"{ok_calls}/{args.walk}", f"{_pct(sk, st)} of {st}",
                          _pct(sf, sr), f"{_pct(dk, dt)} of {dt}" if dt else "-")
            totals.update(src=len(contracts), bad=len(bad), new=new, sk=sk, st=st, sf=sf, sr=sr,
                          dk=dk, dt=dt, seed_inv=seed_inv, new_inv=new_inv)
            reasons += [f"{spec.name}.{n}: {w}" for n, w in bad.items()]
            figures["envs"][spec.name] = {"source_tools": len(contracts), "contradictions": bad,
                                          "new_violations": new, "walk_ok": ok_calls,
                                          "invariant_violations": [seed_inv, new_inv],
                                          "swap": [sk, st, sf, sr], "drop": [dk, dt]}
    finally:
        runtime.close()
    table.add_section()
    table.add_row("all", str(totals["src"]), str(totals["bad"]), str(totals["new"]),
                  f"{totals['seed_inv']}/{totals['new_inv']}", "",
                  f"{_pct(totals['sk'], totals['st'])} of {totals['st']}",
                  _pct(totals["sf"], totals["sr"]),
                  f"{_pct(totals['dk'], totals['dt'])} of {totals['dt']}")
    console.print(table)
    for line in reasons:
        console.print(f"  contradicts: {line}", markup=False, highlight=False, soft_wrap=True)
    if args.json:
        args.json.write_text(json.dumps(figures, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
