"""`agent-world …`: the command line (Typer + Rich).

Every command works on the catalog in the arena home (`--home`, $AGENT_WORLD_HOME, default
~/.agent_world). Errors the user can fix print as one message, never a traceback. One module per
command group; this one assembles them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_world import __version__
from agent_world.cli import env, evolve, mine, run, train
from agent_world.cli.common import Group, console, resolve_env, state
from agent_world.config import resolve_home

app = typer.Typer(cls=Group, no_args_is_help=True, add_completion=False,
                  help="Agent-World arena: mine tool ecosystems into executable environments, "
                       "synthesize verifiable tasks, train tool-using agents.")
app.add_typer(env.env_app, name="env")
app.command()(mine.mine)
app.command()(mine.themes)
app.command()(run.run)
app.command()(evolve.evolve)
app.command("report")(evolve.report_cmd)
app.command()(train.train)
app.command()(train.evaluate)
app.add_typer(train.export_app, name="export")


@app.callback()
def _root(
    home: Annotated[Path | None, typer.Option(
        "--home", envvar="AGENT_WORLD_HOME",
        help="Arena home: catalog, checkpoints, runs. Default ~/.agent_world.")] = None,
) -> None:
    state.home = resolve_home(home)


@app.command()
def version() -> None:
    """Print the version."""
    console.print(f"agent-world {__version__}")


def main() -> None:
    app()


__all__ = ["app", "main", "resolve_env"]
