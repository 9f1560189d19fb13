"""Which source writes are inserts: a record made under one parent or another, a verb read
from the front of a name, and writes that act on records that already exist; and which
names name the record a task singles out."""

from __future__ import annotations

from agent_world.synthesis.phrasing_values import which
from tests.unit.corpus_plans import corpus_plans as _plans


def test_a_record_made_under_one_parent_or_another_is_made_under_either():
    """Shortcut comments on stories and on epics: each create requires its own parent, so
    neither parent may be required of every comment (no story comment could be written)."""
    spec, plans, unbuilt = _plans("shortcut")
    comments = spec.table("comments")
    assert comments.column("story_public_id").nullable
    assert comments.column("epic_public_id").nullable
    for tool, parent in (("stories_create_comment", "story_public_id"),
                         ("epics_create_comment", "epic_public_id")):
        plan = plans[tool]
        assert plan.kind == "create" and plan.table == "comments", unbuilt.get(tool)
        assert any(p.column == parent and p.required for p in plan.params)


def test_a_message_is_written_where_its_tool_says():
    """Teams' send_chat_message wrote messages of scope 'channels' (the usual kind): the kind
    its name says wins."""
    spec, plans, _ = _plans("teams")
    assert plans["send_chat_message"].fixed.get("scope") == "chats"
    assert plans["send_channel_message"].fixed.get("scope") == "channels"


def test_the_first_verb_of_a_name_says_what_it_does():
    """'issue' is a verb (issue a book) but update_issue edits an issue: it had been an insert
    whose issue id went unused."""
    for server in ("plane", "sentry"):
        _, plans, unbuilt = _plans(server)
        plan = plans.get("update_issue")
        assert plan is not None, unbuilt.get("update_issue")
        assert plan.kind == "update"
        assert any(p.role == "key" for p in plan.params)


def test_a_write_on_existing_records_is_no_insert():
    """Plane's add_module_issues(issues) files existing issues under a module and
    transfer_cycle_issues moves them between cycles: an insert had made a blank issue."""
    _, plans, unbuilt = _plans("plane")
    for tool in ("add_module_issues", "add_cycle_issues", "transfer_cycle_issues"):
        assert tool not in plans and tool in unbuilt
    assert plans["create_issue"].kind == "create"


def test_a_tool_that_looks_at_what_exists_inserts_nothing():
    """OpenSearch's IndexMappingTool ("Retrieves index mapping ..."), Z.ai's analyze_video and
    Tavily's tavily_map ("Map a website's structure") name no writing verb: each had
    inserted a record per call."""
    for server, tool in (("opensearch", "IndexMappingTool"), ("z-ai", "analyze_video"),
                         ("tavily", "tavily_map")):
        _, plans, unbuilt = _plans(server)
        plan = plans.get(tool)
        assert plan is None or not plan.write, (server, tool, plan.kind)


def test_a_public_id_names_the_record_itself():
    """Shortcut's epics-get-by-id(epicPublicId) had its id bound to the comments'
    epic_public_id column, and was planned as a listing that ignored the id."""
    _, plans, _ = _plans("shortcut")
    for tool in ("epics_get_by_id", "stories_get_by_id", "iterations_get_by_id"):
        plan = plans[tool]
        assert plan.kind == "get"
        key = next(p for p in plan.params if p.role == "key")
        assert key.column == "id" and key.required


def test_a_create_names_its_own_record():
    """n8n's create_workflow(name: "Workflow name") had no name column to write: the name was
    read as a reference to a workflow and bound to nothing."""
    for server, tool, table in (("n8n", "n8n_create_workflow", "workflows"),
                                ("hostinger", "ecommerce_createADiscountV1", "discounts")):
        _, plans, _ = _plans(server)
        name = next(p for p in plans[tool].params if p.name == "name")
        assert (name.role, name.column) == ("set", "name") and plans[tool].table == table


def test_a_write_never_finds_its_record_by_the_value_it_sets():
    """MongoDB's rename_collection(newName) and Roblox's rename_object(newName) had found
    the record to rename by its new name."""
    for server, tool in (("mongodb", "rename_collection"), ("roblox-studio", "rename_object")):
        _, plans, _ = _plans(server)
        plan = plans.get(tool)
        assert plan is None or not any(p.role == "key" and p.name == "newName"
                                       for p in plan.params), (server, tool)


def test_a_name_of_another_thing_does_not_name_the_record():
    """A digitalocean task asked for "the run named orders-service" (its preset_name) and
    answered with the run's own name, another one."""
    assert which("preset_name", "orders-service", None, own="run") == \
        "whose preset name is orders-service"
    assert which("branch_name", "main", None, own="branch") == "named main"
    assert which("display_name", "Bob", None, own="user") == "named Bob"


def test_a_write_changes_a_record_of_what_it_names():
    """DigitalOcean's key-delete ("Delete an SSH key") had deleted an app, Plane's
    update_state a project, MongoDB's delete-many ("Removes all documents ...") a connection,
    Asana's asana_delete_project_status(project_status_gid) the project of that column (it
    deletes a project status now that a gid names one); a write naming its table by a short
    form (delete_text_in_doc: documents) or its plural (kv_delete: kvs) stays."""
    for server, gone, kept in (("digitalocean", "key-delete", None),
                               ("plane", "update_state", "update_module"),
                               ("mongodb", "delete-many", "drop_collection"),
                               ("asana", None, "asana_delete_project_status"),
                               ("cloudflare", None, "kv_delete"),
                               ("google-workspace", None, "delete_text_in_doc")):
        _, plans, unbuilt = _plans(server)
        if gone:
            assert "neither its name nor its description" in unbuilt[gone] or \
                "another thing's id" in unbuilt[gone], (server, gone)
        if kept:
            assert plans[kept].kind in ("update", "delete"), (server, kept)
    assert _plans("asana")[1]["asana_delete_project_status"].table == "project_statuses"


def test_a_listing_takes_the_arguments_its_source_takes():
    """Coolify's list_deployments(page, per_page) had become list_deployments(limit),
    BrowserStack's fetchRCA(testId) fetchRCA(limit), and Hostinger's plugin search had lost
    its `search`: the source's arguments stay, a count is the limit, the search text the
    arena's text match."""
    _, plans, _ = _plans("coolify")
    params = {p.name: p.role for p in plans["list_deployments"].params}
    assert params == {"page": "ignore", "per_page": "limit"}
    _, plans, unbuilt = _plans("browserstack")
    assert "fetchRCA" in unbuilt or "testId" in {p.name for p in plans["fetchRCA"].params}
    _, plans, _ = _plans("hostinger")
    search = next(p for p in plans["hosting_searchWordPressPluginsV1"].params
                  if p.name == "search")
    assert search.role in ("like", "any_like") and search.required


def test_a_write_makes_or_edits_only_what_its_name_says():
    """A name with no making verb inserted a record of each call (AMap's maps_regeocode,
    Memcached's cache_incr), one with no editing verb wrote its arguments onto the record it
    names (Airflow's trigger_dag set the DAG's conf, Trello's copy_card renamed the card it
    copies); a description that opens with a making verb makes (Excel's set_note: "Add a
    note to a cell"), and a fork makes a repository."""
    for server, tool in (("amap", "maps_regeocode"), ("memcached", "cache_incr"),
                         ("airflow", "trigger_dag"), ("trello", "copy_card")):
        _, plans, unbuilt = _plans(server)
        assert tool not in plans and "no implementable plan" in unbuilt[tool], (server, tool)
    for server, tool in (("excel", "set_note"), ("gitlab", "fork_repository")):
        _, plans, _ = _plans(server)
        assert plans[tool].kind == "create", (server, tool)


def test_a_read_returns_what_its_name_says():
    """LINE's get_message_quota had listed messages, Backlog's get_wikis_count the wikis,
    Mastra's clearMastraCourseHistory and Chatwork's update_room_task_status had each become
    a listing, and Desktop Commander's get_config listed files: a read whose name changes
    something, counts, or names none of its table is not built; reads that say what they
    read still are."""
    for server, tool, why in (("line-bot", "get_message_quota", "returns a quota"),
                              ("backlog", "get_wikis_count", "returns a count"),
                              ("mastra-docs", "clearMastraCourseHistory", "('clear')"),
                              ("chatwork", "update_room_task_status", "('update')"),
                              ("desktop-commander", "get_config", "names no file")):
        _, plans, unbuilt = _plans(server)
        assert tool not in plans and why in unbuilt[tool], (server, tool, unbuilt.get(tool))
    _, plans, _ = _plans("backlog")
    assert plans["get_wiki"].kind == "get" and plans["get_wiki_pages"].kind == "list"
    _, plans, _ = _plans("desktop-commander")
    assert plans["get_file_info"].table == "files"


def test_a_gid_names_a_record_and_a_link_tool_writes_the_link():
    """Asana's task_gid / tag_gid were text columns of tags (a 'gid' is Asana's global id),
    asana_add_tag_to_task inserted a tag with them and asana_remove_tag_from_task deleted the
    tag itself; get_project_status listed projects by a project_status_gid column of theirs."""
    spec, plans, unbuilt = _plans("asana")
    tags = {c.name for c in spec.table("tags").columns}
    assert not tags & {"tag_gid", "task_gid", "workspace_gid"}
    add, remove = plans["asana_add_tag_to_task"], plans["asana_remove_tag_from_task"]
    assert (add.kind, add.table) == ("create", "task_tags")
    assert (remove.kind, remove.table) == ("delete", "task_tags")
    assert {p.column for p in add.params} == {"task_id", "tag_id"}
    assert (plans["asana_get_tag"].kind, plans["asana_get_tag"].table) == ("get", "tags")
    status = plans["asana_get_project_status"]
    assert (status.kind, status.table) == ("get", "project_statuses")
    made = plans["asana_create_project_status"]
    assert made.table == "project_statuses" and any(
        p.name == "project_gid" and p.column == "project_id" for p in made.params)
    assert "project_gid" not in {c.name for c in spec.table("project_statuses").columns}


def test_a_run_of_a_dag_deleted_is_no_link():
    """delete_dag_run(dag_id, dag_run_id) names a DAG and a run: it deletes the run, it is
    no link between them (only add/remove-like verbs file one record on another)."""
    _spec, plans, unbuilt = _plans("airflow")
    plan = plans.get("delete_dag_run")
    assert plan is not None, unbuilt.get("delete_dag_run")
    assert (plan.kind, plan.table) == ("delete", "runs")
