"""A category's name as the service's categories are named: arXiv's paper categories are
'cs.LG', a search engine's result categories 'news' or 'research paper', Lighthouse's audit
categories 'Performance', a recipe site's 'Dessert'. Twenty-three category tables of the
corpus had been named like office documents ('Q4 roadmap' as an arXiv category, 'Security
weekly backlog' as an Exa result category)."""

from __future__ import annotations

import random
import re

from agent_world.mining.offline.value_pools import in_turn

# (what the table's name says, the names its categories have), the first that matches
_POOLS: tuple[tuple[re.Pattern[str], list[str]], ...] = (
    (re.compile(r"paper|arxiv|topic"), ["cs.AI", "cs.CL", "cs.LG", "cs.CV", "stat.ML",
                                        "math.OC", "q-bio.NC", "physics.optics", "econ.EM"]),
    (re.compile(r"poi|attraction|place|venue"), ["Restaurant", "Museum", "Park", "Hotel",
                                                 "Cafe", "Shopping", "Landmark", "Beach"]),
    (re.compile(r"search_result|result|content"), ["news", "research paper", "company", "pdf",
                                                   "github", "tweet", "personal site",
                                                   "financial report"]),
    (re.compile(r"audit|lighthouse|mobile_desktop"), ["Performance", "Accessibility",
                                                      "Best practices", "SEO", "PWA"]),
    (re.compile(r"contact|todo|task|mail|calendar"), ["Work", "Personal", "Family", "Urgent",
                                                      "Follow-up", "Travel", "Receipts"]),
    (re.compile(r"tracking"), ["Region", "Department", "Project", "Cost centre"]),
    (re.compile(r"video|youtube|transcript"), ["Music", "Gaming", "Education", "Sports",
                                               "Science & Technology", "News & Politics",
                                               "Comedy", "Howto & Style"]),
    (re.compile(r"cook|recipe|food|dish"), ["Breakfast", "Main course", "Dessert", "Soup",
                                           "Vegetarian", "Seafood", "Baking"]),
    (re.compile(r"documentation|doc|guide"), ["Getting started", "Guides", "API reference",
                                              "Tutorials", "Release notes", "Troubleshooting"]),
    (re.compile(r"tool|plugin|integration|instance"), ["Scraping", "Search", "Crawling",
                                                       "Extraction", "Monitoring",
                                                       "Automation"]),
    (re.compile(r"product|item|shop|store"), ["Electronics", "Books", "Home & Kitchen",
                                              "Clothing", "Toys", "Sports & Outdoors"]),
    (re.compile(r"expense|budget|transaction|account"), ["Travel", "Meals", "Software",
                                                         "Office supplies", "Rent",
                                                         "Utilities"]),
)
_GENERAL = ["General", "Announcements", "Engineering", "Marketing", "Finance", "Operations",
            "Support", "Design", "Off-topic"]


def category_name(table: str, row_id: object, r: random.Random, service: str = "") -> str:
    """The name of one category of `table`: by its id through the pool its table's name
    picks, else the pool the service's name picks (YouTube's bare `categories` are videos'),
    by its id (distinct until the pool runs out), else a random one of them."""
    pool = next((names for words in (table, service) for said, names in _POOLS
                 if words and said.search(words)), _GENERAL)
    return in_turn(pool, row_id, r)


__all__ = ["category_name"]
