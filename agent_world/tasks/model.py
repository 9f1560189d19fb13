"""The task and trajectory records every later stage shares.

A **Task** is what a policy trains and is evaluated on: an instruction over one environment
version (by fingerprint), the tools the agent may see (possibly under obscured names), and how
success is checked — a reference answer + rubric + gold tool chain for graph tasks, a Python
solution + verification script for programmatic tasks. A **Trajectory** is one attempt at a
task: every step with its observation, the final answer, and the reward with its components.

Both are Pydantic models and travel as JSON (catalog payloads, JSONL exports, graph state holds
only their ids).
"""

from __future__ import annotations

import hashlib
import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

TaskKind = Literal["graph", "programmatic"]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid")


class ToolCall(_Model):
    """One call by its real tool name (a task's tool view maps it to what the agent sees)."""

    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)


class Difficulty(_Model):
    """What makes a task hard; `level` (1-5) is derived from the reasoning features by the
    synthesizer (`agent_world.tasks.difficulty`); `distractors` and `obscured` are reported
    apart from it."""

    chain_length: int = 1
    branching: int = 0  # calls whose inputs come from more than one earlier call
    aggregation: bool = False  # the answer combines several observations (count, sum, max...)
    distractors: int = 0  # visible tools the solution does not need
    obscured: bool = False  # tool names in the tool view are opaque
    distinct_tools: int = 1  # different tools the gold chain calls
    condition: bool = False  # the request branches on a value the agent observes
    level: int = Field(default=1, ge=1, le=5)


class GateResult(_Model):
    """One trust gate a task passed (or failed) before it was emitted."""

    name: str
    passed: bool
    detail: str = ""


class Task(_Model):
    format: Literal["agent-world/task@1"] = "agent-world/task@1"
    id: str = ""  # content hash; filled by `with_id()`
    kind: TaskKind
    env_name: str
    env_fingerprint: str
    seed: int = 0  # episode seed (deterministic clock and ids)
    instruction: str
    # name the agent sees -> real tool name; only these tools are offered to the agent
    tool_view: dict[str, str] = Field(default_factory=dict)
    # graph tasks: the gold chain, what it should answer, how to judge an answer
    chain: list[ToolCall] = Field(default_factory=list)
    reference_answer: Any = None
    rubric: list[str] = Field(default_factory=list)
    # the state the gold solution leaves (see agent_world.envs state hashing); None: no writes
    expected_state_hash: str | None = None
    # what the gold chain changed, per table (agent_world.tasks.check.state_changes), with
    # step-dependent values (generated ids, clock times) as the wildcard "*"; None: no writes
    expected_changes: dict[str, Any] | None = None
    # programmatic tasks: `solve(env)` and `verify(initial_db, final_db, answer)` sources
    solution: str | None = None
    verify: str | None = None
    difficulty: Difficulty = Field(default_factory=Difficulty)
    pass_rate: float | None = None  # verifier majority estimate
    gates: list[GateResult] = Field(default_factory=list)
    origin: dict[str, Any] = Field(default_factory=dict)  # synthesizer, round, guidelines...

    def content_key(self) -> dict[str, Any]:
        """What identifies a task: environment, instruction and checks (not gates or stats)."""
        data = self.model_dump(mode="json", exclude={"id", "pass_rate", "gates", "origin"})
        data["instruction"] = " ".join(self.instruction.lower().split())
        return data

    def with_id(self) -> Task:
        blob = json.dumps(self.content_key(), sort_keys=True, separators=(",", ":"), default=str)
        return self.model_copy(update={"id": "t" + hashlib.sha256(blob.encode()).hexdigest()[:15]})

    def real_tool(self, visible_name: str) -> str | None:
        """The real tool behind a name the agent used (None: not in the task's view)."""
        if not self.tool_view:
            return visible_name
        return self.tool_view.get(visible_name)


class Step(_Model):
    """One agent turn: what it said, the call it made (by visible name) and what came back."""

    text: str = ""
    tool: str | None = None
    arguments: Any = None
    ok: bool | None = None
    result: Any = None
    error_kind: str | None = None
    error_message: str | None = None
    fault: Literal["agent", "environment"] | None = None


class Trajectory(_Model):
    task_id: str
    policy: str = ""
    steps: list[Step] = Field(default_factory=list)
    final_answer: Any = None
    finished: bool = False  # the agent gave an answer (vs ran out of turns or crashed)
    reward: float = 0.0
    reward_components: dict[str, float] = Field(default_factory=dict)
    env_fault: bool = False  # an environment fault happened: excluded from training batches
    messages: list[dict[str, Any]] = Field(default_factory=list)
    meta: dict[str, Any] = Field(default_factory=dict)

    @property
    def error_kinds(self) -> list[str]:
        return [s.error_kind for s in self.steps if s.error_kind]


__all__ = ["Difficulty", "GateResult", "Step", "Task", "TaskKind", "ToolCall", "Trajectory"]
