"""One attempt at a task in a fresh episode, driven by another library's tool calls.

    attempt = TaskAttempt.open(task, spec, runtime)
    attempt.call("get_reservation", {"reservation_id": "MGX7Q2"})  # observation text
    trajectory = attempt.finish("<answer>cancelled</answer>")        # checked and scored
    attempt.close()

Calls go through the task's tool view (the names the agent sees; others are `unknown_tool`
error observations), each step is recorded like the arena's own rollouts do
(`rollout.engine.observe_call`), and `finish` scores the final state with the arena's reward
(`rollout.reward.score`: the one task check, minus the format penalty). Adapters for TRL and
verifiers hold one of these per rollout; none of them re-implements episodes or checks.
"""

from __future__ import annotations

import threading
from typing import Any

from agent_world.envs.episode import EnvRuntime, Episode
from agent_world.envs.spec import EnvSpec
from agent_world.rollout.engine import observation_text, observe_call
from agent_world.rollout.reward import score
from agent_world.rollout.toolcall import parse_reply, tool_views
from agent_world.tasks.model import Step, Task, Trajectory


class TaskAttempt:
    """The arena side of one rollout: task, episode, the steps so far."""

    def __init__(self, task: Task, spec: EnvSpec, episode: Episode, policy: str = "external"):
        self.task = task
        self.spec = spec
        self.episode = episode
        self.visible = [t["name"] for t in tool_views(task, spec)]
        self.trajectory = Trajectory(task_id=task.id, policy=policy)
        self.scored = False
        self._lock = threading.Lock()

    @classmethod
    def open(cls, task: Task, spec: EnvSpec, runtime: EnvRuntime,
             policy: str = "external") -> TaskAttempt:
        return cls(task, spec, runtime.open(spec, seed=task.seed), policy)

    def call(self, name: str, arguments: Any) -> str:
        """Run one tool call (by the name the agent sees); the observation as text."""
        with self._lock:
            step = observe_call(self.episode, self.task, self.visible, name, arguments)
            self.trajectory.steps.append(step)
            if step.fault == "environment":
                self.trajectory.env_fault = True
            return observation_text(step, self.task)

    def malformed(self, name: str | None, error: str) -> str:
        """Record a call the library could not read (bad JSON arguments): an agent fault that
        costs the format penalty, as in the arena's own rollouts."""
        step = Step(tool=name, ok=False, error_kind="malformed_tool_call", error_message=error,
                    fault="agent")
        with self._lock:
            self.trajectory.steps.append(step)
        return observation_text(step, self.task)

    def finish(self, final_text: str | None) -> Trajectory:
        """Score the attempt once: `final_text` is the agent's last message (None or a text
        that still asks for a call: no answer). Later calls return the same trajectory."""
        with self._lock:
            if not self.scored:
                if final_text is not None and final_text.strip():
                    parsed = parse_reply(final_text)
                    if parsed.kind == "answer":
                        self.trajectory.final_answer = parsed.answer
                        self.trajectory.finished = True
                self.trajectory.meta["turns"] = len(self.trajectory.steps)
                score(self.task, self.trajectory, self.episode)
                self.scored = True
            return self.trajectory

    def close(self) -> None:
        self.episode.close()


__all__ = ["TaskAttempt"]
