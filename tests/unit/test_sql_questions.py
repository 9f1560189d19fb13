"""A tool that runs the SQL it is given is asked questions over the data, not handed a
statement to paste: any statement whose rows show the answer passes, none that does not."""

from __future__ import annotations

import random

import pytest

from agent_world.design.tool_designer import design_tools
from agent_world.envs.episode import EnvRuntime
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.signatures import sql_argument
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources
from agent_world.synthesis.gates import run_gates
from agent_world.synthesis.synthesizer import _sql_candidate
from agent_world.tasks.check import check_episode
from agent_world.tasks.difficulty import Recipe
from agent_world.tasks.model import Step, Task


@pytest.fixture(scope="module")
def runtime():
    with EnvRuntime() as rt:
        yield rt


def test_a_tool_that_runs_sql_is_told_by_its_statement_argument_and_description():
    assert sql_argument(["sql"], "Run a read-only SQL query") == "sql"
    assert sql_argument(["query"], "Execute a SELECT query on the SQLite database") == "query"
    assert sql_argument(["query", "time"], "Execute an instant PromQL query") is None
    assert sql_argument(["query", "count"], "Search the web for a query") is None
    # it converts a statement, it runs none; another query language is no SQL
    assert sql_argument(["sql"], "Converts SQL query to a PostgREST API request") is None
    assert sql_argument(["query"], "Execute a read Cypher query on the neo4j database") is None
    assert sql_argument(["databaseId", "query"],
                        "Execute a SQL query against a D1 database") == "query"


def _designed(server: str):
    ref = next(r for r in corpus_sources() if r.name == server)
    spec = mine_theme(read_source(ref.spec), iterations=1, seed=0).spec
    return spec, design_tools(spec, model=None)


def _body(design, tool: str) -> str:
    body = design.module[design.module.index(f"def {tool}("):]
    return body[: body.index("\n@tool")]


def test_a_tool_that_executes_sql_runs_selects_and_one_that_converts_it_does_not():
    _, cloudflare = _designed("cloudflare")
    assert "'SELECT'" in _body(cloudflare, "d1_query")
    _, postgrest = _designed("postgrest")
    # a conversion makes nothing: it is not served as an insert of the SQL it was given
    assert "def sqlToRest(" not in postgrest.module or \
        "_one_statement" not in _body(postgrest, "sqlToRest")


def test_a_service_that_runs_sql_has_data_for_its_statements():
    """Postgres' only tool is query(sql): it was mined as a table of the statements run
    ("look up query 38 ... tell me its sql"); now a dataset its SELECTs read."""
    spec, design = _designed("postgres")
    assert {"customers", "products", "orders", "order_items"} <= {t.name for t in spec.tables}
    assert "query" in design.source_tools
    body = _body(design, "query")
    assert "_one_statement" in body and "'SELECT'" in body, body


def _questions(spec, runtime, n: int = 12) -> list[Task]:
    recipe = Recipe(length=1, obscured=False, many_distractors=False)
    out = []
    for seed in range(80):
        task = _sql_candidate(spec, runtime, random.Random(seed), recipe, "read_query", 0, None)
        if isinstance(task, Task):
            out.append(task)
        if len(out) == n:
            break
    return out


def _attempt(task: Task, runtime, spec, calls: list[str], answer):
    ep = runtime.open(spec, seed=task.seed)
    try:
        steps = []
        for sql in calls:
            obs = ep.step("read_query", {"query": sql})
            steps.append(Step(tool="read_query", arguments={"query": sql}, ok=obs.ok,
                              result=obs.result))
        return check_episode(task, ep, answer, steps=steps)
    finally:
        ep.close()


def test_sql_questions_say_the_question_and_pass_the_gates(built, runtime):
    spec = built["sqlite"]
    tasks = _questions(spec, runtime)
    assert len(tasks) >= 8
    forms = {t.origin["sql"]["form"] for t in tasks}
    assert len(forms) >= 3, forms
    for task in tasks:
        text = task.instruction
        assert "SELECT" not in text and "query" not in text.lower(), text
        assert text.rstrip().endswith("?") and task.reference_answer is not None
        if task.origin["sql"]["form"] in ("count", "link_count"):
            assert task.reference_answer >= 2  # a count of one is a guess away
        failed = [g for g in run_gates(task, spec, runtime) if not g.passed]
        assert not failed, (text, [(g.name, g.detail) for g in failed])


def test_any_statement_whose_rows_show_the_answer_passes_and_no_other(built, runtime):
    spec = built["sqlite"]
    task = next(t for t in _questions(spec, runtime, 40)
                if t.origin["sql"]["form"] in ("count", "link_count"))
    gold = task.chain[0].arguments["query"]
    ref = task.reference_answer
    # the attempt's own statement: another alias, other spacing and case
    own = gold.replace('AS "count"', "AS n").replace("SELECT", "select", 1) + " "
    assert _attempt(task, runtime, spec, [own], ref).passed
    assert _attempt(task, runtime, spec, [gold], ref).passed
    # a statement that shows nothing of the answer, then the right number: a guess
    guess = _attempt(task, runtime, spec, ["SELECT 'none' AS nothing"], ref)
    assert not guess.passed and guess.components["grounded"] == 0.0
    # the right statement, the wrong number
    assert not _attempt(task, runtime, spec, [own], ref + 1).passed


def test_a_tool_that_runs_changes_is_asked_a_change_checked_on_the_state(built, runtime):
    spec = built["sqlite"]
    recipe = Recipe(length=1, obscured=False, many_distractors=False)
    tasks = [t for seed in range(12) if isinstance(t := _sql_candidate(
        spec, runtime, random.Random(seed), recipe, "write_query", 0, None), Task)]
    assert len(tasks) >= 6
    task = tasks[0]
    assert "UPDATE" not in task.instruction and " set the " in task.instruction
    assert task.reference_answer is None and task.expected_changes
    assert not [g.name for g in run_gates(task, spec, runtime) if not g.passed]
    gold = task.chain[0].arguments["query"]

    def attempt(sql: str):
        ep = runtime.open(spec, seed=task.seed)
        try:
            obs = ep.step("write_query", {"query": sql})
            step = Step(tool="write_query", arguments={"query": sql}, ok=obs.ok,
                        result=obs.result)
            return check_episode(task, ep, "Done.", steps=[step])
        finally:
            ep.close()

    # the attempt's own statement (lower-case keywords, no quoted names) makes the change
    assert attempt(gold.replace("UPDATE", "update").replace('"', "")).passed
    # a change of every record, not the one asked
    assert not attempt(gold[: gold.index(" WHERE")]).passed
