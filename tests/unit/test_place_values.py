"""Where a record is, as its service means it: a cloud service's regions are cloud regions
(DigitalOcean's volumes and GCP's projects were in 'West'), and an address a mail goes to is a
mailbox (Gmail's reply-to address was a street)."""

from __future__ import annotations

import warnings

from agent_world.envs.table_spec import ColumnSpec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.column_semantics import column_semantic
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
