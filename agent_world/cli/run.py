"""`agent-world run`: the main job on the embedded default."""

from __future__ import annotations

from typing import Annotated

import typer

from agent_world.cli.common import console, print_diff, print_observations, state
from agent_world.cli.env import env_list
from agent_world.cli.mine import run_mine, themes


def run(
    source: Annotated[list[str] | None, typer.Option(
        "--source", "-s", help="Extra sources to mine besides the embedded default.")] = None,
    iterations: Annotated[int, typer.Option(help="Complexification iterations.")] = 3,
    seed: Annotated[int, typer.Option(help="Seed.")] = 0,
) -> None:
    """The main job on the embedded default: mine the bundled tool ecosystems, show the
    taxonomy, then step an example environment and show its state diff."""
    from agent_world.envs.episode import EnvRuntime
    from agent_world.envs.examples import tour_calls
    from agent_world.tools.sources import default_sources

    sources = [ref.spec for ref in default_sources(state.home)] + list(source or [])
    console.rule("[bold]1. Mine tool ecosystems")
    run_mine(sources, iterations, seed, None, False)
    console.rule("[bold]2. Theme taxonomy")
    themes()
    console.rule("[bold]3. Environments in the catalog")
    env_list(stage=None)
    console.rule("[bold]4. An episode of the airline example")
    spec = state.catalog().get_env("airline")
    plan = tour_calls(spec)
    with EnvRuntime() as runtime:
        ep = runtime.open(spec, seed=seed)
        print_observations([ep.step(c["tool"], c["arguments"]) for c in plan])
        print_diff(ep.diff())
    console.print("\nNext: [bold]agent-world env serve airline[/] (MCP), "
                  "[bold]agent-world env show <name>[/], [bold]langgraph dev[/] (Studio).")
