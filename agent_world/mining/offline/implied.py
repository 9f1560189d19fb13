"""Source-driven complexification: structure the source implies and the database still lacks.

Each operation returns a note when it changed the schema, None when it does not apply. They are
tried in this order, one change per operation call:

1. **Uncovered tools** (`uncovered_tool`): a write tool's argument or any tool's output field
   that no column holds becomes a typed column of the tool's table (JSON type, format and enum
   from the source's schema); a tool with no table at all gets an activity table with a column
   per argument.
2. **Declared fields** (`declared_fields`): fields an entity schema declares (field hints) that
   the table does not have yet.
3. **What an entity implies** (`IMPLIED`, keyed by the entity the source names): commits have
   authors, parents and file changes, repositories a working tree with staged changes and
   branches a head commit; fetched URLs are pages with a status code, content type, body and
   links; a database of tables holds a business dataset its queries can run on; time zones
   convert with their daylight-saving rules (``zoneinfo``).

Nothing here is applied to a theme whose source does not name the entity.
"""

from __future__ import annotations

import random
import re
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.coverage import _output_fields, tool_coverage
from agent_world.mining.offline.accrual import accrued
from agent_world.mining.offline.evidence import argument_info, json_type, tool_arguments
from agent_world.mining.offline.naming import identifier, plural, singular, snake
from agent_world.mining.offline.row_times import parse_iso, to_iso
from agent_world.mining.offline.rows import ROW_RULES
from agent_world.mining.offline.signatures import column_type, sql_argument, tool_shape
from agent_world.mining.offline.web_pages import (
    CONTENT_TYPES,
    STATUS_CODES,
    page_title,
    settle_page,
)
from agent_world.mining.semantics.lifecycle_rule import _state_of, state_rank, status_column
from agent_world.mining.sources.base import SourceDocument

_PK = {"name": "id", "type": "integer", "primary_key": True, "nullable": False}


def _col(name: str, type_: str = "text", **kw: Any) -> ColumnSpec:
    return ColumnSpec(name=name, type=type_, **kw)


def _typed_column(name: str, prop: dict[str, Any], description: str = "") -> ColumnSpec:
    info = argument_info(name, prop, False)
    cname = identifier(snake(name), "value")
    ctype = column_type(cname, info["type"], info["format"], info["description"])
    enum = info["enum"] if info["enum"] and info.get("enum_from") == "schema" else None
    return _col(cname, "text" if enum else ctype, enum=enum,
                description=(description or info["description"])[:200])


# ============================================================================================
# 1-2: uncovered tools, declared fields
# ============================================================================================


def uncovered_tool(cx: Any, doc: SourceDocument | None) -> str | None:
    if doc is None or not doc.tools:
        return None

    coverage = tool_coverage(doc, cx.view())
    by_name = {t.name: t for t in doc.tools}
    for name, entry in coverage["tools"].items():
        if entry["covered"]:
            continue
        tool = by_name[name]
        props, _ = tool_arguments(tool)
        table = entry["table"]
        if table is None:
            if tool.read_only:
                continue
            return _activity_table(cx, tool.name, props)
        added = []
        t = cx.table(table)
        have = {c.name for c in t.columns}
        for kind in ("arguments", "outputs"):
            if kind == "arguments" and tool.read_only:
                continue  # a read tool's unknown argument is a selector, not stored data
            for fname, where in entry[kind].items():
                if where.get("role") is not None:
                    continue
                prop = (props.get(fname) if kind == "arguments" else
                        _outputs(tool).get(fname)) or {}
                if json_type(prop)[0] in ("object", "array"):
                    continue
                col = _typed_column(fname, prop)
                if col.name in have:
                    continue
                cx.add_column(table, col, lambda row, c=col, tn=table: cx.f.value(tn, c, row))
                have.add(col.name)
                added.append(col.name)
        if added:
            return f"source tool {name}: {table} += {', '.join(added)}"
    return None


def _outputs(tool: Any) -> dict[str, Any]:
    return _output_fields(tool)


def _activity_table(cx: Any, tool: str, props: dict[str, Any]) -> str | None:
    shape = tool_shape(tool, None, None)
    thing = "_".join(w for w in (shape.obj, *shape.value_words) if w)
    # a read names what it returns: datadog's get_logs keeps logs, not 'get_logses'
    named = shape.read and bool(thing)
    name = identifier(plural(singular(thing) if named else snake(tool)), "t")
    if cx.has(name):
        return None
    cols = [ColumnSpec(**_PK)]
    for arg, prop in props.items():
        if not isinstance(prop, dict) or json_type(prop)[0] in ("object", "array"):
            continue
        col = _typed_column(arg, prop)
        if col.name not in {c.name for c in cols}:
            cols.append(col)
    cols.append(_col("created_at", "datetime", nullable=False))
    cx.new_table(TableSpec(name=name, description=f"the records {tool} returns" if named else
                           f"one record per {tool} call", columns=cols),
                 "activity")
    cx.fill(name, 30, skew=False)
    return f"source tool {tool}: new table {name} ({len(cx.f.rows[name])} rows)"


def declared_fields(cx: Any, doc: SourceDocument | None) -> str | None:
    if doc is None:
        return None
    for hint in doc.entities:
        table = plural(identifier(singular(snake(hint.name)), "t"))
        if not cx.has(table):
            continue
        t = cx.table(table)
        have = {c.name for c in t.columns}
        added = []
        for spec in hint.field_specs:
            cname = identifier(snake(spec.name), "field")
            if cname in have or cname == "id" or spec.references or \
                    spec.type in ("array", "object") or f"{cname}_id" in have:
                continue  # lists and relations live in child and join tables
            prop = spec.json_schema()
            col = _typed_column(cname, prop, spec.description)
            cx.add_column(table, col, lambda row, c=col, tn=table: cx.f.value(tn, c, row))
            have.add(cname)
            added.append(cname)
        if added:
            return f"declared fields: {table} += {', '.join(added)}"
    return None


# ============================================================================================
# 3: what an entity implies
# ============================================================================================

_CODE_FILES = ["src/app.py", "src/models.py", "src/api/routes.py", "tests/test_app.py",
               "README.md", "pyproject.toml", "docs/index.md", "src/utils/io.py",
               "src/cli.py", ".github/workflows/ci.yml", "src/db/schema.sql",
               "web/index.ts", "web/components/Button.tsx", "Makefile", "LICENSE"]


def _rng(cx: Any, what: str) -> random.Random:
    return random.Random(f"implied:{what}:{cx.iteration}:{cx.seed}")


def commit_authors(cx: Any) -> str | None:
    if not cx.has("commits") or "author_name" in _cols(cx, "commits"):
        return None
    people = [cx.f.fake.name() for _ in range(12)]
    rng = _rng(cx, "authors")
    weights = [1 / (i + 1) for i in range(len(people))]  # a few people write most commits
    chosen: dict[int, str] = {}

    def name(row: dict[str, Any]) -> str:
        chosen[id(row)] = rng.choices(people, weights=weights, k=1)[0]
        return chosen[id(row)]

    def email(row: dict[str, Any]) -> str:
        who = row.get("author_name") or chosen.get(id(row)) or people[0]
        return ".".join(who.lower().replace("'", "").split()[:2]) + "@example.dev"

    cx.add_column("commits", _col("author_name", description="who wrote the change"), name)
    cx.add_column("commits", _col("author_email", description="the author's e-mail"), email)
    return "implied by commits: author_name, author_email"


def commit_parents(cx: Any) -> str | None:
    if not cx.has("commits") or "parent_commit_id" in _cols(cx, "commits") or \
            "repository_id" not in _cols(cx, "commits"):
        return None
    # linear history per repository: a commit's parent is the latest older commit with a
    # smaller id (rows are inserted in id order)
    parent: dict[Any, Any] = {}
    seen: dict[Any, list[dict[str, Any]]] = {}
    for r in sorted(cx.f.rows["commits"], key=lambda r: r["id"]):
        older = [p for p in seen.get(r.get("repository_id"), [])
                 if (p.get("created_at") or "") <= (r.get("created_at") or "")]
        parent[r["id"]] = max(older, key=lambda p: (p.get("created_at") or "", p["id"]),
                              default={}).get("id")
        seen.setdefault(r.get("repository_id"), []).append(r)
    cx.add_column("commits", cx.fk_col("parent_commit_id", "commits", nullable=True,
                                       description="the commit this one follows"),
                  lambda row: parent.get(row["id"]))
    return "implied by commits: parent_commit_id (linear history per repository)"


def commit_file_changes(cx: Any) -> str | None:
    if not cx.has("commits") or cx.has("commit_file_changes"):
        return None
    cx.new_table(TableSpec(
        name="commit_file_changes", description="files each commit changed",
        columns=[ColumnSpec(**_PK), cx.fk_col("commit_id", "commits"),
                 _col("path", nullable=False),
                 _col("change_type", nullable=False,
                      enum=["modified", "added", "deleted", "renamed"]),
                 _col("additions", "integer", nullable=False),
                 _col("deletions", "integer", nullable=False)],
        unique_together=[["commit_id", "path"]]), "child")
    rng = _rng(cx, "changes")
    for commit in cx.f.rows["commits"]:
        for path in rng.sample(_CODE_FILES, k=rng.choice([1, 1, 2, 2, 3, 5])):
            kind = rng.choices(["modified", "added", "deleted", "renamed"],
                               weights=[70, 18, 8, 4], k=1)[0]
            cx.f.make("commit_file_changes", overrides={
                "commit_id": commit["id"], "path": path, "change_type": kind,
                "additions": 0 if kind == "deleted" else int(rng.expovariate(1 / 25)) + 1,
                "deletions": 0 if kind == "added" else int(rng.expovariate(1 / 12))})
    return (f"implied by commits: commit_file_changes "
            f"({len(cx.f.rows['commit_file_changes'])} rows)")


def staged_changes(cx: Any) -> str | None:
    if not cx.has("repositories") or cx.has("working_tree_changes"):
        return None
    cx.new_table(TableSpec(
        name="working_tree_changes",
        description="uncommitted changes in each repository's working tree; staged ones are "
                    "in the index",
        columns=[ColumnSpec(**_PK), cx.fk_col("repository_id", "repositories"),
                 _col("path", nullable=False),
                 _col("change_type", nullable=False,
                      enum=["modified", "added", "deleted", "untracked"]),
                 _col("staged", "boolean", nullable=False, default=False),
                 _col("diff", description="unified diff of the change"),
                 _col("detected_at", "datetime", nullable=False)],
        unique_together=[["repository_id", "path"]]), "child")
    rng = _rng(cx, "staging")
    for repo in cx.f.rows["repositories"]:
        for path in rng.sample(_CODE_FILES, k=rng.choice([0, 1, 2, 3, 4])):
            kind = rng.choices(["modified", "added", "deleted", "untracked"],
                               weights=[60, 15, 5, 20], k=1)[0]
            diff = None if kind == "untracked" else (
                f"--- a/{path}\n+++ b/{path}\n@@ -1,3 +1,4 @@\n line\n+{cx.f.fake.sentence()}")
            cx.f.make("working_tree_changes", overrides={
                "repository_id": repo["id"], "path": path, "change_type": kind,
                "staged": kind != "untracked" and rng.random() < 0.4, "diff": diff})
    return (f"implied by repositories: working_tree_changes "
            f"({len(cx.f.rows['working_tree_changes'])} rows, staged and unstaged)")


def branch_heads(cx: Any) -> str | None:
    if not (cx.has("branches") and cx.has("commits")) or \
            "head_commit_id" in _cols(cx, "branches") or \
            "repository_id" not in _cols(cx, "branches") or \
            "repository_id" not in _cols(cx, "commits"):
        return None
    by_repo: dict[Any, list[dict[str, Any]]] = {}
    for c in sorted(cx.f.rows["commits"], key=lambda c: (c.get("created_at") or "", c["id"])):
        by_repo.setdefault(c.get("repository_id"), []).append(c)

    def head(row: dict[str, Any]) -> Any:
        """The repository's newest commit, or for a branch made after it the newest one
        before the branch (where it was branched off); none before the first commit."""
        commits = by_repo.get(row.get("repository_id")) or []
        made = row.get("created_at") or ""
        before = [c for c in commits if (c.get("created_at") or "") <= made]
        if not commits or not before and made:
            return None  # branched before the repository had a commit
        newest = commits[-1]
        return newest["id"] if (newest.get("created_at") or "") <= made or not made \
            else (before[-1]["id"] if before else newest["id"])

    cx.add_column("branches", cx.fk_col("head_commit_id", "commits", nullable=True,
                                        description="the commit the branch points at"), head)
    return "implied by branches: head_commit_id (a commit of the same repository)"


def pages(cx: Any) -> str | None:
    if cx.has("pages"):
        return None
    fetch_table = next((t.name for t in cx.tables
                        if "url" in _cols(cx, t.name) and t.name in ("fetches", "fetch_requests",
                                                                    "requests", "downloads")),
                       None)
    if fetch_table is None:
        return None
    cx.new_table(TableSpec(
        name="pages", description="web pages as fetched: status, type, body and links",
        columns=[ColumnSpec(**_PK), _col("url", nullable=False, unique=True),
                 _col("status_code", "integer", nullable=False),
                 _col("content_type", nullable=False), _col("title"),
                 _col("body", description="the page content (Markdown for HTML pages)"),
                 _col("byte_length", "integer"),
                 _col("fetched_at", "datetime", nullable=False)]), "core")
    rng = _rng(cx, "pages")
    urls = list(dict.fromkeys(r["url"] for r in cx.f.rows[fetch_table] if r.get("url")))
    first_fetch: dict[str, str] = {}
    for r in cx.f.rows[fetch_table]:
        if r.get("url") and r.get("created_at"):
            first_fetch[r["url"]] = min(first_fetch.get(r["url"], r["created_at"]),
                                        r["created_at"])
    for url in urls:  # body and byte length follow (the row rule below)
        code = rng.choices([c for c, _ in STATUS_CODES], [w for _, w in STATUS_CODES])[0]
        ctype = rng.choices([c for c, _ in CONTENT_TYPES], [w for _, w in CONTENT_TYPES])[0]
        title = page_title(url)
        cx.f.make("pages", overrides={
            "url": url, "status_code": code, "content_type": ctype, "title": title,
            "fetched_at": first_fetch.get(url) or to_iso(cx.f.clock - timedelta(days=1))})
    by_url = {p["url"]: p["id"] for p in cx.f.rows["pages"]}
    cx.add_column(fetch_table, cx.fk_col("page_id", "pages", nullable=True,
                                         description="the page this fetch returned"),
                  lambda row: by_url.get(row.get("url")))
    return f"implied by fetched URLs: pages ({len(by_url)} rows) <- {fetch_table}.page_id"


def page_links(cx: Any) -> str | None:
    if not cx.has("pages") or cx.has("page_links") or "url" not in _cols(cx, "pages"):
        return None  # links are found on fetched web pages, not a browser tab's or a wiki's
    cx.new_table(TableSpec(
        name="page_links", description="links found on each page",
        columns=[ColumnSpec(**_PK), cx.fk_col("page_id", "pages"),
                 _col("href", nullable=False), _col("anchor_text")],
        unique_together=[["page_id", "href"]]), "child")
    rng = _rng(cx, "links")
    urls = [p["url"] for p in cx.f.rows["pages"]]
    for page in cx.f.rows["pages"]:
        if page.get("status_code") != 200 or page.get("content_type") != "text/html":
            continue
        for href in rng.sample(urls, k=min(len(urls), rng.randint(1, 5))):
            if href != page["url"]:
                cx.f.make("page_links", overrides={"page_id": page["id"], "href": href})
    return f"implied by pages: page_links ({len(cx.f.rows['page_links'])} rows)"


_DATASET: list[tuple[str, str, list[ColumnSpec]]] = []


def business_dataset(cx: Any) -> str | None:
    """A database of tables (mcp-server-sqlite) or a tool that runs the SQL it is given
    (Postgres' query(sql), BigQuery's): a small shop dataset its queries run on. Without it
    such a service had only a table of the statements run ("look up query 38 ... tell me its
    sql")."""
    catalogue = cx.has("tables") and "name" in _cols(cx, "tables")
    runs_sql = any(sql_argument(list((t.input_schema or {}).get("properties") or {}),
                                t.description) for t in cx.doc.tools)
    if cx.has("customers") or not (catalogue or runs_sql):
        return None
    specs = [
        TableSpec(name="customers", description="shop customers", columns=[
            ColumnSpec(**_PK), _col("name", nullable=False), _col("email", unique=True),
            _col("country", nullable=False), _col("created_at", "datetime", nullable=False)]),
        TableSpec(name="products", description="what the shop sells", columns=[
            ColumnSpec(**_PK), _col("sku", nullable=False, unique=True),
            _col("name", nullable=False),
            _col("category", nullable=False,
                 enum=["books", "electronics", "garden", "kitchen", "toys"]),
            _col("price", "real", nullable=False), _col("currency", nullable=False)]),
        TableSpec(name="orders", description="customer orders", columns=[
            ColumnSpec(**_PK), cx.fk_col("customer_id", "customers"),
            _col("status", nullable=False,
                 enum=["pending", "paid", "shipped", "delivered", "cancelled"]),
            _col("ordered_at", "datetime", nullable=False), _col("shipped_at", "datetime"),
            _col("delivered_at", "datetime"), _col("cancelled_at", "datetime"),
            _col("created_at", "datetime", nullable=False)]),
    ]
    for t in specs:
        cx.new_table(t, "core")
    cx.new_table(TableSpec(name="order_items", description="lines of each order", columns=[
        ColumnSpec(**_PK), cx.fk_col("order_id", "orders"), cx.fk_col("product_id", "products"),
        _col("quantity", "integer", nullable=False), _col("unit_price", "real", nullable=False)],
        unique_together=[["order_id", "product_id"]]), "join")
    rng = _rng(cx, "shop")
    cx.fill("customers", 25, skew=False)
    for _ in range(20):
        cx.f.make("products", overrides={"price": round(rng.lognormvariate(3.2, 0.8), 2),
                                         "currency": "USD"})
    cx.fill("orders", 60, skew=True)
    prices = {p["id"]: p["price"] for p in cx.f.rows["products"]}
    for order in cx.f.rows["orders"]:
        for pid in rng.sample(list(prices), k=rng.choice([1, 1, 2, 3])):
            cx.f.make("order_items", overrides={"order_id": order["id"], "product_id": pid,
                                                "quantity": rng.choice([1, 1, 1, 2, 3]),
                                                "unit_price": prices[pid]})
    names = ["customers", "products", "orders", "order_items"]
    if catalogue:
        _catalogue(cx, names)
    for q in cx.f.rows.get("queries", []):  # the saved queries run on the dataset
        for col in ("content", "sql", "query"):
            if col in q:
                q[col] = cx.f._sql()
    return ("implied by a database of tables: customers, products, orders, order_items "
            f"({sum(len(cx.f.rows[n]) for n in names)} rows) for queries to run on")


def _catalogue(cx: Any, names: list[str]) -> None:
    """The catalogue of tables lists the tables that exist: drafted rows take their names."""
    listed = cx.f.rows["tables"]
    for row, n in zip(listed, names, strict=False):
        row["name"] = n
    have = {r.get("name") for r in listed}
    for n in names:
        if n not in have:
            cx.f.make("tables", overrides={"name": n})
    referenced = any(c.foreign_key and c.foreign_key.startswith("tables.")
                     for t in cx.tables for c in t.columns)
    if not referenced:  # names of tables that do not exist would mislead describe_table
        cx.f.rows["tables"] = [r for r in listed if r.get("name") in names]
    cx.f.reindex_column("tables")


def dst_conversions(cx: Any) -> str | None:
    """Conversions between time zones computed with their daylight-saving rules."""
    conv = next((t.name for t in cx.tables if t.name.endswith("conversions")), None)
    if conv is None or not cx.has("timezones") or "converted_time" in _cols(cx, conv):
        return None
    cols = _cols(cx, conv)
    src = next((c for c in cols if c.startswith("source") and c.endswith("_id")), None)
    dst = next((c for c in cols if c.startswith("target") and c.endswith("_id")), None)
    if src is None or dst is None or "time" not in cols:
        return None
    computed: dict[int, dict[str, Any]] = {}
    rng = _rng(cx, "dst")

    def compute(row: dict[str, Any]) -> dict[str, Any]:
        if id(row) not in computed:
            day = (parse_iso(row.get("created_at")) or cx.f.clock).date()
            day = day + timedelta(days=rng.choice([0, 0, 30, 90, 180]))
            computed[id(row)] = _convert(cx.f, conv, {**row, "on_date": day.isoformat()})
        return computed[id(row)]

    cx.add_column(conv, _col("on_date", "date", description="the day the time is on"),
                  lambda r: compute(r)["on_date"])
    cx.add_column(conv, _col("converted_time", description="HH:MM in the target zone"),
                  lambda r: compute(r)["converted_time"])
    cx.add_column(conv, _col("day_offset", "integer", description="target day - source day"),
                  lambda r: compute(r)["day_offset"])
    cx.add_column(conv, _col("source_is_dst", "boolean"), lambda r: compute(r)["source_is_dst"])
    cx.add_column(conv, _col("target_is_dst", "boolean"), lambda r: compute(r)["target_is_dst"])
    return f"implied by time zones: {conv} converted with daylight-saving rules (zoneinfo)"


def _transitions(zone: str, year: int) -> list[tuple[datetime, str, str]]:
    """(UTC instant, offset before, offset after) of each offset change of a zone in a year."""
    tz = ZoneInfo(zone)
    utc = ZoneInfo("UTC")

    def offset(t: datetime) -> timedelta:
        return t.replace(tzinfo=utc).astimezone(tz).utcoffset() or timedelta(0)

    out = []
    day = datetime(year, 1, 1)
    prev = offset(day)
    while day.year == year:
        nxt = day + timedelta(days=1)
        if offset(nxt) != prev:
            t = day
            while offset(t) == prev:  # the hour it changed
                t += timedelta(hours=1)
            out.append((t, _fmt(prev), _fmt(offset(t))))
            prev = offset(t)
        day = nxt
    return out


def _fmt(delta: timedelta) -> str:
    minutes = int(delta.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def dst_transitions(cx: Any) -> str | None:
    """The daylight-saving transitions of each zone (from zoneinfo) for this and last year."""
    if not cx.has("timezones") or cx.has("dst_transitions") or \
            "name" not in _cols(cx, "timezones"):
        return None
    cx.new_table(TableSpec(
        name="dst_transitions",
        description="when each time zone changes its UTC offset (daylight saving), per tzdata",
        columns=[ColumnSpec(**_PK), cx.fk_col("timezone_id", "timezones"),
                 _col("year", "integer", nullable=False),
                 _col("transition_at_utc", "datetime", nullable=False),
                 _col("offset_before", nullable=False), _col("offset_after", nullable=False),
                 _col("starts_dst", "boolean", nullable=False)],
        unique_together=[["timezone_id", "transition_at_utc"]]), "reference")
    year = cx.f.clock.year
    for zone in cx.f.rows["timezones"]:
        try:
            changes = [c for y in (year - 1, year) for c in _transitions(zone["name"], y)]
        except (KeyError, ValueError):
            continue
        for at, before, after in changes:
            cx.f.make("dst_transitions", overrides={
                "timezone_id": zone["id"], "year": at.year, "transition_at_utc": to_iso(at),
                "offset_before": before, "offset_after": after,
                "starts_dst": after > before if before[0] == after[0] == "+" else
                after < before if before[0] == after[0] == "-" else after[0] == "+"})
    return (f"implied by time zones: dst_transitions ({len(cx.f.rows['dst_transitions'])} "
            "rows from zoneinfo)")


def _convert(factory: Any, table: str, row: dict[str, Any]) -> dict[str, Any]:
    """A conversion row's converted time and DST flags, computed with zoneinfo."""
    t = factory.tables[table]
    cols = {c.name: c for c in t.columns}
    src = next((c for c in cols if c.startswith("source") and c.endswith("_id")), None)
    dst = next((c for c in cols if c.startswith("target") and c.endswith("_id")), None)
    out: dict[str, Any] = {"on_date": row.get("on_date"), "converted_time": None,
                           "day_offset": None, "source_is_dst": None, "target_is_dst": None}
    try:
        zones = factory._by_id["timezones"]
        day = datetime.fromisoformat(str(row["on_date"]))
        hh, mm = (int(x) for x in str(row.get("time") or "00:00").split(":")[:2])
        local = datetime(day.year, day.month, day.day, hh, mm,
                         tzinfo=ZoneInfo(zones[row[src]]["name"]))
        there = local.astimezone(ZoneInfo(zones[row[dst]]["name"]))
    except (KeyError, ValueError, TypeError):
        return out
    out.update(converted_time=there.strftime("%H:%M"),
               day_offset=(there.date() - local.date()).days,
               source_is_dst=bool(local.dst()), target_is_dst=bool(there.dst()))
    return out


def _counted(factory: Any, table: str, row: dict[str, Any]) -> None:
    """A count of a state's events agrees with the state: a renewed loan was renewed at least
    once (its renewal_count is not 0), one still in its first state never was."""
    t = factory.tables[table]
    status = status_column(t)
    if status is None or row.get(status.name) is None:
        return
    for c in t.columns:
        if c.type != "integer" or not c.name.endswith("_count"):
            continue
        stem = c.name.removesuffix("_count")
        state = next((st for st in (_state_of(x, set(status.enum or [])) for x in (
            stem, re.sub(r"al$", "", stem))) if st), None)
        if state is None:
            continue
        if row[status.name] == state and not row.get(c.name):
            row[c.name] = 1
        elif state_rank(str(row[status.name])) == 0:
            row[c.name] = 0


def _derive(factory: Any, table: str, row: dict[str, Any]) -> None:
    """Keep derived columns true on rows generated later (growth, edge cases)."""
    _counted(factory, table, row)
    accrued(factory, table, row)
    cols = {c.name for c in factory.tables[table].columns}
    if "converted_time" in cols and "on_date" in cols and "timezones" in factory.tables:
        row.update(_convert(factory, table, row))
    if {"status_code", "body", "url"} <= cols and row.get("url"):
        # a page says what its status and content type say (a 200 JSON page holds JSON)
        settle_page(factory.fake, factory.rng, row, cols)


ROW_RULES.append(_derive)


def _cols(cx: Any, table: str) -> set[str]:
    return {c.name for c in cx.table(table).columns}


# entity noun the source names -> what it implies, in order
IMPLIED: list[tuple[frozenset[str], Any]] = [
    (frozenset({"commit"}), commit_authors),
    (frozenset({"commit"}), commit_parents),
    (frozenset({"commit"}), commit_file_changes),
    (frozenset({"repository"}), staged_changes),
    (frozenset({"branch"}), branch_heads),
    (frozenset({"fetch", "url", "page"}), pages),
    (frozenset({"fetch", "url", "page"}), page_links),
    (frozenset({"table", "query"}), business_dataset),
    (frozenset({"timezone"}), dst_transitions),
    (frozenset({"timezone", "time_conversion"}), dst_conversions),
]
