"""Arena tasks through TRL's own tool-calling path: `GRPOTrainer(environment_factory=...)` on a
tiny randomly initialised model (CPU, a few steps), from an `agent-world export trl` directory."""

from __future__ import annotations

import ast
import importlib.util
import inspect
import json
import os
import sys

import pytest

pytest.importorskip("trl", reason="TRL is not installed: pip install -e .[bench]")
pytestmark = pytest.mark.integration


@pytest.fixture
def one_thread():
    """One torch thread: on a loaded 2-core machine two threads of tiny ops wait on each
    other (about 18x slower here)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def _load_module(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _memorised_policy(setup, answers):
    """A tiny model that has memorised the gold conversation of every row (rendered by the
    chat template TRL uses, tools included), so TRL's rollouts really call tools."""
    import torch
    from trl.chat_template_utils import (
        get_training_chat_template,
        is_chat_template_prefix_preserving,
        qwen2_5_chat_template,
    )

    from agent_world.training.lm import tiny_model, tiny_tokenizer

    cls = setup.environment_factory
    probe = cls()
    tools = [getattr(probe, n) for n, _ in inspect.getmembers(cls, inspect.isfunction)
             if not n.startswith("_") and n != "reset"]
    conversations = []
    for row in setup.rows:
        task = cls._tasks[row["task_id"]]
        call = task.chain[0]
        probe.reset(**row)
        observation = getattr(probe, call.tool)(**call.arguments)
        conversations.append(row["prompt"] + [
            {"role": "assistant", "content": "", "tool_calls": [
                {"type": "function", "function": {"name": call.tool, "arguments": call.arguments}}]},
            {"role": "tool", "name": call.tool, "content": observation},
            {"role": "assistant", "content": answers[row["task_id"]]}])
    probe._close()
    draft = tiny_tokenizer(["x"])
    draft.chat_template = qwen2_5_chat_template
    template = None if is_chat_template_prefix_preserving(draft) \
        else get_training_chat_template(draft)
    texts = [draft.apply_chat_template(c, tools=tools, tokenize=False, chat_template=template)
             for c in conversations]
    tok = tiny_tokenizer(texts, vocab_size=600)
    tok.chat_template = qwen2_5_chat_template
    model = tiny_model(tok, seed=0, hidden=64, layers=2, max_positions=4096)
    batch = [torch.tensor(tok(t, add_special_tokens=False)["input_ids"]) for t in texts]
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    for _ in range(200):
        loss = sum(model(input_ids=b[None], labels=b[None]).loss for b in batch) / len(batch)
        opt.zero_grad()
        loss.backward()
        opt.step()
        if loss.item() < 0.05:
            break
    return model, tok


def test_export_trl_writes_the_module_trl_loads(tmp_path):
    from typer.testing import CliRunner

    from agent_world.cli import app
    from agent_world.integrations.trl import ArenaEnvironment, arena_reward
    from agent_world.training.drills import drill_tasks

    tasks = drill_tasks("cancel", limit=3)
    (tmp_path / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    out = tmp_path / "trl_export"
    done = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "export", "trl", str(out),
                                    "--tasks", str(tmp_path / "tasks.jsonl")])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in out.iterdir()) == [
        "arena_trl.py", "dataset.jsonl", "envs", "tasks.jsonl", "train_grpo.py"]
    module = _load_module(out / "arena_trl.py", "arena_trl_export")
    assert module.reward_funcs == [arena_reward]
    cls = module.environment_factory
    assert issubclass(cls, ArenaEnvironment)
    rows = [json.loads(line) for line in (out / "dataset.jsonl").read_text().splitlines()]
    assert rows == module.SETUP.rows == module.load_dataset().to_list()
    assert [r["task_id"] for r in rows] == [t.id for t in tasks]
    # the tools TRL will offer are exactly the task's tool view
    tools = [n for n, _ in inspect.getmembers(cls, inspect.isfunction)
             if not n.startswith("_") and n != "reset"]
    assert tools == sorted(tasks[0].tool_view)
    env = cls()
    env.reset(**rows[0])
    rid = tasks[0].chain[0].arguments["reservation_id"]
    assert json.loads(env.cancel_reservation(reservation_id=rid))["status"] == "cancelled"
    assert env.check_in(reservation_id="??").startswith("Error (invalid_arguments)")
    assert arena_reward([[{"role": "assistant", "content": "Done."}]], [env]) == [1.0]
    env.reset(**rows[0])  # a fresh episode: nothing cancelled yet, so the check fails
    # ... and answering a tool task without a call costs the largest format penalty
    assert arena_reward([[{"role": "assistant", "content": "Done."}]], [env]) == [
        pytest.approx(-0.3)]
    env._close()
    script = (out / "train_grpo.py").read_text()
    ast.parse(script)  # the launch script is valid Python and builds TRL's own trainer
    assert "GRPOTrainer(model=args.model" in script and "environment_factory=" in script


def test_grpo_trainer_drives_arena_episodes_through_trl_tool_calls(tmp_path, one_thread):
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")
    import torch
    from trl import GRPOConfig, GRPOTrainer

    from agent_world.integrations.trl import arena_reward, trl_setup
    from agent_world.tasks.check import check_episode
    from agent_world.training.drills import switch_tasks, switchboard_spec

    torch.manual_seed(0)
    tasks = [t for t in switch_tasks() if t.chain[0].tool == "turn_on"][:2]
    setup = trl_setup(tasks, [switchboard_spec()])
    model, tok = _memorised_policy(setup, {t.id: "Done." for t in tasks})

    args = GRPOConfig(output_dir=str(tmp_path / "run"), max_steps=2, learning_rate=1e-4,
                      per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=96, max_tool_calling_iterations=2,
                      temperature=0.7, logging_steps=1, report_to="none", save_strategy="no",
                      use_cpu=True, bf16=False, seed=0, dataloader_num_workers=0)
    trainer = GRPOTrainer(model=model, processing_class=tok, args=args,
                          train_dataset=setup.dataset(), reward_funcs=setup.reward_funcs,
                          environment_factory=setup.environment_factory)
    trainer.train()

    assert trainer.state.global_step == 2
    logs = [h for h in trainer.state.log_history if "tools/call_frequency" in h]
    assert logs and max(h["tools/call_frequency"] for h in logs) > 0  # TRL parsed + ran calls
    # TRL's rollouts ran in arena episodes: the calls reached the database and the reward is
    # the arena's check of each episode's final state
    envs = [e for e in trainer._environment_pool[None] if e._attempt is not None]
    assert envs
    passed = 0
    for env in envs:
        attempt = env._attempt
        assert attempt.scored
        traj = attempt.trajectory
        check = check_episode(attempt.task, attempt.episode, traj.final_answer)
        assert traj.reward_components["check"] == pytest.approx(check.score)
        if check.passed:
            room = attempt.task.chain[0].arguments["room"]
            assert attempt.episode.query("SELECT is_on FROM lights WHERE room = ?",
                                         (room,)) == [{"is_on": 1}]
            assert any(s.tool == "turn_on" and s.ok for s in traj.steps)
            passed += 1
    assert passed >= 1, [e._attempt.trajectory.model_dump() for e in envs]
    rewards = [h["rewards/arena_reward/mean"] for h in trainer.state.log_history
               if "rewards/arena_reward/mean" in h]
    assert rewards and max(rewards) > 0
    assert setup.reward_funcs == [arena_reward]
    for env in envs:
        env._close()


def test_the_exported_trl_script_trains_on_a_cpu(tmp_path):
    """Was: `python train_grpo.py` stopped at once on a CPU machine (`Your setup doesn't
    support bf16/gpu`: the script left TRL's bf16 default on). Two steps of the exported
    script, as a user runs it, on a tiny model saved to disk, with LoRA adapters (peft)."""
    import subprocess

    from trl.chat_template_utils import qwen2_5_chat_template
    from typer.testing import CliRunner

    from agent_world.cli import app
    from agent_world.training.drills import drill_tasks
    from agent_world.training.lm import tiny_model, tiny_tokenizer

    tasks = drill_tasks("cancel", limit=2)
    (tmp_path / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    out = tmp_path / "trl_export"
    done = CliRunner().invoke(app, ["--home", str(tmp_path / "home"), "export", "trl", str(out),
                                    "--tasks", str(tmp_path / "tasks.jsonl")])
    assert done.exit_code == 0, done.output
    tok = tiny_tokenizer([t.instruction for t in tasks] * 4, vocab_size=400)
    tok.chat_template = qwen2_5_chat_template
    model_dir = tmp_path / "tiny"
    tiny_model(tok, seed=0, hidden=32, layers=1, max_positions=4096).save_pretrained(model_dir)
    tok.save_pretrained(model_dir)
    env = {**os.environ, "TRL_EXPERIMENTAL_SILENCE": "1", "CUDA_VISIBLE_DEVICES": "",
           "OMP_NUM_THREADS": "1"}
    run = subprocess.run(
        [sys.executable, str(out / "train_grpo.py"), "--model", str(model_dir), "--steps", "2",
         "--num-generations", "2", "--batch-size", "2", "--max-completion-length", "24",
         "--max-turns", "1", "--output-dir", str(tmp_path / "run"), "--lora", "--lora-rank", "4"],
        capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    saved = {p.name for p in (tmp_path / "run").iterdir()}
    assert "adapter_config.json" in saved, saved  # the trained adapters were saved
