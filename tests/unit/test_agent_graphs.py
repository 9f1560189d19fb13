"""Each agent as its own graph (and the `evaluate` graph), run offline on a durable thread the
way LangGraph Studio runs them; the run's configuration picks the home and the role's model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.runtime import Runtime

import agent_world
from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec
from agent_world.errors import AgentWorldError, ContextError
from agent_world.graphs import evaluate_graph as evaluate
from agent_world.graphs.agents import designer_agent as designer
from agent_world.graphs.agents import diagnoser_agent as diagnoser
from agent_world.graphs.agents import miner_agent as miner
from agent_world.graphs.agents import synthesizer_agent as synthesizer
from agent_world.graphs.agents import verifier_agent as verifier
from agent_world.graphs.context import checked_context
from agent_world.graphs.runner import invoke
from agent_world.graphs.synthesize_graph import synthesize_tasks
from agent_world.models import chat_model, model_name, models_for

ROOT = Path(__file__).resolve().parents[2]
PRD = Path(agent_world.__file__).parent / "data" / "sources" / "book_lending_prd.md"


def test_langgraph_json_lists_every_graph_and_agent():
    graphs = json.loads((ROOT / "langgraph.json").read_text())["graphs"]
    assert {"mine", "build", "synthesize", "evaluate", "evolve", "miner", "designer",
            "synthesizer", "verifier", "diagnoser"} <= set(graphs)


def test_models_for_scopes_a_role_model_and_rejects_unknown_roles(monkeypatch):
    monkeypatch.setenv("AGENT_WORLD_MODEL_DIAGNOSER", "nosuchprovider:model")
    with models_for(diagnoser="offline", miner=""):
        assert model_name("diagnoser") == "offline" and chat_model("diagnoser") is None
    assert model_name("diagnoser") == "nosuchprovider:model"
    with pytest.raises(AgentWorldError, match="unknown model role"):
        with models_for(painter="x"):
            pass


def test_agent_graphs_run_one_agent_each(tmp_path, monkeypatch):
    home = tmp_path / "home"
    # the configuration's model wins over the environment's (which would fail to load)
    monkeypatch.setenv("AGENT_WORLD_MODEL", "nosuchprovider:model")
    mined = invoke(miner.build_graph(), {"source": f"file:{PRD}", "iterations": 1}, home=home,
                   context=miner.MinerContext(model="offline"))
    assert [h["iteration"] for h in mined["history"]] == [0, 1]
    assert mined["fidelity"]["coverage"]["ratio"] == 1.0
    spec = EnvSpec.load(mined["spec_path"])
    assert spec.name == mined["name"] and mined["stats"]["tables"] == len(spec.tables)
    with pytest.raises(AgentWorldError, match="nosuchprovider"):  # really asked for the model
        invoke(miner.build_graph(), {"source": f"file:{PRD}", "iterations": 0}, home=home)

    cat = Catalog.open(home)
    cat.put_env(spec, stage="mined")
    built = invoke(designer.build_graph(), {"env": spec.name}, home=home,
                   context=designer.DesignerContext(model="offline", max_tools=8))
    result = built["result"]
    # max_tools caps the designed tools beyond the source's own (always implemented)
    assert result["status"] == "built" and 0 < result["kept"] <= result["candidates"]
    assert result["candidates"] <= max(8, result["source_tools"]) < 40
    assert len(cat.get_env(spec.name).tools) == result["kept"]
    assert cat.get_run(built["run_id"])["status"] == "done"

    monkeypatch.delenv("AGENT_WORLD_MODEL")
    drafted = invoke(synthesizer.build_graph(), {"env": "airline", "count": 2, "level": 2},
                     home=home)
    assert len(drafted["candidates"]) == 2
    for c in drafted["candidates"]:
        assert c["instruction"] and c["gates"] and c["passed"] == all(
            g["passed"] for g in c["gates"])
    assert not cat.list_tasks()  # candidates are not stored as tasks

    ids = synthesize_tasks(["airline"], home=home, per_env=2, levels=[1, 2])
    verdict = invoke(verifier.build_graph(), {"task_id": ids[0]}, home=home,
                     context=verifier.VerifierContext(runs=3))
    assert verdict["runs"] == 3 and len(verdict["attempts"]) == 3
    assert verdict["passes"] == sum(a["passed"] for a in verdict["attempts"])
    assert verdict["kept"] == (verdict["passes"] > 1.5)

    report = invoke(evaluate.build_graph(), {"tasks": ids, "policy": "baseline",
                                             "evaluation_id": "ev1"}, home=home)
    assert report["summary"]["attempts"] == 2
    assert len(cat.evaluation_attempts("ev1")) == 2
    diagnosis = invoke(diagnoser.build_graph(), {"evaluation_id": "ev1"}, home=home)
    assert diagnosis["evaluation"] == cat.get_evaluation("ev1")["summary"]
    assert diagnosis["text"].startswith("Held-out pass rate")
    with pytest.raises(AgentWorldError, match="no evaluation"):
        invoke(diagnoser.build_graph(), {"evaluation_id": "nope"}, home=home)


def test_checked_context_takes_a_dict_an_instance_or_nothing():
    ctx = verifier.VerifierContext
    assert checked_context(None, ctx) == ctx()
    assert checked_context(Runtime(context=None), ctx) == ctx()
    assert checked_context(Runtime(context={"runs": "3", "unknown": 1}), ctx) == ctx(runs=3)
    assert checked_context(Runtime(context=ctx(runs=2, model="offline")), ctx) == \
        ctx(runs=2, model="offline")
    with pytest.raises(ContextError, match=r"^context\.threshold: .*\(got 'half'\)$"):
        checked_context(Runtime(context=ctx(threshold="half")), ctx)  # type: ignore[arg-type]


@pytest.mark.parametrize("graph, inputs, context, field", [
    (verifier, {"task_id": "t"}, {"runs": "many"}, "runs"),
    (designer, {"env": "nope"}, {"max_tools": [8]}, "max_tools"),
    (miner, {"source": f"file:{PRD}"}, {"source_timeout_s": "soon"}, "source_timeout_s"),
    (evaluate, {"tasks": ["t"]}, {"max_turns": "eight"}, "max_turns"),
])
def test_agent_graph_names_a_wrong_context_value(tmp_path, graph, inputs, context, field):
    # what a LangGraph server hands a graph: the client's values, unchecked; the first node
    # stops the run with one line naming the field, before it touches the catalog or source
    with pytest.raises(ContextError) as err:
        invoke(graph.build_graph(), inputs, home=tmp_path, context=context)
    message = str(err.value)
    assert message.startswith(f"context.{field}: ") and "\n" not in message
