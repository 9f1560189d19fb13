"""What corpus tasks say, read as a user would: names the miner gives records its source names
none for are no names a request says or asks for ("the funding rate named frontend-rate",
"what is shard 11's name?" 'inventory-shard'); a rename's new name is not the name it has; a
service's tool built without its input is called by no task; values are of their kind."""

from __future__ import annotations

import json
import random
import warnings

import pytest

from agent_world.envs import EnvRuntime, load_example
from agent_world.envs.table_spec import ColumnSpec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.naming import ADDED_LABEL, placeholder_name
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import CORPUS_DIR, corpus_sources
from agent_world.synthesis.synthesizer import build_candidate
from agent_world.synthesis.task_answers import answer_options
from agent_world.tasks.difficulty import Recipe
from agent_world.tasks.flaws import chain_flaws, names_an_added_label
from agent_world.tasks.model import Task
from agent_world.tasks.sampling import ValueSampler
from agent_world.tasks.toolgraph import build_tool_graph
from agent_world.tasks.walks import Plan, PlanStep, _selector
from agent_world.tasks.words import added_labels, empty_tables, lost_inputs


def _mined(server: str):
    ref = next(r for r in corpus_sources() if r.name == server)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mine_theme(read_source(ref.spec), iterations=0, seed=0).spec


def _labelled(table: str = "products"):
    """The shop with its products' names marked as the miner's own."""
    spec = load_example("ecommerce").model_copy(deep=True)
    for c in next(t for t in spec.tables if t.name == table).columns:
        if c.name == "name":
            c.description = ADDED_LABEL
    return spec


def test_the_miner_marks_the_name_it_gives_a_record():
    """LSP's hovers have no name in the source; its symbols are named by rename_symbol's
    symbol_name."""
    spec = _mined("lsp")
    cols = {t.name: {c.name: c for c in t.columns} for t in spec.tables}
    assert cols["hovers"]["name"].description == ADDED_LABEL
    assert cols["symbols"]["name"].description != ADDED_LABEL
    assert {r["name"] for r in spec.rows["hovers"]} <= added_labels(spec)
    assert not {r["name"] for r in spec.rows["symbols"]} & added_labels(spec)


def test_a_value_made_up_from_its_column_name_is_said_of_no_record():
    """Excel's tasks asked for "the workbook whose doc properties is 'payments-doc-property'"
    and "whose calculation is 'sync-calculation'": values the miner made from the column's
    name, like the names it gives records."""
    import re

    spec = _mined("excel")
    made = [r[c] for r in spec.rows["workbooks"] for c in ("doc_properties", "calculation")
            if r.get(c) is not None]
    assert made and set(map(str, made)) <= added_labels(spec)
    assert not {str(r["path"]) for r in spec.rows["workbooks"] if r.get("path")} & \
        added_labels(spec)
    # its content_base64 held chat text ('Looks good to me, approved.'): base64 now
    encoded = [r["content_base64"] for r in spec.rows["workbooks"] if r.get("content_base64")]
    assert encoded and all(re.fullmatch(r"[A-Za-z0-9+/]+={0,2}", v) for v in encoded)


def test_a_call_past_a_create_may_not_name_a_record_by_an_added_label():
    spec = _labelled()
    name = spec.rows["products"][0]["name"]
    assert name in added_labels(spec)
    look = [{"tool": "search_products", "given": {"query": name}}]
    assert names_an_added_label(look, spec)
    assert not names_an_added_label(look, load_example("ecommerce"))
    picked = [{"tool": "search_products", "given": {"query": "x"}, "select": {"name": name}}]
    assert names_an_added_label(picked, spec)
    made = [{"tool": "create_product", "given": {"name": name}}]
    assert not names_an_added_label(made, spec)  # a create names its new record
    task = {"origin": {"plan": {"steps": [{"tool": "get_product", "given": {"product_id": 1}}]}},
            "reference_answer": name}
    assert chain_flaws(task, spec) == ["names_an_added_label"]


def test_no_answer_is_an_added_label():
    spec = _labelled()
    row = spec.rows["products"][0]
    plan = Plan(steps=[PlanStep(tool="get_product", given={"product_id": row["product_id"]})])
    last = {"product_id": row["product_id"], "name": row["name"], "brand": "Acme"}
    fields = {o["field"] for o in answer_options(plan, last, random.Random(0), aggregate=False,
                                                 labels=added_labels(spec))}
    assert fields == {"brand"}
    both = answer_options(plan, last, random.Random(0), aggregate=False)
    assert {"brand", "name"} <= {o["field"] for o in both}


def test_no_answer_is_the_placeholder_a_create_names_its_record():
    """Word's create_custom_style(style_name='Heading 1') had been asked its new style's
    name, and the answer was 'Untitled custom style', the same for every new style."""
    plan = Plan(steps=[PlanStep(tool="create_custom_style",
                                given={"filename": "a.docx", "style_name": "Heading 1"})])
    last = {"id": 7, "name": placeholder_name("custom_style"), "font_size": 14}
    fields = {o["field"] for o in answer_options(plan, last, random.Random(0), aggregate=False,
                                                 changed={"id", "name", "font_size"})}
    assert "name" not in fields and "font_size" in fields


def test_no_total_or_extreme_of_a_number_that_names_a_record():
    """Backlog had asked "the sum of the issue id or key", others "the lowest pull request
    number", "the smallest port", "the highest map index": numbers that name or place a
    record are no amounts. A size still is."""
    plan = Plan(steps=[PlanStep(tool="list_things", given={})])
    items = [{"id": i, "issue_id_or_key": i * 7, "pull_request_number": 40 + i, "port": 8000 + i,
              "map_index": i, "size_bytes": 100 * i + 3} for i in range(1, 5)]
    asked = {o.get("field") for seed in range(20)
             for o in answer_options(plan, items, random.Random(seed), aggregate=True)}
    assert asked - {None} == {"size_bytes"}, asked


def test_no_record_is_picked_by_its_password_nor_asked_for_it():
    """Word's tasks had asked for "the available document whose password is
    '2)22RNlpuZ+1@zkM'" and to "tell me its password"."""
    plan = Plan(steps=[PlanStep(tool="list_documents", given={})])
    items = [{"id": i, "password": f"pw-{i}!x", "api_key": f"k{i}", "author": f"A{i % 2}",
              "title": f"Doc {i}"} for i in range(1, 5)]
    for seed in range(12):
        for o in answer_options(Plan(steps=[PlanStep(tool="list_documents", given={})]),
                                items, random.Random(seed), aggregate=False):
            assert o["field"] not in ("password", "api_key"), o
    picked = {k for seed in range(12) for k in _selector(
        items, items[0], set(), random.Random(seed), frozenset())}
    assert picked and not picked & {"password", "api_key"}, picked
    assert plan.steps[0].select is None


def test_the_synthesizer_asks_nothing_by_an_added_label():
    """The shop's walks name products by name; once those names are the miner's own, no
    request past a create says one and no answer is one."""
    def said(spec):
        names = {r["name"] for r in spec.rows["products"]}
        g = build_tool_graph(spec, runtime=rt)
        sampler = ValueSampler(spec)
        out = []
        for i in range(80):
            cand = build_candidate(spec, g, rt, random.Random(i), Recipe(2, True, False),
                                   ("graph", "programmatic")[i % 2], seed=i, sampler=sampler)
            if isinstance(cand, Task):
                steps = cand.origin["plan"]["steps"]
                creates = any(s["tool"].startswith(("create", "add")) for s in steps)
                out.append(not creates and (any(n in cand.instruction for n in names)
                                            or cand.reference_answer in names))
        return out

    with EnvRuntime() as rt:
        plain = said(load_example("ecommerce"))
        labelled = said(_labelled())
    assert any(plain)  # the test could fail: product names are said when they are real
    assert labelled and not any(labelled)


def test_a_rename_is_to_another_name():
    """LSP's rename_symbol(symbol_name, new_name) drew both from one stored symbol and its
    tests knew one new name: "rename the symbol named gateway-symbol: set its new name to
    gateway-symbol"."""
    spec = load_example("ecommerce").model_copy(deep=True)
    spec.tool("update_address").parameters["properties"]["new_label"] = {"type": "string"}
    sampler = ValueSampler(spec)
    label = spec.rows["addresses"][0]["label"]
    args = sampler._renamed("update_address", {"label": label, "new_label": label},
                            random.Random(0))
    assert args["new_label"] != label
    assert args["new_label"] in {r["label"] for r in spec.rows["addresses"]}
    kept = {"label": label, "new_label": "Cabin"}
    assert sampler._renamed("update_address", kept, random.Random(0)) == kept


@pytest.mark.parametrize("column", ["line", "character", "start_line", "column"])
def test_a_place_in_a_file_is_a_whole_number(column):
    """LSP's rename_symbol_strict(line, character) of JSON type number had been sampled as
    money: "set its line to 26.69 and its character to 138.77"."""
    assert column_semantic("symbols", ColumnSpec(name=column, type="real")) == "position"


def test_a_call_of_a_service_tool_built_without_its_input_is_a_flaw():
    """exa's web_fetch_exa(urls) was built as a listing of past fetches: "look up fetch 2"."""
    spec = load_example("ecommerce")
    coverage = {"tools": {"get_customer": {"arguments": {
        "customer_id": {"required": True}, "If-Match": {"required": False}}}}}
    served = spec.model_copy(update={"provenance": spec.provenance.model_copy(
        update={"stats": {"tool_coverage": coverage}})})
    assert lost_inputs(served, "get_customer") == []
    coverage["tools"]["get_customer"]["arguments"]["urls"] = {"required": True}
    assert lost_inputs(served, "get_customer") == ["urls"]
    task = {"origin": {"plan": {"steps": [{"tool": "get_customer", "given": {}}]}}}
    assert "lost_its_input" in chain_flaws(task, served)
    assert "lost_its_input" not in chain_flaws(task, spec)  # no source: nothing lost


@pytest.mark.parametrize(("table", "column", "description", "kind"), [
    ("attributes", "value_type", "Type hint if needed", "category"),
    ("timezones", "day_of_week", "", "weekday"),
    ("postgrest_requests", "path", "", "api_path"),
    ("ranges", "at", "Top-left destination cell.", "cell"),
    ("documents", "path", "", "file_path"),
    ("calculations", "expression", "", "math_expression"),
    ("app_executions", "expression", "JavaScript expression to execute.", "js_expression"),
    ("workbook_worksheet_ranges", "address", "Value for the 'address' path segment.",
     "cell_ref"),
    ("contacts", "address", "", "address"),
    ("contact_email_addresses", "address", "", "email"),
    ("items", "tag", "", "tag"),
    # a slug is words ('payments-api', 'hansen-group'), no ticket key ('LN-5130')
    ("repositories", "repo_slug", "", "slug_name"),
    ("repositories", "workspace_slug", "", "org_slug"),
    ("organizations", "slug", "", "org_slug"),
    # a directory's own path names no file (create_directory was given '.../pricing.mp3')
    ("directories", "path", "", "dir_path"),
    ("files", "path", "", "file_path"),
    # a status of a kind of thing is a state, no '<area>-<noun>' ('admin-payment-status')
    ("orders", "payment_status", "", "status"),
    # a person is named ('checkout-requester' before)
    ("stories", "requester", "", "person_name"),
    ("requests", "approved_by", "", "person_name"),
    ("codes", "additional_instruction", "", "sentence"),
    ("entity_observations", "observation", "", "sentence"),
])
def test_values_of_their_kind(table, column, description, kind):
    """Roblox's value_type had been a sentence, the time server's day_of_week 'why', a
    PostgREST request path a file ('/data/Downloads/schedule.key'), Excel's copy_range(at)
    a date."""
    col = ColumnSpec(name=column, type="text", description=description)
    assert column_semantic(table, col) == kind


def test_a_kind_of_value_is_a_data_type_and_a_listed_choice_is_one():
    from agent_world.mining.offline.described_values import described_examples
    from agent_world.mining.offline.value_pools import category_pool
    assert "number" in category_pool("value_type") and "premium" in category_pool("plan_type")
    said = "The kind of symbol (function, class, variable, method, etc.)"
    assert described_examples(said) == ["function", "class", "variable", "method"]


def test_a_priority_is_whole_and_a_code_host_s_branches_are_git_s():
    """GitLab's update_label(priority) had been set to 50.53, its protect_branch given
    'Carolynfort Library' (a library's branch: the branches table had no repository key)."""
    from agent_world.mining.offline.signatures import column_type
    assert column_type("priority", "number", None) == "integer"
    # whole units of time and an HTTP status ("reminder minutes 65.87", "status 132.64")
    assert column_type("reminder_minutes_before_start", "number", None) == "integer"
    assert column_type("status", "number", None) == "integer"
    assert column_type("cost_per_days", "number", None) == "real"
    assert column_type("at", None, None, "Top-left cell.") == "text"
    spec = _mined("gitlab")
    names = [r["name"] for r in spec.rows["branches"]]
    assert names and not [n for n in names if " " in n]


def _reading_products(spec):
    """`spec` with get_product's code as the builder writes a look-up (its table named)."""
    code = ('def get_product(ctx, product_id):\n'
            '    return ctx.one(\'SELECT * FROM "products" WHERE product_id = ?\', (product_id,))\n')
    return spec.model_copy(update={"tools": [
        t.model_copy(update={"source": code}) if t.name == "get_product" else t
        for t in spec.tools]})


def test_a_read_of_records_with_nothing_in_them_is_a_flaw():
    """Glean's company searches hold an id, timestamps and a name the miner made up: no
    request asks about one ("when was company search 13 updated?"); a write is no read."""
    assert "company_searches" in empty_tables(_mined("glean"))
    spec, plain = _reading_products(_labelled()), _reading_products(load_example("ecommerce"))
    assert not empty_tables(spec)
    for c in next(t for t in spec.tables if t.name == "products").columns:
        if not c.primary_key and not c.foreign_key and c.name not in ("created_at",
                                                                      "updated_at"):
            c.description = ADDED_LABEL
    assert "products" in empty_tables(spec)
    read = {"origin": {"plan": {"steps": [{"tool": "get_product", "given": {"product_id": 1}}]}}}
    assert "reads_an_empty_record" in chain_flaws(read, spec)
    assert "reads_an_empty_record" not in chain_flaws(read, plain)
    made = {"origin": {"plan": {"steps": [{"tool": "place_order", "given": {}}]}}}
    assert "reads_an_empty_record" not in chain_flaws(made, spec)


def test_a_config_entry_s_name_does_not_say_its_column_twice():
    """'sync-sync-option', 'users-user-tag': the area before the noun is another word."""
    from agent_world.mining.offline.value_pools import named_value
    for seed in range(200):
        for column in ("sync_option", "user_tag", "search_query_template"):
            head, _, noun = named_value(column, "", random.Random(seed)).partition("-")
            assert head.rstrip("s") not in noun.split("-")


def test_a_listed_record_is_not_picked_by_what_the_listing_was_asked():
    """SonarQube's components hold what `components(p, q)` was asked: "the component whose p
    is 'book'" is the request echoed back; a state the listing filters by is the record's own
    ("the loan whose status is 'checked_out'")."""
    from agent_world.envs.spec import ToolSpec
    from agent_world.tasks.walks import _echoed

    tool = ToolSpec(name="components", description="x", source="def components(ctx):\n    pass\n",
                    parameters={"type": "object", "properties": {"p": {}, "q": {}}})
    assert _echoed(tool) == {"p", "q"}
    # a record keeps an argument under its snake-case name: Microsoft 365's "the onedrive
    # file whose if match is 'W/...'"
    graph = tool.model_copy(update={"parameters": {"properties": {"If-Match": {}}}})
    assert "if_match" in _echoed(graph)
    assert _echoed(load_example("ecommerce").tool("list_orders")) == {"customer_id", "limit"}


def test_a_file_is_of_the_type_its_column_names():
    """Word's pictures had image paths ending in .docx, Cloudbase's zip files in .md."""
    spec = _mined("word")
    paths = [r["image_path"] for r in spec.rows["pictures"]]
    assert paths and all(p.endswith((".png", ".jpg")) for p in paths)
    # ... or its table: EKS's apply_yaml(yaml_path) keeps `yamls` whose paths were '.key'
    yamls = [r["path"] for r in _mined("eks").rows["yamls"]]
    assert yamls and all(p.endswith((".yaml", ".yml")) for p in yamls)
    from agent_world.mining.offline.signatures import column_type
    assert column_type("head", "number", None) == "integer"  # read_file's first lines
    # Coolify's health check return code had been 19.7, a Kubernetes job's replicas 4.0
    assert column_type("health_check_return_code", "number", None) == "integer"
    assert column_type("replicas", "number", None) == "integer"
    assert column_type("price", "number", None) == "real"


def test_a_listed_record_is_picked_by_its_name_and_never_by_the_listing_s_arguments():
    """A person points at a product by its name, not "the product whose review count is 75";
    one-call questions and conditional tasks pick as walks do (`answer_options` takes the
    listing tool)."""
    from agent_world.envs.spec import ToolSpec
    from agent_world.tasks.walks import _selector

    items = [{"id": i, "name": f"item {i}", "review_count": 70 + i, "p": f"p{i}"}
             for i in range(4)]
    picks = {tuple(_selector(items, items[2], set(), random.Random(s))) for s in range(30)}
    assert picks == {("name",)}
    tool = ToolSpec(name="components", description="x", source="def components(ctx):\n    pass\n",
                    parameters={"type": "object", "properties": {"p": {}}})
    unnamed = [{k: v for k, v in i.items() if k != "name"} for i in items]
    for seed in range(30):
        plan = Plan(steps=[PlanStep(tool="components")])
        answer_options(plan, unnamed, random.Random(seed), aggregate=False, listing=tool)
        assert plan.steps[0].select and "p" not in plan.steps[0].select
    # nor by a field named for what a request searches by (Word's "the footnote whose search
    # text is 'between room'")
    searched = [{"id": i, "search_text": f"text {i}", "paragraph_index": i} for i in range(4)]
    picks = {tuple(_selector(searched, searched[2], set(), random.Random(s))) for s in range(30)}
    assert ("search_text",) not in picks and picks
    # nor by a diff, where only an id or the diff singles it out: "the working tree change
    # whose diff is '--- a/.github/workflows/ci.yml\n+++ ...'"
    diffs = [{"id": i, "diff": f"--- a/f{i}.py\n+++ b/f{i}.py\n@@ -1 +1 @@"} for i in range(4)]
    picks = {tuple(_selector(diffs, diffs[2], set(), random.Random(s))) for s in range(30)}
    assert picks == {("id",)}, picks


def test_no_record_is_picked_or_asked_about_by_its_bookkeeping_times():
    """"the gke cluster created on October 16, 2023 at 18:03:17", "when was the shared label
    updated?": a timestamp the arena stamped is neither how a person points at a record nor
    what they ask about it."""
    from agent_world.tasks.walks import _selector

    items = [{"id": i, "zone": "eu", "created_at": f"2024-05-0{i + 1}T10:00:00"}
             for i in range(3)]
    assert _selector(items, items[1], {"id"}, random.Random(0)) == {}
    assert _selector(items, items[1], set(), random.Random(0)) == {"id": 1}
    record = {"id": 4, "label": "bug", "created_at": "2024-05-01T10:00:00",
              "updated_at": "2024-06-01T10:00:00", "due_at": "2024-07-01T10:00:00"}
    options = answer_options(Plan(steps=[PlanStep(tool="get_label")]), record,
                             random.Random(0), aggregate=False)
    assert {o["field"] for o in options} == {"id", "label", "due_at"}


def test_a_command_router_is_asked_for_the_command_it_runs():
    """coolify's projects(action) read "manage project with action 'create'"; Kubernetes'
    node_management "manage Kubernetes nodes with cordon, drain, and uncordon operations,
    using operation drain"."""
    from agent_world.envs.spec import ToolSpec
    from agent_world.synthesis.action_phrases import routed
    from agent_world.synthesis.phrasing_clauses import write_clause

    spec = _mined("coolify")
    served = next(t for t in json.loads((CORPUS_DIR / "coolify.json").read_text())["tools"]
                  if t["name"] == "projects")
    spec.tools.append(ToolSpec(name="projects", description=served["description"],
                               parameters=served["inputSchema"], mutates=True,
                               source="def projects(ctx, **kw):\n    pass\n"))
    clause = write_clause(spec, "projects", {"action": "create", "name": "Apollo"},
                          random.Random(0))
    assert clause.startswith("create a project") and "action" not in clause
    given = {"operation": "drain", "nodeName": "backend-index"}
    assert routed("manage Kubernetes nodes with cordon, drain, and uncordon operations",
                  given) == "drain the Kubernetes node"
    assert given == {"nodeName": "backend-index"}
    assert routed("create, update, or delete a question in a monday.com form",
                  {"action": "delete"}) == "delete a question in a monday.com form"
    assert routed("manage SSH keys", {"action": "list"}) == "list the SSH keys"
    # a command that is no act stays an argument: cloudbase's queryPgDatabase(action='objects')
    kept = {"action": "objects"}
    assert routed("look up the pg database", kept) == "look up the pg database" and kept


@pytest.mark.parametrize(("tool", "description", "act"), [
    # a noun phrase is said from the tool's name
    ("analyze_image", "General-purpose image analysis for scenarios not covered by specialized "
     "tools.", "analyze an image"),
    ("get_flight_status", "Operational status of a flight.", "look up the flight"),
    ("list_drive_item_versions", "The list of previous versions of the item.",
     "look up the drive item versions"),
    # how well the tool works, said in its name too, is no act (Word's add_footnote_enhanced)
    ("add_order_note_enhanced", "Enhanced note addition with guaranteed formatting.",
     "add an order note"),
    # a subject before "can" is no act when the sentence starts with one
    ("index_inspect", "Inspect a URL to see if it is indexed or can be indexed",
     "inspect a URL"),
    # how and why are no part of the act
    ("delete_message", "Immediately and permanently delete a message.", "delete a message"),
    ("delete_cron_job", "Permanently deletes the cron job.", "delete the cron job"),
    ("ui_diff_check", "Compare two UI screenshots to identify visual differences.",
     "compare two UI screenshots"),
    # acts that look like nouns stay acts
    ("cache_incr", "Increment a counter in the cache.", "increment a counter in the cache"),
    ("delete_store", "Soft-delete a store owned by your account.",
     "soft-delete a store owned by your account"),
])
def test_a_tool_s_act_is_a_verb_phrase(tool, description, act):
    """z_ai's analyze_image read "I need you to general-purpose image analysis for scenarios
    not covered by specialized tools"; Search Console's index_inspect "I'd like you to be
    indexed"."""
    from agent_world.envs.spec import ToolSpec
    from agent_world.synthesis.action_phrases import action_phrase

    spec = load_example("ecommerce").model_copy(deep=True)
    spec.tools.append(ToolSpec(name=tool, description=description,
                               source=f"def {tool}(ctx):\n    pass\n"))
    assert action_phrase(spec, tool) == act


def test_slugs_are_words_and_a_directory_s_path_names_no_file():
    """Bitbucket's repositories had slug 'LN-5130'; filesystem's directories paths like
    '/data/Projects/pricing-signed.mp3'."""
    import re

    repos = _mined("bitbucket").rows["repositories"]
    slugs = [r[c] for r in repos for c in ("slug", "workspace_slug") if r[c] is not None]
    assert slugs and all(re.fullmatch(r"[a-z0-9]+(?:-[a-z0-9]+)*", s) for s in slugs), slugs
    paths = [r["path"] for r in _mined("filesystem").rows["directories"]]
    assert paths and not any(re.search(r"\.\w{2,4}$", p) for p in paths), paths



def test_a_status_is_one_its_record_takes():
    """arXiv's papers were 'running' ("advances each watch's drain cursor after running"
    read as a state of papers); a status column with no states declared took a job's states
    whatever its records were."""
    from agent_world.mining.offline.value_pools import status_pool

    assert "running" not in status_pool("papers")[0]
    assert "running" in status_pool("backup_jobs")[0]
    assert "completed" not in status_pool("contacts")[0]
    assert "paid" in status_pool("orders", "payment_status")[0]
    papers = next(t for t in _mined("arxiv").tables if t.name == "papers")
    status = next(c for c in papers.columns if c.name == "status")
    assert status.enum and "running" not in status.enum


def _statuses(server: str) -> dict[str, list[str]]:
    return {t.name: list(c.enum or []) for t in _mined(server).tables for c in t.columns
            if c.name == "status"}


def test_a_status_is_said_of_the_record_not_of_what_a_tool_can_reach():
    """Asana's workspaces were 'available' ("List all available workspaces"), 'archived' and
    'completed' (argument names in other tools' signatures), and tasks counted "workspaces
    whose status is 'available'"; Context7's libraries were 'resolved' (resolve-library-id
    looks a name up); Trello's members 'assigned' ("the assigned member"); draw.io's
    diagrams all 'open' and Gmail's drafts all 'draft' (one state is no status)."""
    assert "workspaces" not in _statuses("asana")
    assert not any("available" in enum for enum in _statuses("monday").values())
    assert "libraries" not in _statuses("context7")
    trello = _statuses("trello")
    assert "members" not in trello and "boards" not in trello
    assert trello["cards"] == ["active", "archived"]
    assert not any(t.startswith("drawio") for t in _statuses("drawio"))
    assert "drafts" not in _statuses("gmail")
    # a resolve that settles something still gives its record a state
    assert "resolved" in _statuses("gitlab")["merge_request_threads"]


def test_a_status_tool_s_lone_state_argument_sets_the_status():
    """Chatwork's update_room_task_status(body: open|done) sets a task's status; its tasks'
    body (their text) had held 'open' and 'done', and tasks counted "tasks whose body is
    'done'"."""
    spec = _mined("chatwork")
    tasks = spec.table("tasks")
    assert not tasks.column("body").enum
    assert set(tasks.column("status").enum or []) >= {"open", "done"}
    assert not {r.get("body") for r in spec.rows["tasks"]} & {"open", "done"}


def test_a_url_on_a_placeholder_host_is_a_site_s_own():
    """Every sitemap of Google Search Console had feedpath 'http://www.example.com/sitemap.xml'
    (its description's example), so an edit setting it changed nothing."""
    spec = _mined("google-search-console")
    feeds = [r["feedpath"] for r in spec.rows["sitemaps"] if r.get("feedpath")]
    assert len(feeds) >= 5 and len(set(feeds)) > len(feeds) // 2
    assert all(f.endswith("/sitemap.xml") and "example.com" not in f for f in feeds)


def test_a_json_field_holds_a_value_of_the_kind_its_name_says():
    """Plane's labels were {"color": "color 3", "name": "name 9"} and Google Calendar's event
    sources {"url": "url 4", "title": "title 3"}: tasks counted "labels whose color is
    'color 3'" and "events with title 'title 1'"."""
    import re

    for server, table, column in (("plane", "labels", "label_data"),
                                  ("google-calendar", "events", "source")):
        objects = [r[column] for r in _mined(server).rows[table] if isinstance(r.get(column),
                                                                              dict)]
        assert len(objects) >= 5
        for obj in objects:
            for key, value in obj.items():
                assert not (isinstance(value, str) and re.fullmatch(
                    re.escape(key.replace("_", " ")) + r" \d", value)), (server, obj)


def test_a_layout_property_or_a_direction_names_no_record():
    """Word's set_table_column_width, set_table_cell_padding and merge_table_cells_horizontal
    had tables 'table_column_widths', 'table_cell_paddings', 'table_cells_horizontals' (and
    'table_column_width_widths'), customize_footnote_style 'customize_footnote_styles': a
    table's columns, its cells and its footnote styles are the records."""
    names = {t.name for t in _mined("word").tables}
    assert {"table_cells", "table_columns", "footnote_styles"} <= names
    assert not names & {"table_cells_horizontals", "table_cells_verticals",
                        "table_cell_paddings", "table_cell_alignments", "table_widths",
                        "customize_footnote_styles", "auto_fit_table_columns"}
    assert not any(n.endswith("_width_widths") for n in names)


def test_no_answer_is_a_key_the_chain_was_given():
    """Metabase's "find the collection that dashboard points to. Tell me the collection's
    id." asked back the key get_collection was given."""
    from agent_world.synthesis.synthesizer import _given_key
    from agent_world.tasks.model import ToolCall
    from agent_world.tasks.truth import Truth

    chain = [ToolCall(tool="get_dashboard", arguments={"dashboard_id": 15}),
             ToolCall(tool="get_collection", arguments={"collection_id": 12})]
    asked = Truth(chain=chain, answer=12, expected_changes={}, observations=[])
    assert _given_key({"kind": "field", "field": "id"}, asked)
    # a key the chain found is an answer; so is a plain value equal to an argument
    assert not _given_key({"kind": "field", "field": "owner_id"},
                          Truth(chain=chain, answer=7, expected_changes={}, observations=[]))
    assert not _given_key({"kind": "field", "field": "item_count"}, asked)


def test_a_numbered_argument_that_says_id_references_its_record():
    """DigitalOcean's vpc-peering-create(Vpc1, Vpc2: "ID of the first VPC") had kept two text
    columns of lorem words ('similar', 'have'); Hostinger's ns1 ("First name server") is no
    reference."""
    from agent_world.mining.offline.signatures import classify_argument

    spec = _mined("digitalocean")
    peering = next(t for t in spec.tables if t.name == "vpc_peerings")
    vpcs = {r["id"] for r in spec.rows["vpcs"]}
    for col in ("vpc1", "vpc2"):
        assert peering.column(col).foreign_key == "vpcs.id"
        assert {r[col] for r in spec.rows["vpc_peerings"]} <= vpcs
    ns1 = classify_argument({"argument": "ns1", "type": "string",
                             "description": "First name server"}, {"vpc", "domain"})
    assert ns1.kind == "scalar"
