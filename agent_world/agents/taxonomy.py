"""Theme taxonomy: L1 category / L2 sub-category / L3 server, tree building and deduplication.

`classify` places a source document or a Theme on a three-level path. Offline it scores keyword
rules: each L2 label of the ~20 L1 categories (modelled on the Agent-World paper's environment
taxonomy) has a keyword list; the words of the theme are weighted by where they occur (name and
tool names count more than descriptions), the best-scoring L2 wins and brings its L1; with no
hit the path is "Uncategorized / General". L3 is always the server/source name. With a chat model
configured for the "miner" role, the model picks L1/L2 from the same label list (structured JSON),
and an answer outside the list falls back to the keyword rules.

`build_taxonomy` groups themes into a tree (L1 -> L2 -> [L3 theme names]);
`merge_near_duplicates` merges themes whose normalised names are equal or whose tool-name and
name/description token sets are near-identical (Jaccard similarity), e.g. two time servers with
the same tools, and reports the merged pairs.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, Field

from agent_world.envs.spec import TaxonomyPath, Theme
from agent_world.tools.sources.base import SourceDocument

log = logging.getLogger(__name__)

UNCATEGORIZED = ("Uncategorized", "General")

# L1 -> L2 -> keywords (lower-case words or multi-word phrases)
CATEGORIES: dict[str, dict[str, list[str]]] = {
    "Productivity & Time": {
        "Time & Timezones": ["time", "timezone", "timezones", "clock", "utc", "iana", "dst",
                             "convert_time", "current_time"],
        "Calendar & Scheduling": ["calendar", "event", "events", "schedule", "meeting",
                                  "availability", "attendee", "attendees", "invite"],
        "Task Management": ["todo", "task", "tasks", "kanban", "checklist", "sprint",
                            "board", "project", "projects"],
        "Notes & Reminders": ["note", "notes", "reminder", "reminders", "notebook", "memo"],
    },
    "Developer Tools & Version Control": {
        "Version Control": ["git", "commit", "commits", "branch", "branches", "repository",
                            "repo", "merge", "diff", "checkout", "pull request", "rebase"],
        "CI/CD & Builds": ["pipeline", "build", "builds", "deploy", "deployment", "ci",
                           "workflow", "release", "artifact"],
        "Issue Tracking": ["issue", "issues", "bug", "bugs", "ticket", "jira", "backlog"],
        "Code Analysis": ["lint", "linter", "code review", "static analysis", "ast", "refactor",
                          "compiler", "debugger", "sandbox", "code"],
    },
    "System & Cloud Infrastructure": {
        "Cloud Platforms": ["aws", "gcp", "azure", "cloud", "bucket", "s3", "lambda",
                            "instance", "region"],
        "Containers & Orchestration": ["docker", "container", "containers", "kubernetes",
                                       "k8s", "pod", "pods", "cluster", "helm"],
        "File Systems": ["filesystem", "file system", "directory", "directories", "read_file",
                         "write_file", "folder", "files", "path"],
        "Monitoring & Logging": ["monitoring", "metrics", "alert", "alerts", "logs", "logging",
                                 "uptime", "incident", "observability"],
        "Shell & Processes": ["shell", "terminal", "command", "process", "processes", "ssh"],
    },
    "Data & Databases": {
        "SQL Databases": ["sql", "sqlite", "postgres", "postgresql", "mysql", "query",
                          "queries", "table", "tables", "schema", "database"],
        "Spreadsheets": ["spreadsheet", "spreadsheets", "sheet", "sheets", "excel", "csv",
                         "cell", "cells"],
        "Analytics & Warehouses": ["analytics", "warehouse", "bigquery", "snowflake",
                                   "dashboard", "dataset", "datasets"],
        "NoSQL & Vector Stores": ["mongodb", "redis", "vector", "embedding", "embeddings",
                                  "elasticsearch", "document store"],
    },
    "Web & Search": {
        "Web Search": ["search engine", "web search", "brave", "google", "bing", "serp",
                       "search results"],
        "Web Fetching & Scraping": ["fetch", "url", "urls", "scrape", "scraping", "html",
                                    "markdown", "webpage", "web page", "crawl", "robots"],
        "Browser Automation": ["browser", "playwright", "puppeteer", "selenium", "click",
                               "navigate", "screenshot"],
    },
    "Knowledge & Memory": {
        "Knowledge Graphs": ["knowledge graph", "entities", "relations", "observations",
                             "ontology", "triple", "triples"],
        "Memory Stores": ["memory", "memories", "remember", "recall"],
        "Wikis & Documentation": ["wiki", "documentation", "docs", "confluence", "notion",
                                  "knowledge base", "article", "articles"],
    },
    "Document & Design": {
        "Documents & PDFs": ["pdf", "document", "documents", "docx", "word", "ocr",
                             "template", "templates"],
        "Design & Graphics": ["design", "figma", "canvas", "svg", "graphics", "layer",
                              "layers", "sketch", "illustration"],
        "Presentations": ["slides", "presentation", "presentations", "powerpoint", "deck"],
    },
    "Communication & Messaging": {
        "Email": ["email", "emails", "mail", "inbox", "gmail", "smtp", "imap"],
        "Chat & Messaging": ["slack", "chat", "message", "messages", "channel", "channels",
                             "discord", "telegram", "whatsapp", "sms"],
        "Video & Voice": ["zoom", "video call", "voice", "call", "calls", "webinar"],
    },
    "Social Media & Community": {
        "Social Networks": ["twitter", "tweet", "tweets", "post", "posts", "follower",
                            "followers", "like", "likes", "social", "instagram", "linkedin",
                            "mastodon", "bluesky"],
        "Forums & Communities": ["forum", "reddit", "subreddit", "community", "thread",
                                 "threads", "upvote"],
    },
    "Travel & Transportation": {
        "Flights & Hotels": ["flight", "flights", "airline", "airport", "hotel", "hotels",
                             "booking", "reservation", "itinerary", "trip", "trips"],
        "Maps & Navigation": ["map", "maps", "geocode", "geocoding", "directions", "route",
                              "routes", "location", "places", "distance"],
        "Ride & Transit": ["ride", "rides", "taxi", "uber", "transit", "train", "bus",
                           "vehicle", "vehicles", "driver"],
    },
    "E-commerce & Retail": {
        "Online Stores": ["shop", "store", "product", "products", "catalog", "shopify",
                          "cart", "checkout cart", "sku"],
        "Orders & Inventory": ["order", "orders", "inventory", "stock", "warehouse",
                               "shipment", "shipping", "fulfillment"],
        "Marketplaces & Reviews": ["marketplace", "seller", "sellers", "review", "reviews",
                                   "rating", "coupon", "coupons"],
    },
    "Health & Medical": {
        "Clinics & Appointments": ["clinic", "patient", "patients", "doctor", "doctors",
                                   "appointment", "appointments", "physician", "hospital"],
        "Medical Records": ["medical", "prescription", "prescriptions", "diagnosis",
                            "medication", "ehr", "fhir", "lab result"],
        "Fitness & Wellness": ["fitness", "workout", "workouts", "exercise", "nutrition",
                               "sleep", "steps", "wellness", "meditation"],
    },
    "Finance & Payments": {
        "Payments": ["payment", "payments", "stripe", "invoice", "invoices", "refund",
                     "charge", "checkout session", "billing", "subscription"],
        "Banking & Accounting": ["bank", "account", "accounts", "transaction", "transactions",
                                 "ledger", "accounting", "expense", "expenses", "budget"],
        "Trading & Crypto": ["stock", "stocks", "trading", "crypto", "bitcoin", "wallet",
                             "exchange rate", "portfolio", "currency"],
    },
    "Business & CRM": {
        "CRM & Sales": ["crm", "lead", "leads", "deal", "deals", "salesforce", "hubspot",
                        "pipeline stage", "contact", "contacts", "customer", "customers"],
        "HR & Recruiting": ["employee", "employees", "hr", "payroll", "candidate",
                            "candidates", "recruiting", "job", "jobs", "leave"],
        "Customer Support": ["support", "helpdesk", "zendesk", "support ticket", "sla"],
    },
    "Education": {
        "Courses & Learning": ["course", "courses", "lesson", "lessons", "student", "students",
                               "teacher", "enrollment", "quiz", "quizzes", "grade", "grades",
                               "classroom", "learning"],
        "Research & Papers": ["paper", "papers", "arxiv", "citation", "citations",
                              "research", "scholar", "journal"],
        "Language Learning": ["vocabulary", "flashcard", "flashcards", "translation",
                              "dictionary"],
        "Libraries & Reading": ["library", "libraries", "librarian", "lending", "book", "books",
                                "isbn", "loan", "loans", "borrow", "catalogue", "holds",
                                "reader", "readers", "title", "titles"],
    },
    "Entertainment & Events": {
        "Events & Ticketing": ["ticket", "tickets", "concert", "venue", "venues", "festival",
                               "ticketing", "seat", "seats"],
        "Music & Video": ["music", "song", "songs", "playlist", "playlists", "spotify",
                          "album", "movie", "movies", "video", "youtube", "podcast"],
        "Games": ["game", "games", "player", "players", "steam", "chess", "score"],
    },
    "Media & Content": {
        "News": ["news", "headline", "headlines", "rss", "feed", "feeds"],
        "Images & Video Generation": ["image", "images", "photo", "photos", "generate image",
                                      "thumbnail", "transcode"],
        "Blogs & CMS": ["blog", "cms", "wordpress", "publish", "content management", "page",
                        "pages"],
    },
    "AI & Machine Learning": {
        "Models & Inference": ["model", "models", "inference", "llm", "prompt", "prompts",
                               "completion", "huggingface", "openai"],
        "Agents & Reasoning": ["agent", "agents", "sequential thinking", "reasoning", "plan",
                               "thought", "thoughts"],
    },
    "Security & Identity": {
        "Authentication & Access": ["auth", "login", "oauth", "password", "passwords", "sso",
                                    "permission", "permissions", "role", "roles", "token"],
        "Secrets & Vulnerabilities": ["secret", "secrets", "vault", "vulnerability",
                                      "vulnerabilities", "cve", "scan", "security"],
    },
    "Smart Home & IoT": {
        "Devices & Automation": ["device", "devices", "iot", "sensor", "sensors", "thermostat",
                                 "light", "lights", "home assistant", "smart home"],
        "Energy": ["energy", "solar", "battery", "electricity", "meter"],
    },
    "Weather & Environment": {
        "Weather": ["weather", "forecast", "forecasts", "temperature", "rain", "wind",
                    "alerts weather", "climate"],
        "Earth & Space": ["earthquake", "satellite", "nasa", "astronomy", "air quality"],
    },
    "Food & Lifestyle": {
        "Recipes & Restaurants": ["recipe", "recipes", "ingredient", "ingredients",
                                  "restaurant", "restaurants", "menu", "meal", "meals",
                                  "food", "cooking"],
        "Real Estate & Home": ["property", "properties", "listing", "listings", "rent",
                               "tenant", "lease", "real estate"],
    },
}
L1_LABELS: tuple[str, ...] = tuple(CATEGORIES)


def _norm_words(text: str) -> list[str]:
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", text)
    return [w for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _theme_fields(item: SourceDocument | Theme) -> tuple[str, list[str], list[str], str]:
    """(name, tool names, descriptions, title/description text) of a doc or a theme."""
    if isinstance(item, SourceDocument):
        tools = [t.name for t in item.tools]
        descs = [t.description for t in item.tools] + list(item.features)
        descs += [f"{e.name} {' '.join(e.fields)} {e.description}" for e in item.entities]
        return item.name, tools, descs, f"{item.title} {item.description}"
    tools, descs = [], []
    for raw in item.raw_descriptions:
        head, sep, rest = raw.partition(":")
        if sep and re.fullmatch(r"[A-Za-z_][\w./{}-]{0,80}|(GET|POST|PUT|PATCH|DELETE) /\S*",
                                head.strip()):
            tools.append(head.strip())
            descs.append(rest)
        else:
            descs.append(raw)
    return item.name, tools, descs, item.description


def _score(item: SourceDocument | Theme) -> list[tuple[float, str, str]]:
    name, tools, descs, about = _theme_fields(item)
    weighted: list[tuple[str, float]] = [(name, 3.0), (about, 2.0)]
    weighted += [(" ".join(_norm_words(t)) + " " + t.lower(), 2.0) for t in tools]
    weighted += [(d, 1.0) for d in descs]
    texts = [(" " + " ".join(_norm_words(t)) + " ", w) for t, w in weighted if t]
    raw_tools = {t.lower() for t in tools}
    scored = []
    for l1, subs in CATEGORIES.items():
        for l2, keywords in subs.items():
            s = 0.0
            for kw in keywords:
                if kw in raw_tools:
                    s += 3.0
                    continue
                needle = " " + " ".join(_norm_words(kw)) + " "
                for text, w in texts:
                    if needle in text:
                        s += w * (1.5 if " " in kw else 1.0)
            if s > 0:
                scored.append((s, l1, l2))
    scored.sort(key=lambda x: -x[0])
    return scored


def classify_offline(item: SourceDocument | Theme) -> TaxonomyPath:
    scored = _score(item)
    l3 = item.name
    if not scored:
        return TaxonomyPath(l1=UNCATEGORIZED[0], l2=UNCATEGORIZED[1], l3=l3)
    _, l1, l2 = scored[0]
    return TaxonomyPath(l1=l1, l2=l2, l3=l3)


class TaxonomyChoice(BaseModel):
    """What the LLM answers when it classifies a theme."""

    l1: str = Field(description="one of the L1 categories listed")
    l2: str = Field(description="one of that category's L2 labels, or a short new label")
    reason: str = ""


def _llm_classify(model: Any, item: SourceDocument | Theme) -> TaxonomyPath | None:
    name, tools, descs, about = _theme_fields(item)
    labels = "\n".join(f"- {l1}: {', '.join(subs)}" for l1, subs in CATEGORIES.items())
    prompt = (
        "Classify this tool ecosystem into the taxonomy below. Answer only with JSON "
        '{"l1": ..., "l2": ..., "reason": ...}; l1 must be one of the listed categories.\n\n'
        f"Categories (L1: L2 labels):\n{labels}\n\nName: {name}\nAbout: {about}\n"
        f"Tools: {', '.join(tools[:40])}\nDescriptions:\n" + "\n".join(d[:200] for d in descs[:20])
    )
    try:
        msg = model.invoke(prompt)
        text = msg.content if isinstance(msg.content, str) else json.dumps(msg.content)
        start, end = text.find("{"), text.rfind("}")
        choice = TaxonomyChoice.model_validate_json(text[start:end + 1])
    except Exception as exc:  # any model or parse failure: keyword rules decide
        log.info("taxonomy: LLM classification failed for %s (%s); using keyword rules",
                 name, exc)
        return None
    if choice.l1 not in CATEGORIES or not choice.l2.strip():
        return None
    return TaxonomyPath(l1=choice.l1, l2=choice.l2.strip()[:60], l3=name)


def classify(doc_or_theme: SourceDocument | Theme, *, use_llm: bool = True) -> TaxonomyPath:
    """L1/L2/L3 path of a source document or a theme (LLM when configured, else keywords)."""
    if use_llm:
        from agent_world.models import chat_model

        model = chat_model("miner")
        if model is not None:
            path = _llm_classify(model, doc_or_theme)
            if path is not None:
                return path
    return classify_offline(doc_or_theme)


# ============================================================================================
# Tree
# ============================================================================================


class Taxonomy(BaseModel):
    """Themes grouped L1 -> L2 -> [theme names (L3)]."""

    tree: dict[str, dict[str, list[str]]] = Field(default_factory=dict)
    themes: list[Theme] = Field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {l1: sum(len(v) for v in subs.values()) for l1, subs in self.tree.items()}

    def paths(self) -> list[tuple[str, str, str]]:
        return [(l1, l2, l3) for l1, subs in self.tree.items() for l2, names in subs.items()
                for l3 in names]

    def theme(self, name: str) -> Theme:
        for t in self.themes:
            if t.name == name:
                return t
        raise KeyError(name)

    def render(self) -> str:
        lines = []
        for l1, subs in self.tree.items():
            lines.append(f"{l1} ({sum(len(v) for v in subs.values())})")
            for l2, names in subs.items():
                lines.append(f"  {l2}: {', '.join(names)}")
        return "\n".join(lines)


def build_taxonomy(themes: Iterable[Theme], *, reclassify: bool = False) -> Taxonomy:
    """Group themes into the L1 -> L2 -> L3 tree. A theme still 'Uncategorized' (or every
    theme, with reclassify=True) is classified first; L3 is the theme name."""
    placed: list[Theme] = []
    tree: dict[str, dict[str, list[str]]] = {}
    for theme in themes:
        t = theme.model_copy(deep=True)
        if reclassify or t.taxonomy.l1 == UNCATEGORIZED[0]:
            t.taxonomy = classify(t)
        t.taxonomy = TaxonomyPath(l1=t.taxonomy.l1, l2=t.taxonomy.l2, l3=t.name)
        placed.append(t)
        names = tree.setdefault(t.taxonomy.l1, {}).setdefault(t.taxonomy.l2, [])
        if t.name not in names:
            names.append(t.name)
    order = {l1: i for i, l1 in enumerate((*L1_LABELS, UNCATEGORIZED[0]))}
    tree = {l1: dict(sorted(subs.items())) for l1, subs in
            sorted(tree.items(), key=lambda kv: (order.get(kv[0], len(order)), kv[0]))}
    for subs in tree.values():
        for l2 in subs:
            subs[l2] = sorted(subs[l2])
    return Taxonomy(tree=tree, themes=placed)


# ============================================================================================
# Near-duplicate merging
# ============================================================================================

_NAME_NOISE = {"mcp", "server", "servers", "api", "service", "tool", "tools", "the", "official",
               "py", "python", "js", "node", "ts", "v1", "v2", "app", "openapi", "spec", "prd"}
_STOP = {"a", "an", "the", "and", "or", "of", "to", "for", "in", "on", "with", "by", "is",
         "are", "be", "this", "that", "it", "its", "from", "as", "at", "use", "get", "list"}


def normalized_name(name: str) -> str:
    return "".join(w for w in _norm_words(name) if w not in _NAME_NOISE) or name.lower()


def _signature(theme: Theme) -> tuple[set[str], set[str]]:
    name, tools, descs, about = _theme_fields(theme)
    tool_set = {t.lower() for t in tools}
    words = {w for w in _norm_words(f"{name} {about}") if w not in _STOP and w not in
             _NAME_NOISE and len(w) > 2}
    return tool_set, words


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def similarity(a: Theme, b: Theme) -> float:
    """1.0 for equal normalised names; else Jaccard of tool names (weight 0.75) and of
    name/description words (0.25) when both have tools, else of the words alone."""
    if normalized_name(a.name) == normalized_name(b.name):
        return 1.0
    ta, wa = _signature(a)
    tb, wb = _signature(b)
    if ta and tb:
        return 0.75 * _jaccard(ta, tb) + 0.25 * _jaccard(wa, wb)
    return _jaccard(wa | ta, wb | tb)


def merge_near_duplicates(themes: Iterable[Theme], threshold: float = 0.7
                          ) -> tuple[list[Theme], list[tuple[str, str, float]]]:
    """Keep the first of each group of near-duplicate themes (similarity >= threshold).

    The kept theme absorbs the merged one's raw descriptions (deduplicated) and, when its own
    is empty, its description. Returns (kept themes, [(kept name, merged name, similarity)]);
    `len(merged_pairs)` is how many themes were merged away. Inputs are not modified.
    """
    kept: list[Theme] = []
    merged: list[tuple[str, str, float]] = []
    for theme in themes:
        best, best_sim = None, 0.0
        for k in kept:
            sim = similarity(k, theme)
            if sim > best_sim:
                best, best_sim = k, sim
        if best is not None and best_sim >= threshold:
            best.raw_descriptions = list(dict.fromkeys([*best.raw_descriptions,
                                                        *theme.raw_descriptions]))
            if not best.description:
                best.description = theme.description
            merged.append((best.name, theme.name, round(best_sim, 3)))
            continue
        kept.append(theme.model_copy(deep=True))
    if merged:
        log.info("taxonomy: merged %d near-duplicate theme(s)", len(merged))
    return kept, merged
