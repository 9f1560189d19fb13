"""Stage 3, tasks: the task and trajectory records, tool-dependency graphs, walks, the check,
trust gates, and their synthesis (`tasks.synthesis`)."""

from agent_world.tasks.model import Difficulty, GateResult, Step, Task, ToolCall, Trajectory

__all__ = ["Difficulty", "GateResult", "Step", "Task", "ToolCall", "Trajectory"]
