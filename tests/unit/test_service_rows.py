"""A service's rows are its own: the source's name seeds them (two environments had shared a
fifth of their people and addresses: amap's first address was european_parliament's), its docs
live on its host, its CLI is named for it, its bare categories are of its kind and two search
engines rank the pages differently."""

from __future__ import annotations

import random

from faker import Faker

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.category_names import category_name
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.naming import brand
from agent_world.mining.offline.record_bodies import docs_address, record_body
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.offline.value_pools import record_name
from agent_world.mining.offline.web_results import web_value

_PEOPLE = TableSpec(name="contacts", columns=[
    ColumnSpec(name="id", type="integer", primary_key=True),
    ColumnSpec(name="full_name", type="text", nullable=False),
    ColumnSpec(name="email", type="text", nullable=False),
    ColumnSpec(name="address", type="text", nullable=False)])


def _rows(service: str) -> list[dict]:
    f = RowFactory([_PEOPLE], None, seed=0, service=service)
    return [f.make("contacts") for _ in range(30)]


def test_two_services_draw_different_people_and_one_service_the_same():
    amap, parliament = _rows("amap"), _rows("european_parliament")
    for col in ("full_name", "email", "address"):
        shared = {r[col] for r in amap} & {r[col] for r in parliament}
        assert len(shared) <= 2, (col, shared)
    assert _rows("amap") == amap  # repeatable: the same service and seed, the same rows


def test_a_service_s_name_says_whose_it_is():
    assert brand("apple-docs") == "apple"
    assert brand("brave-search") == "brave"
    assert brand("google-maps-code-assist") == "google-maps"
    assert brand("aws-documentation") == "aws"
    assert brand("mcp-server") == "mcp-server"  # nothing but packaging words: all of them


def test_docs_live_on_the_service_s_host_and_its_example_runs_its_cli():
    rng = random.Random(0)
    url = docs_address("docs", {"id": 1, "title": "Installation"}, rng, True, service="mui")
    assert url == "https://docs.mui.com/docs/installation"
    fake = Faker()
    fake.seed_instance(0)
    bodies = [record_body("document_body", "guides", {"id": i, "title": "Theming"}, rng, fake,
                          service="mui") for i in range(12)]
    examples = [b.split("## Example\n", 1)[1] for b in bodies if "## Example" in b]
    assert examples and all("acme" not in e and "mui" in e for e in examples), examples


def test_bare_categories_are_of_the_service_s_kind():
    rng = random.Random(0)
    assert category_name("categories", 1, rng, "youtube_data") == "Music"
    assert category_name("categories", 1, rng, "howtocook") == "Breakfast"
    assert category_name("categories", 1, rng, "hubspot") == "General"
    # the table's own words go first: a video service's paper categories are papers'
    assert category_name("paper_categories", 1, rng, "youtube_data") == "cs.AI"


def test_two_search_engines_rank_the_pages_differently():
    rng = random.Random(0)

    def titles(service: str) -> list[str]:
        return [web_value("web_title", "search_results", {"id": i}, rng, service)
                for i in range(1, 9)]
    brave, serper = titles("brave_search"), titles("serper")
    assert brave != serper
    assert titles("brave_search") == brave


def test_a_category_is_described_as_what_it_files():
    """YouTube's transcript categories had been described 'Working copy of the Q2 pricing
    page.'"""
    table = TableSpec(name="categories", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="name", type="text", nullable=False),
        ColumnSpec(name="description", type="text", nullable=False)])
    assert column_semantic("categories", table.columns[2]) == "category_description"
    f = RowFactory([table], None, seed=0, service="youtube_data")
    rows = [f.make("categories") for _ in range(3)]
    assert [r["description"] for r in rows] == [
        f"Videos in the {r['name']} category." for r in rows]
    assert rows[0]["name"] == "Music"


def test_records_of_a_kind_with_its_own_names_take_them():
    """Selenium's cookies had been named 'orders-cookie', HubSpot's properties
    'admin-property'; a subnet is still named for its area ('billing-subnet')."""
    rng = random.Random(0)
    cookies = [record_name("cookies", rng, i) for i in range(1, 6)]
    assert len(set(cookies)) == 5 and all("-cookie" not in c for c in cookies), cookies
    assert record_name("request_headers", rng, 1) in (
        "Content-Type", "Authorization", "Accept", "User-Agent", "Cache-Control",
        "X-Request-Id", "Accept-Language", "If-None-Match")
    assert record_name("subnets", rng, 1).endswith("-subnet")
