"""Values as their service means them: a cloud service's regions are cloud regions
(DigitalOcean's volumes and GCP's projects were in 'West'), an address a mail goes to is a
mailbox (Gmail's reply-to address was a street), a record's bare value is of its kind."""

from __future__ import annotations

import random
import re
import warnings

from faker import Faker

from agent_world.envs.table_spec import ColumnSpec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.category_names import category_name
from agent_world.mining.offline.cloud_regions import cloud_region, described_cloud
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.reference_data import CLOUD_REGIONS
from agent_world.mining.offline.setting_values import (
    _CELLS,
    _HEADERS,
    _PROPERTIES,
    setting_value,
)
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources

_SALES_REGIONS = {"North", "South", "East", "West", "Central"}


def _mined(server: str):
    ref = next(r for r in corpus_sources() if r.name == server)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mine_theme(read_source(ref.spec), iterations=0, seed=0).spec


def test_an_address_mail_goes_to_is_a_mailbox():
    for table, name in (("sends", "reply_to_address"), ("filters", "list_address"),
                        ("messages", "sender_address")):
        assert column_semantic(table, ColumnSpec(name=name, type="text")) == "email"
    assert column_semantic("orders", ColumnSpec(name="shipping_address", type="text")) == \
        "address"


def test_a_cloud_services_regions_are_cloud_regions():
    for server, table in (("digitalocean", "volumes"), ("gcp", "projects")):
        spec = _mined(server)
        regions = {r["region"] for r in spec.rows[table] if r.get("region")}
        assert regions and not regions & _SALES_REGIONS, (server, regions)
        assert all("-" in r or r[-1].isdigit() for r in regions)


def test_a_cloud_services_regions_are_named_as_its_provider_names_them():
    """A GCP project sat in 'eu-central-1', a DigitalOcean volume in 'us-west-2' and AWS
    prices in 'Cl', 'DataTransfer' and 'eu-west-7' (the source's examples, a digit redrawn):
    one mixed list, and examples taken from a sentence about global services."""
    assert described_cloud("Manage Droplets and volumes on DigitalOcean") == "digitalocean"
    assert described_cloud("Deploy to Cloud Run on Google Cloud (GCP)") == "gcp"
    assert described_cloud("A todo list") is None
    for server, table, provider in (("digitalocean", "volumes", "digitalocean"),
                                    ("gcp", "projects", "gcp"),
                                    ("aws-pricing", "pricings", "aws"),
                                    ("cloudbase", "auths", "tencent")):
        spec = _mined(server)
        regions = {r["region"] for r in spec.rows[table] if r.get("region")}
        assert regions and regions <= set(CLOUD_REGIONS[provider]), (server, regions)
    # no provider named: one style (AWS's), not a mix
    rng = random.Random(0)
    assert {cloud_region(None, rng) for _ in range(50)} <= set(CLOUD_REGIONS["aws"])


def test_a_bare_value_is_of_its_records_kind_never_a_message():
    """Cloudflare's KV pairs and env vars, Postman's headers and Google Contacts' phone
    numbers had held chat messages ('Thanks Jessica, I'll follow up Tuesday.')."""
    assert column_semantic("kvs", ColumnSpec(name="value", type="text")) == "setting_value"
    rng, fake = random.Random(0), Faker()
    fake.seed_instance(0)
    assert "@" in setting_value("contact_email_addresses", rng, fake)
    assert any(ch.isdigit() for ch in setting_value("contact_phone_numbers", rng, fake))
    assert setting_value("request_header_data", rng, fake) in _HEADERS
    # a `..._value` is a value too: a filter's compare value, a property's
    assert column_semantic("board_filters", ColumnSpec(name="compare_value", type="text")) == \
        "setting_value"
    assert setting_value("board_filters", rng, fake, "compare_value") in _CELLS
    assert setting_value("properties", rng, fake, "property_value") in _PROPERTIES
    assert column_semantic("messages", ColumnSpec(name="text_value", type="text")) != \
        "setting_value"
    spec = _mined("cloudflare")
    for table in ("kvs", "env_vars"):
        values = [r["value"] for r in spec.rows[table] if r.get("value")]
        assert values and all(len(v) <= 40 and not v.endswith((".", "?")) for v in values)


def test_a_categorys_name_is_a_category_of_its_service():
    """arXiv's paper categories had been 'Q4 roadmap', Exa's result categories 'Security
    weekly backlog'."""
    assert column_semantic("paper_categories", ColumnSpec(name="name", type="text")) == \
        "category_name"
    rng = random.Random(0)
    assert category_name("paper_categories", 3, rng) == "cs.LG"
    assert category_name("search_result_categories", 1, rng) == "news"
    assert len({category_name("audit_categories", i, rng) for i in range(1, 6)}) == 5
    names = [r["name"] for r in _mined("arxiv").rows["paper_categories"] if r.get("name")]
    assert names and not any(re.search(r"\b(?:Q\d|review|draft|roadmap)\b", n)
                             for n in names), names
    assert all(re.fullmatch(r"[a-z-]+\.[A-Za-z-]+", n) for n in names), names
