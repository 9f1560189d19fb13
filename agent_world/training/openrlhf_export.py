"""`agent-world export openrlhf DIR`: everything OpenRLHF (Ray + vLLM + DeepSpeed) needs to
train on arena tasks with GRPO.

DIR/prompts.jsonl    one task per line: "input" (the chat-formatted prompt with the tools) and
                     "label" (the task as JSON: id, instruction, checks)
DIR/envs/FP.json     the environments the tasks run in (EnvSpec JSON, by fingerprint)
DIR/agent.py         module-level AgentExecutor for --train.agent_func_path
DIR/settings.json    turn limit and the other settings the agent file reads
DIR/ds_config.json   DeepSpeed ZeRO config (bf16, gradient clipping 1.0)
DIR/train_grpo.sh    the launch command: group-normalised advantages, n samples per prompt,
                     k3 KL loss, ε = 0.2 clipping
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path

from agent_world.envs.spec import EnvSpec
from agent_world.tasks.model import Task
from agent_world.training.openrlhf_agent import render_prompt

AGENT_FILE = '''"""OpenRLHF agent file of an Agent-World export: arena episodes as agent instances."""

from pathlib import Path

from openrlhf.utils.agent import AgentInstanceBase, MultiTurnAgentExecutor

from agent_world.training.openrlhf_agent import ArenaEpisode

EXPORT_DIR = Path(__file__).resolve().parent


class AgentInstance(AgentInstanceBase):
    def __init__(self, *args, **kwargs):
        self.arena = ArenaEpisode(EXPORT_DIR)

    async def reset(self, states: dict, **kwargs):
        return await self.arena.reset(states)

    async def step(self, states: dict, **kwargs):
        return await self.arena.step(states)


class AgentExecutor(MultiTurnAgentExecutor):
    def __init__(self):
        super().__init__(AgentInstance)
'''


def launch_flags(export_dir: str, model: str, group_size: int, kl_coef: float,
                 max_new_tokens: int, max_len: int, gpus: int,
                 lr: float) -> list[tuple[str, str | None]]:
    """(flag, value) pairs of `python -m openrlhf.cli.train_ppo_ray` (value None: a switch)."""
    return [
        ("--actor.model_name_or_path", model),
        ("--train.agent_func_path", f"{export_dir}/agent.py"),
        ("--data.prompt_dataset", f"{export_dir}/prompts.jsonl"),
        ("--data.input_key", "input"),
        ("--data.label_key", "label"),
        ("--algo.advantage.estimator", "group_norm"),
        ("--rollout.n_samples_per_prompt", str(group_size)),
        ("--algo.kl.use_loss", None),
        ("--algo.kl.estimator", "k3"),
        ("--algo.kl.init_coef", str(kl_coef)),
        ("--actor.eps_clip", "0.2"),
        ("--actor.max_norm", "1.0"),
        ("--actor.adam.lr", str(lr)),
        ("--rollout.max_new_tokens", str(max_new_tokens)),
        ("--data.max_len", str(max_len)),
        ("--rollout.temperature", "1.0"),
        ("--rollout.batch_size", "64"),
        ("--rollout.micro_batch_size", "8"),
        ("--train.batch_size", "64"),
        ("--train.micro_batch_size", "4"),
        ("--train.num_episodes", "1"),
        ("--actor.num_nodes", "1"),
        ("--actor.num_gpus_per_node", str(gpus)),
        ("--ref.num_nodes", "1"),
        ("--ref.num_gpus_per_node", str(gpus)),
        ("--vllm.num_engines", str(gpus)),
        ("--vllm.tensor_parallel_size", "1"),
        ("--train.colocate_all", None),
        ("--vllm.enable_sleep", None),
        ("--ds.enable_sleep", None),
        ("--ds.zero_stage", "2"),
        ("--ds.param_dtype", "bf16"),
        ("--actor.gradient_checkpointing_enable", None),
        ("--ckpt.path", f"{export_dir}/checkpoints"),
        ("--ckpt.output_dir", f"{export_dir}/final"),
        ("--ckpt.save_steps", "20"),
        ("--ckpt.save_hf", None),
    ]


def deepspeed_config(micro_batch: int = 4, grad_accum: int = 16) -> dict:
    return {
        "train_micro_batch_size_per_gpu": micro_batch,
        "gradient_accumulation_steps": grad_accum,
        "gradient_clipping": 1.0,
        "bf16": {"enabled": True},
        "zero_optimization": {"stage": 2, "overlap_comm": True, "contiguous_gradients": True,
                              "reduce_bucket_size": 5e8, "allgather_bucket_size": 5e8},
        "optimizer": {"type": "AdamW", "params": {"lr": 1e-6, "betas": [0.9, 0.95],
                                                  "weight_decay": 0.0}},
        "steps_per_print": 10,
        "wall_clock_breakdown": False,
    }


def export_openrlhf(tasks: list[Task], specs: Mapping[str, EnvSpec], out_dir: str | Path,
                    model: str = "HuggingFaceTB/SmolLM2-135M-Instruct", group_size: int = 8,
                    kl_coef: float = 0.04, max_turns: int = 8, max_new_tokens: int = 256,
                    max_len: int = 4096, gpus: int = 8, lr: float = 1e-6,
                    compact_tools: bool = False) -> Path:
    """Write the export; returns the directory."""
    out = Path(out_dir)
    (out / "envs").mkdir(parents=True, exist_ok=True)
    used = {t.env_fingerprint for t in tasks}
    for fp in sorted(used):
        (out / "envs" / f"{fp}.json").write_text(specs[fp].model_dump_json())
    with (out / "prompts.jsonl").open("w") as f:
        for task in tasks:
            label = {"task_id": task.id, "task": task.model_dump(mode="json")}
            f.write(json.dumps({"input": render_prompt(task, specs[task.env_fingerprint],
                                                       compact=compact_tools),
                                "label": json.dumps(label)}) + "\n")
    (out / "agent.py").write_text(AGENT_FILE)
    (out / "settings.json").write_text(json.dumps({"max_turns": max_turns}, indent=1))
    (out / "ds_config.json").write_text(json.dumps(deepspeed_config(), indent=1))
    flags = launch_flags('"$HERE"', "${MODEL:-" + model + "}", group_size, kl_coef,
                         max_new_tokens, max_len, gpus, lr)
    lines = [f"  {flag}" + ("" if value is None else f" {value}") for flag, value in flags]
    script = "\n".join([
        "#!/usr/bin/env bash",
        "# GRPO on arena tasks with OpenRLHF (Ray + vLLM + DeepSpeed). Needs GPUs, openrlhf,",
        "# vllm and ray installed, and agent_world importable by the Ray workers.",
        "set -euo pipefail",
        'HERE="$(cd "$(dirname "$0")" && pwd)"',
        "ray status >/dev/null 2>&1 || ray start --head",
        "python3 -m openrlhf.cli.train_ppo_ray \\",
        " \\\n".join(lines),
        ""])
    path = out / "train_grpo.sh"
    path.write_text(script)
    path.chmod(0o755)
    return out


def script_arguments(script: str) -> list[str]:
    """The train_ppo_ray arguments of a launch script, shell defaults expanded (tests)."""
    body = script.split("train_ppo_ray", 1)[1].replace("\\\n", " ")
    body = re.sub(r"\$\{(\w+):-([^}]*)\}", r"\2", body).replace('"$HERE"', "/export")
    return shlex.split(body)


__all__ = ["AGENT_FILE", "deepspeed_config", "export_openrlhf", "launch_flags",
           "script_arguments"]
