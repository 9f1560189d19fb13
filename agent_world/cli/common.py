"""What every command module shares: consoles, the arena home, error handling, env lookup,
tables that fit the terminal and `--json` output.

For a new command module:

* raise `agent_world.errors.AgentWorldError` (or `UsageError` here for a bad option value):
  the CLI prints one `error: ...` line and exits 1 (2 for usage errors), never a traceback;
* `fit_table(title, columns, numeric=..., keep=..., wrap=...)` gives a table that fits the
  terminal (80 columns in a pipe): numeric and `keep` columns (names) keep their full width,
  other text columns are cut with `…` (or wrapped, for `wrap` columns); add rows with
  `add_row(...)` and `console.print(table)`;
* `as_json: JsonOption = False` as a parameter and `print_json(data)` for `--json`;
* `escape(...)` (rich.markup) anything that came from a user, a source or the catalog before
  putting it inside markup.
"""

from __future__ import annotations

import difflib
import importlib
import json
import re
import sys
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Annotated, Any, ClassVar

import typer
from rich import box
from rich.console import Console
from rich.markup import escape
from rich.padding import Padding
from rich.segment import Segment
from rich.table import Table
from rich.text import Text
from typer.core import TyperCommand, TyperGroup

from agent_world.config import resolve_home
from agent_world.envs.catalog import Catalog
from agent_world.envs.examples import example_names, load_example
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError, SpecError

try:  # Typer ships its own copy of Click; its exceptions are the ones raised
    from typer._click import exceptions as cx
except ImportError:  # pragma: no cover - Typer on the installed Click
    from click import exceptions as cx

# escape sequences (CSI, OSC, DCS/PM/APC strings, two-character ones), then any other C0/C1
# control character but newline and tab
_CONTROL = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x9b[0-?]*[ -/]*[@-~]"
                      r"|[\x1b\x9d\x90\x9e\x9f][\]PX^_]?.*?(?:\x07|\x1b\\|\x9c)"
                      r"|\x1b[ -/]*[0-~]|[\x00-\x08\x0b-\x1f\x7f-\x9f]", re.S)


def strip_control(text: str) -> str:
    """`text` without terminal control sequences: names, descriptions and rows come from
    sources and tool code, and an escape sequence in them would drive the user's terminal
    (retitle it, clear it, rewrite earlier lines, plant hyperlinks)."""
    return _CONTROL.sub("", text) if not text.isprintable() else text


class SafeConsole(Console):
    """A Rich console that prints text without control sequences. Strings are cleaned before
    markup and highlighting (which would split a sequence over segments); anything else at
    segment level, where the styles and cursor moves Rich adds itself are separate control
    segments and pass. Rich has no public segment hook, hence `_render_buffer` (a test pins
    its presence)."""

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(strip_control(text), **kwargs)

    def _render_buffer(self, buffer: Iterable[Segment]) -> str:
        return super()._render_buffer(
            seg if seg.control else Segment(strip_control(seg.text), seg.style)
            for seg in buffer)


console = SafeConsole()
err_console = SafeConsole(stderr=True, soft_wrap=True)

JsonOption = Annotated[bool, typer.Option("--json", help="Machine-readable output (JSON).")]
# where a stage's per-source / per-environment work runs (agent_world.scaleout)
WorkersOption = Annotated[int | None, typer.Option(
    min=1, help="Processes for the per-source/per-environment work (default: "
                "$AGENT_WORLD_WORKERS, else one per core; 1: in this process).")]
RayOption = Annotated[str | None, typer.Option(
    "--ray", metavar="ADDRESS",
    help="Run that work as Ray tasks on this cluster instead: auto, ray://HOST:10001, or local "
         "(starts one here); needs the `scale` extra.")]


class UsageError(AgentWorldError):
    """A command-line option or argument the user can fix (exit code 2)."""


def fail(message: str, code: int = 1) -> None:
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False)
    raise typer.Exit(code)


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """" (did you mean 'x'?)" for the closest known name, or ""."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


class Group(TyperGroup):
    """One-line errors: the project's own errors (exit 1), usage mistakes (exit 2, with the
    closest command name), and the OS refusing (full disk, permissions): never a traceback."""

    def resolve_command(self, ctx: typer.Context, args: list[str]) -> Any:
        name = args[0] if args else ""
        if name and not name.startswith("-") and self.get_command(ctx, name) is None:
            raise cx.UsageError(f"no command {name!r}"
                                   f"{did_you_mean(name, self.list_commands(ctx))}", ctx)
        return super().resolve_command(ctx, args)

    def main(self, *args: Any, **kwargs: Any) -> Any:
        kwargs["standalone_mode"] = False
        try:
            rv = super().main(*args, **kwargs)
        except typer.Exit as exc:
            sys.exit(exc.exit_code)
        except typer.Abort:
            err_console.print("aborted")
            sys.exit(130)
        except cx.NoArgsIsHelpError as exc:
            console.print(exc.ctx.get_help() if exc.ctx else exc.format_message(),
                          highlight=False, markup=False)
            sys.exit(0)
        except cx.ClickException as exc:
            where = f" (see: {exc.ctx.command_path} --help)" if getattr(exc, "ctx", None) else ""
            err_console.print(f"[bold red]error:[/] {escape(exc.format_message())}"
                              f"{escape(where)}", highlight=False)
            sys.exit(exc.exit_code)
        if isinstance(rv, int) and rv:  # a command returning an exit code (standalone_mode)
            sys.exit(rv)
        return rv

    def invoke(self, ctx: typer.Context) -> Any:
        try:
            return super().invoke(ctx)
        except UsageError as exc:
            fail(str(exc), 2)
        except AgentWorldError as exc:
            fail(str(exc))
        except OSError as exc:  # disk full, permission denied, ...: the OS's reason, one line
            fail(f"{exc.strerror or exc}" + (f": {exc.filename}" if exc.filename else ""))


class LazyGroup(Group):
    """The root group: `lazy` names each command's `module:attribute` (a function or a Typer
    sub-app) and the short help the root help lists, and a command's module is imported only
    when that command runs or shows its own help, so a command never imports another stage's
    dependencies (a test holds the short help to the command's own)."""

    lazy: ClassVar[dict[str, tuple[str, str]]] = {}
    _listing = False

    def list_commands(self, ctx: typer.Context) -> list[str]:
        eager = [n for n in super().list_commands(ctx) if n not in self.lazy]
        return [*self.lazy, *eager]

    def get_command(self, ctx: typer.Context, cmd_name: str) -> Any:
        if cmd_name in self.commands or cmd_name not in self.lazy:
            return super().get_command(ctx, cmd_name)
        target, short_help = self.lazy[cmd_name]
        if self._listing:  # the root help needs the name and a line, not the module
            return TyperCommand(name=cmd_name, short_help=short_help)
        self.add_command(load_command(target, cmd_name), cmd_name)
        return self.commands[cmd_name]

    def format_help(self, ctx: typer.Context, formatter: Any) -> None:
        self._listing = True
        try:
            super().format_help(ctx, formatter)
        finally:
            self._listing = False


def load_command(target: str, name: str) -> Any:
    """The Click command behind `module:attribute`: a Typer sub-app as its group, a function
    as a command of that name."""
    module, attribute = target.split(":")
    obj = getattr(importlib.import_module(module), attribute)
    if isinstance(obj, typer.Typer):
        return typer.main.get_group(obj)
    one = typer.Typer(rich_markup_mode="markdown")
    one.command(name)(obj)
    return typer.main.get_command(one)


class State:
    home: Path | None = None

    def set_home(self, home: Path | None) -> None:
        self.home = resolve_home(home)  # an unusable home is one error line (AgentWorldError)

    def resolve(self) -> Path:
        if self.home is None:
            self.set_home(None)
        assert self.home is not None
        return self.home

    def catalog(self, seed_examples: bool = True):  # noqa: ANN201 - lazy: keeps --help fast

        home = self.resolve()
        cat = Catalog.open(home)
        marker = home / ".examples-stored"
        if seed_examples and not marker.exists():
            # the bundled examples are there to try in a new home (once: `env rm` sticks)
            for name in example_names():
                if not cat.has_env(name):
                    cat.put_env(load_example(name), stage="example")
            marker.touch()
        return cat


state = State()


def print_json(data: Any) -> None:
    """`--json` output: one JSON document on stdout (dates and paths as strings)."""
    sys.stdout.write(json.dumps(data, indent=2, default=str) + "\n")


def _width(cell: str) -> int:
    return max((Text.from_markup(line).cell_len for line in cell.split("\n")), default=0)


def print_entries(title: str, entries: Iterable[tuple[str, str]]) -> None:
    """Records whose fields do not fit 80 columns side by side (ids, sources, reasons): each is
    a head line of short fields, then its long text indented and wrapped, nothing cut. Both
    are markup (escape what came from outside)."""
    console.print(f"[bold]{title}[/]", highlight=False)
    for head, body in entries:
        console.print(head, highlight=False)
        if body:
            console.print(Padding(body, (0, 0, 0, 4)), highlight=False)


def fit_table(title: str | None, columns: Sequence[str], numeric: Iterable[str] = (),
              wrap: Iterable[str] = (), keep: Iterable[str] = ()) -> FitTable:
    """A table that fits the console: add rows, then print it. Numeric columns (right
    aligned) and `keep` columns (names a user types) are never cut; the other text columns
    share the rest (cut with … or, for `wrap` columns, wrapped)."""
    return FitTable(title, list(columns), set(numeric), set(wrap), set(keep))


class FitTable:
    def __init__(self, title: str | None, columns: list[str], numeric: set[str],
                 wrap: set[str], keep: set[str]):
        self.title, self.columns, self.numeric, self.wrap = title, columns, numeric, wrap
        self.keep = keep | numeric
        self.rows: list[list[str]] = []

    def add_row(self, *cells: Any) -> None:
        self.rows.append([str(c) for c in cells])

    @property
    def row_count(self) -> int:
        return len(self.rows)

    def __rich__(self) -> Table:
        return self.render(console.width)

    def render(self, width: int) -> Table:
        natural = [max([_width(c), *(_width(r[i]) for r in self.rows)])
                   for i, c in enumerate(self.columns)]
        overhead = 3 * len(self.columns)  # padding and separators
        fixed = sum(w for w, c in zip(natural, self.columns, strict=True) if c in self.keep)
        text = [i for i, c in enumerate(self.columns) if c not in self.keep]
        room = max(4 * len(text), width - overhead - fixed)
        widths = list(natural)
        # water-fill: cap the widest text columns until the text columns fit the room
        cap = max((natural[i] for i in text), default=0)
        while text and sum(min(natural[i], cap) for i in text) > room and cap > 4:
            cap -= 1
        for i in text:
            widths[i] = min(natural[i], cap)
        table = Table(title=self.title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False,
                      title_justify="left")
        for i, col in enumerate(self.columns):
            kept = col in self.keep
            table.add_column(col, justify="right" if col in self.numeric else "left",
                             width=widths[i], no_wrap=col not in self.wrap,
                             overflow="fold" if col in self.wrap else "ellipsis",
                             min_width=widths[i] if kept else None)
        for r in self.rows:
            table.add_row(*r)
        return table

def resolve_env(ref: str):  # noqa: ANN201
    """An environment by catalog name, JSON file path, or bundled example name."""
    path = Path(ref)
    if path.suffix == ".json" or path.exists():
        if not path.exists():
            raise SpecError(f"{ref}: no such file")
        return EnvSpec.load(path)
    return state.catalog().get_env(ref)


def print_observations(observations: list[Any]) -> None:
    for o in observations:
        head = f"[bold]#{o.step} {escape(o.tool)}[/]({escape(json.dumps(o.arguments))})"
        if o.ok:
            text = o.to_text()  # plain-text results stay text
            text = f"{text[:400]}{'…' if len(text) > 400 else ''}"
            console.print(f"{head} → [green]ok[/] {escape(text)}", highlight=False)
        else:
            console.print(f"{head} → [red]{escape(o.error.kind)}[/] ({o.error.fault} fault): "
                          f"{escape(o.error.message)}", highlight=False)


def print_diff(diff: Any) -> None:
    table = fit_table("State diff since reset", ["table", "inserted", "updated", "deleted"],
                      numeric={"inserted", "updated", "deleted"})
    for name, c in diff.counts().items():
        table.add_row(escape(name), f"{c['inserted']:,}", f"{c['updated']:,}",
                      f"{c['deleted']:,}")
    if diff.empty:
        table.add_row("(no changes)", "", "", "")
    console.print(table)
