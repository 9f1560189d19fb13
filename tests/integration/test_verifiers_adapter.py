"""Arena tasks as a verifiers environment, evaluated by verifiers' own rollout and scoring code
with an OpenAI-compatible client whose model replays the gold chains (no network)."""

from __future__ import annotations

import sys

import pytest

vf = pytest.importorskip(
    "verifiers", reason="verifiers is not installed: pip install -e .[verifiers], then "
    "pip install --no-deps verifiers==0.3.1 prime-sandboxes==0.5.1 (see README)")
pytestmark = pytest.mark.integration


@pytest.fixture(scope="module")
def tasks():
    from agent_world.training.drills import drill_tasks

    cancel = drill_tasks("cancel", limit=2)
    lookup = drill_tasks("lookup", limit=1)
    # one task whose agent sees opaque tool names: verifiers must offer those, the arena maps
    # them back to the real tools
    hidden = cancel[1].model_copy(update={
        "tool_view": {"tool_a1": "cancel_reservation", "tool_b2": "get_reservation"},
        "instruction": cancel[1].instruction.replace("Cancel", "Please cancel")}).with_id()
    return [cancel[0], hidden, lookup[0]]


@pytest.fixture(scope="module")
def exported(tasks, tmp_path_factory):
    from typer.testing import CliRunner

    from agent_world.cli import app

    root = tmp_path_factory.mktemp("vf")
    (root / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    out = root / "export"
    done = CliRunner().invoke(app, ["--home", str(root / "home"), "export", "verifiers",
                                    str(out), "--tasks", str(root / "tasks.jsonl")])
    assert done.exit_code == 0, done.output
    assert (out / "pyproject.toml").is_file()
    assert (out / "agent_world_arena" / "tasks.jsonl").is_file()
    sys.path.insert(0, str(out))
    yield out
    sys.path.remove(str(out))
    sys.modules.pop("agent_world_arena", None)


def _evaluate(env, tasks, wrong=False):
    from agent_world.integrations.replay import replay_openai_client

    client = vf.OpenAIChatCompletionsClient(replay_openai_client(tasks, wrong=wrong))
    return env.evaluate_sync(client, model="replay", rollouts_per_example=2)["outputs"]


def test_vf_load_environment_finds_the_export_and_gold_rollouts_pass(exported, tasks):
    env = vf.load_environment("agent-world-arena")
    assert isinstance(env, vf.ToolEnv)
    outputs = _evaluate(env, tasks)
    assert len(outputs) == 2 * len(tasks)
    for out in outputs:
        assert out["error"] is None
        assert out["reward"] == pytest.approx(1.0)
        assert out["metrics"]["check_passed"] == 1.0
        assert out["metrics"]["total_tool_calls"] == 1.0
    by_task = {o["info"]["task_id"]: o for o in outputs}
    hidden = by_task[tasks[1].id]
    assert [t["name"] for t in hidden["info"]["tool_defs"]] == ["tool_a1", "tool_b2"]
    call = hidden["completion"][0]["tool_calls"][0]
    assert "tool_a1" in str(call)
    # the observation came from the episode's database: the reservation was cancelled there
    assert '"status":"cancelled"' in str(hidden["completion"][1])


def test_wrong_answers_fail_the_task_check(exported, tasks):
    env = vf.load_environment("agent-world-arena", max_turns=4)
    outputs = _evaluate(env, tasks, wrong=True)
    for out in outputs:
        assert out["metrics"]["check_passed"] == 0.0
        assert out["reward"] < 1.0
    cancel = [o for o in outputs if o["info"]["task_id"] == tasks[0].id]
    # nothing cancelled: the state check fails; answering at once, without a call, costs the
    # largest format penalty
    assert all(o["reward"] == pytest.approx(-0.3) for o in cancel)


def test_bad_calls_are_observations_and_the_episode_goes_on(tasks):
    import asyncio
    import json
    from types import SimpleNamespace

    from agent_world.integrations.verifiers_env import load_environment

    env = load_environment(tasks[:1])
    state = {"info": {"task_id": tasks[0].id}}
    asyncio.run(env.setup_state(state))
    calls = [SimpleNamespace(id="a", name="check_in", arguments="{not json"),
             SimpleNamespace(id="b", name="drop_table", arguments="{}"),
             SimpleNamespace(id="c", name="cancel_reservation",
                             arguments=json.dumps(tasks[0].chain[0].arguments))]
    replies = asyncio.run(env.env_response([SimpleNamespace(tool_calls=calls)], state))
    texts = [r.content for r in replies]
    assert texts[0].startswith("Error (malformed_tool_call)")
    assert texts[1].startswith("Error (unknown_tool)")
    assert json.loads(texts[2])["status"] == "cancelled"
    traj = state["arena"].finish("Done.")
    assert traj.reward == pytest.approx(0.9)  # the check passes, minus one malformed call
    asyncio.run(env._close_episode(state))
    assert state["arena"] is None
