"""The naturalness judge (`agent_world.synthesis.naturalness`): with a "judge" chat model
configured, a request the judge rates below 3 of 5 is rejected by gate `natural` and goes to the
ledger with the judge's reason; an unreadable verdict rejects, never passes; offline the gate
says no judge read the request. Driven through LangChain's real OpenAI client against a local
stand-in server (a plain model: the verdict is read from JSON in its text)."""

from __future__ import annotations

import json

import pytest

from agent_world.envs.catalog import Catalog
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.examples import load_example
from agent_world.synthesis.loop import SynthesisConfig, synthesize_env
from agent_world.synthesis.naturalness import gate_natural
from agent_world.tasks.model import Task
from tests.integration.test_chat_backends import plain_openai

pytestmark = pytest.mark.integration


def _task(spec, text: str) -> Task:
    return Task(kind="graph", env_name=spec.name, env_fingerprint=spec.fingerprint,
                instruction=text, reference_answer=None).with_id()


def test_the_judge_rates_each_request_and_an_unreadable_verdict_rejects(monkeypatch):
    spec = load_example("airline")
    stiff = _task(spec, "Update passenger with first name 'Ann' of reservation MGX7Q2.")
    assert gate_natural(stiff, spec, None).detail.startswith("no judge model")  # offline
    verdicts = iter(['{"score": 2, "reason": "argument names before values"}',
                     'Fine. {"score": 4, "reason": "reads naturally"}',
                     "I would say it is quite good."])
    with plain_openai(monkeypatch, lambda body: next(verdicts), "judge") as server:
        low = gate_natural(stiff, spec, None)
        ok = gate_natural(stiff, spec, None)
        broken = gate_natural(stiff, spec, None)
    assert not low.passed and "2/5" in low.detail and "argument names" in low.detail
    assert ok.passed and "4/5" in ok.detail
    assert not broken.passed and "could not be read" in broken.detail
    # the judge saw the service and the request
    shown = json.dumps(server.requests[0]["messages"])
    assert spec.theme.name in shown and "MGX7Q2" in shown


def test_synthesis_keeps_only_what_the_judge_lets_through_and_ledgers_the_rest(
        monkeypatch, tmp_path):
    spec = load_example("airline")

    def judge(body):  # a judge that cannot stand greetings
        rude = any(g in json.dumps(body["messages"]) for g in ("Hello!", "Hi there.", "Hi. "))
        return json.dumps({"score": 2 if rude else 5,
                           "reason": "a greeting" if rude else "reads naturally"})

    with plain_openai(monkeypatch, judge, "judge"), EnvRuntime() as runtime, \
            Catalog.open(tmp_path) as cat:
        cat.put_env(spec, stage="built")
        stats = synthesize_env(spec, SynthesisConfig(per_env=6, attempts_per_task=10, runs=1),
                               cat, runtime, run_id="judged")
        kept = [Task.model_validate(t["payload"]) for t in cat.list_tasks(spec.fingerprint)]
        ledger = cat.ledger("synthesize", run_id="judged")
    assert kept and not any(g in t.instruction for t in kept
                            for g in ("Hello!", "Hi there.", "Hi. "))
    assert all(any(g.name == "natural" and g.passed and "5/5" in g.detail for g in t.gates)
               for t in kept)
    natural = [e for e in ledger if e.payload.get("gate") == "natural"]
    assert stats["rejected"].get("natural", 0) == len(natural) > 0
    assert all("a greeting" in e.reason for e in natural)
