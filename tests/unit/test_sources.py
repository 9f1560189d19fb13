"""File-based mining sources: tool lists, OpenAPI specs, PRDs, source specs and defaults."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_world.errors import SourceError
from agent_world.mining.sources import (
    DATA_DIR,
    DEFAULT_SOURCES,
    SourceRef,
    default_sources,
    parse_source,
    read_openapi,
    read_prd,
    read_source,
    read_sources,
    read_tool_list,
)
from agent_world.mining.sources.mcp import mcp_source_name
from agent_world.mining.sources.openapi import RefResolver, operation_name, parse_openapi
from agent_world.mining.sources.prd import parse_prd
from agent_world.mining.sources.prd_features import feature_tool_name
from agent_world.mining.sources.toollist import parse_tool_list

SRC = Path(__file__).resolve().parents[1] / "fixtures" / "sources"


def tools_by_name(doc):
    return {t.name: t for t in doc.tools}


# --------------------------------------------------------------------------- tool lists


def test_tool_list_object_shape():
    doc = read_tool_list(SRC / "tools_list.json")
    assert doc.kind == "tool-list"
    assert doc.name == "tools-list"
    tools = tools_by_name(doc)
    assert list(tools) == ["list_rooms", "book_room", "release_booking"]
    rooms = tools["list_rooms"]
    assert rooms.input_schema["required"] == ["building"]
    assert "min_capacity" in rooms.input_schema["properties"]
    assert rooms.output_schema and "rooms" in rooms.output_schema["properties"]
    assert rooms.read_only is True
    assert set(rooms.tags) == {"read-only", "idempotent"}
    assert tools["book_room"].read_only is False
    assert tools["release_booking"].read_only is None  # no readOnlyHint given
    assert "destructive" in tools["release_booking"].tags


def test_tool_list_bare_list_and_function_shape():
    doc = read_tool_list(SRC / "tools_bare.json")
    tools = tools_by_name(doc)
    assert set(tools) == {"convert_units", "list_units"}
    assert tools["convert_units"].input_schema["required"] == ["value", "from_unit", "to_unit"]
    assert tools["list_units"].input_schema["properties"] == {"dimension": {"type": "string"}}


def test_server_json_record():
    doc = read_tool_list(SRC / "server.json")
    assert doc.name == "parcel-tracker"
    assert doc.title == "Parcel Tracker"
    assert doc.description.startswith("Track parcels")
    assert doc.metadata["server_version"] == "0.7.2"
    assert doc.metadata["packages"][0]["identifier"] == "parcel-tracker-mcp"
    assert doc.metadata["remotes"][0]["url"].endswith("/mcp")
    tools = tools_by_name(doc)
    assert tools["track_parcel"].read_only is True
    assert "open-world" in tools["track_parcel"].tags
    assert tools["set_delivery_preference"].input_schema["required"] == [
        "tracking_number",
        "preference",
    ]


def test_tool_list_wrappers():
    rpc = {"jsonrpc": "2.0", "id": 3, "result": {"tools": [{"name": "ping", "inputSchema": {}}]}}
    assert [t.name for t in parse_tool_list(rpc, reference="rpc.json").tools] == ["ping"]
    registry = {
        "server": {"name": "io.example/weather", "description": "Forecasts", "version": "1.0"},
        "_meta": {"io.modelcontextprotocol.registry/official": {"status": "active"}},
    }
    doc = parse_tool_list(registry, reference="x.json")
    assert doc.name == "weather" and doc.description == "Forecasts" and doc.tools == []
    listing = {"servers": [{"server": registry["server"]}, {"server": {"name": "io.example/b"}}]}
    doc = parse_tool_list(listing, reference="servers.json")
    assert doc.features == ["io.example/weather: Forecasts"]
    assert len(doc.metadata["servers"]) == 2


@pytest.mark.parametrize(
    ("data", "needle"),
    [
        ({"tools": "nope"}, "'tools' is a str"),
        ({"tools": [{"description": "no name"}]}, "tool #0 has no 'name'"),
        ({"tools": [{"name": "x", "inputSchema": [1]}]}, "inputSchema that is not an object"),
        ({"hello": "world"}, "not a tool list"),
        ("just a string", "expected a JSON object or list"),
        ({"jsonrpc": "2.0", "id": 1, "error": {"message": "boom"}}, "is an error"),
    ],
)
def test_tool_list_malformed(data, needle):
    with pytest.raises(SourceError, match="tool list") as err:
        parse_tool_list(data, reference="bad.json")
    assert needle in str(err.value)


def test_tool_list_broken_json(tmp_path):
    bad = tmp_path / "broken.json"
    bad.write_text('{"tools": [ {"name": "a",, } ]}')
    with pytest.raises(SourceError, match=r"malformed JSON at line 1, column \d+"):
        read_tool_list(bad)


# --------------------------------------------------------------------------- OpenAPI


def test_openapi_json_operations_refs_and_bodies():
    doc = read_openapi(SRC / "inventory_openapi.json")
    assert doc.kind == "openapi"
    assert doc.title == "Warehouse Inventory API"
    assert doc.metadata["api_version"] == "2.1.0"
    tools = tools_by_name(doc)
    assert set(tools) == {
        "listProducts",
        "create_product",  # operationId "create-product" made an identifier
        "get_products_by_sku",  # no operationId: method + path
        "delete_products_by_sku",
        "setStockLevels",
    }
    listing = tools["listProducts"]
    assert listing.read_only is True
    assert listing.description == "List products. Products filtered by category and stock."
    assert listing.tags == ["Products"]
    assert set(listing.input_schema["properties"]) == {"category_id", "in_stock"}  # no header
    assert listing.input_schema["required"] == ["in_stock"]
    # output: array of Product with the recursive Category inlined, cycle cut
    category = listing.output_schema["items"]["properties"]["category"]
    assert category["properties"]["parent"]["description"] == "recursive reference to Category"
    assert "recursive reference" in category["properties"]["children"]["items"]["description"]

    create = tools["create_product"]
    assert create.read_only is False
    props = create.input_schema["properties"]
    assert {"sku", "name", "category_id", "unit_price"} <= set(props)
    assert "created_at" not in props  # readOnly properties are not inputs
    assert create.input_schema["required"] == ["sku", "name", "category_id"]
    assert doc.metadata["operations"]["create_product"]["body"] == "merged"

    get = tools["get_products_by_sku"]
    assert get.input_schema == {
        "type": "object",
        "properties": {"sku": {"type": "string", "description": "Stock keeping unit"}},
        "required": ["sku"],
    }
    assert tools["delete_products_by_sku"].description.startswith("(deprecated)")

    stock = tools["setStockLevels"]  # array body -> a "body" property
    assert stock.input_schema["required"] == ["warehouseId", "body"]
    assert stock.input_schema["properties"]["body"]["items"]["required"] == ["sku", "quantity"]

    entities = {e.name: e for e in doc.entities}
    assert set(entities) == {"Category", "Product", "Warehouse", "StockLevel"}  # Unit is an enum
    assert entities["StockLevel"].fields == ["sku", "warehouse_id", "quantity"]
    assert entities["Category"].description == "A node of the category tree."
    assert doc.features == ["Products: The product catalogue"]
    json.dumps(doc.model_dump())  # JSON-safe


def test_openapi_yaml_31_param_refs_collisions_and_forms():
    doc = read_openapi(SRC / "support_openapi.yaml")
    tools = tools_by_name(doc)
    assert set(tools) == {
        "getTicket",
        "replaceTicket",
        "post_tickets_by_id_comments",
        "head_tickets_by_id_comments",
    }
    assert tools["getTicket"].input_schema["properties"]["id"]["pattern"] == "^T-[0-9]+$"
    out = tools["getTicket"].output_schema  # "2XX" response
    assert "secret_note" not in out["properties"]  # writeOnly left out of outputs
    assert out["properties"]["opened_on"]["examples"] == ["2024-06-01"]  # YAML date -> str
    replace = tools["replaceTicket"].input_schema  # body has "id" like the path param
    assert set(replace["properties"]) == {"id", "body"}
    assert replace["required"] == ["id", "body"]
    assert "secret_note" in replace["properties"]["body"]["properties"]
    comment = tools["post_tickets_by_id_comments"].input_schema  # form body merged
    assert set(comment["properties"]) == {"id", "text", "internal"}
    assert comment["required"] == ["id"]  # body not marked required
    assert tools["head_tickets_by_id_comments"].read_only is True
    assert {e.name for e in doc.entities} == {"Ticket", "Customer"}
    json.dumps(doc.model_dump())


def test_openapi_rejects_swagger_and_other_documents(tmp_path):
    with pytest.raises(SourceError, match=r"Swagger 2\.0 is not supported.*OpenAPI 3"):
        read_openapi(SRC / "swagger2.json")
    with pytest.raises(SourceError, match="not an OpenAPI document"):
        parse_openapi({"info": {}}, reference="x.yaml")
    with pytest.raises(SourceError, match="version '2.5' is not supported"):
        parse_openapi({"openapi": "2.5", "paths": {}}, reference="x.yaml")
    with pytest.raises(SourceError, match="'paths' must be a mapping"):
        parse_openapi({"openapi": "3.0.0", "paths": []}, reference="x.yaml")
    with pytest.raises(SourceError, match="no operations"):
        parse_openapi({"openapi": "3.0.0", "paths": {}}, reference="x.yaml")
    dangling = {
        "openapi": "3.0.0",
        "paths": {"/a": {"get": {"parameters": [{"$ref": "#/components/parameters/Nope"}]}}},
    }
    with pytest.raises(SourceError, match="points at nothing"):
        parse_openapi(dangling, reference="x.yaml")
    bad_yaml = tmp_path / "bad.yaml"
    bad_yaml.write_text("openapi: 3.0.0\npaths:\n  /a: [unclosed\n")
    with pytest.raises(SourceError, match=r"malformed YAML at line \d+"):
        read_openapi(bad_yaml)


def test_ref_resolver_pointer_escapes_and_operation_names():
    doc = {"components": {"schemas": {"a/b": {"type": "string"}, "c~d": {"type": "integer"}}}}
    resolver = RefResolver(doc, "spec")
    assert resolver.resolve({"$ref": "#/components/schemas/a~1b"}) == {"type": "string"}
    assert resolver.resolve({"$ref": "#/components/schemas/c~0d"}) == {"type": "integer"}
    assert "external" in resolver.resolve({"$ref": "other.yaml#/X"})["description"]
    assert operation_name("get", "/users/{userId}/orders", None) == "get_users_by_user_id_orders"
    assert operation_name("post", "/", None) == "post"
    assert operation_name("get", "/x", "2fa.verify") == "op_2fa_verify"
    assert operation_name("get", "/x", "import") == "import_"


# --------------------------------------------------------------------------- PRD


def test_prd_fixture():
    doc = read_prd(SRC / "ticketing_prd.md")
    assert doc.kind == "prd"
    assert doc.title == "Gigstub: ticketing for small venues"  # setext H1 beats front matter
    assert doc.description.startswith("Gigstub lets independent venues")  # metadata skipped
    assert doc.features[0].startswith("FR-1: Organizers can create an event")
    assert len([f for f in doc.features if f.startswith("FR-")]) == 4
    assert (
        "As a buyer, I want to transfer a ticket to a friend so that they can go instead of me"
        in doc.features
    )
    joined = "\n".join(doc.features)
    for excluded in ("Checkout completes", "Reserved seating", "commented-out", "nor a feature"):
        assert excluded not in joined
    entities = {e.name: e for e in doc.entities}
    assert entities["Event"].fields == ["id", "title", "venue_id", "starts_at", "capacity"]
    assert entities["Venue"].fields == ["id", "name", "city", "seats"]
    assert entities["Venue"].description == "a place where events happen"
    assert entities["Ticket"].fields == ["id", "event_id", "order_id", "price", "status"]
    assert entities["Order"].fields == ["id", "buyer_email", "created_at", "total_amount"]
    assert entities["refund"].fields == ["id", "order_id", "amount", "reason"]  # CREATE TABLE
    assert entities["Organizer"].fields == []  # bold noun mentioned twice
    tools = tools_by_name(doc)
    assert {"create_event", "purchase_tickets", "issue_refund", "transfer_ticket"} <= set(tools)
    assert tools["export_guest_list"].read_only is True
    assert tools["create_event"].read_only is False
    assert all("from-prd-feature" in t.tags for t in doc.tools)


def test_prd_sections_tables_and_fallback_nouns():
    text = """# Pantry planner

Plan meals from what is in the pantry.

## Key features

- [x] Users can **scan** a barcode to add an item
- [ ] Show recipes that use items close to expiry
  - sub-bullet details are not separate features

## Data model

| Entity | Fields | Description |
|---|---|---|
| Item | id, name, expires_on | A thing in the pantry |
| Recipe | `id`, `title` | |

### Shopping list
- `id`
- `week`: ISO week
"""
    doc = parse_prd(text, reference="pantry.md")
    assert doc.title == "Pantry planner"
    assert doc.description == "Plan meals from what is in the pantry."
    assert doc.features == [
        "Users can scan a barcode to add an item",
        "Show recipes that use items close to expiry",
    ]
    entities = {e.name: e for e in doc.entities}
    assert entities["Item"].fields == ["id", "name", "expires_on"]
    assert entities["Item"].description == "A thing in the pantry"
    assert entities["Recipe"].fields == ["id", "title"]
    assert entities["Shopping list"].fields == ["id", "week"]

    no_model = parse_prd(
        "# Notes app\n\nA **Notebook** holds many **Pages**; each `Tag` groups pages.\n",
        reference="n.md",
    )
    assert {e.name for e in no_model.entities} == {"Notebook", "Page", "Tag"}


@pytest.mark.parametrize(
    ("feature", "expected"),
    [
        ("Users can cancel an order", ("cancel_order", False)),
        ("Members can renew a loan online", ("renew_loan", False)),
        ("As a member, I want to place a hold on a title", ("place_hold", False)),
        ("Search the catalogue by author", ("search_catalogue", True)),
        ("Librarians can check in a returned copy", ("check_in_copy", False)),
        ("Staff can view the history of an order", ("view_order_history", True)),
        ("The system allows admins to export all invoices", ("export_invoices", True)),
        ("A loan lasts 21 days", None),
        ("Members receive a reminder", None),
    ],
)
def test_feature_tool_names(feature, expected):
    assert feature_tool_name(feature) == expected


def test_prd_malformed(tmp_path):
    empty = tmp_path / "empty.md"
    empty.write_text("   \n")
    with pytest.raises(SourceError, match="file is empty"):
        read_prd(empty)
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"# t\n\xff\xfe\x00")
    with pytest.raises(SourceError, match="not UTF-8"):
        read_prd(binary)
    with pytest.raises(SourceError, match="no Markdown content"):
        parse_prd("```\ncode only\n```\n", reference="c.md")


def test_bundled_documents():
    api = read_openapi(DATA_DIR / "clinic_booking_openapi.yaml")
    assert api.title == "Maplecare Clinic Scheduling API"
    assert len(api.tools) >= 10
    names = {t.name for t in api.tools}
    assert {"bookAppointment", "cancelAppointment", "listAvailableSlots"} <= names
    entities = {e.name: e for e in api.entities}
    assert {"Patient", "Clinician", "Slot", "Appointment", "Location"} <= set(entities)
    assert {"patientId", "slotId", "clinicianId"} <= set(entities["Appointment"].fields)

    prd = read_prd(DATA_DIR / "book_lending_prd.md")
    assert prd.title.startswith("Shelfwise")
    assert len(prd.features) >= 15
    entities = {e.name: e for e in prd.entities}
    assert {"Branch", "Member", "Title", "Copy", "Loan", "Hold", "Fine"} <= set(entities)
    assert "title_id" in entities["Copy"].fields  # from the table
    assert {"renew_loan", "place_hold", "cancel_hold", "waive_fine"} <= {t.name for t in prd.tools}
    assert "Non-functional" not in " ".join(prd.features)
    assert prd.text()  # usable as prompt evidence


# --------------------------------------------------------------------------- specs


def test_parse_source_every_prefix(tmp_path):
    ref = parse_source("mcp:npx -y @modelcontextprotocol/server-memory")
    assert ref == SourceRef(
        kind="mcp", reference="npx -y @modelcontextprotocol/server-memory", name="memory"
    )
    assert ref.spec == "mcp:npx -y @modelcontextprotocol/server-memory"
    assert parse_source("mcp: mcp-server-time --local-timezone UTC").name == "time"
    url = parse_source("mcp-url:http://127.0.0.1:8765/mcp")
    assert (url.kind, url.reference, url.name) == (
        "mcp-url",
        "http://127.0.0.1:8765/mcp",
        "127-0-0-1-8765",
    )
    assert parse_source("https://mcp.example.com/mcp").kind == "mcp-url"

    assert parse_source(f"file:{SRC / 'ticketing_prd.md'}").kind == "prd"
    assert parse_source(f"file:{SRC / 'inventory_openapi.json'}").kind == "openapi"
    assert parse_source(f"file:{SRC / 'support_openapi.yaml'}").kind == "openapi"
    assert parse_source(f"file:{SRC / 'tools_list.json'}").kind == "tool-list"
    assert parse_source(f"file:{SRC / 'tools_bare.json'}").kind == "tool-list"
    server = parse_source(f"file:{SRC / 'server.json'}")
    assert (server.kind, server.name) == ("tool-list", "parcel-tracker")
    assert parse_source(f"file:{SRC / 'swagger2.json'}").kind == "openapi"  # refused on read
    assert parse_source(str(SRC / "tools_bare.json")).kind == "tool-list"  # bare path
    explicit = parse_source(f"prd:{SRC / 'tools_list.json'}")
    assert explicit.kind == "prd"

    # content sniffing without a telling extension
    yaml_no_ext = tmp_path / "spec"
    yaml_no_ext.write_text((SRC / "support_openapi.yaml").read_text())
    assert parse_source(f"file:{yaml_no_ext}").kind == "openapi"
    md_txt = tmp_path / "prd.txt"
    md_txt.write_text("# Title\n\n- a\n")
    assert parse_source(f"file:{md_txt}").kind == "prd"

    # a ref round-trips through its spec
    for spec in ("mcp:mcp-server-git", f"file:{SRC / 'server.json'}"):
        ref = parse_source(spec)
        assert parse_source(ref.spec) == ref


@pytest.mark.parametrize(
    ("spec", "needle"),
    [
        ("", "empty source spec"),
        ("mcp:", "no command"),
        ("mcp:'unbalanced", "cannot be parsed"),
        ("mcp-url:ftp://x", "http:// or https://"),
        ("file:", "no file path"),
        ("file:/no/such/file.json", "not found"),
        ("gopher:thing", "unknown source"),
        ("just some words", "use mcp:COMMAND"),
    ],
)
def test_parse_source_errors(spec, needle):
    with pytest.raises(SourceError) as err:
        parse_source(spec)
    assert needle in str(err.value)


def test_undetectable_and_malformed_files(tmp_path):
    other = tmp_path / "config.json"
    other.write_text('{"database": "x", "port": 1}')
    with pytest.raises(SourceError, match=r"cannot tell what kind.*database, port"):
        parse_source(f"file:{other}")
    broken = tmp_path / "broken.yaml"
    broken.write_text("a: [\n")
    with pytest.raises(SourceError, match="malformed YAML"):
        parse_source(f"file:{broken}")
    folder = tmp_path / "dir.json"
    folder.mkdir()
    with pytest.raises(SourceError, match="is a directory"):
        parse_source(f"file:{folder}")


def test_read_source_dispatch_and_missing_file(tmp_path):
    doc = read_source(f"file:{SRC / 'inventory_openapi.json'}")
    assert doc.kind == "openapi" and doc.name == "inventory-openapi"
    with pytest.raises(SourceError, match="Swagger"):
        read_source(f"file:{SRC / 'swagger2.json'}")
    gone = tmp_path / "gone.md"
    gone.write_text("# x\n\ny\n")
    ref = parse_source(f"file:{gone}")
    gone.unlink()
    with pytest.raises(SourceError, match="file not found"):
        read_source(ref)
    docs = read_sources([f"file:{SRC / 'tools_list.json'}", f"file:{SRC / 'ticketing_prd.md'}"])
    assert [d.kind for d in docs] == ["tool-list", "prd"]
    docs = read_sources(
        [f"file:{SRC / 'swagger2.json'}", f"file:{SRC / 'server.json'}"], skip_errors=True
    )
    assert [d.name for d in docs] == ["parcel-tracker"]


def test_default_sources():
    refs = default_sources()
    assert refs == list(DEFAULT_SOURCES)
    mcp = [r for r in refs if r.kind == "mcp"]
    assert [r.name for r in mcp] == ["time", "git", "fetch", "sqlite"]
    for ref in mcp:
        assert Path(ref.reference.split()[0]).name.startswith("mcp-server-")
    sqlite = next(r for r in mcp if r.name == "sqlite")
    assert "--db-path" in sqlite.reference
    files = [r for r in refs if r.kind != "mcp"]
    assert [r.kind for r in files] == ["openapi", "prd"]
    assert all(Path(r.reference).is_file() for r in files)
    assert all(parse_source(r.spec) == r for r in files)


def test_mcp_source_names():
    assert mcp_source_name("mcp-server-time") == "time"
    assert mcp_source_name("/venv/bin/mcp-server-sqlite --db-path /tmp/x.db") == "sqlite"
    assert mcp_source_name("uvx mcp-server-fetch") == "fetch"
    assert mcp_source_name("python -m mcp_server_git -r .") == "git"
    assert (
        mcp_source_name("npx -y @modelcontextprotocol/server-filesystem@1.2 /tmp") == "filesystem"
    )
    assert mcp_source_name("python -c 'print(1)' weather-mcp") == "weather"
    assert mcp_source_name("http://localhost:9000/mcp") == "localhost-9000"


def test_prd_field_notes_reach_the_entity_description():
    from agent_world.mining.sources.prd import parse_prd

    doc = parse_prd(
        "# Lending\n\nA library.\n\n## Data model\n\n### Member\n"
        "- `id` — integer, primary key\n- `status` — one of active, suspended, expired\n",
        reference="inline.md")
    [member] = [e for e in doc.entities if e.name == "Member"]
    assert member.fields == ["id", "status"]
    assert "status: one of active, suspended, expired" in member.description


def _declared(entity: str, bullets: str) -> dict:
    """The field declarations of one entity of a minimal PRD data model."""
    doc = parse_prd(f"# Lending\n\nA library.\n\n## Data model\n\n### {entity}\n{bullets}",
                    reference="inline.md")
    [hint] = [e for e in doc.entities if e.name == entity]
    return {f.name: f for f in hint.field_specs}


def test_prd_field_description_keeps_only_the_prose():
    """A field's description is what its note says beyond type, constraints and values: the
    built tools showed "card_number: text, unique" as the argument's description."""
    fields = _declared("Member", "- `card_number` — text, unique, printed on the library card\n"
                       "- `full_name` — text\n"
                       "- `status` — one of active, suspended. Set by librarians\n"
                       "- `condition` — good, worn, damaged\n")
    assert fields["card_number"].unique and fields["card_number"].description == \
        "printed on the library card"
    assert fields["full_name"].type == "string" and fields["full_name"].description == ""
    assert fields["status"].enum == ["active", "suspended"]
    assert fields["status"].description == "Set by librarians"
    assert fields["condition"].enum and fields["condition"].description == ""


def test_prd_references_are_required_unless_the_note_says_otherwise():
    fields = _declared("Fine", "- `member_id` — references Member\n"
                       "- `loan_id` — references Loan, empty for damage fines\n")
    assert fields["member_id"].required and fields["member_id"].references == "Member"
    assert not fields["loan_id"].required
