"""A record's body holds what the record is: a documentation page its text under its title, a
file text of its type, a key a PEM block; messages keep theirs. Read from mined corpus servers,
as a user of each would read them."""

from __future__ import annotations

import base64
import csv
import io
import json
import random
import warnings

import yaml
from faker import Faker

from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.naming import ADDED_LABEL
from agent_world.mining.offline.prose import _MESSAGES
from agent_world.mining.offline.record_bodies import DOC_TOPICS, body_kind, file_body, record_body
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources


def _mined(server: str):
    ref = next(r for r in corpus_sources() if r.name == server)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return mine_theme(read_source(ref.spec), iterations=0, seed=0).spec


def _chat(text: object) -> bool:
    """A line of the pool a message is made from ('Looks good to me, approved.')."""
    heads = {m.split("{")[0].strip() for m in _MESSAGES if m.split("{")[0].strip()}
    return isinstance(text, str) and any(text.startswith(h) for h in heads if len(h) > 8)


def test_which_bodies_are_whose():
    assert body_kind("wikis", "content") == "document_body"
    assert body_kind("tailwind_docs", "content") == "document_body"
    assert body_kind("files", "content") == "file_body"
    assert body_kind("objects", "body") == "file_body"
    assert body_kind("private_keys", "content") == "key_body"
    assert body_kind("messages", "content") is None  # a message's body is a message
    assert body_kind("comments", "body") is None
    assert body_kind("files", "name") is None


def test_a_docs_servers_pages_hold_their_text_under_their_title():
    """MUI's fetchDocs declares no output: its docs had been an id and a name ('Report
    review'), and every read of one was rejected as empty."""
    spec = _mined("mui")
    docs = next(t for t in spec.tables if t.name == "docs")
    cols = {c.name: c for c in docs.columns}
    assert "content" in cols
    assert cols["name"].description != ADDED_LABEL  # a page's title is what a fetch shows
    rows = spec.rows["docs"]
    assert rows
    for r in rows:
        assert r["name"] in DOC_TOPICS or r["name"].rstrip("0123456789 ") in DOC_TOPICS
        if r["content"] is not None:  # a few bodies are empty
            assert r["content"].startswith(f"# {r['name']}\n")
            assert "## " in r["content"] and not _chat(r["content"])


def test_wiki_pages_and_documents_are_markdown_not_chat():
    spec = _mined("backlog")
    for table in ("wikis", "documents"):
        rows = spec.rows[table]
        assert rows
        for r in (r for r in rows if r["content"] is not None):  # a few bodies are empty
            assert r["content"].startswith("# ") and not _chat(r["content"]), (table, r)
            title = r.get("title") or r.get("name")
            assert r["content"].splitlines()[0] == f"# {title}"


def test_a_private_key_is_a_pem_block():
    rows = [r for r in _mined("coolify").rows["private_keys"] if r["content"] is not None]
    assert rows  # (the edge case of a row with every nullable column NULL has none)
    for r in rows:
        lines = r["content"].splitlines()
        assert lines[0] == "-----BEGIN PRIVATE KEY-----"
        assert lines[-1] == "-----END PRIVATE KEY-----"
        base64.b64decode("".join(lines[1:-1]), validate=True)


def test_a_file_holds_text_of_its_type():
    rng, fake = random.Random(0), Faker()
    fake.seed_instance(0)
    assert json.loads(file_body({"name": "settings.json"}, rng, fake))["name"] == "settings"
    assert yaml.safe_load(file_body({"path": "ci/deploy.yml"}, rng, fake))["name"] == "deploy"
    table = list(csv.reader(io.StringIO(file_body({"filename": "q3.csv"}, rng, fake))))
    assert table[0] == ["id", "name", "amount"] and len(table) >= 3
    compile(file_body({"path": "src/report_tools.py"}, rng, fake), "report_tools.py", "exec")
    png = base64.b64decode(file_body({"key": "img/logo.png"}, rng, fake))
    assert png.startswith(b"\x89PNG")
    assert file_body({"name": "README.md"}, rng, fake).startswith("# README\n")


def test_mined_files_agree_with_their_names():
    """Cloud Run's and GitLab's stored files: a chat message had been every file's content."""
    for server, table in (("cloud-run", "files"), ("gitlab", "files")):
        rows = _mined(server).rows[table]
        assert rows
        for r in rows:
            assert not _chat(r.get("content")), (server, r)


def test_a_record_with_a_file_name_holds_the_files_text():
    """The memory bank's `banks` are its files: 'timesheet-q4.gif' had held 'Can you take a
    look at the draft before Tuesday?'."""
    rows = _mined("memory-bank").rows["banks"]
    assert rows
    for r in rows:
        ext = r["file_name"].rsplit(".", 1)[-1]
        assert ext in ("md", "txt", "pdf", "csv", "json", "docx", "png"), r["file_name"]
        assert r["content"] is None or not _chat(r["content"]), r


def test_a_docs_page_is_on_a_docs_site_under_its_title():
    """HeroUI's docs were at '/home/jasmine30/Downloads/report-v4.csv', MUI's doc URLs on
    blogs ('http://martinez.com/list/category')."""
    for r in _mined("heroui").rows["docs"]:
        assert r["path"] is None or r["path"].startswith("/docs/"), r
    spec = _mined("mui")
    docs = {r["id"]: r for r in spec.rows["docs"]}
    names = [r["name"] for r in spec.rows["docs"]]
    assert len(set(names)) == len(names)  # no two pages alike until the topics run out
    hosts = set()
    for r in spec.rows["doc_urls"]:
        slug = docs[r["doc_id"]]["name"].lower().replace(" ", "-")
        assert r["url"].split("/docs/")[1].startswith(slug), r
        hosts.add(r["url"].split("/docs/")[0])
    assert len(hosts) == 1 and next(iter(hosts)).startswith("https://docs.")


def test_exchanges_stylesheets_manifests_and_pages_hold_their_own_kind_of_body():
    """A debugger's requests and mocks, Postman's responses, Tailwind's stylesheets,
    kubectl's file contents and a page's text had held chat messages."""
    assert body_kind("requests", "body") == "exchange_body"
    assert body_kind("network_mocks", "body_replace") == "exchange_body"
    assert body_kind("collection_responses", "text") == "exchange_body"
    assert body_kind("pull_requests", "body") is None  # a pull request's body is prose
    assert body_kind("css", "content") == "css_body"
    assert body_kind("kubectl_from_file_contents", "content") == "k8s_manifest"
    assert body_kind("page_texts", "text") == body_kind("articles", "text") == "document_body"
    assert body_kind("messages", "text") is None
    rng, fake = random.Random(0), Faker()
    fake.seed_instance(0)
    assert set(json.loads(record_body("exchange_body", "requests", {}, rng, fake))) == {
        "email", "quantity", "sku"}
    assert "id" in json.loads(record_body("exchange_body", "network_mocks", {}, rng, fake))
    assert body_kind("workers", "script_content") == body_kind("script_lines", "content") == \
        "code_body"
    assert body_kind("functions", "function_body") == "sql_body"
    assert body_kind("directories", "content") == "listing_body"
    assert body_kind("sheets", "content") == "csv_text"
    assert record_body("code_body", "workers", {"name": "cron"}, rng, fake).startswith(
        "export function")
    line = record_body("code_body", "script_lines", {"name": "spawn"}, rng, fake)
    assert line.startswith("local function") and "\n" not in line
    assert record_body("sql_body", "functions", {}, rng, fake).startswith("BEGIN")
    css = record_body("css_body", "css", {"name": "Primary button"}, rng, fake)
    assert css.startswith(".primary-button {") and css.rstrip().endswith("}")
