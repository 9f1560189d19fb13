"""A task may ask what a fetched page says: an item of a section of its body ("what is the
second step the doc lists?"). Docs servers had asked only a page's id or title."""

from __future__ import annotations

import random
import warnings

from faker import Faker

from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.record_bodies import document_body
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources
from agent_world.synthesis.phrasing import ask_section
from agent_world.tasks.answers import answer_matches
from agent_world.tasks.check import _shows
from agent_world.tasks.sections import askable_sections, body_sections, section_item
from tests.conftest import built_offline
from tests.unit.task_helpers import gated_one_call_tasks

PAGE = """# Installation

This guide explains installation: what you need, the steps and the errors you may see.

## Prerequisites
- Node.js 18 or later
- Docker installed locally

## Steps
1. Install the package.
2. Set the options in the config file.
3. Restart the dev server.

## Example
```bash
npx acme init
```"""


def test_a_bodys_sections_and_their_items_are_read():
    sections = body_sections(PAGE)
    assert sections == {"Prerequisites": ["Node.js 18 or later", "Docker installed locally"],
                        "Steps": ["Install the package.", "Set the options in the config file.",
                                  "Restart the dev server."],
                        "Example": ["npx acme init"]}
    assert section_item(PAGE, "Steps", 1) == "Set the options in the config file."
    assert section_item(PAGE, "Steps", 3) is None and body_sections("no headings") == {}
    asked = askable_sections({"id": 3, "content": PAGE}, skip={"id"})
    assert ("content", "Example", 0) in asked and ("content", "Steps", 2) in asked
    assert askable_sections({"content": PAGE}, skip={"content"}) == []


def test_every_generated_page_has_sections_to_ask():
    rng, fake = random.Random(0), Faker()
    fake.seed_instance(0)
    for _ in range(10):
        body = document_body({"title": "Caching"}, rng, fake, guide=True)
        assert askable_sections({"content": body}, set())


def test_an_answer_states_the_item_and_a_page_holding_it_shows_it():
    item = "Set the options in the config file."
    assert answer_matches("Set the options in the config file", item)
    assert answer_matches("The second step is: set the options in the config file.", item)
    assert not answer_matches("Install the package.", item)
    # a reply that pastes the whole section, or the whole page, names no step
    assert not answer_matches("1. Install the package. 2. Set the options in the config file. "
                              "3. Restart the dev server.", item)
    assert not answer_matches(PAGE, item)
    assert _shows({"id": 1, "content": PAGE}, item, in_body=True)
    assert not _shows({"id": 1, "content": PAGE}, item)  # a long body is no field value


def test_a_section_is_asked_of_the_page_a_url_reads():
    """Ref's read_url had been asked "Which prerequisite does the url list first?"."""
    rng = random.Random(0)
    answer = {"kind": "section", "step": 0, "field": "content", "section": "Steps", "nth": 1}
    for _ in range(10):
        question = ask_section(answer, "url", rng)
        assert "the page" in question and "url" not in question
    assert "the guide" in ask_section(answer, "guide", rng)


def test_a_docs_servers_tasks_ask_what_its_pages_say():
    ref = next(r for r in corpus_sources() if r.name == "mui")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = built_offline(mine_theme(read_source(ref.spec), iterations=0, seed=0).spec)
    assert spec is not None
    kept = [t for t in gated_one_call_tasks(spec, "fetchDocs")
            if t.origin["answer"]["kind"] == "section"]
    assert kept
    for task in kept:
        answer = task.origin["answer"]
        pages = [r for r in spec.rows["docs"]
                 if section_item(r["content"], answer["section"], answer["nth"])
                 == task.reference_answer]
        assert pages, task.reference_answer
        assert task.reference_answer not in task.instruction
        assert any(w in task.instruction for w in ("step", "prerequisite", "command"))
