"""`agent-world train`, `evaluate` and `export openrlhf` through Typer's runner."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from agent_world.cli import app

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_train_then_evaluate_the_checkpoint(home, tmp_path):
    out = tmp_path / "run"
    result = invoke("train", "--drill", "cancel", "--limit", "2", "--policy", "tiny",
                    "--steps", "1", "--group-size", "2", "--tasks-per-step", "1",
                    "--max-new-tokens", "8", "--max-turns", "2", "--out", str(out),
                    "--device", "cpu")
    assert result.exit_code == 0, result.output
    assert "checkpoint:" in result.stdout
    ckpt = out / "checkpoints" / "step-000001" / "model"
    assert (ckpt / "config.json").is_file()
    assert json.loads((ckpt.parent / "trainer.json").read_text())["step"] == 1
    evaluated = invoke("evaluate", "--policy", str(ckpt), "--drill", "cancel", "--limit", "2",
                       "--max-turns", "2", "--json")
    assert evaluated.exit_code == 0
    rows = json.loads(evaluated.stdout)["environments"]
    assert rows["all"]["attempts"] == 2 and "airline" in rows


def test_evaluate_baseline_prints_pass_rates(home):
    result = invoke("evaluate", "--drill", "cancel", "--limit", "3")
    assert result.exit_code == 0
    assert "pass rate" in result.stdout and "airline" in result.stdout


def test_bad_inputs_are_one_line_errors(home, tmp_path):
    bad = tmp_path / "tasks.jsonl"
    bad.write_text('{"kind": "graph"}\n')
    result = runner.invoke(app, ["evaluate", "--tasks", str(bad)])
    assert result.exit_code == 1 and "tasks.jsonl:1: not a task" in result.output
    assert "Traceback" not in result.output
    result = runner.invoke(app, ["train", "--drill", "nope"])
    assert result.exit_code == 1 and "unknown drill 'nope'" in result.output
    result = runner.invoke(app, ["evaluate", "--policy", "no-such-policy", "--drill", "cancel",
                                 "--limit", "1"])
    assert result.exit_code == 1 and "unknown policy" in result.output


def test_export_openrlhf(home, tmp_path):
    result = invoke("export", "openrlhf", str(tmp_path / "x"), "--drill", "cancel",
                    "--limit", "3", "--group-size", "4")
    assert result.exit_code == 0
    assert len((tmp_path / "x" / "prompts.jsonl").read_text().splitlines()) == 3
    assert "--rollout.n_samples_per_prompt 4" in (tmp_path / "x" / "train_grpo.sh").read_text()


def test_pass_rates_use_the_evaluation_verdict():
    from agent_world.tasks.evaluation import attempt
    from agent_world.tasks.model import Task, ToolCall, Trajectory
    from agent_world.training.api import pass_rates

    task = Task(kind="graph", env_name="e", env_fingerprint="f", instruction="x",
                chain=[ToolCall(tool="get_x")], reference_answer="7").with_id()
    # the right answer guessed without the task's call: the check is met, the reward is not
    guessed = Trajectory(task_id=task.id, finished=True, final_answer="7", reward=0.7,
                         reward_components={"check": 1.0, "format.no_call": -0.3})
    solved = Trajectory(task_id=task.id, finished=True, final_answer="7", reward=1.0,
                        reward_components={"check": 1.0})
    rates = pass_rates([guessed, solved])
    assert rates["pass_rate"] == 0.5
    assert [attempt(task, t).passed for t in (guessed, solved)] == [False, True]
