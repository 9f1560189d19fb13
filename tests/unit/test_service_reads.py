"""What the arena builds beside a real service's own tools: nothing that writes where the
service only reads, nothing over a table that only logs a tool's calls, no record named after
the service itself; and how a request says a tool's record and act."""

from __future__ import annotations

import random
import warnings

import pytest

from agent_world.design.offline.source_acts import call_logs, only_reads
from agent_world.design.offline.source_plans import plan_tools
from agent_world.envs import load_example
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.naming import tool_identifier
from agent_world.mining.offline.signatures import tool_shape
from agent_world.mining.sources import DEFAULT_SOURCES, read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources
from agent_world.synthesis.action_phrases import action_phrase
from agent_world.synthesis.phrasing_clauses import step_clause
from agent_world.tasks.flaws import chain_flaws
from agent_world.tasks.walks import Binding, Plan, PlanStep
from agent_world.tasks.words import entity, source_tools

_WRITES = ("create_", "update_", "delete_", "set_")


def _reading(coverage, plans) -> set[str]:
    """The source tools that only read, as the planner tells them."""
    planned = {p.name: p for p in plans}
    return {source for source, entry in coverage["tools"].items()
            if only_reads(source, entry, planned.get(tool_identifier(source)))}


def _mined(server: str):
    ref = next(r for r in corpus_sources() if r.name == server)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mine_theme(read_source(ref.spec), iterations=0, seed=0).spec


@pytest.mark.parametrize("server", ["aws-documentation", "obsidian", "flightradar", "variflight"])
def test_a_service_that_only_reads_gains_no_writes(server):
    """AWS documentation had gained delete_documentation, Obsidian's reader a note on each
    note, the flight tracker update_flight: the arena's own writes over what the service
    only lets its users read. A tool left unbuilt whose name says no write (Variflight's
    flightHappinessIndex) does not make the service one that writes."""
    spec = _mined(server)
    plans, _ = plan_tools(spec)
    assert [p for p in plans if p.source_tool] and not [p for p in plans if p.write]


def test_a_service_with_writes_keeps_the_arena_s_writes():
    plans, _ = plan_tools(_mined("hubspot"))
    assert [p.name for p in plans if p.write and not p.source_tool]


def test_no_look_up_or_edit_of_a_table_that_logs_a_tool_s_calls():
    """LSP's get_incoming_calls(file_path, line, character) kept its calls in incoming_calls;
    the arena had added get_incoming_call and list_incoming_calls ("look up incoming call
    4"). The service's own tool stays; LSP still gets the arena's writes elsewhere."""
    spec = _mined("lsp")
    plans, _ = plan_tools(spec)
    coverage = spec.provenance.stats["tool_coverage"]
    logs = call_logs(spec, coverage, _reading(coverage, plans))
    assert "incoming_calls" in logs
    assert not [p.name for p in plans if not p.source_tool and p.table in logs]
    assert [p.name for p in plans if p.write and not p.source_tool]


def test_a_log_of_one_argument_and_what_the_call_read_is_a_call_log():
    """The fetcher's fetches kept only the url each fetch was given and the page it read;
    get_fetch and list_fetches had asked "find fetch 37, then fetch that fetch's url", and
    the trained policy took get_fetch for fetch. Metabase's queries log its execute_query
    calls the same way. The pages stay the fetcher's records."""
    ref = next(r for r in DEFAULT_SOURCES if r.name == "fetch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = mine_theme(read_source(ref), iterations=1, seed=0).spec
    plans, _ = plan_tools(spec)
    names = {p.name for p in plans}
    assert "fetch" in names and {"get_page", "list_pages"} <= names
    assert not {"get_fetch", "list_fetches"} & names, names
    spec = _mined("metabase")
    plans, _ = plan_tools(spec)
    assert not [p.name for p in plans if not p.source_tool and p.table == "queries"]


def test_a_table_named_for_a_thing_is_no_call_log_however_its_columns_came():
    """SonarQube's issues took many of the issues search's filters as columns; they are
    still the service's issues."""
    spec = _mined("sonarqube")
    plans, _ = plan_tools(spec)
    coverage = spec.provenance.stats["tool_coverage"]
    assert "issues" not in call_logs(spec, coverage, _reading(coverage, plans))


@pytest.mark.parametrize("server, gone, kept", [
    ("exa", "exas", "search_results"),  # web_search_exa: the web's pages, not 'exas'
    ("reddit", "reddits", "search_results"),  # search_reddit
    ("terraform", "module_searches", "modules"),  # moduleSearch searches the modules
])
def test_a_read_of_the_service_itself_names_no_record(server, gone, kept):
    tables = {t.name for t in _mined(server).tables}
    assert gone not in tables and kept in tables


def test_the_service_s_name_is_no_record_but_a_file_type_is():
    assert tool_shape("web_search_exa", None, None, service="exa").obj is None
    assert tool_shape("query_omnifocus", None, None, service="omnifocus").obj is None
    assert tool_shape("read_pdf", None, None, service="pdf").obj == "pdf"
    assert tool_shape("list_teams", None, None, service="teams").obj == "team"


@pytest.mark.parametrize("tool, said", [
    ("read_multiple_files", "file"),  # not "the multiple file"
    ("get_my_cards", "card"),  # not "the my card"
    ("list_available_documents", "document"),  # not "that available document's document"
    ("domain_byComposeId", "domain"),  # not "the by compose id"
    ("env_var_bulk_set", "env var"),
    ("genai_batch_inference_list", "genai batch inference"),  # a batch inference is a thing
])
def test_a_record_is_named_without_how_many_or_how_it_is_found(tool, said):
    assert entity(tool) == said


def test_a_warning_to_the_model_is_no_request():
    """Shopify's learn_shopify_api opens "MANDATORY FIRST STEP: This tool MUST be called
    before any other Shopify tools"; a task asked "MANDATORY FIRST STEP for that
    conversation"."""
    spec = load_example("ecommerce").model_copy(deep=True)
    tool = spec.tool("get_customer")
    tool.description = ("\n    🚨 MANDATORY FIRST STEP: This tool MUST be called before any "
                        "other Shopify tools.\n")
    phrase = action_phrase(spec, "get_customer")
    assert "MANDATORY" not in phrase and "MUST" not in phrase and "customer" in phrase


def test_an_arena_write_in_a_service_that_only_reads_is_a_flaw():
    spec = load_example("ecommerce")
    coverage = {"tools": {"get_customer": {"table": "customers", "read_only": True}}}
    reader = spec.model_copy(update={"provenance": spec.provenance.model_copy(
        update={"stats": {"tool_coverage": coverage}})})
    assert source_tools(reader) == {"get_customer"}
    edit = {"origin": {"plan": {"steps": [
        {"tool": "get_customer", "given": {"customer_id": 3}, "bound": {}},
        {"tool": "add_address", "given": {"line1": "A"},
         "bound": {"customer_id": {"step": 0, "field": "customer_id"}}}]}}}
    assert "edits_a_reader" in chain_flaws(edit, reader)
    assert "edits_a_reader" not in chain_flaws(edit, spec)  # no source: not a reader


def test_a_listing_given_its_own_record_s_key_reads_that_record():
    """Xero's list_contact_groups(contactGroupId) read one group: a task asked to "go over
    the contact groups of contact group 1"."""
    spec = load_example("ecommerce")
    own = Plan(steps=[PlanStep(tool="list_orders", given={"order_id": "O1"})])
    said = step_clause(spec, own, 0, random.Random(0))
    assert "order O1" in said and "orders of" not in said
    owned = Plan(steps=[PlanStep(tool="list_orders", given={"customer_id": 3})])
    assert "orders of customer 3" in step_clause(spec, owned, 0, random.Random(0))


def test_a_shouted_phrase_is_said_in_plain_case_and_an_acronym_keeps_its():
    spec = load_example("ecommerce").model_copy(deep=True)
    spec.tool("get_customer").description = "Issue an HTTP request FROM THE HOST."
    assert action_phrase(spec, "get_customer") == "issue an HTTP request from the host"
    spec.tool("get_customer").description = "Call the REST API of the shop."
    assert "REST API" in action_phrase(spec, "get_customer")


def test_a_date_format_is_no_word_of_the_act():
    spec = load_example("ecommerce").model_copy(deep=True)
    spec.tool("get_customer").description = "Write a body measurement for a new YYYY-MM-DD date."
    assert action_phrase(spec, "get_customer") == "write a body measurement for a new date"


def test_how_well_a_tool_is_built_is_no_word_of_the_act():
    """Word's add_footnote_robust had asked to "add footnote with robust validation and Word
    compliance"."""
    spec = load_example("ecommerce").model_copy(deep=True)
    spec.tool("get_customer").description = ("Add footnote with robust validation and Word "
                                              "compliance. This is the production-ready version.")
    assert action_phrase(spec, "get_customer") == "add footnote"
    spec.tool("get_customer").description = "Delete footnote with comprehensive cleanup."
    assert action_phrase(spec, "get_customer") == "delete footnote"
    spec.tool("get_customer").description = "Add a table with the given rows."
    assert action_phrase(spec, "get_customer") == "add a table with the given rows"


def test_an_act_that_says_what_it_sets_is_given_its_record_not_values():
    """Word's auto_fit_table_columns(filename, table_index): "Set table columns to auto-fit
    based on content: set its filename to 'contract-2025.docx'" asked to rename a file."""
    spec = load_example("ecommerce").model_copy(deep=True)
    plan = Plan(steps=[PlanStep(tool="update_address",
                                given={"address_id": "A1", "line1": "5 Main St"})])
    assert "set its line 1 to '5 Main St'" in step_clause(spec, plan, 0, random.Random(0))
    spec.tool("update_address").description = "Set table columns to auto-fit based on content."
    said = step_clause(spec, plan, 0, random.Random(0))
    assert "set its" not in said and "'5 Main St'" in said


def test_the_synthesizer_reads_a_plan_s_flaws_as_the_counter_does():
    """After re-reads are collapsed the synthesizer asks the flaw counter about the plan it
    will keep (a walk's own rules had seen the longer chain)."""
    spec = load_example("ecommerce")
    plan = Plan(steps=[PlanStep(tool="add_address", given={"customer_id": 1, "line1": "A"}),
                       PlanStep(tool="update_address", given={"line1": "B"},
                                bound={"address_id": Binding(step=0, field="address_id"),
                                       "customer_id": Binding(step=0, field="customer_id")})])
    assert chain_flaws({"origin": {"plan": plan.model_dump()}}, spec) == ["edits_what_it_created"]
