"""Arena episodes behind OpenRLHF 0.11's agent interface (`--train.agent_func_path`).

An exported directory (`agent-world export openrlhf DIR`) holds `agent.py`, which defines the
module-level `AgentExecutor` (a `MultiTurnAgentExecutor` over an `AgentInstance`) that OpenRLHF
loads in each vLLM rollout actor. Each instance is one arena episode:

- `reset({"observation": prompt, "label": label})`: the label is the task as JSON; a fresh
  episode of its environment (from DIR/envs/) is opened;
- `step({"action_text": ...})`: the model's text is parsed like in the embedded trainer
  (`toolcall.parse_reply`), a call runs on the episode and its observation comes back as
  `environment_feedback` in the chat template's tool turn; an answer (or the turn limit) ends
  the episode with the arena reward (`reward.score`, the one task check) in `rewards`.

Rewards, parsing and episodes are the arena's own; this module only adapts them.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from agent_world.envs.episode import EnvRuntime, Episode
from agent_world.envs.spec import EnvSpec
from agent_world.rollout.engine import RolloutConfig, observation_text, observe_reply, turn_limit
from agent_world.rollout.reward import score
from agent_world.rollout.toolcall import system_prompt, tool_views
from agent_world.tasks.model import Task, Trajectory

# ChatML: the template of SmolLM2 and Qwen models. vLLM's token ids of a finished turn end
# with the end-of-turn token (its text does not), so feedback opens with the newline after it.
TURN_PROMPT = "<|im_start|>system\n{system}<|im_end|>\n<|im_start|>user\n{user}<|im_end|>\n" \
              "<|im_start|>assistant\n"
TOOL_TURN = "\n<|im_start|>tool\n{observation}<|im_end|>\n<|im_start|>assistant\n"


def render_prompt(task: Task, spec: EnvSpec, compact: bool = False) -> str:
    return TURN_PROMPT.format(system=system_prompt(task, spec, compact=compact),
                              user=task.instruction)


class _Arena:
    """Specs and one runtime per process (rollout actors run many instances at once)."""

    _lock = threading.Lock()
    _runtimes: dict[str, EnvRuntime] = {}
    _specs: dict[str, EnvSpec] = {}

    @classmethod
    def runtime(cls, export_dir: Path) -> EnvRuntime:
        with cls._lock:
            key = str(export_dir)
            if key not in cls._runtimes:
                cls._runtimes[key] = EnvRuntime(workers=2)
            return cls._runtimes[key]

    @classmethod
    def spec(cls, export_dir: Path, fingerprint: str) -> EnvSpec:
        with cls._lock:
            if fingerprint not in cls._specs:
                cls._specs[fingerprint] = EnvSpec.load(export_dir / "envs" / f"{fingerprint}.json")
            return cls._specs[fingerprint]


class ArenaEpisode:
    """The state of one agent instance: task, episode, steps so far."""

    def __init__(self, export_dir: str | Path, max_turns: int | None = None):
        self.export_dir = Path(export_dir)
        settings = json.loads((self.export_dir / "settings.json").read_text())
        self.max_turns = max_turns or settings.get("max_turns", RolloutConfig().max_turns)
        self.task: Task | None = None
        self.episode: Episode | None = None
        self.trajectory: Trajectory | None = None

    async def reset(self, states: dict[str, Any]) -> dict[str, Any]:
        label = states["label"]
        data = json.loads(label) if isinstance(label, str) else label
        self.task = Task.model_validate(data["task"])
        spec = _Arena.spec(self.export_dir, self.task.env_fingerprint)
        runtime = _Arena.runtime(self.export_dir)
        self.episode = await asyncio.to_thread(runtime.open, spec, self.task.seed)
        self.trajectory = Trajectory(task_id=self.task.id, policy="openrlhf")
        return {"observation": states["observation"]}

    async def step(self, states: dict[str, Any]) -> dict[str, Any]:
        import torch  # torch loads in OpenRLHF's rollout actor, not when an export is written

        assert self.task and self.episode and self.trajectory, "step before reset"
        text = states["action_text"]
        spec = _Arena.spec(self.export_dir, self.task.env_fingerprint)
        visible = [t["name"] for t in tool_views(self.task, spec)]
        step = await asyncio.to_thread(observe_reply, self.episode, self.task, visible, text)
        self.trajectory.steps.append(step)
        answered = step.tool is None and step.error_kind is None
        if answered:
            self.trajectory.final_answer, self.trajectory.finished = step.result, True
        done = answered or len(self.trajectory.steps) >= turn_limit(self.task, self.max_turns) \
            or step.fault == "environment"
        reward = 0.0
        feedback = "" if answered else \
            TOOL_TURN.format(observation=observation_text(step, self.task))
        if done:
            await asyncio.to_thread(score, self.task, self.trajectory, self.episode)
            reward = self.trajectory.reward
            self.episode.close()
            feedback = ""
        logs = {k: torch.tensor(v) for k, v in self.trajectory.reward_components.items()}
        return {"rewards": torch.tensor(reward), "scores": torch.tensor(reward),
                "environment_feedback": feedback, "done": done, "sampling_params":
                states.get("sampling_params"), "extra_logs": logs if done else {}}


__all__ = ["ArenaEpisode", "TOOL_TURN", "TURN_PROMPT", "render_prompt"]
