"""The chat-model extras (`pip install -e .[llm]`): `AGENT_WORLD_MODEL=openai:…` (any
OpenAI-compatible server through OPENAI_BASE_URL), `ollama:…` and `anthropic:…` give every role
a working model through LangChain's real integration packages, here against local stand-ins."""

from __future__ import annotations

import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from agent_world.design.tool_designer import design_tools
from agent_world.envs.examples import load_example
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError
from agent_world.mining.llm_miner import mine_theme
from agent_world.models import chat_model, plain_chat
from agent_world.rollout.engine import RolloutConfig, run_rollouts
from agent_world.rollout.policy import EpisodeState
from agent_world.rollout.reward import judge_score
from agent_world.rollout.toolcall import format_call, system_prompt, tool_views
from agent_world.synthesis.react_verifier import verify_task
from agent_world.tasks.model import Task, ToolCall, Trajectory
from agent_world.training.api import load_policy
from tests.integration.chat_standins import TOOL_FIELDS, ChatStandIn

pytestmark = pytest.mark.integration

PROVIDERS = {
    "openai": ("langchain_openai", "/v1/chat/completions",
               lambda s: {"OPENAI_BASE_URL": s.openai_url, "OPENAI_API_KEY": "unused"}),
    "ollama": ("langchain_ollama", "/api/chat", lambda s: {"OLLAMA_HOST": s.base}),
    "anthropic": ("langchain_anthropic", "/v1/messages",
                  lambda s: {"ANTHROPIC_BASE_URL": s.base, "ANTHROPIC_API_KEY": "unused"}),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_each_backend_extra_gives_every_role_a_model(provider, monkeypatch):
    module, path, env = PROVIDERS[provider]
    pytest.importorskip(module, reason=f"{module} is not installed: pip install -e .[llm]")
    with ChatStandIn(lambda body: f"reply to {len(body.get('messages', []))} message(s)") as s:
        for key, value in env(s).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("AGENT_WORLD_MODEL", f"{provider}:stand-in-model")
        for role in ("miner", "designer", "synthesizer", "verifier", "diagnoser", "judge"):
            reply = chat_model(role).invoke("Name one tool.")
            assert reply.content == "reply to 1 message(s)"
        assert len(s.requests) == 6
        assert {r["path"] for r in s.requests} == {path}
        assert {r["model"] for r in s.requests} == {"stand-in-model"}


# ---- plain chat models: no tool calling, no structured output ----------------------------------
# The stand-in answers HTTP 400 to any request carrying tools or a response format, as vLLM
# without a tool parser or Ollama for a model without tools do; every agent must get its work
# done through langchain-openai's real client in text/JSON, and say once that it switched.
@contextmanager
def plain_openai(monkeypatch, reply, *roles: str) -> Iterator[ChatStandIn]:
    pytest.importorskip("langchain_openai", reason="pip install -e .[llm]")
    with ChatStandIn(reply, refuse_tools=True) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_url)
        monkeypatch.setenv("OPENAI_API_KEY", "unused")
        for role in roles:
            monkeypatch.setenv(f"AGENT_WORLD_MODEL_{role.upper()}", "openai:plain-model")
        yield server


def _switches(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records
            if r.name == "agent_world.models" and "plain-model" in r.getMessage()]


def _carries_tools(request: dict) -> bool:
    return any(request.get(f) for f in TOOL_FIELDS)


def test_the_miner_mines_with_a_plain_chat_model(monkeypatch, caplog):
    from tests.unit.miner_docs import clinic_doc
    from tests.unit.test_miner_llm_path import GOOD_CHANGE, GOOD_DRAFT

    def reply(body):
        system = body["messages"][0]["content"]
        if "Plan research" in system:
            return 'Here is my plan: {"questions": ["Which entities?", "Which states?"]}'
        if "design the relational database" in system:
            return f"```json\n{json.dumps(GOOD_DRAFT)}\n```"
        if "more realistic" in system:
            return json.dumps(GOOD_CHANGE)
        return "no idea"  # the taxonomy question: keyword rules decide

    caplog.set_level(logging.WARNING, "agent_world.models")
    with plain_openai(monkeypatch, reply, "miner") as server:
        mined = mine_theme(clinic_doc(), iterations=1, seed=0)
    assert [i.strategy for i in mined.iterations] == ["llm", "llm"]
    assert mined.questions[:2] == ["Which entities?", "Which states?"]
    assert {"doctors", "appointments", "appointment_notes"} <= {t.name for t in mined.spec.tables}
    # one request was refused; every later one came as text, with the schema to answer in
    assert server.refused == 1 and not any(_carries_tools(r) for r in server.requests[1:])
    assert '"questions"' in server.requests[1]["messages"][-1]["content"]
    assert len(_switches(caplog)) == 1


def test_the_designer_designs_with_a_plain_chat_model(monkeypatch, caplog):
    from tests.unit.test_build import BUGGY, LLM_TESTS, SPEC

    caplog.set_level(logging.WARNING, "agent_world.models")
    with plain_openai(monkeypatch, lambda body: json.dumps({"module": BUGGY, "tests": LLM_TESTS}),
                      "designer") as server:
        design = design_tools(EnvSpec.from_dict(SPEC))
    assert design.strategy == "llm" and design.tool_names() == ["count_copies"]
    assert server.refused == 1 and len(server.requests) == 2 and len(_switches(caplog)) == 1


def test_the_verifier_and_the_judge_work_with_a_plain_chat_model(monkeypatch, caplog, runtime):
    """The verifier's ReAct runs read calls from the text (the training rollout's parser) and
    the judge grades in text: a task a plain model solves is kept, and judged."""
    spec = load_example("airline")
    task, turns = _miles_task(spec)
    task = task.model_copy(update={"rubric": ["states the miles balance"]}).with_id()
    miles = task.reference_answer

    def reply(body):
        messages = body["messages"]
        if messages[0]["content"].startswith("You grade"):
            return 'The answer matches the reference. {"score": 0.8}'
        return turns[sum(m["role"] == "assistant" for m in messages)]

    caplog.set_level(logging.WARNING, "agent_world.models")
    with plain_openai(monkeypatch, reply, "verifier", "judge") as server:
        verdict = verify_task(task, spec, runtime, runs=2)
    assert verdict.kept and verdict.passes == 2
    for traj in verdict.trajectories:
        assert [s.tool for s in traj.steps] == ["get_customer", "get_loyalty_balance"]
        assert traj.final_answer == miles and traj.reward_components["judge"] == 0.8
    # the first run's tool request was refused and the run restarted in text; the second run
    # went straight to text, the tools listed in its system prompt
    assert server.refused == 1 and not any(_carries_tools(r) for r in server.requests[1:])
    assert "<tools>" in server.requests[1]["messages"][0]["content"]
    assert len(_switches(caplog)) == 1


def test_a_judge_reply_without_a_score_is_an_error_not_a_grade(monkeypatch):
    """A plain model's prose used to be graded by its first 0 or 1 ('1 of the 2 values')."""
    from langchain_openai import ChatOpenAI

    traj = Trajectory(task_id="t", final_answer="42")
    task = Task(kind="graph", env_name="e", env_fingerprint="f", instruction="How many?",
                reference_answer=42)
    with plain_openai(monkeypatch, lambda body: "It gets 1 of the 2 values right.") as server:
        judge = ChatOpenAI(model="plain-model", base_url=server.openai_url, api_key="unused")
        with pytest.raises(ValueError, match="no score"):
            judge_score(judge, task, traj)
        server.reply = lambda body: "score: 0.5"
        assert judge_score(judge, task, traj) == 0.5


def test_plain_roles_can_be_declared_for_servers_that_drop_tools(monkeypatch, caplog):
    """A server that ignores `tools` cannot be told from a model that chose not to call one:
    AGENT_WORLD_PLAIN_CHAT names those roles, and their first request is already text."""
    pytest.importorskip("langchain_openai", reason="pip install -e .[llm]")
    caplog.set_level(logging.WARNING, "agent_world.models")
    monkeypatch.setenv("OPENAI_API_KEY", "unused")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/declared/v1")
    monkeypatch.setenv("AGENT_WORLD_MODEL", "openai:tool-model")
    monkeypatch.setenv("AGENT_WORLD_MODEL_VERIFIER", "openai:declared-plain-model")
    monkeypatch.setenv("AGENT_WORLD_PLAIN_CHAT", "verifier")
    assert plain_chat(chat_model("verifier")) and not plain_chat(chat_model("miner"))
    assert plain_chat(chat_model("verifier"))  # logged once
    assert len(_switches(caplog)) == 1
    monkeypatch.setenv("AGENT_WORLD_PLAIN_CHAT", "verifier,planner")
    with pytest.raises(AgentWorldError, match="AGENT_WORLD_PLAIN_CHAT: unknown role"):
        chat_model("verifier")


# ---- the policy role: a chat model playing training rollouts ---------------------------------
def _miles_task(spec: EnvSpec) -> tuple[Task, list[str]]:
    """A two-call airline task and the text-protocol replies that solve it."""
    customer = spec.rows["customers"][3]
    cid = customer["customer_id"]
    miles = next(a["miles_balance"] for a in spec.rows["loyalty_accounts"]
                 if a["customer_id"] == cid)
    task = Task(kind="graph", env_name=spec.name, env_fingerprint=spec.fingerprint,
                instruction=f"I am the customer with email {customer['email']}. How many "
                            "redeemable miles does my loyalty account have?",
                chain=[ToolCall(tool="get_customer", arguments={"email": customer["email"]}),
                       ToolCall(tool="get_loyalty_balance", arguments={"customer_id": cid})],
                reference_answer=miles).with_id()
    return task, [format_call("get_customer", {"email": customer["email"]}),
                  format_call("get_loyalty_balance", {"customer_id": cid}),
                  f"<answer>{miles}</answer>"]


def test_a_chat_model_policy_plays_in_text_when_its_server_refuses_tools(monkeypatch, caplog,
                                                                        runtime):
    """`ChatModelPolicy` bound the tools on every request and a refusal ended the rollout; now
    the refused request is asked again without them (the system prompt lists the tools in the
    rollout's text protocol), and later ones go straight to text."""
    spec = load_example("airline")
    task, turns = _miles_task(spec)
    caplog.set_level(logging.WARNING, "agent_world.models")
    with plain_openai(monkeypatch, lambda body: turns[sum(
            m["role"] == "assistant" for m in body["messages"])]) as server:
        policy = load_policy("openai:plain-model")
        rollouts = [r for _ in range(2) for r in run_rollouts(
            policy, [task], {spec.fingerprint: spec}, RolloutConfig(max_turns=4),
            runtime=runtime)]
    for r in rollouts:
        traj = r.trajectory
        # the two calls, then the answer (a step without a tool)
        assert [s.tool for s in traj.steps] == ["get_customer", "get_loyalty_balance", None]
        assert all(s.ok for s in traj.steps[:2]) and traj.finished
        assert traj.final_answer == task.reference_answer
        assert traj.reward_components["check.passed"] == 1.0
    assert server.refused == 1 and not any(_carries_tools(r) for r in server.requests[1:])
    assert len(server.requests) == 1 + 2 * len(turns)
    sent = server.requests[-1]["messages"]
    assert "<tools>" in sent[0]["content"] and [m["role"] for m in sent] == [
        "system", "user", "assistant", "user", "assistant", "user"]
    assert sent[3]["content"].startswith("Tool result:\n")
    assert len(_switches(caplog)) == 1


def test_the_policy_role_can_be_declared_plain(monkeypatch, caplog):
    """AGENT_WORLD_PLAIN_CHAT=policy: a provider:model policy asks in text from its first
    request (a server that drops tools silently never refuses)."""
    spec = load_example("airline")
    task, turns = _miles_task(spec)
    caplog.set_level(logging.WARNING, "agent_world.models")
    monkeypatch.setenv("AGENT_WORLD_PLAIN_CHAT", "policy")
    with plain_openai(monkeypatch, lambda body: turns[-1]) as server:
        policy = load_policy("openai:plain-model")
        state = EpisodeState(task=task, tools=tool_views(task, spec), messages=[
            {"role": "system", "content": system_prompt(task, spec)},
            {"role": "user", "content": task.instruction}])
        assert policy.act([state]) == [turns[-1]]
    assert server.refused == 0 and len(server.requests) == 1
    assert not _carries_tools(server.requests[0])
    assert [m for m in _switches(caplog) if "AGENT_WORLD_PLAIN_CHAT" in m]
