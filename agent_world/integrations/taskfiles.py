"""Where an adapter's tasks come from, and the task files an export writes.

An export directory holds `tasks.jsonl` (one Task JSON per line) and `envs/<fingerprint>.json`
(the EnvSpec of every environment the tasks run in), so a peer library loads it without the
arena's catalog. `resolve_tasks` accepts such a directory, a tasks JSONL file, a drill
(`drill:cancel`) or a list of tasks.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from pydantic import ValidationError

from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.rollout.engine import spec_index
from agent_world.tasks.model import Task
from agent_world.training.drills import DRILLS, drill_tasks

TaskSource = str | Path | Sequence[Task]


def write_tasks(tasks: Sequence[Task], specs: Mapping[str, EnvSpec], out: str | Path) -> Path:
    """Write `tasks.jsonl` and `envs/` into `out`; returns the directory."""
    out = Path(out)
    (out / "envs").mkdir(parents=True, exist_ok=True)
    for fp in sorted({t.env_fingerprint for t in tasks}):
        (out / "envs" / f"{fp}.json").write_text(specs[fp].model_dump_json())
    (out / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    return out


def read_jsonl_tasks(path: Path) -> list[Task]:
    tasks = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            tasks.append(Task.model_validate_json(line))
        except ValidationError as exc:
            raise AgentWorldError(f"{path}:{n}: not a task ({exc.errors()[0]['msg']})") from None
    return tasks


def resolve_tasks(source: TaskSource, specs: Iterable[EnvSpec] = (),
                  limit: int | None = None) -> tuple[list[Task], dict[str, EnvSpec]]:
    """(tasks, fingerprint -> EnvSpec) from an export directory, a JSONL file, `drill:NAME`
    or a list of tasks; environments from `specs`, the export's `envs/`, then the bundled
    examples. A clear `AgentWorldError` when there are no tasks or an environment is missing."""
    given = list(specs)
    if isinstance(source, str | Path):
        text = str(source)
        if text.startswith("drill:"):
            name = text.removeprefix("drill:")
            if name not in DRILLS:
                raise AgentWorldError(f"unknown drill {name!r}; drills: {', '.join(DRILLS)}")
            tasks = drill_tasks(name, limit=limit)
        else:
            path = Path(source)
            if path.is_dir():
                if not (path / "tasks.jsonl").is_file():
                    raise AgentWorldError(f"{path}: no tasks.jsonl (not an export directory)")
                given += [EnvSpec.load(p) for p in sorted((path / "envs").glob("*.json"))]
                path = path / "tasks.jsonl"
            elif not path.is_file():
                raise AgentWorldError(f"{path}: no such file or directory")
            tasks = read_jsonl_tasks(path)
    else:
        tasks = list(source)
    if limit is not None:
        tasks = tasks[:limit]
    if not tasks:
        raise AgentWorldError(f"no tasks in {source if isinstance(source, str | Path) else 'the list'}")
    return tasks, spec_index(tasks, given)


__all__ = ["TaskSource", "read_jsonl_tasks", "resolve_tasks", "write_tasks"]
