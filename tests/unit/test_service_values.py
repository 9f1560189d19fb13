"""Technical values of a service's arguments: a column of no everyday kind takes a value of the
kind the service expects (an ETag, a connection string, a branch, a kube context), not a random
dictionary word, and a description's listed choices and examples win."""

from __future__ import annotations

import random
import re
from datetime import date

import pytest
from faker import Faker
from faker.providers.lorem.en_US import Provider as LoremWords

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.described_values import described_choices, described_examples
from agent_world.mining.offline.reference_data import COLORS, LANGUAGES, SLUG_HEADS, SLUG_TAILS
from agent_world.mining.offline.row_values import from_pattern
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.offline.service_values import (
    ROW_KINDS,
    SERVICE_KINDS,
    service_kind,
    service_value,
)
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources

LOREM = set(LoremWords.word_list)
# kinds drawn from a service's own vocabulary, which has English words ('production', 'high')
CURATED_WORDS = {"build_stage", "importance", "severity", "permission", "collection", "index",
                 "file_format", "query_param", "group_label", "kube_context", "dimension",
                 "field_ref", "git_branch", "outcome", "container", "setting_value"}  # field_ref: the table's own column names


@pytest.mark.parametrize("table, name, description, kind", [
    ("message_tos", "to", "", "email"),
    ("conversions", "to", "Currency to convert to", None),  # not a mail's recipient
    ("calendars", "if_match", "ETag", "etag"),
    ("connections", "connection_string", "MongoDB connection string", "connection_string"),
    ("pull_requests", "branch", "Branch name to merge", "git_branch"),
    ("library_copies", "branch", "The library branch holding the copy", None),
    ("kubectls", "context", "Kubeconfig Context to use for the command", "kube_context"),
    ("logs_queries", "context", "翻页上下文，用于继续上一次查询", "cursor"),
    ("commits", "context", "Alias for name", None),
    ("searches", "pattern", "The search pattern (regex by default)", "regex"),
    ("files", "pattern", "", "glob"),
    ("table_cell_shadings", "pattern", "", None),  # a shading's pattern is no file glob
    ("weather_forecast_dailies", "daily", "", "weather_variable"),
    ("direction_walkings", "origin", "出发点经度，纬度，坐标格式为：经度，纬度", "coordinates"),
    ("applications", "memory_limit", "Memory limit for the application.", "memory_size"),
    ("kubectl_tcp_ports", "tcp_port", "", "port"),
    ("log_groups", "log_group_arn", "", "arn"),
    ("saves", "data", "Base64-encoded PDF bytes", "base64"),
    ("workbooks", "content_base64", "", "base64"),  # named so, described or not
    ("routes", "exclude", "Whether to exclude certain road types", None),
    ("ignore", "exclude", "File patterns to skip", "glob"),
    ("items", "gitlab_owner", "", "username"),
    ("items", "whatever", "", None),
    ("sessions", "desired_device", "Device name for mobile", "device_model"),
    ("test_devices", "device_name", "", "device_model"),  # BrowserStack's, no hostname
    ("sensors", "device", "The device id of the sensor", None),
])
def test_service_kind_reads_name_table_and_description(table, name, description, kind):
    assert service_kind(table, name, description) == kind


def test_every_service_kind_has_values_and_none_is_a_lorem_word():
    rng, fake = random.Random(0), Faker()
    fake.seed_instance(0)
    fields, tables = ["id", "name", "status", "owner_id"], ["orders", "customers"]
    for kind in sorted(SERVICE_KINDS):
        name = "daily" if kind == "weather_variable" else kind
        values = {service_value(kind, rng, fake, "items", name, "", fields, tables)
                  for _ in range(12)}
        assert all(isinstance(v, str) and v for v in values), kind
        if kind not in CURATED_WORDS:
            assert not values & LOREM, (kind, values & LOREM)
    assert not ROW_KINDS & SERVICE_KINDS
    with pytest.raises(ValueError, match="no value for the kind"):
        service_value("nonsense", rng, fake, "items", "x", "", fields, tables)


def test_service_values_have_their_kinds_shape():
    rng, fake = random.Random(3), Faker()
    fake.seed_instance(3)

    def draw(kind: str, name: str = "x", description: str = "") -> set[str]:
        return {service_value(kind, rng, fake, "items", name, description, ["id", "title"],
                              ["orders"]) for _ in range(20)}

    assert all(re.fullmatch(r'(W/)?"[0-9a-f]{16}"', v) for v in draw("etag"))
    assert all(v.startswith("mongodb://") for v in draw("connection_string", "uri", "MongoDB"))
    assert all(v.startswith("postgresql://") for v in draw("connection_string"))
    assert all(v.isdigit() and 0 < int(v) < 65536 for v in draw("port"))
    assert all(v.startswith("RRULE:FREQ=") for v in draw("rrule"))
    assert all(re.fullmatch(r"arn:aws:logs:us-east-1:\d{12}:\S+", v)
               for v in draw("arn", "log_group_arn"))
    assert draw("field_ref") == {"title"}  # a column of the row's own table, not its key
    assert all(re.fullmatch(r"[A-Z_]+=\S+(\n[A-Z_]+=\S+)*", v) for v in draw("env_vars"))
    for v in draw("regex"):
        re.compile(v)


def test_a_descriptions_choices_and_examples_win():
    assert described_choices("Operation to perform: generate, deploy, describe, or delete. "
                             "Choose describe for reads.") == \
        ["generate", "deploy", "describe", "delete"]
    assert described_choices("Valid values include: appointments, companies, contacts") == \
        ["appointments", "companies", "contacts"]
    assert described_choices("Available topics: setup, inspect, layout.") == \
        ["setup", "inspect", "layout"]
    # quoted choices, with or without a colon; quoted examples are no choices
    assert described_choices("Travel mode: 'Car', 'Truck', 'Walking', or 'Bicycle' "
                             "(default: 'Car')") == ["Car", "Truck", "Walking", "Bicycle"]
    assert described_choices("Optimize route for 'FastestRoute' or 'ShortestRoute'") == \
        ["FastestRoute", "ShortestRoute"]
    assert described_choices("IANA name (e.g. 'America/New_York' or 'Europe/London')") == []
    assert described_examples('WWDC year filter ("2025", "2024", etc.).') == ["2025", "2024"]
    assert described_examples("函数版本别名，如 $LATEST、$DEFAULT。日志查询时可选") == \
        ["$LATEST", "$DEFAULT"]
    assert described_examples("环境名（如 production/staging），命中时合并") == \
        ["production", "staging"]
    assert described_examples("Project (starts with PR- followed by a number).") == ["PR-123"]
    table = TableSpec(name="stacks", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="operation", type="text", nullable=False,
                   description="Operation to perform: generate, deploy, describe, or delete."),
        ColumnSpec(name="if_match", type="text", nullable=False, description="ETag")])
    factory = RowFactory([table], None, seed=1)
    rows = [factory.make("stacks") for _ in range(20)]
    assert {r["operation"] for r in rows} <= {"generate", "deploy", "describe", "delete"}
    assert all(r["if_match"].endswith('"') for r in rows)
    assert column_semantic("stacks", table.columns[2]) == "etag"


def test_a_patterns_dates_are_real_dates():
    rng = random.Random(0)
    for _ in range(30):
        v = from_pattern(r"^\d{4}-\d{2}-\d{2}\.\.\d{4}-\d{2}-\d{2}$", rng)
        for d in v.split(".."):
            date.fromisoformat(d)
        t = from_pattern(r"^\d{2}:\d{2}$", rng)
        assert int(t[:2]) < 24 and int(t[3:]) < 60


@pytest.mark.parametrize("server, table, column, check", [
    ("gmail", "message_tos", "to", lambda v: "@" in v),
    ("microsoft-365", "calendars", "if_match", lambda v: v.endswith('"')),
    ("dokploy", "applications", "memory_limit", lambda v: re.fullmatch(r"\d+[mg]", v)),
    ("kubernetes", "kubectls", "context", lambda v: v not in LOREM),
])
def test_mined_corpus_servers_take_their_kinds_values(server, table, column, check):
    ref = next(r for r in corpus_sources() if r.name == server)
    spec = mine_theme(read_source(ref.spec), iterations=1, seed=0).spec
    values = [r[column] for r in spec.rows.get(table, []) if isinstance(r.get(column), str)]
    assert values, sorted(spec.rows)
    assert all(check(v) for v in values), values[:5]


def test_the_row_kinds_it_names_are_made_by_rows():
    """A kind `service_kind` names that rows already make gets the rows' value of it."""
    named = {"to": "", "cwd": "", "output_filename": "", "warning": "", "mention": "",
             "database_user": "", "workspace": "", "range": "",
             "software": "WordPress installation identifier", "subtitle": "", "commit": "",
             "origin": "", "destination": "Target folder", "image": "",
             "app_namespace": ""}
    table = TableSpec(name="message_sheet_containers", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True), *[
            ColumnSpec(name=n, type="text", nullable=False, description=d)
            for n, d in named.items()]])
    kinds = {c.name: column_semantic(table.name, c) for c in table.columns[1:]}
    assert set(kinds.values()) == ROW_KINDS, set(kinds.values()) ^ ROW_KINDS
    factory = RowFactory([table], None, seed=2)
    for row in (factory.make(table.name) for _ in range(10)):
        lone = {n: row[n] for n in named if not row[n] or row[n] in LOREM and
                kinds[n] != "namespace"}  # namespaces are curated ('data', 'default')
        assert not lone, lone


@pytest.mark.parametrize("table, column, description, kind", [
    ("metrics", ColumnSpec(name="name", type="text"), "", "slug_name"),
    ("kubectl_scales", ColumnSpec(name="name", type="text"), "", "slug_name"),
    ("dashboards", ColumnSpec(name="name", type="text"), "", "title"),  # not every name a slug
    ("channels", ColumnSpec(name="name", type="text"), "", "channel_name"),
    ("flaky_tests", ColumnSpec(name="name", type="text"), "", "test_name"),
    ("metrics", ColumnSpec(name="region", type="text"), "AWS region to query", "cloud_region"),
    ("stores", ColumnSpec(name="region", type="text"), "", "region"),
    ("databases", ColumnSpec(name="total_count", type="real"), "", "count"),
    ("deployments", ColumnSpec(name="replicas", type="real"), "", "count"),
    # a tool's argument named as its record is kept as 'content': what the record is
    ("reactions", ColumnSpec(name="content", type="text"), "The name of the emoji", "emoji"),
    ("commands", ColumnSpec(name="content", type="text"), "", "command"),
    ("urls", ColumnSpec(name="content", type="text"), "", "url"),  # ref_read_url(url)
    ("buckets", ColumnSpec(name="location", type="text"), "The location for the bucket.",
     "cloud_region"),  # 'us-east1', no street address
    ("stores", ColumnSpec(name="location", type="text"), "", "address"),
    ("memories", ColumnSpec(name="content", type="text"), "", "sentence"),  # no memory size
    ("sqls", ColumnSpec(name="content", type="text"), "SQL query to convert", "sql"),
    # a slide's text box: 11 pt at 86 x 79, 320 wide; not 193.44 pt, 6.98 wide
    ("text_boxes", ColumnSpec(name="font_size", type="real"), "", "font_size"),
    ("text_boxes", ColumnSpec(name="width", type="real"), "", "pixels"),
    ("text_boxes", ColumnSpec(name="x", type="real"), "", "position"),
])
def test_technical_records_are_named_and_counted_as_engineers_do(table, column, description,
                                                                  kind):
    column.description = description
    assert column_semantic(table, column) == kind
    factory = RowFactory([TableSpec(name=table, columns=[
        ColumnSpec(name="id", type="integer", primary_key=True), column])], None, seed=0)
    # the column is nullable: its values are what is not NULL
    values = [v for _ in range(10) if (v := factory.make(table)[column.name]) is not None]
    assert values
    if kind == "slug_name":  # 'billing-worker', not 'tower-door' ('data-store' is both)
        assert all(re.fullmatch(r"[a-z]+-[a-z0-9]+", v) for v in values), values
        assert not any(set(v.split("-")) <= LOREM - set(SLUG_HEADS) - set(SLUG_TAILS)
                       for v in values), values
    if kind == "count":
        assert all(float(v) == int(v) for v in values), values
    if kind == "channel_name":
        assert all(re.fullmatch(r"[a-z]+-[a-z]+", v) for v in values), values
    if kind == "test_name":
        assert all(re.fullmatch(r"test_[a-z]+_[a-z]+", v) for v in values), values
    if kind == "cloud_region":
        assert all(re.fullmatch(r"[a-z]+-[a-z]+-?\d", v) for v in values), values


def test_a_child_table_does_not_say_its_parent_twice():
    """argocd's resource refs of a resource are `resource_refs`, not
    `resource_resource_refs` ("create a resource resource ref")."""
    ref = next(r for r in corpus_sources() if r.name == "argocd")
    tables = {t.name for t in mine_theme(read_source(ref.spec), iterations=1, seed=0).spec.tables}
    assert "resource_refs" in tables and "resource_resource_refs" not in tables, sorted(tables)


def test_an_intent_asks_for_the_kind_of_thing_its_table_holds():
    """Azure's routers (tables `datadogs`, `foundries`) had intents "update the datadogs"."""
    rng, fake = random.Random(0), Faker()
    said = {service_value("request_phrase", rng, fake, "foundries", "intent", "", [], [])
            for _ in range(30)}
    assert all(re.fullmatch(r"(?:(?:list|show|check) the foundry resources|"
                            r"(?:create|update|describe|delete) a foundry resource)", s)
               for s in said), said


def test_a_types_own_limits_are_no_bounds_of_its_values():
    """zod's .int() declares ±9007199254740991: Google Calendar's "group expansion max" was
    -8206638104206737 and sequential thinking's thought numbers 16 digits long."""
    table = TableSpec(name="thoughts", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="thought_number", type="integer", nullable=False)])
    hints = {"thoughts": {"thought_number": {"minimum": -9007199254740991,
                                             "maximum": 9007199254740991}}}
    factory = RowFactory([table], None, seed=1, hints=hints)
    values = [factory.make("thoughts")["thought_number"] for _ in range(30)]
    assert all(abs(v) < 10**6 for v in values), values[:5]


@pytest.mark.parametrize("table, check", [
    ("documents", lambda v: " " in v),  # a title a person gives a piece of writing
    ("subnets", lambda v: v.endswith("-subnet")),  # no 'Pricing page notes' for a subnet
    ("screenshots", lambda v: v.endswith("-screenshot")),
    ("languages", lambda v: v in {name for _, name in LANGUAGES}),
    ("teams", lambda v: v.endswith(" team")),
])
def test_a_record_is_named_for_what_it_is(table, check):
    """Over the corpus 1,051 name columns took office titles: a flight named 'Sales weekly
    backlog', a geocoding 'Roadmap for Aimee', a subnet 'Pricing page notes'."""
    t = TableSpec(name=table, columns=[ColumnSpec(name="id", type="integer", primary_key=True),
                                       ColumnSpec(name="name", type="text", nullable=False)])
    factory = RowFactory([t], None, seed=3)
    values = [factory.make(table)["name"] for _ in range(8)]
    assert all(check(v) for v in values), values


def test_a_metric_namespace_is_an_aws_one():
    """CloudWatch metrics took Kubernetes namespaces ('kube-system', 'staging')."""
    t = TableSpec(name="metrics", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="namespace", type="text", nullable=False,
                   description="The namespace of the metric.")])
    factory = RowFactory([t], None, seed=3)
    assert all(factory.make("metrics")["namespace"].startswith("AWS/") for _ in range(6))


def test_a_kind_column_takes_values_of_its_own_word():
    """A metric's unit, a message's channel, a member's role were all 'premium' or
    'internal' (one pool for every column named for a kind of thing)."""
    t = TableSpec(name="metrics", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="unit", type="text", nullable=False),
        ColumnSpec(name="user_role", type="text", nullable=False)])
    factory = RowFactory([t], None, seed=3)
    rows = [factory.make("metrics") for _ in range(8)]
    assert {r["unit"] for r in rows} <= {"count", "percent", "seconds", "milliseconds", "bytes"}
    assert {r["user_role"] for r in rows} <= {"admin", "member", "viewer", "owner", "editor"}


def test_a_column_no_rule_knows_is_named_for_what_it_holds():
    """A forwarding rule, a dataset, a compatibility flag were lone dictionary words
    ('dolor'); a backup's frequency was one too."""
    t = TableSpec(name="load_balancers", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="forwarding_rule", type="text", nullable=False),
        ColumnSpec(name="frequency", type="text", nullable=False),
        ColumnSpec(name="why", type="text", nullable=False)])
    factory = RowFactory([t], None, seed=3)
    rows = [factory.make("load_balancers") for _ in range(8)]
    assert all(r["forwarding_rule"].endswith("-forwarding-rule") for r in rows)
    assert {r["frequency"] for r in rows} <= {"hourly", "daily", "weekly", "monthly"}
    assert all(len(r["why"].split()) > 2 for r in rows)


def test_a_repeated_name_is_numbered_as_a_copy_not_by_its_record_id():
    """Two CloudWatch tags named 'later' became 'later' and 'later 19' (the row id read as
    part of the name, and gave the id away)."""
    from agent_world.mining.offline.rows import _suffix

    assert _suffix("later", 19, "tag", {"later"}) == "later-2"
    assert _suffix("Q3 review", 5, "title", {"Q3 review", "Q3 review (2)"}) == "Q3 review (3)"
    assert _suffix("ann@example.com", 7, "email", {"ann@example.com"}) == "ann7@example.com"


def test_a_column_said_to_hold_json_or_links_or_a_description_holds_one():
    """Monday's view settings ('a JSON object') read 'auth-setting', Trello's board desc
    'payments-desc', Firecrawl's page links 'mobile-link'."""
    t = TableSpec(name="boards", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="settings", type="text", nullable=False,
                   description="Type-specific view settings as a JSON object."),
        ColumnSpec(name="desc", type="text", nullable=False),
        ColumnSpec(name="links", type="text", nullable=False)])
    factory = RowFactory([t], None, seed=3)
    rows = [factory.make("boards") for _ in range(6)]
    assert {r["settings"] for r in rows} == {"{}"}
    assert all(len(r["desc"].split()) > 2 and r["links"].startswith("http") for r in rows)


def test_a_size_nothing_has_none_of_is_never_zero():
    """Word's tables had `cols` 0 and an order item quantity 0, and tasks asked to "add a
    table, using rows 3 and cols 0": a table's rows and columns, copies, pages and quantities
    are at least one; other counts (retries, views) may still be 0."""
    names = ("rows", "cols", "quantity", "copies", "page_count", "retry_count")
    table = TableSpec(name="tables", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        *[ColumnSpec(name=n, type="integer", nullable=False) for n in names]])
    kinds = {c.name: column_semantic(table.name, c) for c in table.columns[1:]}
    assert kinds == {**dict.fromkeys(names[:-1], "extent"), "retry_count": "count"}, kinds
    factory = RowFactory([table], None, seed=0)
    rows = [factory.make("tables") for _ in range(200)]
    for n in names[:-1]:
        assert min(r[n] for r in rows) >= 1, n
    assert min(r["retry_count"] for r in rows) == 0


def test_one_of_several_numbered_columns_is_of_its_kind():
    """Hostinger's ns1..ns4 ("First name server") had been 'provide', 'drug'; Word's
    alternating row colours color1 and color2 'recently', 'science'."""
    table = TableSpec(name="domain_nameservers", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="ns1", type="text", nullable=False),
        ColumnSpec(name="ns2", type="text", nullable=False),
        ColumnSpec(name="color1", type="text", nullable=False)])
    assert [column_semantic(table.name, c) for c in table.columns[1:]] == \
        ["nameserver", "nameserver", "color"]
    factory = RowFactory([table], None, seed=0)
    rows = [factory.make(table.name) for _ in range(10)]
    assert all(re.fullmatch(r"ns1\.[a-z-]+\.com", r["ns1"]) for r in rows), rows
    assert all(r["ns2"].startswith("ns2.") for r in rows), rows
    assert {r["color1"] for r in rows} <= set(COLORS)
