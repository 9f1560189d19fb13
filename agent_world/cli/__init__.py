"""`agent-world …`: the command line (Typer + Rich).

Every command works on the catalog in the arena home (`--home` before or after the command,
$AGENT_WORLD_HOME, default ~/.agent_world). Errors the user can fix print as one message,
never a traceback (see `common.Group`). One module per command group; this one assembles them.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from agent_world import stop
from agent_world.cli.common import LazyGroup, console, resolve_env, state
from agent_world.sandbox.isolation import UNSAFE_ENV, warn_unsafe
from agent_world.version import __version__


class Root(LazyGroup):
    # command -> (where it lives, the short help the root help lists): a command's module, and
    # the stage dependencies it imports, load only when that command runs
    lazy = {
        "mine": ("agent_world.cli.mine:mine",
                 "Mine tool ecosystems into themes, a taxonomy and complexified databases."),
        "themes": ("agent_world.cli.mine:themes",
                   "The theme taxonomy as a tree (L1 category / L2 sub-category / L3 server)."),
        "harvest": ("agent_world.cli.harvest:harvest",
                    "Install MCP server packages (npm, PyPI), start each with no network and "
                    "dummy credentials, and save its `initialize` + `tools/list` (+ resources, "
                    "prompts) as a tool-list document with provenance."),
        "build": ("agent_world.cli.build:build",
                  "Design tools and tests for mined environments, cross-validate them in the "
                  "sandbox and store what passes as `built` versions (rejections go to the "
                  "ledger)."),
        "run": ("agent_world.cli.run:run",
                "The main job on the embedded default: mine the bundled tool ecosystems, show "
                "the taxonomy, then step an example environment and show its state diff."),
        "evolve": ("agent_world.cli.evolve:evolve",
                   "Self-evolution: evaluate on held-out environments, diagnose, synthesize "
                   "targeted tasks, train — one round per graph invocation on a persistent "
                   "thread."),
        "report": ("agent_world.cli.evolve:report_cmd",
                   "Write the self-evolution report: one self-contained HTML file with plots."),
        "train": ("agent_world.cli.train:train",
                  "Train a policy with the embedded GRPO trainer on arena tasks."),
        "evaluate": ("agent_world.cli.train:evaluate",
                     "Evaluate a policy on arena tasks: pass rate and mean reward per "
                     "environment."),
        "serve-graphs": ("agent_world.cli.serve_graphs:serve_graphs",
                         "Serve the arena's graphs and agents (mine, build, synthesize, evolve, "
                         "...) as MCP tools; each call runs checkpointed on a durable thread in "
                         "the arena home."),
        "serve-policy": ("agent_world.cli.serve_policy:serve_policy",
                         "Serve a trained policy as an OpenAI-compatible endpoint (/v1/models, "
                         "/v1/chat/completions): tools offered in a request are shown to the "
                         "policy as in the arena's rollouts, and its calls come back in OpenAI's "
                         "tool_calls format."),
        "synthesize": ("agent_world.cli.synthesize:synthesize",
                       "Synthesize verified tasks: tool-graph walks, programmatic tasks, gates, "
                       "ReAct verifier."),
        "ledger": ("agent_world.cli.ledger:ledger",
                   "The ledger: what a stage rejected or what failed, and why (newest last)."),
        "runs": ("agent_world.cli.ledger:runs",
                 "Recent runs, newest first: kind, status and summary."),
        "env": ("agent_world.cli.env:env_app",
                "Environments: list, show, import, serve over MCP, play tool calls."),
        "export": ("agent_world.cli.export:export_app", "Export arena tasks for other trainers."),
        "tasks": ("agent_world.cli.synthesize:tasks_app", "Synthesized tasks in the catalog."),
    }


# markdown: help texts are reflowed paragraphs, not the docstrings' line breaks
app = typer.Typer(cls=Root, no_args_is_help=True, rich_markup_mode="markdown",
                  add_completion=False,
                  help="Agent-World arena: mine tool ecosystems into executable environments, "
                       "synthesize verifiable tasks, train tool-using agents.")


def _version(value: bool) -> None:
    if value:
        console.print(f"agent-world {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    home: Annotated[Path | None, typer.Option(
        "--home", envvar="AGENT_WORLD_HOME",
        help="Arena home: catalog, checkpoints, runs. Default ~/.agent_world.")] = None,
    _: Annotated[bool, typer.Option("--version", callback=_version, is_eager=True,
                                    help="Print the version and exit.")] = False,
    unsafe_no_sandbox: Annotated[bool, typer.Option(
        "--unsafe-no-sandbox",
        help="Run untrusted code (environment tools, tests, solutions) WITHOUT a sandbox; "
             "same as AGENT_WORLD_UNSAFE_NO_SANDBOX=1. Warned on every run.")] = False,
) -> None:
    state.set_home(home)
    if unsafe_no_sandbox:
        os.environ[UNSAFE_ENV] = "1"
        warn_unsafe("this command's untrusted code")


@app.command()
def version() -> None:
    """Print the version."""
    console.print(f"agent-world {__version__}")


def main() -> None:
    stop.handle_sigterm()
    app(args=_home_first(sys.argv[1:]))


def _home_first(args: list[str]) -> list[str]:
    """`--home PATH` may come anywhere on the line; the root option takes it."""
    out, home = [], []
    i = 0
    while i < len(args):
        a = args[i]
        if a == "--":
            out += args[i:]
            break
        if a == "--home" and i + 1 < len(args):
            home = ["--home", args[i + 1]]
            i += 2
            continue
        if a.startswith("--home="):
            home = [a]
        else:
            out.append(a)
        i += 1
    return [*home, *out]


__all__ = ["app", "main", "resolve_env"]
