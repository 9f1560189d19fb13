"""`agent-world synthesize`, `tasks list|show|export`, `env graph`; the synthesize graph resumes."""

from __future__ import annotations

import json
import sqlite3
import threading

import pytest
from typer.testing import CliRunner

from agent_world.cli import app
from agent_world.envs.catalog import Catalog
from agent_world.graphs import runner as runner_module

runner = CliRunner()


def invoke(*args):
    return runner.invoke(app, list(args), catch_exceptions=False)


def test_synthesize_then_list_show_export(home, tmp_path):
    result = invoke("synthesize", "--env", "airline", "--per-env", "3", "--levels", "1,2",
                    "--runs", "3", "--thread", "cli")
    assert result.exit_code == 0, result.output
    assert "airline" in result.output and "kept" in result.output
    listed = json.loads(invoke("tasks", "list", "--json").stdout)
    assert len(listed) == 3 and all(t["env_name"] == "airline" for t in listed)
    shown = invoke("tasks", "show", listed[0]["id"][:8])
    assert shown.exit_code == 0 and "gold chain" in shown.stdout and "verifier" in shown.stdout
    out = tmp_path / "tasks.jsonl"
    assert "wrote 3 task(s)" in invoke("tasks", "export", str(out)).stdout
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert {t["id"] for t in lines} == {t["id"] for t in listed}
    assert all(t["format"] == "agent-world/task@1" for t in lines)
    # resuming a finished thread does not synthesize again
    again = invoke("synthesize", "--thread", "cli", "--resume")
    assert again.exit_code == 0 and len(Catalog.open(home).list_tasks()) == 3


def test_bad_input_is_one_clear_error(home):
    assert "no task" in runner.invoke(app, ["tasks", "show", "nope"]).output
    bad = runner.invoke(app, ["synthesize", "--env", "no_such_env"])
    assert bad.exit_code == 1 and "no environment named" in bad.output
    assert runner.invoke(app, ["synthesize", "--levels", "7"]).exit_code != 0


def test_a_full_disk_under_the_checkpoints_is_one_error_line(home, monkeypatch):
    """Was: a 97-line traceback from inside LangGraph's loop. SQLite's own SQLITE_FULL (a page
    limit on the checkpoint file's connections) stands in for the disk filling up."""
    connect = sqlite3.connect

    def small_disk(database, *args, **kwargs):
        conn = connect(database, *args, **kwargs)
        if str(database).endswith("checkpoints.sqlite"):
            pages = conn.execute("PRAGMA page_count").fetchone()[0]
            conn.execute(f"PRAGMA max_page_count = {pages + 4}")
        return conn

    monkeypatch.setattr(runner_module.sqlite3, "connect", small_disk)
    full = runner.invoke(app, ["synthesize", "--env", "airline", "--per-env", "2"])
    lines = full.output.strip().splitlines()
    assert full.exit_code == 1, full.output
    assert lines[-1].startswith("error: checkpoints") and "full" in lines[-1], full.output
    assert "Traceback" not in full.output and len(lines) <= 4, full.output


def test_a_wrong_context_value_stops_the_run_naming_the_field(home):
    """A client's configuration is checked at the start (Studio passes it unchecked): text
    where a number belongs, or a share out of range, is one error naming the field."""
    from agent_world.errors import ContextError
    from agent_world.graphs.synthesize_graph import synthesize_tasks

    with pytest.raises(ContextError, match=r"context\.runs: .*'many'"):
        synthesize_tasks(["airline"], home=home, per_env=1, context={"runs": "many"})
    with pytest.raises(ContextError, match=r"context\.threshold"):
        synthesize_tasks(["airline"], home=home, per_env=1, context={"threshold": 1.5})
    assert Catalog.open(home).list_tasks() == []  # nothing ran


def test_env_graph_writes_a_picture(home, tmp_path):
    out = tmp_path / "g.png"
    result = invoke("env", "graph", "ecommerce", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:4] == b"\x89PNG" and "edges" in result.stdout
    assert list((home / "toolgraphs").glob("ecommerce-*.json"))


class _Crash(BaseException):
    """Stands in for the process being killed in the middle of one branch."""


def test_synthesize_graph_resumes_only_the_unfinished_branch(home, monkeypatch):
    from agent_world.graphs import synthesize_graph as graph_module
    from agent_world.graphs.runner import invoke as run_graph
    from agent_world.synthesis import loop as task_synthesis

    real = task_synthesis.synthesize_env
    calls: list[str] = []
    airline_done = threading.Event()

    def flaky(spec, *args, **kwargs):
        calls.append(spec.name)
        if spec.name == "ecommerce" and calls.count("ecommerce") == 1:
            airline_done.wait(120)  # the branches run in parallel: crash once the other is done
            raise _Crash()
        try:
            return real(spec, *args, **kwargs)
        finally:
            if spec.name == "airline":
                airline_done.set()

    monkeypatch.setattr(task_synthesis, "synthesize_env", flaky)
    inputs = {"envs": ["airline", "ecommerce"], "per_env": 2, "levels": [1, 2]}
    try:
        run_graph(graph_module.build_graph(), inputs, thread_id="t1", home=home,
                  context={"runs": 3})
        crashed = False
    except _Crash:
        crashed = True
    assert crashed, f"the run did not crash; branch calls: {calls}"
    assert calls.count("airline") == 1
    state = run_graph(graph_module.build_graph(), None, thread_id="t1", home=home,
                      context={"runs": 3})
    assert calls.count("airline") == 1 and calls.count("ecommerce") == 2
    assert state["summary"]["kept"] == 4 and state["summary"]["envs"] == 2
    assert len(Catalog.open(home).list_tasks()) == 4


def test_synthesis_in_a_pipeline_node_is_its_subgraph_and_resumes_with_it(home, monkeypatch):
    """A pipeline node (evolve's) runs synthesis `within` its config: two runs in one node,
    checkpointed in the pipeline's own thread (no thread of their own). Killed during the
    second, the resumed pipeline hands back the first's tasks without synthesizing them again
    and finishes the second."""
    from langgraph.graph import END, START, StateGraph
    from typing_extensions import TypedDict

    from agent_world.graphs.runner import checkpointer, final_state, thread_config
    from agent_world.graphs.runner import invoke as run_graph
    from agent_world.graphs.synthesize_graph import synthesize_tasks
    from agent_world.synthesis import loop as task_synthesis

    real = task_synthesis.synthesize_env
    calls: list[str] = []

    def killed_once(spec, *args, **kwargs):
        calls.append(spec.name)
        if spec.name == "ecommerce" and calls.count("ecommerce") == 1:
            raise _Crash()
        return real(spec, *args, **kwargs)

    class Pipeline(TypedDict, total=False):
        ids: list[str]

    def both(state: Pipeline, config) -> Pipeline:
        first = synthesize_tasks(["airline"], home, per_env=1, levels=[1], tag="a",
                                 context={"runs": 3}, within=config)
        second = synthesize_tasks(["ecommerce"], home, per_env=1, levels=[1], tag="e",
                                  context={"runs": 3}, within=config)
        return {"ids": first + second}

    pipeline = StateGraph(Pipeline)
    pipeline.add_node("both", both)
    pipeline.add_edge(START, "both")
    pipeline.add_edge("both", END)
    monkeypatch.setattr(task_synthesis, "synthesize_env", killed_once)
    with pytest.raises(_Crash):
        run_graph(pipeline, {"ids": []}, thread_id="pipe", home=home)
    assert calls == ["airline", "ecommerce"]
    assert final_state(pipeline, thread_config("pipe", home))[1] == ["both"]
    state = run_graph(pipeline, None, thread_id="pipe", home=home)
    assert calls == ["airline", "ecommerce", "ecommerce"]  # airline's run was not redone
    cat = Catalog.open(home)
    envs = [cat.get_task(i)["payload"]["env_name"] for i in state["ids"]]
    assert envs == ["airline", "ecommerce"] and len(cat.list_tasks()) == 2
    with checkpointer(home) as saver:
        spaces = {(c.config["configurable"]["thread_id"], c.config["configurable"]["checkpoint_ns"]
                   .split(":")[0]) for c in saver.list(None)}
    assert {("pipe", ""), ("pipe", "both")} <= spaces and {t for t, _ in spaces} == {"pipe"}


def test_synthesize_tasks_with_guidelines_and_a_tag(home):
    from agent_world.graphs.synthesize_graph import synthesize_tasks

    guidelines = {"environments": ["airline"], "tools": ["airline/get_customer"],
                  "error_classes": ["wrong_tool"], "difficulty": {"level": 2}}
    ids = synthesize_tasks(["airline"], home=home, per_env=2, guidelines=guidelines, tag="r1",
                           context={"runs": 3})
    assert len(ids) == 2
    cat = Catalog.open(home)
    tasks = [cat.get_task(i)["payload"] for i in ids]
    assert all(t["difficulty"]["level"] in (1, 2, 3) for t in tasks)
    assert all(t["origin"]["guidelines"]["tools"] == ["airline/get_customer"] for t in tasks)
    # the same tag returns the finished run's tasks instead of synthesizing again
    assert synthesize_tasks(["airline"], home=home, per_env=2, tag="r1") == ids
    assert len(cat.list_tasks()) == 2


def test_synthesized_ids_come_in_a_canonical_order(tmp_path, monkeypatch):
    from agent_world.graphs.synthesize_graph import synthesize_tasks

    """Environments are synthesized concurrently and land in completion order; the ids come
    back grouped by environment in the order asked for, then by id, whatever that order was —
    a seeded run trains on the same data in the same order."""
    from agent_world.synthesis import loop as task_synthesis

    home = tmp_path / "home"
    real = task_synthesis.synthesize_env
    gate = threading.Event()

    def airline_last(spec, *args, **kwargs):
        if spec.name == "airline":  # finishes after ecommerce, although asked for first
            gate.wait(60)
        try:
            return real(spec, *args, **kwargs)
        finally:
            gate.set()

    monkeypatch.setattr(task_synthesis, "synthesize_env", airline_last)
    ids = synthesize_tasks(["airline", "ecommerce"], home=home, per_env=3, tag="order")
    cat = Catalog.open(home)
    tasks = {r["id"]: r["payload"]["env_name"] for r in cat.list_tasks()}
    stored = [r["id"] for r in cat.list_tasks()]
    assert tasks[stored[0]] == "ecommerce"  # stored in completion order
    envs = [tasks[i] for i in ids]
    assert envs == sorted(envs) and set(envs) == {"airline", "ecommerce"}
    assert ids == sorted(ids, key=lambda i: (tasks[i] != "airline", i))
    assert synthesize_tasks(["airline", "ecommerce"], home=home, per_env=3, tag="order") == ids
