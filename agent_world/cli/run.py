"""`agent-world run`: the main job on the embedded default."""

from __future__ import annotations

from typing import Annotated

import typer

from agent_world.cli.common import (
    JsonOption,
    console,
    print_diff,
    print_json,
    print_observations,
    state,
)
from agent_world.cli.env import _observation, env_list
from agent_world.cli.mine import MAX_ITERATIONS, mine_failed, run_mine, themes
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.examples import load_example, tour_calls
from agent_world.mining.sources import default_sources


def run(
    source: Annotated[list[str] | None, typer.Option(
        "--source", "-s", help="Extra sources to mine besides the embedded default.")] = None,
    iterations: Annotated[int, typer.Option(
        help=f"Complexification iterations, 0..{MAX_ITERATIONS}.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
    as_json: JsonOption = False,
) -> None:
    """The main job on the embedded default: mine the bundled tool ecosystems, show the
    taxonomy, then step an example environment and show its state diff. Exits 1 when a
    source failed to mine (everything else still runs)."""
    sources = [ref.spec for ref in default_sources(state.home)] + list(source or [])
    if not as_json:
        console.rule("[bold]1. Mine tool ecosystems")
    mined = run_mine(sources, iterations, seed, None, False, quiet=as_json)
    if not as_json:
        console.rule("[bold]2. Theme taxonomy")
        themes()
        console.rule("[bold]3. Environments in the catalog")
        env_list(stage=None)
        console.rule("[bold]4. An episode of the airline example")
    cat = state.catalog()
    spec = cat.get_env("airline") if cat.has_env("airline") else load_example("airline")
    plan = tour_calls(spec)
    with EnvRuntime() as runtime:
        ep = runtime.open(spec, seed=seed)
        observations = [ep.step(c["tool"], c["arguments"]) for c in plan]
        diff = ep.diff()
    if as_json:
        print_json({"mine": {k: mined.get(k) for k in ("thread_id", "run_id", "status",
                                                       "summary", "results")},
                    "themes": len(cat.list_themes()),
                    "environments": [e.name for e in cat.list_envs()],
                    "episode": {"env": spec.name,
                                "observations": [_observation(o) for o in observations],
                                "diff": diff.model_dump(mode="json")}})
    else:
        print_observations(observations)
        print_diff(diff)
        console.print("\nNext: [bold]agent-world env serve airline[/] (MCP), "
                      "[bold]agent-world env show <name>[/], [bold]langgraph dev[/] (Studio).")
    if mine_failed(mined):
        raise typer.Exit(1)
