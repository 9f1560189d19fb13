"""A web search result is one page: its title, its URL on that page's site and a snippet of its
text agree (search servers had returned 'Q2 roadmap' at a random blog URL with a chat message
as the snippet)."""

from __future__ import annotations

import random
import re
import warnings

from agent_world.envs.table_spec import ColumnSpec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.offline.column_semantics import column_semantic
from agent_world.mining.offline.prose import _MESSAGES
from agent_world.mining.offline.web_pages import SITE_PATHS, page_title
from agent_world.mining.offline.web_results import VIDEO_PAGES, WEB_PAGES, web_part, web_value
from agent_world.mining.sources import read_source
from agent_world.mining.sources.harvest_corpus import corpus_sources
from tests.unit.row_helpers import made_rows


def _slug(title: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", title.lower()).strip("-")


def test_the_parts_of_a_result_are_known_by_table_and_column():
    assert web_part("search_results", "snippet") == "web_snippet"
    assert web_part("web_results", "url") == "web_url"
    assert web_part("orders", "title") is None
    assert column_semantic("search_results", ColumnSpec(name="title", type="text")) == \
        "web_title"


def test_a_rows_title_url_and_snippet_are_one_pages_in_any_order():
    rng = random.Random(0)
    row = {"id": 7}
    url = web_value("web_url", "search_results", row, rng)
    title = web_value("web_title", "search_results", row, rng)
    snippet = web_value("web_snippet", "search_results", row, rng)
    [(t, site, s)] = [p for p in WEB_PAGES if p[0] == title]
    assert url == f"https://{site}/{_slug(title)}" and snippet == s


def test_a_mined_search_servers_results_agree_and_differ():
    ref = next(r for r in corpus_sources() if r.name == "brave-search")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec = mine_theme(read_source(ref.spec), iterations=1, seed=0).spec
    pages = {p[0]: p for p in WEB_PAGES}
    chat = set(_MESSAGES)
    for table in ("web_results", "search_results"):
        rows = spec.rows[table]
        # distinct but for the edge case of a second row under an existing title
        assert len(rows) - 1 <= len({r["title"] for r in rows}) <= len(WEB_PAGES)
        for r in rows:
            _, site, snippet = pages[r["title"]]
            assert r["url"] == f"https://{site}/{_slug(r['title'])}"
            if r["snippet"] is not None:  # the edge case of a row with every nullable NULL
                assert r["snippet"] == snippet and r["snippet"] not in chat


def test_a_video_result_is_a_video_on_its_watch_page():
    """YouTube's video_results had been 'Onboarding doc notes' at
    'http://www.marks.com/tags/category'."""
    rng = random.Random(0)
    assert web_part("video_results", "channel") == "web_channel"
    assert web_part("search_results", "channel") is None  # a web page names no channel
    for i in range(1, 5):
        row = {"id": i}
        title = web_value("web_title", "video_results", row, rng, "youtube_data")
        url = web_value("web_url", "video_results", row, rng, "youtube_data")
        channel = web_value("web_channel", "video_results", row, rng, "youtube_data")
        page = next(p for p in VIDEO_PAGES if p[0] == title)
        assert channel == page[1]
        assert re.fullmatch(r"https://www\.youtube\.com/watch\?v=[\w-]{11}", url), url
        assert url == web_value("web_url", "video_results", {"title": title}, rng)


def test_a_url_is_a_page_of_a_site_and_an_image_s_url_an_image():
    """URLs had ended in random words ('http://www.perry.com/list/search/app'), an avatar's
    URL too; a page's title follows its URL ('Pricing | Perry')."""
    rows = made_rows("accounts", [ColumnSpec(name="website_url", type="text", nullable=False),
                                  ColumnSpec(name="avatar_url", type="text", nullable=False)],
                     10)
    assert all(re.fullmatch(r"https?://[\w.-]+/(" + "|".join(SITE_PATHS) + r")(-\d+)?",
                            r["website_url"]) for r in rows), rows
    assert all(r["avatar_url"].endswith(".png") and "/images/" in r["avatar_url"]
               for r in rows), rows
    assert page_title("https://www.perry.com/docs/getting-started") == \
        "Getting started | Perry"


def test_a_url_s_example_is_not_every_record_s_url():
    """Figma's components, styles and variables had all had the file URL of the source's
    example ('https://figma.com/design/abc123'): one page for every record."""
    rows = made_rows("components", [ColumnSpec(
        name="file_url", type="text", nullable=False,
        description="Figma file URL, e.g. https://figma.com/design/abc123")], 6)
    urls = {r["file_url"] for r in rows}
    assert len(urls) > 1, urls
