"""A web search result as a search engine returns it: the title of a real kind of page, the URL
of that page on its site, and a snippet of the page's text. Twenty search servers (Brave, Exa,
Tavily, Perplexity, DuckDuckGo, ...) had returned 'Q2 roadmap' at 'https://www.smith.info/
category/wp-content' with the snippet 'Could we push the budget review to Monday?': three
columns that agreed on nothing, and no question a user would ask of a web search.

A result's page is a function of its table and id (or of its title, where the row was given
one), so the title, URL and snippet agree in whatever order the row's columns are made, and a
table's results differ until the pages run out."""

from __future__ import annotations

import random
from typing import Any

from agent_world.mining.offline.naming import singular, slug
from agent_world.mining.offline.value_pools import in_turn

# (title, site, snippet): pages of the kinds a web search turns up, across subjects
WEB_PAGES: list[tuple[str, str, str]] = [
    ("Get started with Docker Compose", "docs.docker.com",
     "Compose defines and runs multi-container applications: one YAML file configures the "
     "services, networks and volumes."),
    ("How to set up Nginx as a reverse proxy", "www.digitalocean.com",
     "Configure Nginx to pass requests to an application server, add TLS with Certbot and "
     "tune proxy buffers."),
    ("Python asyncio: a practical introduction", "realpython.com",
     "Learn how coroutines, tasks and the event loop work together, with examples of running "
     "I/O-bound work concurrently."),
    ("Understanding JavaScript promises", "developer.mozilla.org",
     "A promise represents the eventual completion or failure of an asynchronous operation "
     "and its resulting value."),
    ("PostgreSQL indexes explained", "www.postgresql.org",
     "B-tree, hash, GiST and GIN indexes: when the planner uses each and how to check with "
     "EXPLAIN."),
    ("Kubernetes Deployments", "kubernetes.io",
     "A Deployment provides declarative updates for Pods and ReplicaSets: describe a desired "
     "state and the controller changes the actual state to match."),
    ("Git branching strategies compared", "www.atlassian.com",
     "Trunk-based development, GitFlow and feature branches: how teams merge, release and "
     "fix bugs with each."),
    ("Rust ownership and borrowing", "doc.rust-lang.org",
     "Each value has a single owner; references borrow it without taking ownership, checked "
     "at compile time."),
    ("Best hiking trails in the Swiss Alps", "www.myswitzerland.com",
     "From the Eiger Trail to the Five Lakes Walk near Zermatt: routes, lengths and the best "
     "months to go."),
    ("Sourdough bread for beginners", "www.kingarthurbaking.com",
     "Feed the starter, mix, stretch and fold, proof overnight in the fridge and bake in a "
     "preheated Dutch oven."),
    ("Index funds vs ETFs: what is the difference?", "www.investopedia.com",
     "Both track an index; ETFs trade throughout the day like stocks, while index mutual "
     "funds price once at the close."),
    ("What is the James Webb Space Telescope?", "science.nasa.gov",
     "Webb is the largest telescope in space, observing in infrared to study the first "
     "galaxies and exoplanet atmospheres."),
    ("Symptoms of vitamin D deficiency", "www.mayoclinic.org",
     "Fatigue, bone pain and muscle weakness can point to low vitamin D; a blood test "
     "confirms it."),
    ("Visiting Kyoto in autumn", "www.japan-guide.com",
     "Peak colours arrive in mid to late November at Tofukuji, Eikando and Arashiyama; "
     "expect crowds on weekends."),
    ("React hooks reference", "react.dev",
     "useState, useEffect, useContext and useRef: what each hook does and the rules for "
     "calling hooks."),
    ("Train a model with scikit-learn pipelines", "scikit-learn.org",
     "Chain preprocessing and an estimator in a Pipeline so cross-validation fits the whole "
     "sequence on each fold."),
    ("Electric cars: range in cold weather", "www.caranddriver.com",
     "Tests show winter range losses of 20 to 30 percent, mostly from cabin heating; heat "
     "pumps reduce the loss."),
    ("The history of the printing press", "www.britannica.com",
     "Johannes Gutenberg's movable type, around 1440, made books cheaper and spread literacy "
     "across Europe."),
    ("OAuth 2.0 authorization code flow", "auth0.com",
     "The client redirects the user to the authorization server, receives a code and "
     "exchanges it for tokens; add PKCE for public clients."),
    ("Terraform state: remote backends", "developer.hashicorp.com",
     "Store state in S3, GCS or Terraform Cloud so a team shares one state file with "
     "locking."),
    ("How to write a cover letter", "www.indeed.com",
     "Open with the role, show two achievements that match the job and close with a call to "
     "action; keep it to one page."),
    ("Marathon training plan for beginners", "www.runnersworld.com",
     "An 18-week plan building from 20 to 40 miles a week, with one long run and a rest day "
     "each week."),
    ("Climate change: evidence and causes", "climate.nasa.gov",
     "Global temperature has risen about 1.2 degrees Celsius since the late 19th century, "
     "driven by greenhouse gas emissions."),
    ("TypeScript generics", "www.typescriptlang.org",
     "Generics let a function or class work over many types while keeping the relationship "
     "between its inputs and outputs."),
    ("Redis caching patterns", "redis.io",
     "Cache-aside, write-through and write-behind: how each keeps the cache and the database "
     "consistent, and when keys expire."),
    ("Grow tomatoes in containers", "www.rhs.org.uk",
     "Choose a bush variety, a pot of at least 30 litres and feed weekly with a high-potash "
     "fertiliser once flowers appear."),
    ("GraphQL vs REST", "www.apollographql.com",
     "GraphQL lets clients ask for exactly the fields they need in one request; REST exposes "
     "resources at fixed endpoints."),
    ("Linux file permissions with chmod", "www.redhat.com",
     "Read, write and execute bits for the owner, group and others, set with symbolic or "
     "octal modes."),
    ("Renting a car in Iceland", "guidetoiceland.is",
     "A 4x4 is required on F-roads, which open in summer; gravel and sand-and-ash insurance "
     "are worth considering."),
    ("Machine learning glossary", "developers.google.com",
     "Definitions of terms from accuracy to zero-shot learning, with links to the crash "
     "course modules."),
    ("How compound interest works", "www.nerdwallet.com",
     "Interest earned on both the principal and past interest: at 5 % a year, savings double "
     "in about 14 years."),
    ("Web accessibility checklist", "www.w3.org",
     "Text alternatives, keyboard access, sufficient contrast and visible focus: the WCAG 2.2 "
     "success criteria most sites miss."),
]
# (title, channel, description): videos of the kinds a video search turns up; a video result's
# URL is its watch page (YouTube's video_results had been 'Onboarding doc notes' at
# 'http://www.marks.com/tags/category')
VIDEO_PAGES: list[tuple[str, str, str]] = [
    ("Sourdough bread from start to finish", "Joshua Weissman",
     "Feeding the starter, the autolyse, four sets of stretch and folds and a cold overnight "
     "proof."),
    ("Learn Git in 15 minutes", "Colt Steele",
     "Commits, branches, merges and pull requests, with the commands typed out."),
    ("How transistors work", "Veritasium",
     "From vacuum tubes to the billions of switches in a modern chip."),
    ("10-minute morning yoga", "Yoga With Adriene",
     "A gentle full-body flow for beginners; no equipment needed."),
    ("Iceland's Ring Road in 7 days", "Kara and Nate",
     "Waterfalls, black-sand beaches and glacier lagoons, with the cost of each day."),
    ("Python for beginners: full course", "freeCodeCamp.org",
     "Variables, loops, functions and files, then three small projects."),
    ("Why the Roman Empire fell", "Kings and Generals",
     "Plague, civil wars and the split of East and West, on animated maps."),
    ("Rebuilding a 1968 Mustang engine", "Hagerty",
     "A timelapse of the teardown, machining and reassembly of a 289 V8."),
    ("Docker in 100 seconds", "Fireship",
     "Images, containers and the Dockerfile, explained at speed."),
    ("The best budget phones of the year", "Marques Brownlee",
     "Cameras, batteries and screens of five phones under 400 dollars compared."),
    ("Lo-fi beats to study to", "Lofi Girl",
     "A three-hour mix of calm instrumental tracks."),
    ("Teaching a puppy to sit", "Zak George's Dog Training Revolution",
     "Short sessions with treats; the mistakes that slow it down."),
]
_VIDEO_IDS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"
# the kinds of columns a result has, by name
_PARTS = {"title": "web_title", "name": "web_title", "url": "web_url", "link": "web_url",
          "href": "web_url", "snippet": "web_snippet", "excerpt": "web_snippet",
          "description": "web_snippet", "content": "web_snippet", "channel": "web_channel",
          "channel_title": "web_channel", "channel_name": "web_channel"}
WEB_KINDS = frozenset(_PARTS.values())


def web_part(table: str, column: str) -> str | None:
    """`web_title`, `web_url`, `web_snippet` (or a video's `web_channel`) for a column of a
    table of web or video search results ("search_results", "video_results"); else None."""
    entity = singular(table)
    if not entity.endswith(("search_result", "web_result", "web_page_result", "video_result")):
        return None
    part = _PARTS.get(column)
    return None if part == "web_channel" and not _of_videos(table) else part


_BY_TITLE = {p[0]: p for p in WEB_PAGES + VIDEO_PAGES}


def _of_videos(table: str) -> bool:
    return singular(table).endswith("video_result")


def web_page(table: str, row: dict[str, Any], rng: random.Random, service: str = ""
             ) -> tuple[str, str, str]:
    """The page a result row is: the one its title names (a row the edge cases made with
    another row's title is that page again), else by its id in the order of the service's
    table (two search engines do not rank the same pages alike)."""
    named = next((_BY_TITLE[v] for k in ("title", "name") if (v := row.get(k)) in _BY_TITLE),
                 None)
    if named is not None:
        return named
    return in_turn(VIDEO_PAGES if _of_videos(table) else WEB_PAGES, row.get("id"), rng,
                   order=f"web:{service}:{table}")


def web_value(kind: str, table: str, row: dict[str, Any], rng: random.Random,
              service: str = "") -> str:
    """The value of one part (`web_title`, `web_url`, `web_snippet`, `web_channel`) of a
    result row."""
    title, site, snippet = web_page(table, row, rng, service)
    if kind == "web_title":
        return title
    if kind == "web_channel":  # a video's channel (only a video result names one)
        return site
    if kind == "web_url" and (title, site, snippet) in VIDEO_PAGES:  # its watch page
        seeded = random.Random(f"video:{title}")
        return "https://www.youtube.com/watch?v=" + "".join(
            seeded.choice(_VIDEO_IDS) for _ in range(11))
    if kind == "web_url":
        return f"https://{site}/{slug(title)}"
    return snippet


__all__ = ["VIDEO_PAGES", "WEB_KINDS", "WEB_PAGES", "web_page", "web_part", "web_value"]
