"""The miner's LLM path with fake chat models: invalid drafts retried then validated, the
fall-back to the offline strategy after three invalid answers, structured answers from any
chat model (JSON in text or tool calling)."""


from __future__ import annotations

import json
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agent_world.mining.complexify_step import complexify
from agent_world.mining.draft_step import draft_database
from agent_world.mining.llm_miner import (
    gather_evidence,
    mine_theme,
    plan_questions,
)
from agent_world.mining.validation import validate_database
from agent_world.models import set_chat_model
from agent_world.plain_chat import ask_structured
from tests.unit.miner_docs import clinic_doc, time_doc


@pytest.fixture()
def fake_miner():
    """Install a fake chat model for the miner role; removed afterwards."""
    installed: list[Any] = []

    def install(model: Any) -> Any:
        installed.append(model)
        set_chat_model("miner", model)
        return model

    yield install
    set_chat_model("miner", None)


# ---------------------------------------------------------------------------------------------


class ScriptedChat(BaseChatModel):
    """Answers by role: the system prompt says which step is asking."""

    script: dict[str, list[str]]
    seen: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        system = str(messages[0].content)
        step = ("questions" if "research questions" in system.lower() or "Plan research" in system
                else "draft" if "design the relational database" in system
                else "complexify" if "more realistic" in system else "other")
        self.seen.append(step)
        queue = self.script.get(step) or ['{"questions": ["What?"]}']
        text = queue.pop(0) if len(queue) > 1 else queue[0]
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=text))])


GOOD_DRAFT = {
    "tables": [
        {"name": "doctors", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "name", "type": "text", "nullable": False},
            {"name": "specialty", "type": "text"}]},
        {"name": "patients", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "name", "type": "text", "nullable": False},
            {"name": "email", "type": "text", "unique": True}]},
        {"name": "appointments", "columns": [
            {"name": "id", "type": "integer", "primary_key": True},
            {"name": "patient_id", "type": "integer", "nullable": False,
             "foreign_key": "patients.id"},
            {"name": "doctor_id", "type": "integer", "nullable": False,
             "foreign_key": "doctors.id"},
            {"name": "starts_at", "type": "datetime", "nullable": False},
            {"name": "status", "type": "text", "nullable": False,
             "enum": ["scheduled", "completed", "cancelled"]}]},
    ],
    "rows": [
        {"table": "doctors", "columns": ["id", "name", "specialty"],
         "values": [[1, "Dr. Ada Park", "Cardiology"], [2, "Dr. Ben Cho", "Dermatology"]]},
        {"table": "patients", "columns": ["name", "email"],
         "values": [["Cara Diaz", "cara@example.com"], ["Dan Eze", "dan@example.com"]]},
        {"table": "appointments", "columns": ["patient_id", "doctor_id", "starts_at", "status"],
         "values": [[1, 2, "2026-01-20T10:00:00", "scheduled"],
                    [2, 1, "2026-01-10T09:30:00", "completed"]]},
    ],
    "notes": "three core entities",
}
BAD_DRAFT = {**GOOD_DRAFT, "tables": [
    *GOOD_DRAFT["tables"][:2],
    {**GOOD_DRAFT["tables"][2], "columns": [
        *GOOD_DRAFT["tables"][2]["columns"][:2],
        {"name": "doctor_id", "type": "integer", "foreign_key": "physicians.id"}]}]}
GOOD_CHANGE = {
    "summary": "appointment notes and doctor phone",
    "new_tables": [{"name": "appointment_notes", "columns": [
        {"name": "id", "type": "integer", "primary_key": True},
        {"name": "appointment_id", "type": "integer", "nullable": False,
         "foreign_key": "appointments.id"},
        {"name": "body", "type": "text", "nullable": False}]}],
    "new_columns": [{"table": "doctors", "column": {"name": "phone", "type": "text"}}],
    "widen_enums": [{"table": "appointments", "column": "status", "add_values": ["no_show"]}],
    "new_rows": [{"table": "appointment_notes", "columns": ["appointment_id", "body"],
                  "values": [[1, "Bring previous ECG"], [2, "Follow-up in 6 months"]]}],
}


def test_llm_path_retries_an_invalid_draft_then_validates(fake_miner):
    model = fake_miner(ScriptedChat(script={
        "questions": ['{"questions": ["Which entities?", "How do appointments relate?"]}'],
        "draft": ["not json at all", json.dumps(BAD_DRAFT), json.dumps(GOOD_DRAFT)],
        "complexify": [f"```json\n{json.dumps(GOOD_CHANGE)}\n```"],
    }))
    doc = clinic_doc()
    assert plan_questions(doc) == ["Which entities?", "How do appointments relate?"]
    spec = draft_database(doc, gather_evidence(doc, ["Which entities?"]), seed=0)
    assert model.seen.count("draft") == 3  # two rejected answers, the third accepted
    assert spec.provenance.stats["iterations"][0]["strategy"] == "llm"
    assert "after 2 retries" in spec.provenance.notes[-1]
    assert [t.name for t in spec.tables] == ["doctors", "patients", "appointments"]
    assert spec.rows["doctors"][0]["name"] == "Dr. Ada Park"  # the LLM's rows are kept
    assert len(spec.rows["appointments"]) >= 20  # volumes scaled by the offline generator
    validate_database(spec)

    spec2 = complexify(spec, 1, seed=0)
    assert spec2.provenance.stats["iterations"][-1]["strategy"] == "llm"
    assert "appointment_notes" in {t.name for t in spec2.tables}
    assert "no_show" in spec2.table("appointments").column("status").enum
    assert spec2.rows["appointment_notes"][0]["body"] == "Bring previous ECG"
    assert len(spec2.rows["appointment_notes"]) >= 15
    assert "phone" in spec2.rows["doctors"][0]
    assert spec2.stats()["rows"] > spec.stats()["rows"]
    assert spec2.provenance.parent == spec.fingerprint


def test_llm_path_falls_back_to_offline_after_three_invalid_answers(fake_miner):
    model = fake_miner(ScriptedChat(script={
        "questions": ['{"questions": []}'],  # invalid (empty) -> offline questions
        "draft": [json.dumps(BAD_DRAFT)],
        "complexify": ['{"new_tables": [{"name": "patients", "columns": '
                       '[{"name": "id", "type": "integer", "primary_key": true}]}]}'],
    }))
    m = mine_theme(clinic_doc(), iterations=1, seed=0)
    assert model.seen.count("questions") == 3 and model.seen.count("draft") == 3
    assert model.seen.count("complexify") == 3
    assert any("What attributes" in q for q in m.questions)  # offline questions
    assert [i.strategy for i in m.iterations] == ["offline-fallback", "offline-fallback"]
    notes = "\n".join(m.spec.provenance.notes)
    assert "LLM draft failed 3 times" in notes and "physicians" in notes
    assert "LLM complexification failed 3 times" in notes and "already exists" in notes
    offline_only = mine_theme(clinic_doc(), iterations=1, seed=0)  # model still installed
    assert offline_only.spec.fingerprint == m.spec.fingerprint
    set_chat_model("miner", None)
    assert mine_theme(clinic_doc(), iterations=1, seed=0).spec.fingerprint == m.spec.fingerprint


def test_ask_structured_parses_json_from_any_chat_model():
    from agent_world.mining.miner_answers import QuestionPlan

    model = ScriptedChat(script={"other": ['Sure! ```json\n{"questions": ["a", "b"]}\n```']})
    out = ask_structured(model, QuestionPlan, [("system", "x"), ("human", "y")])
    assert out.questions == ["a", "b"]


class ToolCallingChat(BaseChatModel):
    """A bind_tools-capable fake: answers with a tool call, as providers do for
    with_structured_output."""

    args: dict[str, Any]
    bound: list[Any] = []

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
        self.bound.extend(tools)
        return self

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        name = self.bound[-1].__name__ if self.bound else "QuestionPlan"
        msg = AIMessage(content="", tool_calls=[{"name": name, "args": self.args, "id": "c1"}])
        return ChatResult(generations=[ChatGeneration(message=msg)])


def test_ask_structured_uses_tool_calling_when_the_model_supports_it(fake_miner):
    from agent_world.mining.miner_answers import QuestionPlan

    model = ToolCallingChat(args={"questions": ["Which entities?", "Which states?"]})
    out = ask_structured(model, QuestionPlan, [("human", "plan")])
    assert out.questions == ["Which entities?", "Which states?"] and model.bound == [QuestionPlan]
    fake_miner(ToolCallingChat(args={"questions": []}))  # invalid: retried, then offline
    assert any("What attributes" in q for q in plan_questions(time_doc()))
