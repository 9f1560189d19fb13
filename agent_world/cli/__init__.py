"""`agent-world …`: the command line (Typer + Rich).

Every command works on the catalog in the arena home (`--home` before or after the command,
$AGENT_WORLD_HOME, default ~/.agent_world). Errors the user can fix print as one message,
never a traceback (see `common.Group`). One module per command group; this one assembles them.
"""

from __future__ import annotations

import os
import signal
import sys
from pathlib import Path
from typing import Annotated

import typer

from agent_world import stop
from agent_world.cli import (
    build,
    ecosystem,
    env,
    evolve,
    export_openenv,
    harvest,
    ledger,
    mine,
    run,
    serve_graphs,
    serve_policy,
    synthesize,
    train,
)
from agent_world.cli.common import Group, console, resolve_env, state
from agent_world.sandbox.isolation import UNSAFE_ENV, warn_unsafe
from agent_world.version import __version__

# markdown: help texts are reflowed paragraphs, not the docstrings' line breaks
app = typer.Typer(cls=Group, no_args_is_help=True, rich_markup_mode="markdown",
                  add_completion=False,
                  help="Agent-World arena: mine tool ecosystems into executable environments, "
                       "synthesize verifiable tasks, train tool-using agents.")
app.add_typer(env.env_app, name="env")
app.command()(mine.mine)
app.command()(mine.themes)
app.command()(harvest.harvest)
app.command()(build.build)
app.command()(run.run)
app.command()(evolve.evolve)
app.command("report")(evolve.report_cmd)
app.command()(train.train)
app.command()(train.evaluate)
app.add_typer(train.export_app, name="export")
train.export_app.command("openenv")(export_openenv.export_openenv_cmd)
train.export_app.command("trl")(ecosystem.export_trl_cmd)
train.export_app.command("verifiers")(ecosystem.export_verifiers_cmd)
app.command("serve-graphs")(serve_graphs.serve_graphs)
app.command("serve-policy")(serve_policy.serve_policy)
app.command()(synthesize.synthesize)
app.add_typer(synthesize.tasks_app, name="tasks")
env.env_app.command("graph")(synthesize.env_graph)
app.command("ledger")(ledger.ledger)
app.command("runs")(ledger.runs)


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


def _terminate(signum: int, _frame: object) -> None:
    stop.requested.set()  # stages running in a graph's worker threads stop at their next step
    raise SystemExit(128 + signum)  # unwinds: runs are closed, temporary files removed


def main() -> None:
    signal.signal(signal.SIGTERM, _terminate)
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
