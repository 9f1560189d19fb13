"""Gold chains with a write aimed at another record: the wrong solution a state check must
catch. A write's selecting argument (an id, a code; identifiers first, so "ny" for "NY" is not
taken for another state) is changed to another stored value the write accepts, after the gold
calls before it. The known-wrong gate fails a task any of them passes; the shortcut suite
scores the first."""

from __future__ import annotations

from collections.abc import Iterator

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.tasks.check import is_identifier, normalise, selecting_arguments
from agent_world.tasks.model import Task, ToolCall
from agent_world.tasks.sampling import ValueSampler

TRIES = 8  # other values tried per argument before it is given up


def _accepted(task: Task, spec: EnvSpec, runtime: EnvRuntime, i: int, moved: ToolCall) -> bool:
    ep = runtime.open(spec, seed=task.seed)
    try:
        return all(ep.step(c.tool, c.arguments).ok for c in task.chain[:i]) and \
            ep.step(moved.tool, moved.arguments).ok
    finally:
        ep.close()


def retargeted(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> Iterator[tuple[int, ToolCall,
                                                                                   list[ToolCall]]]:
    """(index, moved call, chain) for each write of the gold chain that another record
    accepts: the first such value of its first selecting argument that has one."""
    sampler = None  # built at the first write: most chains are reads
    for i, call in enumerate(task.chain):
        if not spec.tool(call.tool).mutates:
            continue
        sampler = sampler or ValueSampler(spec)
        keys = sorted(selecting_arguments(call, spec).items(),
                      key=lambda kv: not is_identifier(kv[0]))
        props = spec.tool(call.tool).parameters.get("properties", {})
        moved = None
        for param, gold in keys:
            others = [v for v in sampler.candidates(call.tool, param, props.get(param, {}))
                      if normalise(v) != normalise(gold)]
            moved = next((m for m in (ToolCall(tool=call.tool, arguments={**call.arguments,
                                                                            param: v})
                                      for v in others[:TRIES])
                          if _accepted(task, spec, runtime, i, m)), None)
            if moved is not None:
                break
        if moved is not None:
            yield i, moved, [*task.chain[:i], moved, *task.chain[i + 1:]]


__all__ = ["retargeted"]
