"""Tasks: the task and trajectory records, tool-dependency graphs, walks and programs, the check.
Their synthesis (drafting, phrasing, the trust gates, the ReAct verifier) is `agent_world.synthesis`,
which sits above the rollout it verifies with."""

from agent_world.tasks.model import Difficulty, GateResult, Step, Task, ToolCall, Trajectory

__all__ = ["Difficulty", "GateResult", "Step", "Task", "ToolCall", "Trajectory"]
