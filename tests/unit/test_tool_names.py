"""Real servers' tool names read as what they do: a verb after the noun ('alert-policy-create'),
a product area before the verb ('hosting_createCronJobV1'), hyphenated names served under
identifiers, and an update that names no record is not built as an insert."""

from __future__ import annotations

import json
import warnings

import pytest

from agent_world.design import offline
from agent_world.design.tool_designer import design_tools
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.naming import tool_identifier
from agent_world.mining.offline.signatures import classify_argument, tool_shape
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources
from agent_world.tasks.words import entity
from tests.unit.corpus_plans import corpus_plans


@pytest.mark.parametrize("name, verb, obj, read", [
    ("alert-policy-create", "create", "alert_policy", False),
    ("alert-policy-list", "list", "alert_policy", True),
    ("domain-record-edit", "edit", "domain_record", False),  # 'record' is a noun here
    ("hosting_createAccountCronJobV1", "create", "account_cron_job", False),
    ("db-cluster-list-topics", "list", "topic", True),
    ("account-get-information", "get", "account", True),  # 'information' says nothing
    ("create_issue", "create", "issue", False),  # verb first: as before
    ("semantic_search", None, "semantic_search", False),  # a kind of search, no verb
    ("list_merge_requests", "list", "merge_request", True),
    ("group_merge_requests", None, "group_merge_request", False),
    ("get_comments_list", "get", "comment", True),  # the comments, listed
    ("stories-search", "search", "story", True),  # a search verb after a plural: search them
    ("projects-get-by-id", "get", "project", True),  # what follows says how, not what
    ("iterations-get-active", "get", "iteration", True),
])
def test_where_the_verb_stands_in_a_tool_name(name, verb, obj, read):
    shape = tool_shape(name, None, None)
    assert (shape.verb, shape.obj, shape.read) == (verb, obj, read)


@pytest.mark.parametrize("name, verb, obj, read", [
    ("format_range", "format", "range", False),  # was a record kind 'format_range'
    ("compare_political_groups", "compare", "political_group", True),
    ("mute_host", "mute", "host", False),
    ("diagnose_dag_run", "diagnose", "dag_run", True),
    ("performance_trace_start", "start", "performance_trace", False),  # a trace, started
])
def test_verbs_of_harvested_names(name, verb, obj, read):
    shape = tool_shape(name, None, None)
    assert (shape.verb, shape.obj, shape.read) == (verb, obj, read)


@pytest.mark.parametrize("name, obj", [
    # where or how it acts follows the record ('header_nears', 'footnote_befores' had been
    # tables of their own)
    ("insert_header_near_text", "header"), ("add_footnote_before_text", "footnote"),
    ("replace_paragraph_block_below_header", "paragraph_block"),
    # how well it works is no part of the record ('footnote_robusts', 'object_safes')
    ("add_footnote_robust", "footnote"), ("add_footnote_enhanced", "footnote"),
    ("write_object_safe", "object"),
    # a document's outline or markup is the document read ('document_xmls')
    ("get_document_outline", "document"), ("get_document_xml", "document"),
    # a create makes a record of its own, value word and all (GitLab's create_commit_status
    # had inserted a commit); a read of one still reads its record's value
    ("create_commit_status", "commit_status"), ("create_ai_config", "ai_config"),
    ("get_commit_status", "commit"), ("create_report", None)])
def test_a_tool_name_s_record_ends_where_its_manner_begins(name, obj):
    assert tool_shape(name, None, None).obj == obj


def test_a_tool_that_finds_its_record_by_two_arguments_on_one_column_is_not_built():
    """Excel's import_csv(path, csv_path) had found its record with
    `match = {'path': csv_path, 'path': path}`: the lookup kept one of them. An optional
    second name of the record's id is left unread."""
    spec, plans, unbuilt = corpus_plans("excel")
    assert "import_csv" not in plans
    assert "both name the" in unbuilt["import_csv"], unbuilt["import_csv"]
    for plan in plans.values():
        columns = [p.column for p in plan.params if p.role in ("key", "eq") and p.column]
        assert len(columns) == len(set(columns)), plan.name
    # an optional second name of the same id is left unread: the task's own id finds it
    _, plans, _ = corpus_plans("microsoft-365")
    roles = {p.name: p.role for p in plans["update_todo_task"].params}
    assert roles["id"] == "ignore" and roles["todoTaskId"] in ("key", "eq"), roles


def test_creates_of_one_record_need_only_what_each_of_them_takes():
    """Word's add_footnote_after_text requires the text a footnote follows; its
    add_footnote_to_document places one by paragraph and takes no such text. Both add
    footnotes: the column is optional, and both are built as inserts (required, the second had
    no way to insert a footnote and was left out)."""
    spec, plans, unbuilt = corpus_plans("word")
    footnotes = spec.table("footnotes")
    assert footnotes.column("search_text").nullable
    assert not footnotes.column("filename").nullable  # every one of them takes a filename
    for tool in ("add_footnote_to_document", "add_footnote_after_text", "add_footnote_robust"):
        assert tool not in unbuilt, unbuilt.get(tool)
        assert (plans[tool].kind, plans[tool].table) == ("create", "footnotes"), tool
    assert {t.name for t in spec.tables}.isdisjoint(
        {"header_nears", "footnote_robusts", "footnote_befores", "document_xmls"})


@pytest.mark.parametrize("name, ns", [
    ("browser_hover", "browser"), ("browser_press_key", "browser"), ("press_key", None),
    ("browser_type", "browser"), ("browser_go_back", "browser"), ("take_screenshot", None),
    ("mobile_swipe_on_screen", "mobile"), ("send_keys", None), ("browser_wait", "browser"),
    # a chart drawn from the call's own arguments (AntV's 26 generate_*_chart tools)
    ("generate_area_chart", None), ("generate_mermaid_diagram", None)])
def test_an_act_on_a_screen_keeps_no_record_of_its_own(name, ns):
    """A hover, a key press or a screenshot is no record of the service: the browser servers
    had 'hovers', 'presses' and 'screenshots' tables, one row per call, and tasks such as
    "look up the press named gateway-press"."""
    shape = tool_shape(name, None, ns)
    assert shape.obj is None and not shape.creates and not shape.read and shape.recordless


def test_a_chart_created_in_a_workbook_is_a_record():
    assert tool_shape("create_chart", None, None).obj == "chart"
    spec, design = _mined_and_designed("antv-chart")
    assert not [t.name for t in spec.tables if t.name.endswith("_charts")]
    assert "generate_area_chart" in design.not_implemented


def test_a_value_noun_before_a_late_verb_is_read_as_a_value():
    shape = tool_shape("balance-get", None, None)
    assert (shape.verb, shape.obj, shape.value_words, shape.read) == \
        ("get", None, ["balance"], True)


@pytest.mark.parametrize("name, ident", [
    ("certificate-list", "certificate_list"), ("application-readTraefikConfig",
                                               "application_readTraefikConfig"),
    ("list_tables", "list_tables"), ("1-click-install", "tool_1_click_install"),
    ("class", "class_")])
def test_source_tool_names_as_identifiers(name, ident):
    assert tool_identifier(name) == ident and ident.isidentifier()


def _mined_and_designed(server: str):
    """A corpus server mined offline (no complexification) and its offline design."""
    ref = next(r for r in corpus_sources() if r.name == server)
    spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    return spec, design_tools(spec, model=None)


@pytest.fixture(scope="module")
def digitalocean():
    return _mined_and_designed("digitalocean")


def test_a_server_named_noun_first_mines_its_entities_not_its_tools(digitalocean):
    spec, _ = digitalocean
    tables = {t.name for t in spec.tables}
    assert {"alert_policies", "certificates", "byoip_prefixes"} <= tables
    verbs = {"create", "get", "list", "update", "delete"}
    assert not [t for t in tables if verbs & set(t.split("_"))]  # no 'alert_policy_creates'


def test_hyphenated_source_tools_are_built_under_identifiers(digitalocean):
    _, design = digitalocean
    names = set(design.tool_names())
    assert {"certificate_list", "byoip_prefix_create", "droplet_get", "rename_droplet"} <= names
    assert "certificate_list" in design.source_tools
    assert all(n.isidentifier() for n in names)


def test_an_update_that_names_no_record_is_not_built_as_an_insert(digitalocean):
    _, design = digitalocean
    # apps-update takes the app's id inside a nested spec: nothing to find the app by
    assert "apps_update" not in design.tool_names()
    assert "no implementable plan" in design.not_implemented["apps-update"]


@pytest.fixture(scope="module")
def gitlab():
    return _mined_and_designed("gitlab")


def test_a_key_the_source_declares_otherwise_is_one_parameter(gitlab):
    """GitLab's delete_issue_link declares issue_link_id as a string reference: with the
    table's integer key added it was a second parameter of the same name, a module that does
    not compile, and every GitLab tool rejected."""
    _, design = gitlab
    compile(design.module, "gitlab", "exec")
    assert "delete_issue_link" in design.tool_names()


def test_a_bound_on_when_filters_the_time_column(gitlab):
    """list_issues(created_before=...) made a 'created_before' column of random words ("the
    merge request whose created before is 'our'"); it bounds created_at."""
    spec, design = gitlab
    issues = {c.name for c in spec.table("issues").columns}
    assert not {"created_before", "updated_after"} & issues
    cov = spec.provenance.stats["tool_coverage"]["tools"]["list_issues"]["arguments"]
    assert cov["created_before"] == {**cov["created_before"], "role": "filter",
                                     "column": "created_at"}
    assert '"updated_at" >= ?' in design.module


def test_a_tool_whose_code_does_not_compile_is_left_out_with_the_reason(digitalocean,
                                                                        monkeypatch):
    spec, _ = digitalocean
    real = offline.render_tool

    def broken(spec, plan):  # one tool rendered with a duplicate argument
        src = real(spec, plan)
        return src.replace("(ctx: Ctx,", "(ctx: Ctx, ctx: Ctx,", 1) \
            if plan.name == "droplet_get" else src

    monkeypatch.setattr(offline, "render_tool", broken)
    _, _, skipped, plans = offline.design_offline(spec)
    assert "droplet_get" not in {p.name for p in plans}
    assert skipped["droplet_get"].startswith("its rendered code does not compile: duplicate")
    assert "certificate_list" in {p.name for p in plans}


@pytest.mark.parametrize("tool, namespace, thing", [
    ("list_holds", None, "hold"),  # verb first: as before
    ("version_get", None, "version"),  # was "get": "look up the get named ..."
    ("template_list", None, "template"),  # was "list"
    ("env_var_list", None, "env var"),
    ("db-cluster-list-topics", None, "topic"),
    ("git_create_branch", "git", "branch"),
    ("git_diff_unstaged", "git", "diff unstaged"),  # 'git' is the server's word, no verb
    ("git_show", "git", "show"),
    ("get_comments_list", None, "comment"),
    ("hosting_generateFileBrowserUploadURLV1", None, "file browser upload url"),
    ("insert_numbered_list_near_text", None, "numbered list"),  # not "numbered list near text"
    ("get_document_outline", None, "document"),  # the document it reads, as mined
    ("create_commit_status", None, "commit status"),  # a create makes a status of its own
    ("delete_footnote_robust", None, "footnote"),
])
def test_what_a_task_calls_a_tools_record(tool, namespace, thing):
    assert entity(tool, namespace) == thing


def test_an_aspect_of_a_record_in_a_tool_name_is_the_record(notes_spec):
    """suspend_user_account acts on a user ("that user", never "that user account's user");
    a table of accounts keeps its name; list_user_notes lists notes."""
    from agent_world.envs.spec import EnvSpec
    from agent_world.tasks.words import tool_entity

    raw = json.loads(notes_spec.to_json())
    first = raw["tools"][0]
    raw["tools"].append({**first, "name": "suspend_user_account", "source": first["source"]
                         .replace(f"def {first['name']}(", "def suspend_user_account(")})
    assert tool_entity(EnvSpec.from_dict(raw), "suspend_user_account") == "user"
    raw["tables"].append({"name": "user_accounts", "columns": [
        {"name": "id", "type": "integer", "primary_key": True}]})
    assert tool_entity(EnvSpec.from_dict(raw), "suspend_user_account") == "user account"
    # the owner's name before the record's: list_user_notes lists notes ("the notes of user
    # 1", not "the user notes of user 1")
    raw["tools"].append({**first, "name": "list_user_notes", "source": first["source"]
                         .replace(f"def {first['name']}(", "def list_user_notes(")})
    assert tool_entity(EnvSpec.from_dict(raw), "list_user_notes") == "note"
    # the record and what it belongs to: Asana's get_tasks_for_project read "the tasks for
    # project of that task's project"; a name whose head is no record stays as it is
    for name in ("get_notes_for_user", "add_note_to_user", "remove_note_from_user",
                 "convert_to_pdf"):
        raw["tools"].append({**first, "name": name, "source": first["source"]
                             .replace(f"def {first['name']}(", f"def {name}(")})
    spec = EnvSpec.from_dict(raw)
    assert tool_entity(spec, "get_notes_for_user") == "note"
    assert tool_entity(spec, "add_note_to_user") == tool_entity(spec, "remove_note_from_user") \
        == "note"
    assert tool_entity(spec, "convert_to_pdf") != "note"


def test_a_public_id_names_its_record():
    """Shortcut's storyPublicId is a story's id, not a 'story public' record."""
    role = classify_argument({"argument": "storyPublicId", "type": "integer"}, {"story"})
    assert (role.kind, role.entity) == ("ref", "story")


def test_a_bound_on_ids_is_a_cursor_not_a_record():
    """Backlog's minId/maxId were references to 'min' and 'max' records (tables 'mins' and
    'maxes'); since_id likewise. A parent or an account id still names its record."""
    for arg in ("minId", "maxId", "since_id", "afterId"):
        assert classify_argument({"argument": arg, "type": "integer"}, set()).kind == "filter"
    role = classify_argument({"argument": "fromAccountId", "type": "integer"}, set())
    assert (role.kind, role.entity) == ("ref", "account")


def test_an_option_of_the_call_is_no_column(gitlab):
    """list_issues(with_labels_details=...) says how to answer: it was a column of every
    issue; it is a control argument the tool accepts."""
    spec, design = gitlab
    assert "with_labels_details" not in {c.name for c in spec.table("issues").columns}
    cov = spec.provenance.stats["tool_coverage"]["tools"]["list_issues"]
    assert cov["covered"] and cov["arguments"]["with_labels_details"]["role"] == "control"
    assert "list_issues" in design.tool_names()


def test_an_output_mode_is_an_option_whatever_its_name():
    """AWS Location's search_places(mode="Output mode: 'summary' (default) or 'raw'") was a
    column of every place ("count the places whose mode is 'summary'")."""
    info = {"argument": "mode", "type": "string",
            "description": "Output mode: 'summary' (default) or 'raw' for all AWS fields"}
    assert classify_argument(info, set()).kind == "filter"
    assert classify_argument({**info, "description": "Travel mode: 'Car' or 'Truck'"},
                             set()).kind != "filter"


def test_asana_s_field_lists_and_related_record_searches_are_no_columns():
    """Asana's opt_fields (which fields to return) and assignee.any / followers.not (which
    related records to match) were columns of every table, asked about as "Which opt fields
    does the workspace have?"."""
    spec = mine_theme(read_source(next(r.spec for r in corpus_sources()
                                       if r.spec.endswith("asana.json"))),
                      iterations=0, seed=0).spec
    columns = {c.name for t in spec.tables for c in t.columns}
    assert not {"opt_fields", "assignee_any", "assignee_not", "followers_not",
                "created_by_any"} & columns
    for arg in ("opt_fields", "assignee_any", "followers_not"):
        assert classify_argument({"argument": arg, "type": "string"}, set()).kind == "filter"


def test_two_references_that_lead_to_different_containers_are_repaired():
    """A monday upload's asset and column led to different items and the semantic gate
    rejected the whole source: one of the two is moved to a record of the other's item."""
    spec = mine_theme(read_source(next(r.spec for r in corpus_sources()
                                       if r.spec.endswith("monday.json"))),
                      iterations=1, seed=0).spec
    assets = {a["id"]: a for a in spec.rows["assets"]}
    columns = {c["id"]: c for c in spec.rows["columns"]}
    pairs = [(assets[u["asset_id"]]["item_id"], columns[u["column_id"]]["item_id"])
             for u in spec.rows["uploads"] if u.get("asset_id") and u.get("column_id")]
    # an edge-case asset with every nullable field empty names no item: nothing to agree on
    pairs = [(a, c) for a, c in pairs if a is not None and c is not None]
    assert pairs and all(a == c for a, c in pairs), pairs


def test_a_search_argument_matches_within_the_records_text(gitlab):
    """list_issues(search=...) made a 'search' column and matched it exactly; `q`/`query`
    were accepted and ignored. They match within what the records say now."""
    spec, design = gitlab
    assert "search" not in {c.name for c in spec.table("issues").columns}
    cov = spec.provenance.stats["tool_coverage"]["tools"]["list_issues"]["arguments"]
    assert cov["search"]["role"] == "filter" and cov["search"]["match"] == "like"
    body = design.module.split("def list_issues(", 1)[1].split("\n@tool", 1)[0]
    assert "LIKE ?" in body.split("if search is not None:", 1)[1].split("\n")[1]


def test_a_write_that_cannot_tie_the_record_it_is_told_to_act_on_is_not_built():
    """Hostinger's hosting_toggleWebsiteCacheV1(domain, username, enabled) inserted the same
    row whatever domain it was given (nothing held it): a wrong-target write passed the
    check. Such a write is left unbuilt."""
    _, design = _mined_and_designed("hostinger")
    assert "hosting_toggleWebsiteCacheV1" not in design.tool_names()
    assert "hosting_toggleWebsiteCacheV1" in design.not_implemented


def test_source_words_with_backslashes_reach_the_schema_unchanged(gitlab):
    """An argument's source description holding a regex ("\\.spec\\.ts$") went into the
    docstring as an invalid escape (a warning today, an error for "\\x")."""
    _, design = gitlab
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        code = compile(design.module, "gitlab", "exec")
    namespace: dict = {}
    exec(code, namespace)
    docs = [f.__doc__ or "" for f in namespace.values() if callable(f)]
    assert any("\\.spec\\.ts$" in d for d in docs)


def test_a_release_is_uninstalled_and_upgraded_by_its_name():
    """Kubernetes' uninstall_helm_chart(name, namespace) inserted a row into an
    'uninstall_helm_charts' table, and upgrade_helm_chart(name, chart, ...) had no plan (no
    key to find the release): uninstall deletes and upgrade edits the helm chart of that
    name (and namespace)."""
    spec, design = _mined_and_designed("kubernetes")
    assert not {"uninstall_helm_charts", "upgrade_helm_charts"} & {t.name for t in spec.tables}
    assert {"uninstall_helm_chart", "upgrade_helm_chart"} <= set(design.tool_names())
    module = design.module
    body = module[module.index("def uninstall_helm_chart("):]
    body = body[:body.index("\n@tool")]
    # the release of that name in that namespace (a delete reads all it requires)
    assert "match = {'name': name, 'namespace': namespace}" in body
    assert "_row_where(ctx, 'helm_charts', 'id', match" in body and "DELETE FROM" in body


def test_what_a_tool_returns_is_no_state_of_its_records():
    """arXiv's "last_checked tracks the newest returned paper" gave papers a 'returned'
    status, and tasks asked to "mark that paper as returned"."""
    spec = mine_theme(read_source(next(r.spec for r in corpus_sources()
                                       if r.spec.endswith("arxiv.json"))),
                      iterations=0, seed=0).spec
    states = {v for t in spec.tables for c in t.columns if c.name == "status"
              for v in c.enum or []}
    assert "returned" not in states
    # "each file's content is returned with its path" (Filesystem's read_multiple_files)
    files = mine_theme(read_source(next(r.spec for r in corpus_sources()
                                        if r.spec.endswith("/filesystem.json"))),
                       iterations=0, seed=0).spec
    assert "returned" not in {v for t in files.tables for c in t.columns
                              if c.name == "status" for v in c.enum or []}


def test_a_tool_that_marks_a_loan_returned_still_names_the_state(tmp_path):
    """The rule above must not lose a state a tool sets: "Mark a loan as returned"."""
    def tool(name, description, props):
        return {"name": name, "description": description, "inputSchema": {
            "type": "object", "properties": {p: {"type": t} for p, t in props.items()}}}
    path = tmp_path / "library.json"
    path.write_text(json.dumps({"name": "library", "tools": [
        tool("create_loan", "Lend a book to a member; the loan starts active.",
             {"book_title": "string", "member_name": "string"}),
        tool("return_loan", "Mark a loan as returned.", {"loan_id": "integer"}),
        tool("list_loans", "List loans, newest first.", {"status": "string"})]}))
    spec = mine_theme(read_source(str(path)), iterations=0, seed=0).spec
    assert "returned" in spec.table("loans").column("status").enum


def _body(module: str, tool: str) -> str:
    body = module[module.index(f"def {tool}("):]
    return body[:body.index("\n@tool")] if "\n@tool" in body else body


def test_a_record_with_a_text_key_gets_one_and_its_key_arguments_are_strings():
    """Gmail's labels, messages and drafts are keyed by strings: create_label inserted no key
    (NOT NULL constraint failed: labels.id) and list_messages(labelIds=...) took an integer,
    so both were dropped at build time."""
    spec, design = _mined_and_designed("gmail")
    assert spec.table("labels").column("id").type == "text"
    assert "values['id'] = ctx.new_id('label_')" in _body(design.module, "create_label")
    assert "labelIds: str | None" in _body(design.module, "list_messages")


def test_an_argument_named_like_a_local_of_the_tool_is_renamed():
    """install_helm_chart(values=...) was overwritten by the record being inserted (a dict
    holding itself: 'Circular reference detected')."""
    _, design = _mined_and_designed("kubernetes")
    body = _body(design.module, "install_helm_chart")
    assert "values_: dict[str, Any]" in body and "= values_" in body


def test_a_contract_test_says_every_argument_the_tool_requires():
    """ccxt's get_ticker(symbol, exchange) was tested as get_ticker(exchange=6): it failed as
    invalid arguments and the tool was dropped. (LaunchDarkly's delete-feature-flag(request),
    once tested without its request, is no longer served: its feature_flag_id key was the
    arena's, not the source's.)"""
    _, design = _mined_and_designed("ccxt")
    tests = [t for t in design.tests if t["tool"] == "get_ticker"]
    assert tests and all("symbol" in t["arguments"] for t in tests)
    _, design = _mined_and_designed("launchdarkly")
    assert "def delete_feature_flag(" not in design.module


def test_a_contract_test_gives_a_flag_a_boolean():
    """DigitalOcean's genai_model_eval_cancel_run(run_id, confirm_cancel) was tested with
    confirm_cancel=1 (not a boolean: invalid arguments) and dropped."""
    _, design = _mined_and_designed("digitalocean")
    tests = [t for t in design.tests if t["tool"] == "genai_model_eval_cancel_run"]
    assert tests and all(t["arguments"]["confirm_cancel"] is True for t in tests)


def test_a_url_argument_finds_its_record_by_url():
    """NotebookLM's generate_audio(notebook_url=...) looked the notebook up by its name."""
    spec = mine_theme(read_source(next(r.spec for r in corpus_sources()
                                       if r.name == "notebooklm")), iterations=0, seed=0).spec
    arg = spec.provenance.stats["tool_coverage"]["tools"]["generate_audio"]["arguments"][
        "notebook_url"]
    assert (arg["table"], arg["column"]) == ("notebooks", "url")


def test_a_listing_under_a_required_record_is_tested_under_it():
    """GitLab's list_project_members(project_id, user_ids=...) had no test (its filter was
    tested without the project it lists under) and was dropped; the test now names a project
    and a user some member of it links to, and expects those members."""
    _, design = _mined_and_designed("gitlab")
    tests = [t for t in design.tests if t["tool"] == "list_project_members"]
    assert tests and all("project_id" in t["arguments"] and t["expect"]["equals"]
                         for t in tests)


def test_a_listing_under_required_links_is_tested_under_them():
    """Codacy's list tools require a provider, an organization and a repository (both links
    through other tables): they had no test and were dropped."""
    _, design = _mined_and_designed("codacy")
    tests = [t for t in design.tests if t["tool"] == "codacy_list_files"]
    assert tests and all({"provider", "organization", "repository"} <= set(t["arguments"])
                         and t["expect"]["equals"] for t in tests)


@pytest.mark.parametrize("name, info, option", [
    ("action", {"enum": ["list", "get", "create", "update", "delete"]}, True),  # a router
    ("action", {}, True),  # Coolify's projects(action, ...): no description, a selector
    ("action", {"description": "The action to perform on the app"}, True),
    ("action", {"description": "What was done", "enum": ["created", "deleted"]}, False),
    ("command", {"description": "The command to execute against the specified tool."}, True),
    ("command", {"description": "Shell command to run"}, False),  # what the call runs
    ("intent", {"description": "The intent of the azure operation to perform."}, True),
    ("retry_max_retries", {"type": "integer"}, True),
    ("temperature_unit", {"enum": ["celsius", "fahrenheit"]}, True),
    ("navigation_timeout", {"type": "integer"}, True),
    ("max_chars", {"type": "integer"}, True),  # arXiv's read_paper: how much to return
    ("next_token", {"type": "string"}, True),
    ("max_size", {"type": "integer"}, False),  # a queue's setting may be a field
    ("account", {"description": "Account nickname(s) to query (e.g. 'work')."}, True),
    ("account", {"description": "Alias of the Google account to target. Optional."}, True),
    ("unit", {"description": "Unit of the product"}, False),
    # asked as fields: "the wwdc year's search in", "the current user's consistency level"
    ("search_in", {"enum": ["transcript", "code", "both"]}, True),
    ("consistency_level", {"description": "Indicates the requested consistency level."}, True),
    ("modification_scope", {"enum": ["thisEventOnly", "all"]}, True),
    ("sort_order", {"enum": ["asc", "desc"]}, True),
    ("view", {"description": "Diff view type", "enum": ["inline", "parallel"]}, True),
    ("view", {"description": "The name or ID of a view in the table"}, False),  # a record
])
def test_arguments_that_say_how_to_call_are_no_columns(name, info, option):
    """A command router's selector and help switch, retries, time limits and display units
    configure the call: Azure's 40 tools each had a table of command, intent, learn and
    parameters columns, Coolify's routers an action column."""
    role = classify_argument({"argument": name, "type": info.get("type", "string"), **info},
                             set())
    assert (role.kind == "filter") is option


def test_a_router_is_mined_as_its_records_not_its_calls():
    """Coolify's projects(action, uuid, name, description): a projects table of those fields,
    without the operation each call chose."""
    ref = next(r for r in corpus_sources() if r.name == "coolify")
    spec = mine_theme(read_source(ref.spec), iterations=0, seed=0).spec
    projects = spec.table("projects")
    assert {"uuid", "name", "description"} <= {c.name for c in projects.columns}
    assert not [c.name for t in spec.tables for c in t.columns if c.name == "action"]


def test_a_router_serves_the_one_operation_its_plan_performs():
    """Coolify's projects(action: list|get|create|update|delete) was built as an insert that
    inserted whatever the action: it now takes only 'create', and a router none of whose
    operations a plan performs (tags: its actions are not one kind of write) is not served."""
    _, design = _mined_and_designed("coolify")
    assert 'action: Literal["create"],' in design.module
    assert "Only 'create' is served." in design.module
    (test,) = [t for t in design.tests if t["tool"] == "projects"]
    assert test["arguments"]["action"] == "create"
    assert "tags" in design.not_implemented


def test_a_web_search_finds_results_not_its_own_calls():
    """brave_web_search(query, count, offset) and brave_local_search(query, count) had a
    'searches' table of the searches made, one row per call ("find local search 27"); their
    records are now the results they find, which the query matches by title."""
    spec, design = _mined_and_designed("brave-search")
    tables = {t.name: {c.name for c in t.columns} for t in spec.tables}
    assert "searches" not in tables
    assert {"title", "url", "snippet"} <= tables["web_results"]
    assert {"title", "url", "snippet"} <= tables["search_results"]
    assert {"brave_web_search", "brave_local_search"} <= set(design.source_tools)
    i = design.module.find("def brave_web_search(")
    assert "'\"title\" LIKE ?" in design.module[i:design.module.find("\n@tool", i)]


def test_the_arena_adds_no_tool_under_a_source_tools_name():
    """The travel planner's search_attractions (its categories held nowhere) was left out, and
    the arena's own search of attractions took its name: tasks called "the service's tool"
    that was not it."""
    _, design = _mined_and_designed("travel-planner")
    assert "search_attractions" in design.not_implemented
    assert "search_attractions" not in design.tool_names()


def test_a_write_on_an_existing_record_told_none_inserts_nothing():
    """Datadog's mute_host(hostname) and unmute_host(hostname) were built as inserts of a new
    host (a host 'Robert Vargas', status active, on every unmute): a verb that sets or undoes
    a state acts on a record that exists, and told none it is not built."""
    _, design = _mined_and_designed("datadog")
    assert {"mute_host", "unmute_host"} <= set(design.not_implemented)
    assert "def mute_host(" not in design.module


def test_a_read_whose_table_holds_only_its_own_arguments_is_not_built():
    """ripgrep's search(pattern, path, ...) over a table of those very columns returned the
    calls made ("pull up the search whose pattern is 'error'... which is the largest
    context?"); a look-up of records that hold more than its arguments is still built."""
    _, ripgrep = _mined_and_designed("ripgrep")
    for tool in ("search", "count-matches"):
        assert "reads back only what its calls were given" in ripgrep.not_implemented[tool]
    assert "search" not in ripgrep.tool_names()
    _, digitalocean = _mined_and_designed("digitalocean")
    assert {"droplet_get", "certificate_list"} <= set(digitalocean.source_tools)


def test_a_read_named_after_a_thing_that_is_also_a_verb_stays_a_read():
    """Backlog's get_issue and Plane's get_issue_comments took 'issue' as the act (issue a
    certificate) and inserted an issue per call; Terraform's providerDetails, named with no
    verb and described as "Get detailed information about ...", inserted a provider."""
    from agent_world.design.offline.source_acts import reads_by_description, reads_by_name

    assert reads_by_name(["get", "issue"]) and reads_by_name(["list", "issue", "types"])
    assert reads_by_name(["get", "post"]) and reads_by_name(["get", "place", "info"])
    assert not reads_by_name(["get", "or", "create", "user"])
    assert not reads_by_name(["create", "issue"]) and not reads_by_name(["get", "and",
                                                                           "archive"])
    assert reads_by_description("Get detailed information about a Terraform provider.")
    assert reads_by_description("Retrieves index mapping and setting information")
    assert not reads_by_description("Index a codebase directory to enable semantic search")
    _, backlog = _mined_and_designed("backlog")
    verbs = {t: c["verb"] for t, c in backlog.contracts.items()}
    assert verbs.get("get_issue") == "read_one", verbs
    assert verbs.get("get_issue_comments") in ("list", "search"), verbs
    _, terraform = _mined_and_designed("terraform")
    # a read, it would only read back its own arguments: left out, not an insert
    assert "reads back only what its calls were given" in \
        terraform.not_implemented["providerDetails"]


def test_web_search_results_are_read_never_edited():
    """Jina's search(query) finds pages; the arena added update_search_result and
    delete_search_result beside it ("edit that search result: set its snippet to ...")."""
    _, jina = _mined_and_designed("jina")
    contracts = jina.contracts
    found = {c["entity"] for c in contracts.values() if c.get("source_tool")
             and c["verb"] in ("list", "search")}
    assert found, contracts.keys()
    writes = [t for t, c in contracts.items() if c["entity"] in found
              and c["verb"] not in ("read_one", "list", "search", "compute")]
    assert not writes, writes


def test_a_create_that_may_be_given_an_id_inserts():
    """Microsoft Graph's create-calendar body lists the calendar's `id`: the create was
    planned as an update of the calendar that id named."""
    _, m365 = _mined_and_designed("microsoft-365")
    for tool in ("create_calendar", "create_contact_folder"):
        assert m365.contracts[tool]["verb"] == "create", (tool, m365.contracts[tool]["verb"])


def test_a_tool_that_runs_another_query_language_is_left_out():
    """neo4j's read_neo4j_cypher(query) ran SQL SELECTs (it reads), then searched query
    records by the Cypher text: neither is running Cypher."""
    _, neo4j = _mined_and_designed("neo4j-cypher")
    for tool in ("read_neo4j_cypher", "write_neo4j_cypher"):
        assert "does not speak" in neo4j.not_implemented[tool], neo4j.not_implemented


def test_a_read_of_a_record_its_name_does_not_name_is_left_out():
    """Airflow's get_system_health() was built as get_system_health(dag_id), returning a DAG;
    Plane's list_states(project_id) returned the project: neither reads what it says."""
    _, airflow = _mined_and_designed("airflow")
    assert "nothing the database holds" in airflow.not_implemented["get_system_health"]
    _, plane = _mined_and_designed("plane")
    assert "nothing the database holds" in plane.not_implemented["list_states"]
    assert "get_issue_type" in plane.contracts  # a read its name names stays


def test_a_new_value_sets_the_field_it_names():
    """Google Drive's renameItem(itemId, newName) set a column 'new_name' and left the item's
    name as it was; GitLab's update_label(new_name) likewise."""
    _, drive = _mined_and_designed("google-drive")
    params = {p["name"]: p["column"] for p in drive.contracts["renameItem"]["params"]}
    assert params["newName"] == "name", params
    _, gitlab = _mined_and_designed("gitlab")
    params = {p["name"]: p["column"] for p in gitlab.contracts["update_label"]["params"]}
    assert params["new_name"] == "name", params


def test_a_record_named_by_its_noun_is_found_by_its_name():
    """Excel's rename_sheet(path, sheet, new_name) found the sheet whose name was new_name and
    wrote `sheet` into its content; delete_sheet(path, sheet) took a sheet_id its source
    does not have: `sheet` is the sheet's name, found in the workbook `path` names."""
    _, excel = _mined_and_designed("excel")
    rename = {p["name"]: (p["role"], p["column"])
              for p in excel.contracts["rename_sheet"]["params"]}
    assert rename["sheet"] == ("key", "name") and rename["new_name"] == ("set", "name"), rename
    assert rename["path"] == ("eq", "path"), rename  # the sheet's workbook, not a new one
    assert "match = {'name': sheet, 'path': path}" in _body(excel.module, "rename_sheet")
    delete = [p["name"] for p in excel.contracts["delete_sheet"]["params"]]
    assert "sheet_id" not in delete and "sheet" in delete, delete


def test_two_arguments_for_one_field_build_no_insert():
    """Excel's copy_sheet(sheet, new_name) set the new sheet's name twice, Google Drive's
    createFolder(name, parent) named the folder after its parent, Plane's
    create_project(name, identifier) after its identifier: a copy or a second field an insert
    of the arguments cannot be."""
    _, excel = _mined_and_designed("excel")
    assert "copy_sheet" in excel.not_implemented and "copy_sheet" not in excel.contracts
    _, drive = _mined_and_designed("google-drive")
    assert "createFolder" in drive.not_implemented
    _, plane = _mined_and_designed("plane")
    # built only where the name and the identifier are two fields of the project
    plan = plane.contracts.get("create_project")
    if plan is not None:
        params = {p["name"]: p.get("column") for p in plan["params"]}
        assert params["name"] != params["identifier"], plan
    else:
        assert "create_project" in plane.not_implemented


def test_a_write_told_nothing_to_keep_inserts_nothing():
    """Dokploy's application-start(applicationId) inserted an empty application per call,
    Azure's mysql(command, parameters) an empty 'mysql', Shortcut's
    stories-unassign-current-user a user; a document's place_hold (no argument schema) is
    still the arena's create."""
    _, dokploy = _mined_and_designed("dokploy")
    assert "application-start" in dokploy.not_implemented
    _, shortcut = _mined_and_designed("shortcut")
    assert "stories-unassign-current-user" in shortcut.not_implemented
    _, azure = _mined_and_designed("azure")
    assert "mysql" in azure.not_implemented


def test_a_write_whose_verb_makes_nothing_is_no_insert():
    """Desktop Commander's kill_process(pid) inserted a process, Figma's figma_reconnect a
    file: a verb that kills, reconnects, checks or formats makes no record."""
    _, commander = _mined_and_designed("desktop-commander")
    assert "kill_process" in commander.not_implemented, commander.contracts.get("kill_process")
    from agent_world.design.offline.source_acts import makes_nothing

    assert makes_nothing(["kill", "process"]) and makes_nothing(["figma", "reconnect"])
    assert not makes_nothing(["push", "text", "message"])  # a message sent is a record
    assert not makes_nothing(["cache", "set"])


def test_a_read_that_takes_no_argument_is_given_none():
    """Backlog's get_priorities() and get_resolutions() had been built with a required
    `priority_id` / `resolution_id` their source never takes: they list what the table holds."""
    _, backlog = _mined_and_designed("backlog")
    module = backlog.module
    for tool in ("get_priorities", "get_resolutions"):
        head = module[module.index(f"def {tool}("):].split(")", 1)[0]
        assert head.startswith(f"def {tool}(ctx: Ctx, limit") and "_id" not in head, head
