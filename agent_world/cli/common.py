"""What every command module shares: consoles, the arena home, error handling, env lookup."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.core import TyperGroup

from agent_world.errors import AgentWorldError, SpecError

console = Console()
err_console = Console(stderr=True, soft_wrap=True)


class Group(TyperGroup):
    """Turns the project's own errors into one clean message (exit code 1, no traceback)."""

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except AgentWorldError as exc:
            err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
            raise typer.Exit(1) from None


class State:
    home: Path | None = None

    def catalog(self):  # noqa: ANN201 - imported lazily: keeps `--help` fast
        from agent_world.envs.catalog import Catalog
        from agent_world.envs.examples import example_names, load_example

        cat = Catalog.open(self.home)
        for name in example_names():  # the bundled examples are always there to try
            if not cat.has_env(name):
                cat.put_env(load_example(name), stage="example")
        return cat


state = State()


def resolve_env(ref: str):  # noqa: ANN201
    """An environment by catalog name, JSON file path, or bundled example name."""
    from agent_world.envs.spec import EnvSpec

    path = Path(ref)
    if path.suffix == ".json" or path.exists():
        if not path.exists():
            raise SpecError(f"{ref}: no such file")
        return EnvSpec.load(path)
    return state.catalog().get_env(ref)


def print_observations(observations: list[Any]) -> None:
    for o in observations:
        head = f"[bold]#{o.step} {o.tool}[/]({json.dumps(o.arguments)})"
        if o.ok:
            text = json.dumps(o.result, default=str)
            console.print(f"{head} → [green]ok[/] {text[:400]}{'…' if len(text) > 400 else ''}")
        else:
            console.print(f"{head} → [red]{o.error.kind}[/] ({o.error.fault} fault): "
                          f"{o.error.message}")


def print_diff(diff: Any) -> None:
    table = Table(title="State diff since reset")
    for col in ("table", "inserted", "updated", "deleted"):
        table.add_column(col, justify="left" if col == "table" else "right")
    for name, c in diff.counts().items():
        table.add_row(name, str(c["inserted"]), str(c["updated"]), str(c["deleted"]))
    if diff.empty:
        table.add_row("(no changes)", "", "", "")
    console.print(table)
