"""The naturalness judge: with a "judge" chat model configured, every request a synthesis keeps
is rated 1-5 for whether a user of the service would write it, and one below `MIN_SCORE` is
rejected (gate `natural`, after the other trust gates; the rejection and the judge's reason go to
the ledger like any gate's). The offline templates and a "synthesizer" model's requests pass the
same gate.

    verdict = rate(model, task.instruction, spec)   # Naturalness(score=4, reason="...")

Offline (no judge model) the gate passes and says so in its detail: the artefact suite
(`agent_world.tasks.artefacts`) is then what reads the request. A judge whose reply cannot be
read rejects the task with that reason: a broken judge is seen in the ledger, never silent.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from pydantic import BaseModel, Field, ValidationError

from agent_world.envs.episode import EnvRuntime
from agent_world.envs.spec import EnvSpec
from agent_world.models import chat_model
from agent_world.plain_chat import ask_structured
from agent_world.synthesis.synthesizer_prompts import JUDGE_NATURAL_SYSTEM, JUDGE_NATURAL_USER
from agent_world.tasks.model import GateResult, Task

MIN_SCORE = 3  # "understandable, plainly machine-made in places" is the lowest kept


class Naturalness(BaseModel):
    """The judge's verdict on one request."""

    score: int = Field(ge=1, le=5, description="1 unreadable ... 5 a person would write this")
    reason: str = Field(default="", description="what reads badly, or 'reads naturally'")


def rate(model: Any, instruction: str, spec: EnvSpec) -> Naturalness:
    """The judge's rating of `instruction` as a request to `spec`'s service (ValueError or
    ValidationError when its reply does not parse)."""
    return ask_structured(model, Naturalness, [  # type: ignore[return-value]
        SystemMessage(JUDGE_NATURAL_SYSTEM),
        HumanMessage(JUDGE_NATURAL_USER.format(service=spec.theme.name,
                                               description=spec.theme.description,
                                               instruction=instruction))])


def gate_natural(task: Task, spec: EnvSpec, runtime: EnvRuntime) -> GateResult:
    model = chat_model("judge")
    if model is None:
        return GateResult(name="natural", passed=True,
                          detail="no judge model configured: the artefact suite reads it alone")
    try:
        verdict = rate(model, task.instruction, spec)
    except (ValueError, ValidationError) as exc:
        return GateResult(name="natural", passed=False,
                          detail=f"the judge's reply could not be read: {str(exc)[:200]}")
    return GateResult(name="natural", passed=verdict.score >= MIN_SCORE,
                      detail=f"naturalness {verdict.score}/5: {verdict.reason[:200]}")


__all__ = ["MIN_SCORE", "Naturalness", "gate_natural", "rate"]
