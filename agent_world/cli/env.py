"""`agent-world env …`: list, show, import, serve over MCP, play tool calls."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from agent_world.cli.common import (
    Group,
    JsonOption,
    console,
    fit_table,
    print_diff,
    print_json,
    print_observations,
    resolve_env,
    state,
)
from agent_world.envs.authoring import build_env
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.mcp_export import serve
from agent_world.envs.spec import EnvSpec
from agent_world.envs.testing import run_tool_test, verify_spec
from agent_world.errors import SpecError
from agent_world.serving import TOKEN_ENV
from agent_world.tasks.toolgraph import draw_graph, save_graph, tool_graph

env_app = typer.Typer(cls=Group, no_args_is_help=True, rich_markup_mode="markdown",
                      help="Environments: list, show, import, serve over MCP, play tool calls.")


@env_app.command("list")
def env_list(stage: Annotated[str | None, typer.Option(help="Only this stage "
                                                       "(example, mined, built, ...).")] = None,
             as_json: JsonOption = False) -> None:
    """List the catalog's environments."""
    envs = state.catalog().list_envs(stage=stage)
    if as_json:
        print_json([e.model_dump(mode="json") for e in envs])
        return
    table = fit_table(f"Environments ({len(envs)})",
                      ["name", "ver", "stage", "tables", "rows", "tools", "taxonomy"],
                      numeric={"ver", "tables", "rows", "tools"}, keep={"name", "stage"})
    for e in envs:
        num = {k: f"{e.stats[k]:,}" if isinstance(e.stats.get(k), int) else ""
               for k in ("tables", "rows", "tools")}
        table.add_row(escape(e.name), str(e.version), escape(e.stage), num["tables"],
                      num["rows"], num["tools"], escape(e.taxonomy))
    console.print(table)


@env_app.command("show")
def env_show(env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
             as_json: Annotated[bool, typer.Option("--json", help="Print the whole spec.")] = False
             ) -> None:
    """Show an environment: theme, tables, tools."""
    spec = resolve_env(env)
    if as_json:
        sys.stdout.write(spec.to_json() + "\n")
        return
    console.print(f"[bold]{escape(spec.name)}[/] v{spec.version}  fingerprint "
                  f"{spec.fingerprint}", highlight=False)
    console.print(f"theme: {escape(spec.theme.name)} — {escape(str(spec.theme.taxonomy))}",
                  highlight=False)
    if spec.theme.description:
        console.print(escape(spec.theme.description), highlight=False)
    tables = fit_table("Tables", ["table", "rows", "columns", "references"],
                       numeric={"rows"}, wrap={"columns"}, keep={"table"})
    for t in spec.tables:
        refs = sorted({c.foreign_key.split(".")[0] for c in t.columns if c.foreign_key})
        tables.add_row(escape(t.name), f"{len(spec.rows.get(t.name, [])):,}",
                       escape(", ".join(c.name for c in t.columns)), escape(", ".join(refs)))
    console.print(tables)
    validation = (spec.provenance.stats or {}).get("validation") or {}
    tools = fit_table("Tools", ["tool", "kind", "arguments",
                                *(("validated",) if validation else ()), "description"],
                      wrap={"arguments", "description"}, keep={"tool", "kind", "validated"})
    for t in spec.tools:
        args = ", ".join(f"{k}{'' if k in t.parameters.get('required', []) else '?'}"
                         for k in t.parameters.get("properties", {}))
        v = validation.get(t.name)
        checked = (f"{v['passed']}/{v['total']} tests" + (f", {v['repairs']} repairs"
                                                          if v.get("repairs") else "")
                   if v else "-")
        tools.add_row(escape(t.name), "write" if t.mutates else "read", escape(args),
                      *((checked,) if validation else ()),
                      escape(t.description.split("\n")[0]))
    console.print(tools)
    rejected = {k: v for k, v in validation.items() if not v.get("kept")}
    if rejected:
        console.print(f"{len(rejected)} candidate tool(s) rejected by cross-validation: "
                      + escape("; ".join(f"{k} ({v['reason'][:80]})"
                                         for k, v in rejected.items())), highlight=False)
    console.print(f"{len(spec.tests)} tool tests; provenance: "
                  f"{escape(spec.provenance.created_by)} ({escape(spec.provenance.source_kind)} "
                  f"{escape(spec.provenance.source_ref)})".rstrip(), highlight=False)


@env_app.command("import")
def env_import(files: Annotated[list[Path], typer.Argument(help="EnvSpec JSON files.")],
               stage: Annotated[str, typer.Option(help="Stage label to store.")] = "manual",
               no_test: Annotated[bool, typer.Option(
                   "--no-test", help="Store without building the database and running the "
                                     "tool tests.")] = False,
               ) -> None:
    """Validate EnvSpec files, build each one's database and run its tool tests, then store
    it in the catalog (a changed spec becomes a new version). A spec that fails is refused."""
    cat = state.catalog()
    specs = [(f, EnvSpec.load(f)) for f in files]
    if not no_test:
        with EnvRuntime() as runtime:
            for f, spec in specs:
                failures = verify_spec(spec, runtime)
                if failures:
                    shown = "; ".join(failures[:3]) + ("; …" if len(failures) > 3 else "")
                    raise SpecError(f"{f}: {len(failures)} of {len(spec.tests)} tool tests "
                                    f"fail ({shown}); fix them or pass --no-test")
    for f, spec in specs:
        summary = cat.put_env(spec, stage=stage)
        console.print(f"imported [bold]{escape(summary.name)}[/] v{summary.version} "
                      f"({summary.fingerprint}) from {escape(str(f))}", highlight=False)


@env_app.command("rm")
def env_rm(names: Annotated[list[str], typer.Argument(help="Catalog names.")],
           yes: Annotated[bool, typer.Option("--yes", "-y", help="Do not ask.")] = False
           ) -> None:
    """Remove environments from the catalog, with all their versions."""
    cat = state.catalog(seed_examples=False)
    for name in names:
        cat.get_env(name)  # unknown names fail before anything is removed
    if not yes and not typer.confirm(f"remove {', '.join(names)} with all versions?"):
        raise typer.Exit(1)
    for name in names:
        n = cat.remove_env(name)
        console.print(f"removed [bold]{escape(name)}[/] ({n} version{'s' * (n != 1)})",
                      highlight=False)


@env_app.command("test")
def env_test(env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
             as_json: JsonOption = False) -> None:
    """Run the environment's tool tests, each on a fresh episode. Exits 1 if any fails."""
    spec = resolve_env(env)
    results = []
    with EnvRuntime() as runtime, runtime.open(spec, seed=0) as episode:
        for t in spec.tests:
            ok, why = run_tool_test(episode, t)
            results.append({"test": t.name, "tool": t.tool, "passed": ok, "reason": why})
    failed = [r for r in results if not r["passed"]]
    if as_json:
        print_json({"env": spec.name, "passed": len(results) - len(failed),
                    "failed": len(failed), "tests": results})
    else:
        table = fit_table(f"Tool tests of {escape(spec.name)}", ["test", "tool", "result"],
                          wrap={"result"}, keep={"tool"})
        for r in results:
            mark = "[green]pass[/]" if r["passed"] else f"[red]FAIL[/] {escape(r['reason'])}"
            table.add_row(escape(r["test"]), escape(r["tool"]), mark)
        console.print(table)
        console.print(f"{len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        raise typer.Exit(1)


@env_app.command("build")
def env_build(
    path: Annotated[Path, typer.Argument(help="Environment folder (environment.py + tools.py) "
                                              "or a single .py module.")],
    out: Annotated[Path | None, typer.Option("--out", "-o", help="Where to write the EnvSpec "
                                             "JSON. Default: <name>.json here.")] = None,
    name: Annotated[str | None, typer.Option(help="Environment name (default: the module's "
                                             "NAME, else the folder/file name).")] = None,
    store: Annotated[bool, typer.Option("--import", help="Also store it in the catalog.")] = False,
    verify: Annotated[bool, typer.Option("--verify", help="Run every tool test in an episode; "
                                         "fail if one fails.")] = False,
) -> None:
    """Compile a hand-written environment (toolkit form) into an EnvSpec."""
    spec = build_env(path, name=name)
    target = out or Path(f"{spec.name}.json")
    target.write_text(spec.to_json() + "\n")
    stats = spec.stats()
    writes = sum(t.mutates for t in spec.tools)
    console.print(f"built [bold]{spec.name}[/] → {target}: {stats['tables']} tables, "
                  f"{stats['rows']} rows, {stats['tools']} tools ({writes} write), "
                  f"{stats['tests']} tests; fingerprint {spec.fingerprint}")
    if verify:
        failures = verify_spec(spec)
        for line in failures:
            console.print(f"  [red]FAIL[/] {line}")
        console.print(f"{len(spec.tests) - len(failures)}/{len(spec.tests)} tool tests pass")
        if failures:
            raise typer.Exit(1)
    if store:
        summary = state.catalog().put_env(spec, stage="manual")
        console.print(f"imported [bold]{summary.name}[/] v{summary.version} "
                      f"({summary.fingerprint})")


@env_app.command("serve")
def env_serve(
    env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
    transport: Annotated[str, typer.Option(help="stdio or http (streamable HTTP).")] = "stdio",
    host: Annotated[str, typer.Option(help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="HTTP port.")] = 8765,
    seed: Annotated[int, typer.Option(help="Episode seed (clock and ids).")] = 0,
    workers: Annotated[int, typer.Option(help="Tool workers: calls of this many sessions run "
                                              "at the same time.", min=1)] = 2,
    token: Annotated[str | None, typer.Option(
        envvar=TOKEN_ENV, show_default=False,
        help="HTTP: the bearer token clients must send (default: a new one, printed).")] = None,
) -> None:
    """Serve an environment as an MCP server; each client session gets an isolated episode
    (stateless clients: episode_open, then ?episode=ID in the URL; tools episode_reset and
    episode_diff). Over HTTP every request needs the bearer token."""
    if transport not in ("stdio", "http"):
        raise typer.BadParameter("must be 'stdio' or 'http'", param_hint="--transport")
    spec = resolve_env(env)
    serve(spec, transport=transport, host=host, port=port, seed=seed, workers=workers,  # type: ignore[arg-type]
          token=token)


def _observation(o: Any) -> dict[str, Any]:
    data = o.model_dump(mode="json", exclude={"elapsed_ms"})
    if o.error is not None:
        data["error"]["fault"] = o.error.fault  # agent or environment
    return data


def read_calls(path: str) -> list[dict[str, Any]]:
    text = sys.stdin.read() if path == "-" else Path(path).read_text() if Path(path).exists() \
        else None
    if text is None:
        raise SpecError(f"{path}: no such file")
    try:
        calls = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SpecError(f"{path}: not valid JSON: {exc.msg} at line {exc.lineno}") from None
    if isinstance(calls, dict):
        calls = [calls]
    if not isinstance(calls, list) or not all(isinstance(c, dict) and "tool" in c for c in calls):
        raise SpecError(f"{path}: expected a list of {{\"tool\": NAME, \"arguments\": {{...}}}}")
    return calls


@env_app.command("play")
def env_play(
    env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
    calls: Annotated[str, typer.Argument(help="JSON file with a list of {tool, arguments}; "
                                              "'-' reads standard input.")],
    seed: Annotated[int, typer.Option(help="Episode seed (clock and ids).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Machine-readable output.")] = False,
) -> None:
    """Run tool calls in a fresh episode; print every observation and the state diff."""
    spec = resolve_env(env)
    plan = read_calls(calls)
    with EnvRuntime() as runtime:
        ep = runtime.open(spec, seed=seed)
        observations = [ep.step(c["tool"], c.get("arguments", {})) for c in plan]
        diff = ep.diff()
        state_hash = ep.state_hash()
    if as_json:
        out = {"observations": [_observation(o) for o in observations],
               "diff": diff.model_dump(mode="json"), "state_hash": state_hash}
        sys.stdout.write(json.dumps(out, indent=2, default=str) + "\n")
        return
    print_observations(observations)
    print_diff(diff)


@env_app.command("graph")
def env_graph(
    env: Annotated[str, typer.Argument(help="Catalog name, example name or JSON file.")],
    out: Annotated[Path | None, typer.Option(
        "--out", "-o", help="Picture to write (.png/.svg/.pdf). Default ENV-toolgraph.png")]
    = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the edges as JSON too.")] = False,
) -> None:
    """Build the tool-dependency graph (saved in the arena home) and draw it."""
    spec = resolve_env(env)
    g = tool_graph(spec, home=state.home)
    saved = save_graph(g, state.home)
    path = draw_graph(g, out or Path(f"{spec.name}-toolgraph.png"))
    if as_json:
        console.print_json(json.dumps([{"from": a, "to": b, "weight": d["weight"],
                                        "bindings": d["bindings"]}
                                       for a, b, d in g.edges(data=True)]))
    table = Table(title=f"{spec.name}: strongest dependencies")
    for col in ("from", "to", "weight", "field → argument"):
        table.add_column(col)
    edges = sorted(g.edges(data=True), key=lambda e: -e[2]["weight"])
    for a, b, d in edges[:15]:
        table.add_row(a, b, f"{d['weight']:.2f}", ", ".join(
            f"{x['field']} → {x['param']}" for x in d["bindings"][:3]))
    console.print(table)
    console.print(f"{len(g)} tools, {g.number_of_edges()} edges; graph saved to {saved}; "
                  f"picture written to {path}")


