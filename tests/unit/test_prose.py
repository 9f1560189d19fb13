"""Free text of generated rows reads as people write it: messages, errors, reasons by what
was waived or cancelled, meeting titles, product names, web pages titled by their site."""

from __future__ import annotations

import random
import re

import pytest
from faker import Faker

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.prose import is_chat, prose, prose_kind
from agent_world.mining.offline.rows import RowFactory
from agent_world.mining.offline.web_pages import page_body, page_title


@pytest.mark.parametrize("name, table, kind", [
    ("last_error", "connections", "error"), ("warning", "scrapes", "error"),
    ("waived_reason", "fines", "waiver"), ("cancel_reason", "orders", "cancel"),
    ("reason", "transfers", "reason"), ("summary", "events", "meeting"),
    ("summary", "reports", "description"), ("description", "projects", "description"),
    ("question", "tickets", "question"), ("message", "alarms", "message"),
])
def test_prose_kind_follows_what_the_column_is_for(name, table, kind):
    assert prose_kind(name, table) == kind


def test_prose_is_no_lorem():
    rng, fake = random.Random(0), Faker()
    fake.seed_instance(0)

    def lorem(*_a, **_k):
        raise AssertionError("prose drew Faker's lorem")

    for method in ("word", "words", "sentence", "sentences", "paragraph", "text"):
        setattr(fake, method, lorem)
    for kind in ("message", "error", "reason", "waiver", "cancel", "question", "meeting",
                 "description", "title", "product"):
        texts = {prose(kind, rng, fake) for _ in range(30)}
        assert len(texts) >= 4 and all(t and "{" not in t for t in texts), (kind, texts)


def test_a_web_page_is_titled_by_its_site_and_says_what_sites_say():
    assert page_title("https://www.cooper-hill.com/pricing-plans/") == "Pricing plans | Cooper Hill"
    assert page_title("https://cooper.com/") == "Cooper"
    rng, fake = random.Random(1), Faker()
    body = page_body(fake, rng, "https://cooper.com/blog", None, 200, "text/html")
    assert body.startswith("# Blog | Cooper\n\n") and "Cooper" in body[20:] or "$" in body
    csv = page_body(fake, rng, "https://cooper.com/x", "X", 200, "text/csv")
    assert csv.splitlines()[0] == "id,name,quantity" and len(csv.splitlines()) >= 3


def test_output_instructions_and_find_phrases_are_not_chat_messages():
    """A command's stdout, a browser agent's instruction and a find/replace's text had held
    chat messages ('Thanks Ann, I'll follow up Tuesday.' as a test run's output)."""
    assert prose_kind("stdout", "languages") == "output"
    assert prose_kind("stderr", "languages") == "error"
    assert prose_kind("instruction", "stagehands") == "browser_step"
    assert prose_kind("instruction", "files") == "instruction"
    for name in ("text_to_find", "replace_text", "target_text", "start_anchor_text",
                 "old_text"):
        assert prose_kind(name, "documents") == "phrase", name
    assert prose_kind("body", "messages") == "message"  # a message stays one
    assert prose_kind("notice", "articles") == "notice"
    assert prose_kind("step", "test_case_steps") == "test_step"
    assert prose_kind("step", "queries") == "interval"
    assert prose_kind("preconditions", "test_cases") == "precondition"
    assert prose_kind("text", "checklist_items") == prose_kind("content", "task_items") == "todo"
    assert prose_kind("text", "google_slides_text_boxes") == "slide_text"
    assert prose_kind("text", "stickies") == "slide_text"
    assert prose_kind("text", "alerts") == "alert"
    assert prose_kind("text", "send_keyses") == prose_kind("text", "clipboards") == "typed"
    assert prose_kind("text", "paragraphs") == prose_kind("line_text", "lines") == "paragraph"
    assert prose_kind("observation", "entity_observations") == "observation"
    assert prose_kind("response_body_plain_text", "vacations") == "autoreply"
    assert prose_kind("response_subject", "vacations") == "away"
    assert prose_kind("alt_text", "charts") == prose_kind("caption", "slicers") == "caption"
    assert prose_kind("snippet", "video_results") == "description"
    assert prose_kind("message", "alerts") == prose_kind("text", "slide_comments") == "message"
    rng, fake = random.Random(0), Faker()
    fake.seed_instance(0)
    for kind in ("output", "instruction", "browser_step", "phrase", "notice", "test_step",
                 "precondition", "interval", "todo", "slide_text", "alert", "typed",
                 "paragraph", "observation", "autoreply", "away", "caption"):
        for _ in range(20):
            text = prose(kind, rng, fake)
            assert text and "{" not in text and not is_chat(text), \
                (kind, text)
    assert all(len(prose("phrase", rng, fake).split()) <= 4 for _ in range(30))


def test_an_rsvp_a_schedule_and_a_status_update_are_no_chat_messages():
    """Google Calendar's attendees' response_status, Firecrawl's monitors' schedule_text and
    Asana's project status text had been 'Thanks Derek, I'll follow up Tuesday.'"""
    table = TableSpec(name="event_attendees", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="response_status", type="text", nullable=False)])
    f = RowFactory([table], None, seed=0)
    assert {f.make("event_attendees")["response_status"] for _ in range(20)} <= {
        "accepted", "needsAction", "tentative", "declined"}
    assert column_semantic("monitors", ColumnSpec(name="schedule_text", type="text")) == \
        "schedule_text"
    rng, fake = random.Random(0), Faker()
    updates = [prose(prose_kind("text", "project_statuses"), rng, fake) for _ in range(10)]
    assert all(u.startswith(("On track", "At risk", "Off track")) for u in updates), updates


def test_a_note_kept_as_html_is_html_of_its_record_s_text():
    """Asana's html_notes and html_text had been plain chat messages, Firecrawl's raw_html a
    lorem word ('Republican')."""
    for table, column in [("tasks", "html_notes"), ("project_statuses", "html_text"),
                          ("scrapes", "raw_html"), ("issue_comments", "comment_html")]:
        assert column_semantic(table, ColumnSpec(name=column, type="text")) == "html"
    t = TableSpec(name="project_statuses", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True),
        ColumnSpec(name="html_text", type="text", nullable=False)])
    f = RowFactory([t], None, seed=0)
    values = [f.make("project_statuses")["html_text"] for _ in range(5)]
    assert all(v.startswith(("<p>On track", "<p>At risk", "<p>Off track")) and
               v.endswith("</p>") for v in values), values


def test_a_service_s_record_is_described_by_who_uses_it_not_as_a_document():
    """A Replicate model had been described 'Working copy of the Q3 onboarding doc.'; a
    document and a product keep their blurbs."""
    desc = ColumnSpec(name="description", type="text", nullable=False)
    assert column_semantic("models", desc) == "record_description"
    assert column_semantic("docs", desc) == column_semantic("products", desc) == "paragraph"
    t = TableSpec(name="models", columns=[
        ColumnSpec(name="id", type="integer", primary_key=True), desc])
    f = RowFactory([t], None, seed=0)
    values = [f.make("models")["description"] for _ in range(12)]
    assert all(re.search(r"\b(team|Owned|Maintained)\b", v) for v in values), values
    assert not any(re.search(r"copy|draft|doc\b|invoice|roadmap", v) for v in values), values
