"""A tool that takes a list of keys is called with stored values, said as the things they are,
and what a look-up of one key returns is that record: MUI's documentation server (its only
served tool is fetchDocs(urls)) gave no task at all, every candidate failing to call it."""

from __future__ import annotations

import random
import warnings

from agent_world.envs import load_example
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources
from agent_world.synthesis.gates import stated
from agent_world.synthesis.phrasing_values import arg_phrase
from agent_world.synthesis.task_answers import answer_options
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.sections import body_sections
from agent_world.tasks.walks import Plan, PlanStep
from tests.conftest import built_offline
from tests.unit.task_helpers import gated_one_call_tasks


def test_a_list_of_values_is_said_as_its_things():
    assert arg_phrase("urls", ["https://mui.com/x"]) == "the url 'https://mui.com/x'"
    assert arg_phrase("tags", ["red", "blue"]) == "the tags 'red' and 'blue'"
    assert arg_phrase("task_ids", [17]) == "task 17"  # keys stay their records


def test_a_list_is_stated_when_every_value_is():
    text = "Fetch the urls 'https://a.example/x' and 'https://b.example/y'."
    assert stated(["https://a.example/x", "https://b.example/y"], text)
    assert not stated(["https://a.example/x", "https://c.example/z"], text)
    assert not stated([{"a": 1}], text)


def test_a_list_argument_draws_stored_values_of_its_item():
    spec = load_example("ecommerce").model_copy(deep=True)
    tool = spec.tool("search_products")
    tool.parameters["properties"]["brands"] = {"type": "array", "items": {"type": "string"}}
    stored = {r["brand"] for r in spec.rows["products"]}
    drawn = ValueSampler(spec).candidates("search_products", "brands",
                                          tool.parameters["properties"]["brands"])
    assert drawn and all(1 <= len(v) <= 2 and set(v) <= stored for v in drawn)
    assert any(len(v) == 1 for v in drawn) and any(len(v) == 2 for v in drawn)


def test_what_a_look_up_of_one_key_returns_is_that_record():
    plan = Plan(steps=[PlanStep(tool="fetch_docs", given={"urls": ["https://a.example/x"]})])
    record = [{"id": 3, "title": "Installation", "content": "# Installation\n\n..."}]
    options = answer_options(plan, record, random.Random(0), aggregate=False)
    assert {"kind": "field", "step": 0, "field": "title"} in options
    assert plan.steps[0].select is None
    listed = Plan(steps=[PlanStep(tool="list_docs", given={"category": "guides"})])
    assert answer_options(listed, record, random.Random(0), aggregate=False) == []


def test_mui_docs_are_fetched_by_url_in_tasks():
    ref = next(r for r in corpus_sources() if r.name == "mui")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    urls = next(t for t in spec.tables if t.name == "doc_urls")
    assert next(c for c in urls.columns if c.name == "url").unique  # a URL is of one page
    spec = built_offline(spec)
    assert spec is not None
    kept = gated_one_call_tasks(spec, "fetchDocs")
    assert kept
    for task in kept:
        assert [c.tool for c in task.chain] == ["fetchDocs"]
        urls = task.chain[0].arguments["urls"]
        assert all(f"'{u}'" in task.instruction for u in urls) and "[" not in task.instruction
        assert ("the url '" if len(urls) == 1 else "the urls '") in task.instruction
        # a field of a fetched page or an item of its body, which the request does not give
        # away (its URL names its title: 'Data fetching' is at '.../docs/data-fetching')
        page = {k: v for r in spec.rows["docs"] if r["name"] == task.reference_answer
                or r["id"] == task.reference_answer or task.reference_answer in [
                    i for items in body_sections(r["content"]).values() for i in items]
                for k, v in r.items()}
        assert page
        slug = str(task.reference_answer).lower().replace(" ", "-")
        assert slug not in task.instruction.lower() or slug.isdigit()


def test_a_hotels_urls_keep_their_column():
    """Only a page's URL is of one page: made unique for a hotel's URLs, a generated URL that
    repeated made the gate drop the column, and with it the environment (compare_hotels(urls)
    had nothing to read)."""
    ref = next(r for r in corpus_sources() if r.name == "hotels")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = mine_theme(read_source(ref.spec), iterations=1, seed=0).spec
    urls = next(t for t in spec.tables if t.name == "hotel_urls")
    assert "url" in {c.name for c in urls.columns}
