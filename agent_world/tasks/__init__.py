"""Tasks: the task and trajectory records, tool-dependency graphs, walks, checks, trust gates."""

from agent_world.tasks.model import Difficulty, GateResult, Step, Task, ToolCall, Trajectory

__all__ = ["Difficulty", "GateResult", "Step", "Task", "ToolCall", "Trajectory"]
