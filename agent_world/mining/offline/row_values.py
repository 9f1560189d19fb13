"""Column values of generated rows: `from_pattern` (a string a declared regular expression
matches) and `RowValues`, the part of `RowFactory` that makes one value per column kind
(`column_semantic`) with seeded Faker and `random.Random`: declared enums, ranges and patterns
first, then names, emails that match them, addresses and their time zones, titles, SQL over
the database's own tables, and the rest."""

from __future__ import annotations

import json
import mimetypes
import random
import re
import re._constants as C  # noqa: N812
import re._parser as P  # noqa: N812
from collections.abc import Callable
from datetime import timedelta
from typing import Any

from faker import Faker

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.cloud_regions import cloud_region, cloud_service
from agent_world.mining.offline.column_semantics import _FORMAT_SEMANTICS, column_semantic
from agent_world.mining.offline.described_values import column_file_types, described_value
from agent_world.mining.offline.markup_values import MARKUP_KINDS, markup_value
from agent_world.mining.offline.naming import singular, snake
from agent_world.mining.offline.prose import prose, prose_kind
from agent_world.mining.offline.record_bodies import (
    BODY_KINDS,
    doc_topic,
    file_record_body,
    record_body,
)
from agent_world.mining.offline.reference_data import (
    BOOK_SUBJECTS,
    CODE_TOPICS,
    COLORS,
    COMMANDS,
    COUNTRIES,
    CURRENCIES,
    DATABASE_NAMES,
    DEPLOY_ENVIRONMENTS,
    DOCKER_IMAGES,
    FILE_STEMS,
    FOLDERS,
    FONT_NAMES,
    FONT_SIZES,
    LANGUAGES,
    MIME_TYPES,
    MODULE_KINDS,
    NAMESPACES,
    PLATFORMS,
    SHEET_NAMES,
    SLUG_HEADS,
    SLUG_TAILS,
    SPECIALTIES,
    STYLE_NAMES,
    TAG_WORDS,
    TIME_ZONES,
)
from agent_world.mining.offline.row_times import WINDOW_START
from agent_world.mining.offline.schema_examples import schema_example
from agent_world.mining.offline.service_values import SERVICE_KINDS, git_branch, service_value
from agent_world.mining.offline.value_pools import (
    ANCHOR_TEXTS,
    API_PATHS,
    CODE_HOST_TABLES,
    CODE_SNIPPETS,
    JS_EXPRESSIONS,
    LUA_SNIPPETS,
    MATH_EXPRESSIONS,
    MEDIA_FILE_WORDS,
    NAMED_FILE_TYPES,
    ROUTE_PATHS,
    WEEKDAYS,
    category_pool,
    named_value,
    record_name,
    status_pool,
)
from agent_world.mining.semantics.lifecycle_rule import ATTENDED, state_rank
from agent_world.mining.semantics.zones import address_country, country_zones

_PLACEHOLDER_HOST = re.compile(r"^(https?://)(?:www\.)?example\.(?:com|org|net)(?=[/:?#]|$)")
# kinds whose values a column's description may say better (its examples, its choices): the
# ones read from a name's last resort, and the office and paging kinds, whose examples name a
# service's own conventions ('A1:D20', 'Helvetica', 14); no URL (one page: every Figma file's)
DESCRIBED_KINDS = frozenset({
    "word", "code", "category", "title", "record_name", "team_name", "count", "extent", "bytes", "small_int", "position", "text_id", "pixels",
    "sheet_name", "cell_ref", "style_name", "font_name", "font_size", "search_terms",
    "namespace", "metric_namespace", "page_size", "slug_name", "database_name", "command", "offset", "page",
    "status", "platform", "deploy_environment", "docker_image", "cell", "file_path",
    "dir_path", "doc_topic"}) | SERVICE_KINDS - {"url"}
_COMMON_FILE_TYPES = ["md", "txt", "pdf", "csv", "json", "docx", "png"]
SPREADSHEETS = frozenset({"xlsx", "xlsm", "xls", "csv", "tsv"})
_NO_BOUND = 2**31 - 1
_TEAMS = ["Platform", "Growth", "Payments", "Design", "Data", "Mobile", "Support", "Security",
          "Infrastructure", "Marketing", "Finance", "Research"]

_VISIT_REASONS = [
    "Annual physical", "Follow-up on blood pressure", "Persistent cough", "Knee pain after "
    "running", "Medication review", "Skin rash", "Headaches for two weeks", "Prenatal visit",
    "Diabetes check", "Back pain", "Vaccination", "Test results discussion", "Allergy "
    "symptoms", "Sleep problems", "Post-surgery check"]


def from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string the regular expression matches (literals, classes, repeats, groups,
    alternatives), or None for what it cannot expand."""
    try:
        parsed = P.parse(pattern)
    except (re.error, RecursionError):
        return None
    digits, words = "0123456789", "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"

    def one_of(items: list[Any]) -> str:
        pool: list[str] = []
        for op, av in items:
            if op == C.LITERAL:
                pool.append(chr(av))
            elif op == C.RANGE:
                pool += [chr(c) for c in range(av[0], av[1] + 1)]
            elif op == C.CATEGORY:
                pool += list(digits if av == C.CATEGORY_DIGIT else words)
            elif op == C.NEGATE:
                raise ValueError("negated class")
        return rng.choice(pool)

    def gen(seq: Any) -> str:
        out = []
        for op, av in seq:
            if op == C.LITERAL:
                out.append(chr(av))
            elif op == C.IN:
                out.append(one_of(av))
            elif op == C.ANY:
                out.append(rng.choice(words))
            elif op in (C.MAX_REPEAT, C.MIN_REPEAT):
                lo, hi, sub = av
                hi = lo + 3 if hi == C.MAXREPEAT else hi
                out += [gen(sub) for _ in range(rng.randint(lo, hi))]
            elif op == C.SUBPATTERN:
                out.append(gen(av[-1]))
            elif op == C.BRANCH:
                out.append(gen(rng.choice(av[1])))
            elif op == C.AT:
                continue
            else:
                raise ValueError(f"unsupported {op}")
        return "".join(out)

    for _ in range(5):
        try:
            value = gen(parsed)
        except (ValueError, IndexError):
            return None
        for candidate in (_real_dates(value, rng), value):
            if re.search(pattern, candidate):
                return candidate
    return None


def _real_dates(value: str, rng: random.Random) -> str:
    """`value` with its digit-drawn dates and clock times made real ones: a pattern's
    \\d{4}-\\d{2}-\\d{2} drew '6456-77-49'."""
    value = re.sub(r"\d{4}-\d{2}-\d{2}", lambda _m: (WINDOW_START.date() + timedelta(
        days=rng.randrange(900))).isoformat(), value)
    return re.sub(r"(?<!\d)\d{2}:\d{2}(?!\d)",
                  lambda _m: f"{rng.randrange(24):02d}:{rng.choice([0, 15, 30, 45]):02d}", value)


class RowValues:
    """One value per column of a new row; mixed into `RowFactory`, whose tables, rows, hints,
    invariants, lifecycle and time values it uses."""

    tables: dict[str, TableSpec]
    rows: dict[str, list[dict[str, Any]]]
    hints: dict[str, dict[str, dict[str, Any]]]
    rng: random.Random
    fake: Faker
    file_types: list[str]  # ("xlsx", ...): the document types the source names
    cloud: str | None  # the cloud provider the source names ("gcp"), see cloud_regions
    service: str  # the source's name: its docs' host, its pages' order

    # ---- values --------------------------------------------------------------------------
    def value(self, table: str, col: ColumnSpec, row: dict[str, Any]) -> Any:
        sem = column_semantic(table, col)
        f, r = self.fake, self.rng
        for inv in self.invariants("set_only_in", table):  # a waived_reason for waived fines
            if inv["column"] == col.name and row.get(inv["status_column"]) not in inv["states"]:
                return None
        declared = self.hints.get(table, {}).get(col.name) or {}
        if declared.get("enum") and not col.enum and col.type == "text":
            vals = [str(v) for v in declared["enum"]]
            return r.choices(vals, weights=[1.0 / (i + 1) for i in range(len(vals))], k=1)[0]
        if declared.get("enum") and col.type in ("integer", "real"):  # 300 | 3600 | 86400
            nums = _numbers(declared["enum"], int if col.type == "integer" else float)
            if nums:
                return r.choices(nums, weights=[1.0 / (i + 1) for i in range(len(nums))],
                                 k=1)[0]
        # zod's .int() and int32 schemas declare the type's own limits (±9007199254740991,
        # ±2147483647): no bound a user keeps to, and a 16-digit count reads as noise
        lo, hi = (b if isinstance(b, int | float) and abs(b) < _NO_BOUND else None
                  for b in (declared.get("minimum"), declared.get("maximum")))
        if col.type in ("integer", "real") and (lo is not None or hi is not None):
            lo = lo if lo is not None else 0
            hi = hi if hi is not None else lo + 100
            if col.type == "integer":  # skewed towards the low end, as counts are
                span = int(hi) - int(lo)
                return int(lo) + min(span, int(r.expovariate(2.0 / max(span, 1))))
            return round(r.uniform(float(lo), float(hi)), 2)
        if isinstance(declared.get("pattern"), str) and col.type == "text":
            value = from_pattern(declared["pattern"], r)
            if value is not None:
                return value
        if declared.get("format") in _FORMAT_SEMANTICS and col.type == "text":
            sem = _FORMAT_SEMANTICS[declared["format"]]
        if sem == "word" and (col.name == "range" or col.name.endswith("_range")) and \
                set(self.file_types) & SPREADSHEETS:
            sem = "cell_ref"  # a spreadsheet service's ranges are A1 ranges
        # a known provider's regions come from its list ('eu-west-7' was an example redrawn)
        if sem in DESCRIBED_KINDS and col.type in ("text", "integer") and not (
                sem == "cloud_region" and self.cloud):
            described = described_value(col.description or str(declared.get("description", "")),
                                        r, integer=col.type == "integer")
            if isinstance(described, str):
                # a URL on a placeholder host names no place: every sitemap of Google Search
                # Console was 'http://www.example.com/sitemap.xml', and an edit "set its
                # feedpath to" it changed nothing; the path kept, the host a site's own
                described = _PLACEHOLDER_HOST.sub(lambda m: m.group(1) + f.domain_name(),
                                                  described)
            if described is not None:
                return described
        in_repo = any(c.foreign_key and singular(c.foreign_key.split(".")[0]) in (
            "repository", "repo") for c in self.tables[table].columns)
        if sem == "branch_name" and not in_repo and not any(
                singular(t) in CODE_HOST_TABLES for t in self.tables):
            # a branch of a library or a bank, not of git (GitLab's protect_branch of a
            # project is git's: the service holds commits or merge requests)
            sem = "library_branch"
        if sem == "file_path" and in_repo:  # a file of a repository: a path in its tree
            sem = "tree_path"
        if sem == "cloud_region" or sem == "region" and cloud_service(self.tables, self._cache):
            return cloud_region(self.cloud, r)  # a DigitalOcean volume's 'nyc3', never 'West'
        if sem in MARKUP_KINDS:
            return markup_value(sem, r)
        sem = file_record_body(self.tables[table], col, sem)
        if sem in BODY_KINDS:  # a child's (MUI's doc URL) named for its parent's title
            up = next((p for c in self.tables[table].columns if sem.startswith("doc_") and
                       (p := self.parent_row(c, row.get(c.name)))), {})
            return record_body(sem, table, row, r, f, self.file_types, up, self.service)
        if sem in SERVICE_KINDS:
            return service_value(sem, r, f, table, col.name, col.description,
                                 [c.name for c in self.tables[table].columns],
                                 self._data_tables())
        if sem == "enum":
            vals = list(col.enum or [])
            if self._upcoming(table, row) and self._attendable(table) == col.name:
                vals = [v for v in vals if v not in ATTENDED] or vals  # not attended yet
            elif self._attendable(table) == col.name and self._long_past(table, row):
                vals = [v for v in vals if state_rank(v) == 2] or vals  # over: not still booked
            return r.choices(vals, weights=[1.0 / (i + 1) for i in range(len(vals))], k=1)[0]
        if sem == "bool":
            return r.random() < (0.25 if col.name.startswith(("is_archived", "pinned",
                                                               "deleted")) else 0.6)
        if sem == "json":
            example = _json_example(col.description or str(declared.get("description", "")))
            if example is not None:  # the source's own example ('{"title": "My PR", ...}')
                return example
            if declared.get("shape"):  # what its schema says it holds
                value = schema_example(declared["shape"], r, col.name,
                                       fill=lambda key: self._nested_value(table, key, row))
                if value:
                    return value
            if any(col.name in s for s in self.tables[table].unique_sets()):
                # told apart from its siblings: some content
                return {"source": r.choice(["web", "api", "import", "mobile"]),
                        "version": r.randint(1, 5)}
            # nothing says what the object holds: empty, not invented fields that questions
            # would then ask about ("the resource's version")
            return {}
        if sem.startswith(("date:", "datetime:")):
            return self._time_value(table, col, row, sem)
        gen: dict[str, Callable[[], Any]] = {
            "latitude": lambda: round(r.uniform(-60, 70), 6),
            "longitude": lambda: round(r.uniform(-170, 170), 6),
            "rating": lambda: round(r.uniform(1, 5), 1),
            "percent": lambda: round(r.uniform(0, 100), 2),
            "money": lambda: round(r.lognormvariate(3.6, 1.0), 2),
            "year": lambda: r.randint(1990, 2026),
            "year_text": lambda: str(r.randint(2015, 2026)),
            "age": lambda: r.randint(1, 95),
            "small_int": lambda: r.randint(1, 5),
            "pixels": lambda: r.choice([240, 480, 600, 720, 768, 800, 900, 1080] if "height" in
                                       col.name.lower() else
                                       [320, 375, 640, 768, 1024, 1280, 1366, 1440, 1920]),
            # mostly successes, as a crawler's log holds them
            "http_status": lambda: r.choices([200, 201, 204, 301, 302, 304, 400, 401, 403,
                                              404, 410, 429, 500, 502, 503],
                                             [60, 2, 2, 5, 4, 3, 2, 2, 2, 8, 1, 1, 3, 2, 3])[0],
            "duration": lambda: r.choice([15, 30, 45, 60, 90, 120]),
            "bytes": lambda: int(r.lognormvariate(11, 2)),
            "decimals": lambda: r.choice([0, 2, 2, 2, 3]),
            "position": lambda: r.randint(1, 100),
            "count": lambda: min(int(r.expovariate(1 / 8)), 500),
            "extent": lambda: 1 + min(int(r.expovariate(1 / 8)), 499),
            "hhmm": lambda: f"{r.randint(0, 23):02d}:{r.choice([0, 15, 30, 45]):02d}",
            "email": lambda: self._email(row),
            "phone": lambda: f.phone_number(),
            "first_name": lambda: f.first_name(),
            "last_name": lambda: f.last_name(),
            "person_name": lambda: f.name(),
            "username": lambda: f.user_name(),
            "file_name": lambda: self._file_name(col.name, table),
            "file_path": lambda: f"{self._folder()}/" + (
                row["file_name"] if isinstance(row.get("file_name"), str)
                else self._file_name(col.name, table, col.description or "")),
            "dir_path": lambda: self._folder(),
            "tree_path": lambda: r.choice(["src/", "src/app/", "docs/", "tests/", "", "lib/",
                                           "scripts/"]) + f"{r.choice(SLUG_HEADS)}_{r.choice(MODULE_KINDS)}" +
            r.choice([".py", ".py", ".md", ".ts", ".json", ".yml", ".toml"]),
            "repo_path": lambda: f"/srv/git/{f.user_name()}/{r.choice(SLUG_HEADS)}-"
                                 f"{r.choice(SLUG_TAILS)}",
            "timezone": lambda: self._zone(row),
            "utc_offset": lambda: r.choice(TIME_ZONES)[1],
            "currency": lambda: r.choice(CURRENCIES)[0],
            "country": lambda: r.choice(COUNTRIES)[0],
            "city": lambda: f.city(),
            "address": lambda: self._address(),
            "postcode": lambda: f.postcode(),
            "language": lambda: r.choice(LANGUAGES)[0],
            "language_name": lambda: r.choice(LANGUAGES)[1],
            "country_name": lambda: r.choice(COUNTRIES)[1],
            "currency_name": lambda: r.choice(CURRENCIES)[1],
            "team_name": lambda: f"{r.choice(_TEAMS)} team",
            "color": lambda: r.choice(COLORS),
            "sha": lambda: f.sha1(),
            "uuid": lambda: f.uuid4(),
            "ip": lambda: f.ipv4_private(),
            "domain": lambda: f.domain_name(),
            "semver": lambda: f"{r.randint(0, 4)}.{r.randint(0, 20)}.{r.randint(0, 30)}",
            "mime": lambda: self._mime(row),
            "specialty": lambda: r.choice(SPECIALTIES),
            "sentence": lambda: (self._commit_message() if singular(table) == "commit"
                                 else prose(prose_kind(col.name, table), r, f)),
            "diff": lambda: self._diff(row),
            "paragraph": lambda: prose("description", r, f),
            "product_name": lambda: prose("product", r, f),
            "title": lambda: prose("meeting" if prose_kind(col.name, table) == "meeting" else
                                   "title", r, f),
            "record_name": lambda: record_name(table, r, row.get("id")),
            "doc_topic": lambda: doc_topic(table, row, r, self.service),
            "anchor": lambda: r.choice(ANCHOR_TEXTS),
            "book_title": lambda: self._book_title(),
            "book_subject": lambda: r.choice(BOOK_SUBJECTS),
            "library_branch": lambda: f"{f.city()} {r.choice(['Branch', 'Library', 'Branch'])}",
            "mrn": lambda: f"MRN-{f.numerify('#######')}",
            "isbn": lambda: f.isbn13(),
            "barcode": lambda: f.ean13(),
            "digits": lambda: f.numerify("##########"),
            "people": lambda: ", ".join(f.name() for _ in range(r.choice([1, 1, 1, 2, 3]))),
            "opening_hours": lambda: r.choice([
                "Mon-Fri 09:00-18:00; Sat 10:00-14:00", "Mon-Sat 08:00-20:00",
                "Tue-Sun 10:00-17:00", "Mon-Fri 08:30-17:30", "Daily 07:00-22:00"]),
            "condition": lambda: r.choices(["new", "good", "fair", "worn", "damaged"],
                                           weights=[15, 45, 25, 10, 5], k=1)[0],
            "iban": lambda: f.iban(),
            "license_plate": lambda: f.license_plate(),
            "ssn": lambda: f.ssn(),
            "sql": lambda: self._sql(),
            "table_name": lambda: self._table_name(table),
            "insight": lambda: self._insight(),
            "visit_reason": lambda: r.choice(_VISIT_REASONS),
            "company": lambda: f.company(),
            "org_slug": lambda: re.sub(r"[^a-z0-9]+", "-", f.company().lower()).strip("-"),
            "code": lambda: f.bothify("??-####").upper(),
            "region": lambda: r.choice(["North", "South", "East", "West", "Central"]),
            "category": lambda: r.choice(category_pool(col.name)),
            "weekday": lambda: r.choice(WEEKDAYS),
            "api_path": lambda: r.choice(API_PATHS),
            "route_path": lambda: r.choice(ROUTE_PATHS),
            "repo_dir": lambda: self._repo_dir(),
            "watch_glob": lambda: r.choice([f"{self._repo_dir()}/**", "src/**", "package.json",
                                            "Dockerfile"]),
            "math_expression": lambda: r.choice(MATH_EXPRESSIONS),
            "js_expression": lambda: r.choice(JS_EXPRESSIONS),
            "lua_code": lambda: r.choice(LUA_SNIPPETS),
            "code_snippet": lambda: r.choice(CODE_SNIPPETS),
            "slug_name": lambda: f"{r.choice(SLUG_HEADS)}-{r.choice(SLUG_TAILS)}",
            "branch_name": lambda: git_branch(r, 0.2),
            "tag": lambda: r.choice(TAG_WORDS) if r.random() < 0.8 else f.word(),
            "place": lambda: f.city(),
            "calendar_name": lambda: f"{f.first_name()}'s "
                                     f"{r.choice(['Work', 'Personal', 'Team', 'On-call'])}",
            "text_id": lambda: f"{r.getrandbits(48):012x}",
            "text_date": lambda: self._rand_time(WINDOW_START, self.clock).date().isoformat(),
            "font_name": lambda: r.choice(FONT_NAMES),
            "font_size": lambda: r.choice(FONT_SIZES),
            "style_name": lambda: r.choice(STYLE_NAMES),
            "sheet_name": lambda: r.choice(SHEET_NAMES),
            "cell_ref": lambda: self._cell_range(),
            "cell": lambda: f"{chr(65 + r.randrange(8))}{r.randint(1, 60)}",
            "password": lambda: f.password(length=r.randint(10, 16)),
            "search_terms": lambda: " ".join(f.words(r.randint(1, 2))),
            "command": lambda: r.choice(COMMANDS),
            "namespace": lambda: r.choice(NAMESPACES),
            "metric_namespace": lambda: r.choice(["AWS/EC2", "AWS/Lambda", "AWS/RDS", "AWS/S3",
                                                  "AWS/ELB", "AWS/DynamoDB", "AWS/SQS"]),
            "database_name": lambda: r.choice(DATABASE_NAMES),
            "status": lambda: r.choices(*status_pool(table, col.name))[0],
            "platform": lambda: r.choice(PLATFORMS),
            "deploy_environment": lambda: r.choice(DEPLOY_ENVIRONMENTS),
            "docker_image": lambda: r.choice(DOCKER_IMAGES),
            "field_list": lambda: ",".join(r.sample(
                [c.name for c in self.tables[table].columns if not c.primary_key] or ["name"],
                k=min(3, max(1, len(self.tables[table].columns) - 1)))),
            "page_size": lambda: r.choice([5, 10, 20, 25, 50, 100]),
            "offset": lambda: r.choice([0, 0, 10, 20, 50, 100]),
            "page": lambda: r.randint(1, 5),
            "word": lambda: (named_value(col.name, col.description, r) if col.type == "text"
                             else None) or f.word(),
        }
        return gen.get(sem, gen["word"])()

    def _nested_value(self, table: str, key: str, row: dict[str, Any]) -> Any:
        """A value for a field of a JSON object of the kind its name says (a color, a
        title, a URL), or None when the name says no kind."""
        col = ColumnSpec(name=snake(key), type="text")
        if column_semantic(table, col) in ("word", "json", "enum", "bool"):
            return None
        return self.value(table, col, row)

    def _address(self) -> str:
        """A US postal address whose ZIP code is in its state (no military addresses), so
        its country, and the time zones that fit it, can be told."""
        f = self.fake
        state = f.state_abbr(include_territories=False, include_freely_associated_states=False)
        return f"{f.street_address()}, {f.city()}, {state} {f.zipcode_in_state(state)}"

    def _zone(self, row: dict[str, Any]) -> str:
        """A time zone of the row's country (its country column, else its address), the
        populous zones most often; a curated zone when the row has no country."""
        cc = next((row[k] for k in ("country", "country_code") if isinstance(row.get(k), str)),
                  None) or next((address_country(row[k]) for k in (
                      "address", "street_address", "postal_address") if row.get(k)), None)
        zones = country_zones(cc) if cc else ()
        if not zones:
            return self.rng.choice(TIME_ZONES)[0]
        return self.rng.choices(zones, weights=[1.0 / (i + 1) ** 1.5
                                                for i in range(len(zones))], k=1)[0]

    def _email(self, row: dict[str, Any]) -> str:
        """An address that matches the row's person name when it has one."""
        name = row.get("name") or row.get("full_name") or " ".join(
            str(row[k]) for k in ("first_name", "last_name") if row.get(k))
        if isinstance(name, str) and name.strip():
            parts = [re.sub(r"[^a-z]", "", p.lower()) for p in name.split()
                     if p.rstrip(".").lower() not in ("mr", "mrs", "ms", "dr", "md", "phd",
                                                      "dds", "dvm", "jr", "sr", "ii", "iii")]
            parts = [p for p in parts if p]
            if parts:
                local = self.rng.choice([".".join(parts), parts[0][0] + parts[-1],
                                         parts[0] + str(self.rng.randint(1, 99))])
                return f"{local}@{self.fake.free_email_domain()}"
        return self.fake.email()

    def _file_name(self, column: str = "", table: str = "", said: str = "") -> str:
        """A file name as people keep them ("sales-2025-q3.xlsx"), of a type its column's
        description names ("the image file on disk (PNG, JPG, BMP, or TGA)"), or its column
        or, for files that are the record (EKS's `yamls`, Excel's `images`), its table (the
        last such word, the head noun, first), else of a type the source names (an Excel
        server's workbooks are .xlsx, not .gif)."""
        r = self.rng
        told = column_file_types(said)
        stem = r.choice(FILE_STEMS)
        stem += r.choice(["", f"-{r.randint(2022, 2026)}", f"-q{r.randint(1, 4)}",
                          r.choice(["-final", "-draft", "-copy", "-signed"]),
                          f"-v{r.randint(1, 4)}"])
        words = [*reversed(column.lower().split("_")),
                 *(w for w in reversed(singular(table).split("_")) if w in MEDIA_FILE_WORDS)]
        named = next((NAMED_FILE_TYPES[w] for w in words if w in NAMED_FILE_TYPES), None)
        named = told or named
        # nothing says: the files people keep most (Faker's put .flac files in a memory bank)
        ext = r.choice(named or self.file_types or _COMMON_FILE_TYPES)
        return f"{stem}.{ext}"

    def _repo_dir(self) -> str:
        """A directory of a repository a build starts from ('apps/web', '.')."""
        r = self.rng
        return r.choice([".", f"apps/{r.choice(SLUG_HEADS)}", f"services/{r.choice(SLUG_HEADS)}",
                         f"packages/{r.choice(SLUG_HEADS)}", "docker", "backend", "frontend"])

    def _folder(self) -> str:
        f, r = self.fake, self.rng
        return r.choice([f"/home/{f.user_name()}", f"/Users/{f.first_name().lower()}",
                         "/srv/data", "/data"]) + f"/{r.choice(FOLDERS)}"

    def _cell_range(self) -> str:
        r = self.rng
        col = r.randrange(8)
        top = r.randint(1, 20)
        return f"{chr(65 + col)}{top}:{chr(65 + col + r.randint(1, 6))}{top + r.randint(4, 60)}"

    def _mime(self, row: dict[str, Any]) -> str:
        for key in ("file_name", "filename", "file_path", "path", "name"):
            if isinstance(row.get(key), str):
                guess = mimetypes.guess_type(row[key])[0]
                if guess:
                    return guess
        return self.rng.choice(MIME_TYPES)[1]

    def _book_title(self) -> str:
        """A title that reads like one: title patterns over Faker's English nouns and
        adjectives (parts of speech, not any word: never "Inside and Several")."""
        f, r = self.fake, self.rng
        noun = f.word(part_of_speech="noun").title()
        adj = f.word(part_of_speech="adjective").title()
        other = f.word(part_of_speech="noun").title()
        return r.choice([
            f"The {adj} {noun}", f"The {noun} of {f.city()}", f"A {adj} {noun}",
            f"The Last {noun}", f"{f.first_name()}'s {noun}", f"The {noun} and the {other}",
            f"{adj} {noun}: A Novel", f"A Short History of the {noun}", f"The {noun} Years",
            f"Notes on the {adj} {noun}"])

    def _data_tables(self) -> list[str]:
        return [t for t, rows in self.rows.items() if rows and singular(t) not in (
            "query", "table", "insight") and not t.endswith(("_history", "_changes"))]

    def _sql(self) -> str:
        """A query over a table of the database itself, so running it returns rows."""
        tables = self._data_tables()
        if not tables:
            return "SELECT 1"
        t = self.rng.choice(tables)
        cols = [c.name for c in self.tables[t].columns if c.type != "json"]
        pick = self.rng.sample(cols, k=min(len(cols), self.rng.randint(1, 3)))
        text = next((c.name for c in self.tables[t].columns if c.enum), None)
        if text and self.rng.random() < 0.5:
            value = self.rng.choice(self.tables[t].column(text).enum or [""])
            return f"SELECT {', '.join(pick)} FROM {t} WHERE {text} = '{value}'"
        if self.rng.random() < 0.3:
            return f"SELECT COUNT(*) AS n FROM {t}"
        return f"SELECT {', '.join(pick)} FROM {t} ORDER BY id LIMIT {self.rng.choice([5, 10, 20])}"

    def _diff(self, row: dict[str, Any]) -> str:
        """A one-hunk unified diff of the row's file (a diff column holds a patch)."""
        r = self.rng
        path = row.get("path") or row.get("file_path") or \
            f"src/{r.choice(SLUG_HEADS)}_{r.choice(MODULE_KINDS)}.py"
        line = r.randint(1, 240)
        name = r.choice(CODE_TOPICS).replace("-", "_")
        old, new = r.sample([f"{name} = {r.randint(0, 99)}", f"{name} = None",
                             f"return {name}", f"import {name}", f"# TODO: {name}"], 2)
        return (f"--- a/{path}\n+++ b/{path}\n@@ -{line},1 +{line},1 @@\n-{old}\n+{new}")

    def _table_name(self, table: str) -> str:
        """A table of the database itself (a catalogue of tables lists real ones)."""
        listed = {r.get("name") for r in self.rows.get(table, [])}
        free = [t for t in self._data_tables() if t not in listed]
        return self.rng.choice(free) if free else self.rng.choice(self._data_tables() or
                                                                   [table])

    def _insight(self) -> str:
        tables = self._data_tables()
        what = self.rng.choice(tables).replace("_", " ") if tables else "records"
        return self.rng.choice([
            f"{what.capitalize()} grew {self.rng.randint(3, 40)}% month over month.",
            f"A few {what} account for {self.rng.randint(40, 80)}% of the activity.",
            f"{what.capitalize()} peak on {self.rng.choice(['Mondays', 'Fridays', 'weekends'])}.",
            f"{self.rng.randint(2, 15)}% of {what} are missing a value that should be set."])

    def _commit_message(self) -> str:
        verb = self.rng.choice(["Fix", "Add", "Update", "Refactor", "Remove", "Improve",
                                "Document", "Bump"])
        what = self.rng.choice(["handling", "tests", "docs", "config", "validation", "parser",
                                "endpoint", "logging", "types", "dependencies"])
        return f"{verb} {self.rng.choice(SLUG_HEADS)} {what}"


def _numbers(values: list[Any], kind: type) -> list[Any]:
    """A declared enum as numbers of the column's kind; [] when any value is not one."""
    try:
        nums = [kind(float(v)) if kind is int else float(v) for v in values]
    except (TypeError, ValueError, OverflowError):
        return []
    return nums if all(float(n) == float(v) for n, v in zip(nums, values, strict=True)) else []


def _json_example(description: str) -> dict[str, Any] | None:
    """The first JSON object a column's description writes out, if any."""
    for m in re.finditer(r"\{.*\}", description):
        try:
            value = json.loads(m.group(0))
        except ValueError:
            continue
        if isinstance(value, dict) and value:
            return value
    return None
