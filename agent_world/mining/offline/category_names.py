"""A category's name as the service's categories are named: arXiv's paper categories are
'cs.LG', a search engine's result categories 'news' or 'research paper', Lighthouse's audit
categories 'Performance', a recipe site's 'Dessert'. Twenty-three category tables of the
corpus had been named like office documents ('Q4 roadmap' as an arXiv category, 'Security
weekly backlog' as an Exa result category)."""

from __future__ import annotations

import random
import re
from typing import Any

from agent_world.mining.offline.value_pools import in_turn

# (what the table's name says, what is filed under its categories, the names they have), the
# first that matches
_POOLS: tuple[tuple[re.Pattern[str], str, list[str]], ...] = (
    (re.compile(r"paper|arxiv|topic"), "papers",
     ["cs.AI", "cs.CL", "cs.LG", "cs.CV", "stat.ML", "math.OC", "q-bio.NC", "physics.optics",
      "econ.EM"]),
    (re.compile(r"poi|attraction|place|venue"), "places",
     ["Restaurant", "Museum", "Park", "Hotel", "Cafe", "Shopping", "Landmark", "Beach"]),
    (re.compile(r"search_result|result|content"), "results",
     ["news", "research paper", "company", "pdf", "github", "tweet", "personal site",
      "financial report"]),
    (re.compile(r"audit|lighthouse|mobile_desktop"), "audits",
     ["Performance", "Accessibility", "Best practices", "SEO", "PWA"]),
    (re.compile(r"contact|todo|task|mail|calendar"), "items",
     ["Work", "Personal", "Family", "Urgent", "Follow-up", "Travel", "Receipts"]),
    (re.compile(r"tracking"), "transactions",
     ["Region", "Department", "Project", "Cost centre"]),
    (re.compile(r"video|youtube|transcript"), "videos",
     ["Music", "Gaming", "Education", "Sports", "Science & Technology", "News & Politics",
      "Comedy", "Howto & Style", "Film & Animation", "Autos & Vehicles", "Pets & Animals",
      "Travel & Events", "People & Blogs", "Entertainment", "Nonprofits & Activism"]),
    (re.compile(r"cook|recipe|food|dish"), "recipes",
     ["Breakfast", "Main course", "Dessert", "Soup", "Vegetarian", "Seafood", "Baking"]),
    (re.compile(r"documentation|doc|guide"), "pages",
     ["Getting started", "Guides", "API reference", "Tutorials", "Release notes",
      "Troubleshooting"]),
    (re.compile(r"tool|plugin|integration|instance"), "tools",
     ["Scraping", "Search", "Crawling", "Extraction", "Monitoring", "Automation"]),
    (re.compile(r"product|item|shop|store"), "products",
     ["Electronics", "Books", "Home & Kitchen", "Clothing", "Toys", "Sports & Outdoors"]),
    (re.compile(r"expense|budget|transaction|account"), "expenses",
     ["Travel", "Meals", "Software", "Office supplies", "Rent", "Utilities"]),
)
_GENERAL = ["General", "Announcements", "Engineering", "Marketing", "Finance", "Operations",
            "Support", "Design", "Off-topic"]


def _pool(table: str, service: str) -> tuple[str, list[str]]:
    """What the categories of `table` file and are named: by the table's name, else by the
    service's (YouTube's bare `categories` are videos')."""
    return next(((filed, names) for words in (table, service) for said, filed, names in _POOLS
                 if words and said.search(words)), ("items", _GENERAL))


def category_name(table: str, row_id: object, r: random.Random, service: str = "") -> str:
    """The name of one category of `table`: by its id through the pool its table's or
    service's name picks (distinct until the pool runs out), else a random one of them."""
    return in_turn(_pool(table, service)[1], row_id, r)


def category_description(table: str, row: dict[str, Any], service: str = "") -> str:
    """What a category is, under its name: 'Videos in the Music category.' (YouTube's had
    been 'Working copy of the Q2 pricing page.')."""
    filed = _pool(table, service)[0]
    name = next((v for k in ("name", "title", "label") if isinstance(v := row.get(k), str)
                 and v.strip()), None)
    return f"{filed.capitalize()} in the {name} category." if name else \
        f"A category of {filed}."


__all__ = ["category_description", "category_name"]
