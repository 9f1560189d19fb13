"""The OpenRLHF export, driven on CPU through OpenRLHF's own agent classes and checked against
the installed OpenRLHF's argument parser."""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

agent_mod = pytest.importorskip("openrlhf.utils.agent",
                                reason="openrlhf not installed (pip install --no-deps openrlhf)")

from agent_world.rollout.engine import spec_index  # noqa: E402
from agent_world.rollout.toolcall import format_call  # noqa: E402
from agent_world.training.drills import drill_tasks  # noqa: E402
from agent_world.training.openrlhf_export import export_openrlhf, script_arguments  # noqa: E402


@pytest.fixture(scope="module")
def export(tmp_path_factory, runtime):
    tasks = drill_tasks("cancel", limit=2, runtime=runtime)
    out = export_openrlhf(tasks, spec_index(tasks), tmp_path_factory.mktemp("orl") / "export",
                          group_size=4, max_turns=3)
    return out, tasks


def _load_agent(path: Path):
    # exactly how OpenRLHF's rollout actor loads --train.agent_func_path
    spec = importlib.util.spec_from_file_location("agent_module", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_dataset_and_files(export):
    out, tasks = export
    rows = [json.loads(line) for line in (out / "prompts.jsonl").read_text().splitlines()]
    assert len(rows) == 2
    label = json.loads(rows[0]["label"])
    assert label["task_id"] == tasks[0].id and label["task"]["instruction"] == tasks[0].instruction
    assert rows[0]["input"].startswith("<|im_start|>system\n") and "cancel_reservation" in \
        rows[0]["input"] and rows[0]["input"].endswith("<|im_start|>assistant\n")
    assert (out / "envs" / f"{tasks[0].env_fingerprint}.json").is_file()
    ds = json.loads((out / "ds_config.json").read_text())
    assert ds["gradient_clipping"] == 1.0 and ds["zero_optimization"]["stage"] == 2


def test_agent_instance_runs_arena_episodes(export):
    out, tasks = export
    module = _load_agent(out / "agent.py")
    assert issubclass(module.AgentExecutor, agent_mod.AgentExecutorBase)
    assert issubclass(module.AgentInstance, agent_mod.AgentInstanceBase)
    module.AgentExecutor()  # OpenRLHF instantiates it without arguments
    row = json.loads((out / "prompts.jsonl").read_text().splitlines()[0])
    rid = tasks[0].chain[0].arguments["reservation_id"]

    async def drive():
        inst = module.AgentInstance()
        reset = await inst.reset({"observation": row["input"], "label": row["label"]})
        assert reset["observation"] == row["input"]
        bad = await inst.step({"action_text": '<tool_call>{"name": oops}</tool_call>'})
        assert not bad["done"] and "malformed_tool_call" in bad["environment_feedback"]
        call = await inst.step({"action_text": format_call("cancel_reservation",
                                                          {"reservation_id": rid})})
        assert not call["done"] and rid in call["environment_feedback"]
        assert call["environment_feedback"].startswith("\n<|im_start|>tool\n")
        end = await inst.step({"action_text": "<answer>cancelled</answer>"})
        return end

    end = asyncio.run(drive())
    assert end["done"] and end["environment_feedback"] == ""
    assert end["rewards"].item() == pytest.approx(0.9)  # state right, one malformed call
    assert end["extra_logs"]["check.state"].item() == 1.0


def test_multi_turn_executor_with_a_scripted_engine(export):
    """OpenRLHF's MultiTurnAgentExecutor itself drives the instance (vLLM stood in by a
    scripted engine): token bookkeeping and the reward come back as OpenRLHF expects."""
    from agent_world.training.lm import tiny_tokenizer

    out, tasks = export
    module = _load_agent(out / "agent.py")
    row = json.loads((out / "prompts.jsonl").read_text().splitlines()[1])
    rid = tasks[1].chain[0].arguments["reservation_id"]
    tok = tiny_tokenizer([row["input"]], vocab_size=300)
    replies = iter([format_call("cancel_reservation", {"reservation_id": rid}),
                    "<answer>done</answer>"])

    class Engine:
        async def generate(self, tokens, params, multi_modal_data=None):
            text = next(replies)
            ids = tok(text, add_special_tokens=False)["input_ids"] + [tok.eos_token_id]
            return SimpleNamespace(outputs=[SimpleNamespace(token_ids=ids, text=text,
                                                            finish_reason="stop",
                                                            logprobs=None)])

    params = SimpleNamespace(max_tokens=64, logprobs=None)
    result = asyncio.run(module.AgentExecutor().execute(
        row["input"], row["label"], params, 4096, tok, Engine()))
    assert result["reward"] == pytest.approx(1.0)
    assert len(result["action_ranges"]) == 2
    first = result["action_ranges"][0]
    assert tok.decode(result["observation_tokens"][first[0]:first[1]],
                      skip_special_tokens=True).startswith("<tool_call>")


def _openrlhf_parser() -> argparse.ArgumentParser:
    """The installed OpenRLHF's train_ppo_ray parser (built in its __main__ block)."""
    source = Path(importlib.util.find_spec("openrlhf.cli.train_ppo_ray").origin).read_text()
    block = source.split('if __name__ == "__main__":', 1)[1]
    block = block.split("args = parser.parse_args()", 1)[0]
    import datetime as _dt
    import os

    scope: dict = {"argparse": argparse, "datetime": _dt.datetime, "os": os}
    exec(textwrap.dedent(block), scope)  # noqa: S102 - the parser construction only
    return scope["parser"]


def test_launch_script_flags_parse_with_openrlhf(export):
    out, _ = export
    script = (out / "train_grpo.sh").read_text()
    argv = script_arguments(script)
    args = _openrlhf_parser().parse_args(argv)
    ns = vars(args)
    assert ns["algo.advantage.estimator"] == "group_norm"
    assert ns["rollout.n_samples_per_prompt"] == 4
    assert ns["algo.kl.use_loss"] and ns["algo.kl.estimator"] == "k3"
    assert ns["actor.eps_clip"] == 0.2 and ns["actor.max_norm"] == 1.0
    assert ns["train.agent_func_path"] == "/export/agent.py"
    with pytest.raises(SystemExit):  # the check is real: a wrong flag is refused
        _openrlhf_parser().parse_args(argv + ["--algo.kl.estimator", "k9"])
