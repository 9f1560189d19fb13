"""Small, fully checkable task families over the bundled examples ("drills").

Each drill is one real tool call on one entity of an example database, phrased as an
instruction, with the gold chain and the state change it must leave (checked by the one task
check, `agent_world.tasks.check`). They give training code a task set that needs no synthesis
run: the learning check, the SFT warm start, benchmarks and `agent-world train --drills`.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.examples import load_example
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import episode_changes, mask_volatile
from agent_world.tasks.model import Difficulty, Task, ToolCall


@dataclass(frozen=True)
class Drill:
    env: str
    tool: str
    table: str  # entities come from this table's seed rows
    key: str  # ... this column, passed as this argument
    argument: str
    instruction: str  # "{value}" is replaced
    view: tuple[str, ...]  # the tools the agent sees
    answer_field: str | None = None  # the reference answer: this field of the call's result


DRILLS = {
    "cancel": Drill("airline", "cancel_reservation", "reservations", "reservation_id",
                    "reservation_id", "Cancel reservation {value}.",
                    ("cancel_reservation", "get_reservation", "check_in")),
    "lookup": Drill("airline", "get_reservation", "reservations", "reservation_id",
                    "reservation_id", "Show reservation {value}.",
                    ("cancel_reservation", "get_reservation", "check_in"), answer_field="status"),
    "check_in": Drill("airline", "check_in", "reservations", "reservation_id", "reservation_id",
                      "Check in reservation {value}.",
                      ("cancel_reservation", "get_reservation", "check_in")),
}


ROOMS = ("kitchen", "bedroom", "bathroom", "garage", "office", "hallway", "attic", "cellar")

_SWITCH_SOURCE = """def {name}(ctx, room):
    if ctx.one("SELECT room FROM lights WHERE room = ?", (room,)) is None:
        raise ToolError(f"no light in the {{room}}")
    ctx.execute("UPDATE lights SET is_on = ?, switches = switches + 1 WHERE room = ?",
                ({value}, room))
    return {{"room": room, "on": {value} == 1}}
"""


def switchboard_spec() -> EnvSpec:
    """A very small home-automation environment: one light per room, two write tools. Its
    tasks are short enough for a tiny policy to learn in a few hundred CPU steps."""
    room = {"type": "string", "enum": list(ROOMS), "description": "The room."}
    params = {"type": "object", "properties": {"room": room}, "required": ["room"],
              "additionalProperties": False}
    return EnvSpec.model_validate({
        "name": "switchboard",
        "theme": {"name": "Home lights", "description": "Lights of a house, one per room.",
                  "taxonomy": {"l1": "Smart Home", "l2": "Lighting", "l3": "switchboard"}},
        "clock_start": "2026-03-01T08:00:00",
        "tables": [{"name": "lights", "columns": [
            {"name": "room", "type": "text", "primary_key": True},
            {"name": "is_on", "type": "integer", "nullable": False, "default": 0},
            {"name": "switches", "type": "integer", "nullable": False, "default": 0}]}],
        "rows": {"lights": [{"room": r, "is_on": 0, "switches": 0} for r in ROOMS]},
        "tools": [{"name": name, "description": f"Switch the light of a room {word}.",
                   "mutates": True, "parameters": params,
                   "source": _SWITCH_SOURCE.format(name=name, value=value)}
                  for name, word, value in (("turn_on", "on", 1), ("turn_off", "off", 0))],
    })


def switch_tasks(runtime: EnvRuntime | None = None) -> list[Task]:
    """"Turn on/off the ROOM light." for every room: 16 tasks, each checked on the state."""
    spec = switchboard_spec()
    own = runtime is None
    runtime = runtime or EnvRuntime()
    tasks = []
    try:
        for r in ROOMS:
            for tool, word in (("turn_on", "on"), ("turn_off", "off")):
                chain = [ToolCall(tool=tool, arguments={"room": r})]
                tasks.append(Task(
                    kind="graph", env_name=spec.name, env_fingerprint=spec.fingerprint,
                    instruction=f"Turn {word} the {r} light.",
                    tool_view={"turn_on": "turn_on", "turn_off": "turn_off"}, chain=chain,
                    expected_changes=expected_changes(runtime, spec, chain),
                    difficulty=Difficulty(chain_length=1, distractors=1),
                    origin={"drill": "switch"}).with_id())
    finally:
        if own:
            runtime.close()
    return tasks


def expected_changes(runtime: EnvRuntime, spec: EnvSpec, chain: list[ToolCall],
                     seed: int = 0) -> dict | None:
    """The changes the chain makes; step-dependent values (ids, clock) as wildcards. None if
    a call of the chain fails."""
    runs = []
    for offset in (0, 1):
        with runtime.open(spec, seed=seed) as ep:
            for _ in range(offset):  # shift the step counter: the clock and ids move with it
                ep.step("", {})
            for call in chain:
                if not ep.step(call.tool, call.arguments).ok:
                    return None
            runs.append(episode_changes(ep))
    return mask_volatile(runs[0], runs[1])


def drill_tasks(name: str, limit: int | None = None, runtime: EnvRuntime | None = None,
                spec: EnvSpec | None = None) -> list[Task]:
    """Tasks of one drill, one per entity whose call succeeds on the seed state."""
    drill = DRILLS[name]
    spec = spec or load_example(drill.env)
    own = runtime is None
    runtime = runtime or EnvRuntime()
    tasks: list[Task] = []
    try:
        fp = spec.fingerprint
        for row in spec.rows[drill.table]:
            value = row[drill.key]
            chain = [ToolCall(tool=drill.tool, arguments={drill.argument: value})]
            changes = expected_changes(runtime, spec, chain)
            if changes is None:
                continue
            answer = None
            if drill.answer_field:
                with runtime.open(spec) as ep:
                    answer = ep.step(drill.tool, chain[0].arguments).result[drill.answer_field]
            tasks.append(Task(
                kind="graph", env_name=spec.name, env_fingerprint=fp,
                instruction=drill.instruction.format(value=value),
                tool_view={t: t for t in drill.view}, chain=chain, expected_changes=changes,
                reference_answer=answer,
                rubric=[f"calls {drill.tool} for {value}"],
                difficulty=Difficulty(chain_length=1, distractors=len(drill.view) - 1),
                origin={"drill": name}).with_id())
            if limit is not None and len(tasks) >= limit:
                break
    finally:
        if own:
            runtime.close()
    return tasks


__all__ = ["DRILLS", "Drill", "ROOMS", "drill_tasks", "expected_changes",
           "switch_tasks", "switchboard_spec"]
