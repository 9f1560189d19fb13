"""Theme taxonomy: keyword classification, the LLM path, the L1/L2/L3 tree, deduplication."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from agent_world.envs.spec import TaxonomyPath, Theme
from agent_world.mining.sources import read_sources
from agent_world.mining.sources.base import EntityHint, SourceDocument, ToolDescription
from agent_world.mining.sources.harvest_corpus import corpus_sources
from agent_world.mining.taxonomy import (
    CATEGORIES,
    build_taxonomy,
    classify,
    merge_near_duplicates,
    normalized_name,
    similarity,
)
from agent_world.models import set_chat_model

GOLD = Path(__file__).parent.parent / "fixtures" / "taxonomy_gold.json"


def _doc(name: str, tools: list[tuple[str, str]], kind: str = "mcp", **kw: Any) -> SourceDocument:
    return SourceDocument(name=name, kind=kind, reference=f"uvx {name}",
                          tools=[ToolDescription(name=n, description=d) for n, d in tools], **kw)


TIME = _doc("time", [("get_current_time", "Get current time in a specific timezone"),
                     ("convert_time", "Convert time between timezones")],
            description="Time and timezone conversion capabilities")
GIT = _doc("git", [("git_status", "Shows the working tree status"),
                   ("git_commit", "Records changes to the repository"),
                   ("git_create_branch", "Creates a new branch"),
                   ("git_log", "Shows the commit logs")])
CLINIC = SourceDocument(
    name="clinic", kind="openapi", reference="clinic.yaml", title="Clinic API",
    tools=[ToolDescription(name="createAppointment", description="Book an appointment"),
           ToolDescription(name="listPatients", description="List patients")],
    entities=[EntityHint(name="Patient", fields=["name"]), EntityHint(name="Doctor")])
PRD = SourceDocument(name="team-tasks", kind="prd", reference="tasks.md", title="Team task tracker",
                     features=["Tasks move through todo, in progress and done",
                               "Users create projects"],
                     entities=[EntityHint(name="tasks"), EntityHint(name="projects")])
FETCH = _doc("fetch", [("fetch", "Fetches a URL from the internet and extracts its contents "
                                 "as markdown")])
FLIGHTS = _doc("skyhop", [("search_flights", "Search flights between airports"),
                          ("book_flight", "Book a flight for a passenger"),
                          ("get_hotel", "Hotel details")])
SHOP = _doc("shopfront", [("list_products", "List products in the catalog"),
                          ("create_order", "Create an order"), ("get_inventory", "Stock levels")])
PAY = _doc("payments", [("create_invoice", "Create an invoice"),
                        ("refund_payment", "Refund a payment")])
MYSTERY = _doc("zzq", [("frobnicate", "Frobnicates the quux")])


def _theme(doc: SourceDocument, name: str | None = None, l1: str = "Uncategorized") -> Theme:
    return Theme(name=name or doc.name, description=doc.description or doc.title,
                 taxonomy=TaxonomyPath(l1=l1, l3=name or doc.name), source_kind=doc.kind,
                 source_ref=doc.reference,
                 raw_descriptions=[f"{t.name}: {t.description}" for t in doc.tools])


@pytest.mark.parametrize("doc, l1, l2", [
    (TIME, "Productivity & Time", "Time & Timezones"),
    (GIT, "Developer Tools & Version Control", "Version Control"),
    (CLINIC, "Health & Medical", "Clinics & Appointments"),
    (PRD, "Productivity & Time", "Task Management"),
    (FETCH, "Web & Search", "Web Fetching & Scraping"),
    (FLIGHTS, "Travel & Transportation", "Flights & Hotels"),
    (SHOP, "E-commerce & Retail", "Online Stores"),  # the name says "shop"
    (PAY, "Finance & Payments", "Payments"),
    (MYSTERY, "Uncategorized", "General"),
])
def test_classify_offline_by_keywords(doc, l1, l2):
    path = classify(doc, use_llm=False)
    assert (path.l1, path.l2, path.l3) == (l1, l2, doc.name)
    assert classify(_theme(doc), use_llm=False) == path  # a Theme classifies like its doc


def test_a_few_incidental_description_words_are_not_a_category():
    vague = _doc("zzq", [("frobnicate", "Frobnicates the quux and keeps a note of it")])
    assert classify(vague, use_llm=False).l1 == "Uncategorized"
    # the same word in the server's name is real evidence
    named = _doc("quick-note", [("frobnicate", "Frobnicates the quux")])
    assert classify(named, use_llm=False).l1 == "Productivity & Time"


@pytest.fixture(scope="module")
def corpus_paths() -> dict[str, TaxonomyPath]:
    docs = read_sources(corpus_sources(), skip_errors=True)
    return {d.name: classify(d, use_llm=False) for d in docs}


def test_offline_placement_of_the_shipped_corpus_matches_hand_labels(corpus_paths):
    gold = json.loads(GOLD.read_text())["l1"]
    assert len(gold) >= 60 and set(gold) <= set(corpus_paths)
    wrong = {n: corpus_paths[n].l1 for n, l1 in gold.items() if corpus_paths[n].l1 != l1}
    assert 1 - len(wrong) / len(gold) >= 0.95, wrong
    # the corpus still spreads over most of the taxonomy
    assert len({p.l1 for p in corpus_paths.values()} - {"Uncategorized"}) >= 15


@pytest.mark.parametrize("name, l1", [
    ("airbnb", "Travel & Transportation"),  # listings of stays, not real estate
    ("vuetify", "Developer Tools & Version Control"),
    ("netlify", "System & Cloud Infrastructure"),
    ("codex", "Developer Tools & Version Control"),
    ("google-analytics", "Data & Databases"),  # "property" there is an analytics property
    ("chrome-devtools", "Web & Search"),
    ("ios-simulator", "Developer Tools & Version Control"),
    ("launchdarkly", "Developer Tools & Version Control"),
    ("hugeicons", "Document & Design"),  # compound name: "icons"
    ("hevy", "Health & Medical"),
])
def test_named_corpus_servers(corpus_paths, name, l1):
    assert corpus_paths[name].l1 == l1


def test_about_twenty_categories_each_with_sub_labels():
    assert 18 <= len(CATEGORIES) <= 25
    for l1 in ("Document & Design", "Social Media & Community", "System & Cloud Infrastructure",
               "Developer Tools & Version Control", "Travel & Transportation",
               "E-commerce & Retail", "Health & Medical", "Finance & Payments",
               "Productivity & Time", "Web & Search", "Data & Databases", "Knowledge & Memory",
               "Education", "Entertainment & Events"):
        assert len(CATEGORIES[l1]) >= 2


class _Fake(BaseChatModel):
    answer: str
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "fake-taxonomy"

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=self.answer))])


@pytest.fixture()
def fake_miner():
    def install(answer: str) -> _Fake:
        model = _Fake(answer=answer)
        set_chat_model("miner", model)
        return model

    yield install
    set_chat_model("miner", None)


def test_classify_uses_the_llm_when_configured(fake_miner):
    model = fake_miner('{"l1": "Productivity & Time", "l2": "World Clocks", "reason": "tz"}')
    path = classify(TIME)
    assert model.calls == 1
    assert (path.l1, path.l2, path.l3) == ("Productivity & Time", "World Clocks", "time")
    assert classify(TIME, use_llm=False).l2 == "Time & Timezones"


@pytest.mark.parametrize("answer", ['{"l1": "Astrology", "l2": "Stars"}', "no idea", ""])
def test_classify_falls_back_to_keywords_on_a_bad_llm_answer(fake_miner, answer):
    model = fake_miner(answer)
    path = classify(GIT)
    assert model.calls == 1
    assert (path.l1, path.l2) == ("Developer Tools & Version Control", "Version Control")


def test_build_taxonomy_groups_l1_l2_l3():
    themes = [_theme(GIT), _theme(TIME),
              _theme(CLINIC, l1="Health & Medical"), _theme(FETCH), _theme(MYSTERY),
              _theme(TIME, name="world-clock")]
    themes[2].taxonomy = TaxonomyPath(l1="Health & Medical", l2="Clinics & Appointments",
                                      l3="clinic")
    tax = build_taxonomy(themes)
    assert tax.tree["Productivity & Time"] == {"Time & Timezones": ["time", "world-clock"]}
    assert tax.tree["Developer Tools & Version Control"] == {"Version Control": ["git"]}
    assert tax.tree["Health & Medical"] == {"Clinics & Appointments": ["clinic"]}
    assert tax.tree["Uncategorized"] == {"General": ["zzq"]}
    assert list(tax.tree)[-1] == "Uncategorized"
    assert tax.counts()["Productivity & Time"] == 2
    assert ("Web & Search", "Web Fetching & Scraping", "fetch") in tax.paths()
    assert tax.theme("git").taxonomy.l1 == "Developer Tools & Version Control"
    assert "Version Control: git" in tax.render()
    assert themes[0].taxonomy.l1 == "Uncategorized"  # inputs untouched


def test_merge_near_duplicates_same_tools_or_same_name():
    time_a = _theme(TIME)
    time_b = _theme(_doc("world-clock", [("get_current_time", "Current time in a zone"),
                                         ("convert_time", "Convert a time to another zone")]))
    git_a = _theme(GIT)
    git_b = _theme(_doc("mcp-server-git", [("git_status", "Working tree status")]))
    kept, merged = merge_near_duplicates([time_a, git_a, time_b, git_b, _theme(FETCH)])
    assert [t.name for t in kept] == ["time", "git", "fetch"]
    assert [(a, b) for a, b, _ in merged] == [("time", "world-clock"), ("git", "mcp-server-git")]
    assert len(merged) == 2 and all(sim >= 0.7 for _, _, sim in merged)
    assert "get_current_time: Current time in a zone" in kept[0].raw_descriptions
    assert len(time_a.raw_descriptions) == 2  # inputs untouched


def test_merge_keeps_distinct_themes_and_respects_threshold():
    shop2 = _theme(_doc("storefront", [("list_products", "List products"),
                                       ("create_order", "Create an order"),
                                       ("cancel_order", "Cancel an order")]))
    themes = [_theme(SHOP), shop2, _theme(TIME), _theme(GIT)]
    assert 0.3 < similarity(themes[0], shop2) < 0.7
    kept, merged = merge_near_duplicates(themes)
    assert len(kept) == 4 and merged == []
    kept, merged = merge_near_duplicates(themes, threshold=0.3)
    assert [t.name for t in kept] == ["shopfront", "time", "git"] and len(merged) == 1
    assert normalized_name("mcp-server-time") == normalized_name("Time MCP") == "time"
