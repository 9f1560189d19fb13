"""What a source's create tool writes where its caller names nothing, and which arguments
shape an answer rather than pick records."""

from __future__ import annotations

import pytest

from agent_world.mining.offline.signatures import is_option
from tests.unit.corpus_plans import corpus_plans as _plans


def test_a_create_copies_no_stored_record_s_values():
    """Monday's create_item gave every new item the first stored item's title, time and
    activity (fields create_timeline_item requires of the same table); Teams' send_channel_message put
    every message in chat 4. A fixed value is one every stored record shares, or none."""
    spec, plans, _ = _plans("monday")
    item = plans.get("create_item")
    assert item is None or not {"title", "timestamp", "custom_activity_id"} & set(item.fixed)
    for server in ("monday", "teams", "figma", "google-calendar"):
        spec, plans, _ = _plans(server)
        for plan in plans.values():
            if plan.kind != "create":
                continue
            rows = spec.rows.get(plan.table, [])
            table = next(t for t in spec.tables if t.name == plan.table)
            for col, value in plan.fixed.items():
                stored = {repr(r.get(col)) for r in rows}
                kinds = table.column(col).enum or []  # a kind or state: a listed value
                assert value == {} or value in kinds or str(value).startswith("Untitled ") or \
                    isinstance(value, bool) or stored == {repr(value)}, (server, plan.name, col)


@pytest.mark.parametrize("name,description", [
    ("compact", "If true, return arXiv IDs only. Default is full local metadata."),
    ("qmode", "Which fields to search. 'titleCreatorYear' covers titles."),
    ("detail_level", "Detail level for table information"),
    ("sort_dir", "Sort direction (asc/desc)"),
    ("unidiff", "Present diffs in the unified diff format."),
    ("row_limit", "Maximum number of rows to return (up to 25,000)"),
    ("stats", "Include commit stats"),
    ("show_browser", "Show browser window for debugging (simple version)."),
    ("full", "Return all fields (default: slim)"),
    ("search_depth", "How thoroughly to search. \"shallow\" = direct recommendations only"),
    ("depth", "Limit the depth of the snapshot tree"),
    ("filename", "Save results to a file instead of returning them in the response."),
    ("model", "Optional response shape override."),
    ("gl", "Optional region code for search results in ISO 3166-1 alpha-2 format"),
    ("country", "Boost search results from a specific country."),
    ("next_page_token", "Token for the next page of results"),
    ("page_offset", "Offset of the page"),
])
def test_an_argument_that_shapes_the_answer_is_an_option(name, description):
    assert is_option(name, description)


@pytest.mark.parametrize("name,description", [
    ("created_after", "Include only predictions created at or after this date-time."),
    ("status", "The status of incidents to include"),
    ("archived", "If true, returns only archived projects"),
    ("summary", "Summary of the issue"),
    ("country", "Country of the customer"),
    ("depth", "Depth of the water at the station"),
])
def test_an_argument_that_picks_records_is_no_option(name, description):
    assert not is_option(name, description)


def test_an_answer_shaping_argument_filters_no_listing():
    """arXiv's list_papers(compact) had filtered the papers on a 'compact' column."""
    _, plans, _ = _plans("arxiv")
    listing = plans["list_papers"]
    assert "compact" not in {p.column for p in listing.params if p.role in ("eq", "like")}
