"""Step 7 of the algorithm: rows. `column_semantic` says what kind of value a column holds (from
its name, type, description and table); `RowFactory` makes valid rows with seeded Faker and
`random.Random`: foreign keys point at existing rows (optionally Zipf-skewed), unique columns
and groups stay unique, enums and NOT NULL hold, and times are consistent (children after
parents, end after start, updated after created).
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from faker import Faker

from agent_world.envs.spec import ColumnSpec, TableSpec
from agent_world.mining.offline.naming import is_person, singular
from agent_world.mining.offline.reference_data import (
    BOOK_SUBJECTS,
    BRANCH_PREFIXES,
    COLORS,
    COUNTRIES,
    CURATED,
    CURATED_TABLES,
    CURRENCIES,
    LANGUAGES,
    MIME_TYPES,
    SPECIALTIES,
    TAG_WORDS,
    TIME_ZONES,
)
from agent_world.mining.semantics import (
    ATTENDED,
    NEGATIVE_ENDS,
    Route,
    address_country,
    country_zones,
    derive_invariants,
    fk_routes,
    lifecycle_columns,
    state_rank,
    time_group,
    time_stem,
)

WINDOW_START = datetime(2023, 1, 1, 8, 0, 0)
_VISIT_REASONS = [
    "Annual physical", "Follow-up on blood pressure", "Persistent cough", "Knee pain after "
    "running", "Medication review", "Skin rash", "Headaches for two weeks", "Prenatal visit",
    "Diabetes check", "Back pain", "Vaccination", "Test results discussion", "Allergy "
    "symptoms", "Sleep problems", "Post-surgery check"]

# rules that derive columns of a new row from the rest of it (registered by the modules that
# add such columns: a conversion's converted time, a fetch's URL from its page)
ROW_RULES: list[Callable[[RowFactory, str, dict[str, Any]], None]] = []


def to_iso(dt: datetime) -> str:
    return dt.replace(microsecond=0).isoformat()


def parse_iso(v: Any) -> datetime | None:
    if not isinstance(v, str):
        return None
    try:
        return datetime.fromisoformat(v[:19]) if "T" in v or len(v) > 10 else \
            datetime.fromisoformat(v + "T00:00:00")
    except ValueError:
        return None


def time_role(name: str) -> str:
    n = name.lower()
    if re.search(r"birth|dob|birthday", n):
        return "birth"
    if n.startswith(("deleted", "archived", "cancelled", "canceled", "closed", "revoked")):
        return "deleted"
    if n.startswith(("updated", "modified", "last_", "changed")):
        return "updated"
    if re.search(r"(^|_)(end|ends|until|finish|finished|due|deadline|expires|expiry|expiration|"
                 r"arrival|checkout|check_out|closes|to)(_|$)", n):
        return "end"
    if re.search(r"(^|_)(start|starts|begin|begins|scheduled|departure|check_in|checkin|opens|"
                 r"from|since|at_time|time|date)(_|$)", n) and n not in ("created_at",):
        return "start"
    return "created"


# declared formats decide before names do
_FORMAT_SEMANTICS = {"email": "email", "uri": "url", "url": "url", "uuid": "uuid",
                     "ipv4": "ip", "hostname": "domain", "time": "hhmm"}
# column names whose meaning is unambiguous whatever the table
_NAMED = {
    "given_name": "first_name", "first_name": "first_name", "family_name": "last_name",
    "surname": "last_name", "last_name": "last_name", "middle_name": "first_name",
    "mrn": "mrn", "medical_record_number": "mrn", "isbn": "isbn", "isbn13": "isbn",
    "barcode": "barcode", "ean": "barcode", "upc": "barcode",
    "authors": "people", "author_names": "people", "opening_hours": "opening_hours",
    "business_hours": "opening_hours", "hours": "opening_hours",
    "condition": "condition", "sku": "code", "iban": "iban",
    "license_plate": "license_plate", "ssn": "ssn",
}
def _format_of(col: ColumnSpec) -> str | None:
    m = re.search(r"\bformat[:=]\s*([a-z0-9-]+)", col.description.lower())
    return m.group(1) if m else None


def from_pattern(pattern: str, rng: random.Random) -> str | None:
    """A string the regular expression matches (literals, classes, repeats, groups,
    alternatives), or None for what it cannot expand."""
    import re._constants as C  # noqa: N812
    import re._parser as P  # noqa: N812

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
        if re.search(pattern, value):
            return value
    return None


def column_semantic(table: str, col: ColumnSpec) -> str:
    """What kind of value a column holds, from its name, type, description and table."""
    n = col.name.lower()
    words = set(n.split("_"))
    t = col.type
    if col.primary_key:
        return "pk"
    if col.foreign_key:
        return "fk"
    if col.enum:
        return "enum"
    if t == "boolean":
        return "bool"
    if t == "json":
        return "json"
    if t in ("date", "datetime"):
        return f"{t}:{time_role(n)}"
    if t == "real":
        if words & {"latitude", "lat"}:
            return "latitude"
        if words & {"longitude", "lng", "lon"}:
            return "longitude"
        if words & {"rating", "score", "stars"}:
            return "rating"
        if words & {"percent", "percentage", "pct", "discount", "rate"}:
            return "percent"
        return "money"
    if t == "integer":
        if n in ("status_code", "http_status", "response_code", "http_code"):
            return "http_status"
        if words & {"year"}:
            return "year"
        if words & {"age"}:
            return "age"
        if words & {"rating", "stars", "score", "priority", "level", "rank", "floor"}:
            return "small_int"
        if words & {"minutes", "duration"}:
            return "duration"
        if words & {"size", "bytes"}:
            return "bytes"
        if words & {"decimals"}:
            return "decimals"
        if words & {"order", "position"}:
            return "position"
        return "count"
    d = col.description.lower()
    single = singular(table).split("_")[-1]
    fmt = _format_of(col)
    if fmt in _FORMAT_SEMANTICS:
        return _FORMAT_SEMANTICS[fmt]
    if n in _NAMED:
        return _NAMED[n]
    if single in ("query", "statement") and n in ("content", "sql", "query", "statement"):
        return "sql"
    if single == "table" and n in ("name", "table_name"):
        return "table_name"
    if single == "insight" and n in ("content", "text", "body", "insight"):
        return "insight"
    if n == "reason" and single in ("appointment", "visit", "booking", "consultation"):
        return "visit_reason"
    if n.endswith("_number") and not n.startswith(("num", "number")):
        return "digits"
    if "hh:mm" in d or n in ("time", "local_time", "start_hhmm"):
        return "hhmm"
    if "email" in words:
        return "email"
    if words & {"phone", "mobile", "fax", "telephone"}:
        return "phone"
    if n == "first_name":
        return "first_name"
    if n == "last_name":
        return "last_name"
    if n in ("full_name", "display_name") or (n == "name" and is_person(table)) or \
            n in ("author", "changed_by", "assignee", "reviewer", "owner"):
        return "person_name"
    if n in ("username", "login", "handle", "user_name"):
        return "username"
    if n in ("anchor_text", "anchor", "link_text"):
        return "anchor"
    if words & {"url", "uri", "link", "website", "homepage", "endpoint", "href"}:
        return "url"
    if n in ("file_name", "filename"):
        return "file_name"
    if words & {"path", "directory", "dir", "file", "folder"}:
        return "repo_path" if single in ("repository", "repo") else "file_path"
    if "timezone" in words or n in ("tz", "time_zone", "tz_name") or \
            n.endswith("_time_zone") or (single == "timezone" and n == "name"):
        return "timezone"
    if n in ("utc_offset", "offset"):
        return "utc_offset"
    if "currency" in words:
        return "currency"
    if n in ("country", "country_code", "nationality"):
        return "country"
    if n == "city":
        return "city"
    if words & {"address", "street", "location"}:
        return "address"
    if words & {"zip", "postcode", "postal"}:
        return "postcode"
    if words & {"language", "locale", "lang"}:
        return "language"
    if words & {"color", "colour"}:
        return "color"
    if words & {"sha", "hash", "revision", "checksum", "digest"}:
        return "sha"
    if words & {"uuid", "guid", "token"}:
        return "uuid"
    if words & {"ip"}:
        return "ip"
    if words & {"domain", "hostname", "host"}:
        return "domain"
    if "version" in words:
        return "semver"
    if words & {"mime", "content_type", "mimetype"} or n == "content_type":
        return "mime"
    if words & {"specialty", "speciality", "department"}:
        return "specialty"
    if words & {"message", "body", "content", "comment", "notes", "note", "text", "reason",
                "bio", "summary", "instructions", "answer", "question", "feedback", "value"}:
        return "sentence"
    if words & {"description", "details"}:
        return "paragraph"
    if n == "subject" and single in ("title", "book", "novel", "publication", "edition"):
        return "book_subject"
    if words & {"title", "subject", "headline", "caption"}:
        return "book_title" if n == "title" and single in (
            "title", "book", "album", "novel", "publication", "edition") else "title"
    if words & {"company", "organization", "employer", "vendor", "brand"}:
        return "company"
    if words & {"code", "sku", "reference", "ref", "isbn", "number", "slug", "key"}:
        return "code"
    if words & {"region", "continent", "area"}:
        return "region"
    if words & {"type", "kind", "category", "genre", "role", "target", "action", "method",
                "channel", "source", "unit"}:
        return "category"
    if n in ("name", "label"):
        if single in ("repository", "repo", "project", "package", "service", "bucket", "app"):
            return "slug_name"
        if single == "branch":
            return "branch_name"
        if single in ("book", "title", "album", "novel", "publication", "edition"):
            return "book_title"
        if single in ("tag", "label", "keyword", "topic"):
            return "tag"
        if single in ("company", "organization", "vendor", "supplier", "clinic", "hospital"):
            return "company"
        if single in ("city", "location", "venue", "place", "hotel", "airport", "store"):
            return "place"
        if single in ("calendar",):
            return "calendar_name"
        return "title"
    return "word"


class RowFactory:
    """Makes valid rows for a set of tables: FKs point at existing rows, unique columns and
    unique_together groups stay unique, enums and NOT NULL hold, times are consistent."""

    def __init__(self, tables: list[TableSpec], rows: dict[str, list[dict[str, Any]]] | None,
                 seed: int | str, clock: str = "2026-01-15T09:00:00",
                 hints: dict[str, dict[str, dict[str, Any]]] | None = None) -> None:
        self.tables = {t.name: t for t in tables}
        self.hints = hints or {}  # what the source declares per column (enum, range, format)
        self.rows: dict[str, list[dict[str, Any]]] = {
            t.name: [dict(r) for r in (rows or {}).get(t.name, [])] for t in tables}
        self.rng = random.Random(f"rows:{seed}")
        self.fake = Faker("en_US")
        self.fake.seed_instance(f"faker:{seed}")
        self.clock = datetime.fromisoformat(clock)
        self._unique: dict[tuple[str, tuple[str, ...]], set[Any]] = {}
        self._zipf: dict[tuple[str, int], tuple[list[Any], list[float]]] = {}
        self._by_id: dict[str, dict[Any, dict[str, Any]]] = {}
        self._cache: dict[tuple[str, str], Any] = {}
        for t in tables:
            self._index(t.name)


    # ---- bookkeeping -------------------------------------------------------------------
    def invariants(self, kind: str, table: str) -> list[dict[str, Any]]:
        """The schema's cross-table invariants of one kind on one table (see semantics)."""
        key = ("invariants", "")
        if key not in self._cache:
            self._cache[key] = derive_invariants(list(self.tables.values()))
        return [i for i in self._cache[key] if i["kind"] == kind and i["table"] == table]

    def add_table(self, table: TableSpec) -> None:
        self._cache.clear()
        self.tables[table.name] = table
        self.rows.setdefault(table.name, [])
        self._index(table.name)

    def _groups(self, table: TableSpec) -> list[tuple[str, ...]]:
        groups = [(c.name,) for c in table.columns if c.unique and not c.primary_key]
        groups += [tuple(table.primary_key)] + [tuple(g) for g in table.unique_together]
        return groups

    def _index(self, tname: str) -> None:
        table = self.tables[tname]
        for g in self._groups(table):
            self._unique[(tname, g)] = {_unique_key(r, g) for r in self.rows[tname]}
        pk = table.primary_key[0]
        self._by_id[tname] = {r.get(pk): r for r in self.rows[tname]}

    def reindex_column(self, tname: str) -> None:
        self._cache.clear()
        self._index(tname)

    def next_id(self, tname: str) -> int:
        pk = self.tables[tname].primary_key
        if len(pk) != 1:
            return len(self.rows[tname]) + 1
        ids = [r.get(pk[0]) for r in self.rows[tname] if isinstance(r.get(pk[0]), int)]
        return (max(ids) if ids else 0) + 1

    def ok_unique(self, tname: str, row: dict[str, Any]) -> bool:
        for g in self._groups(self.tables[tname]):
            key = _unique_key(row, g)
            if any(v is None for v in key):
                continue
            if key in self._unique[(tname, g)]:
                return False
        return True

    def commit(self, tname: str, row: dict[str, Any]) -> dict[str, Any]:
        for g in self._groups(self.tables[tname]):
            key = _unique_key(row, g)
            if not any(v is None for v in key):
                self._unique[(tname, g)].add(key)
        self.rows[tname].append(row)
        self._by_id[tname][row.get(self.tables[tname].primary_key[0])] = row
        return row

    # ---- choices -----------------------------------------------------------------------
    def zipf_choice(self, tname: str, ids: list[Any], s: float = 1.1) -> Any:
        key = (tname, len(ids))
        if key not in self._zipf:
            order = list(ids)
            random.Random(f"zipf:{tname}:{len(ids)}").shuffle(order)
            weights = [1.0 / (rank + 1) ** s for rank in range(len(order))]
            self._zipf[key] = (order, weights)
        order, weights = self._zipf[key]
        return self.rng.choices(order, weights=weights, k=1)[0]

    def pick_parent(self, table: str, col: ColumnSpec, skew: bool,
                    own_id: Any = None) -> Any:
        ptable, pcol = col.foreign_key.split(".")  # type: ignore[union-attr]
        candidates = [r.get(pcol) for r in self.rows.get(ptable, []) if r.get(pcol) is not None]
        if ptable == table:
            candidates = [c for c in candidates if own_id is None or c != own_id]
            if not candidates or self.rng.random() < 0.5:
                return None
        if not candidates:
            return None
        if skew:
            return self.zipf_choice(ptable, candidates)
        return self.rng.choice(candidates)

    def parent_row(self, col: ColumnSpec, value: Any) -> dict[str, Any] | None:
        if value is None or not col.foreign_key:
            return None
        ptable = col.foreign_key.split(".")[0]
        return self._by_id.get(ptable, {}).get(value)

    # ---- values --------------------------------------------------------------------------
    def _rand_time(self, lo: datetime, hi: datetime) -> datetime:
        if hi <= lo:
            return lo
        span = int((hi - lo).total_seconds())
        return lo + timedelta(seconds=self.rng.randint(0, span))

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
        lo, hi = declared.get("minimum"), declared.get("maximum")
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
        if sem == "branch_name" and not any(  # a branch of a library or a bank, not of git
                c.foreign_key and singular(c.foreign_key.split(".")[0]) in ("repository", "repo")
                for c in self.tables[table].columns):
            sem = "library_branch"
        if sem == "enum":
            vals = list(col.enum or [])
            if self._upcoming(table, row) and (self._lifecycle(table) or ("",))[0] == col.name:
                vals = [v for v in vals if v not in ATTENDED] or vals  # not attended yet
            return r.choices(vals, weights=[1.0 / (i + 1) for i in range(len(vals))], k=1)[0]
        if sem == "bool":
            return r.random() < (0.25 if col.name.startswith(("is_archived", "pinned",
                                                               "deleted")) else 0.6)
        if sem == "json":
            return {"source": r.choice(["web", "api", "import", "mobile"]),
                    "version": r.randint(1, 5)}
        if sem.startswith(("date:", "datetime:")):
            return self._time_value(table, col, row, sem)
        gen: dict[str, Callable[[], Any]] = {
            "latitude": lambda: round(r.uniform(-60, 70), 6),
            "longitude": lambda: round(r.uniform(-170, 170), 6),
            "rating": lambda: round(r.uniform(1, 5), 1),
            "percent": lambda: round(r.uniform(0, 100), 2),
            "money": lambda: round(r.lognormvariate(3.6, 1.0), 2),
            "year": lambda: r.randint(1990, 2026),
            "age": lambda: r.randint(1, 95),
            "small_int": lambda: r.randint(1, 5),
            # mostly successes, as a crawler's log holds them
            "http_status": lambda: r.choices([200, 201, 204, 301, 302, 304, 400, 401, 403,
                                              404, 410, 429, 500, 502, 503],
                                             [60, 2, 2, 5, 4, 3, 2, 2, 2, 8, 1, 1, 3, 2, 3])[0],
            "duration": lambda: r.choice([15, 30, 45, 60, 90, 120]),
            "bytes": lambda: int(r.lognormvariate(11, 2)),
            "decimals": lambda: r.choice([0, 2, 2, 2, 3]),
            "position": lambda: r.randint(1, 100),
            "count": lambda: min(int(r.expovariate(1 / 8)), 500),
            "hhmm": lambda: f"{r.randint(0, 23):02d}:{r.choice([0, 15, 30, 45]):02d}",
            "email": lambda: self._email(row),
            "phone": lambda: f.phone_number(),
            "first_name": lambda: f.first_name(),
            "last_name": lambda: f.last_name(),
            "person_name": lambda: f.name(),
            "username": lambda: f.user_name(),
            "url": lambda: f.url() + f.uri_path(),
            "file_name": lambda: f.file_name(),
            "file_path": lambda: (f"/{'/'.join(f.words(r.randint(1, 3)))}/{row['file_name']}"
                                  if isinstance(row.get("file_name"), str)
                                  else f.file_path(depth=r.randint(1, 3))),
            "repo_path": lambda: f"/srv/git/{f.user_name()}/{f.word()}-{f.word()}",
            "timezone": lambda: self._zone(row),
            "utc_offset": lambda: r.choice(TIME_ZONES)[1],
            "currency": lambda: r.choice(CURRENCIES)[0],
            "country": lambda: r.choice(COUNTRIES)[0],
            "city": lambda: f.city(),
            "address": lambda: self._address(),
            "postcode": lambda: f.postcode(),
            "language": lambda: r.choice(LANGUAGES)[0],
            "color": lambda: r.choice(COLORS),
            "sha": lambda: f.sha1(),
            "uuid": lambda: f.uuid4(),
            "ip": lambda: f.ipv4_private(),
            "domain": lambda: f.domain_name(),
            "semver": lambda: f"{r.randint(0, 4)}.{r.randint(0, 20)}.{r.randint(0, 30)}",
            "mime": lambda: self._mime(row),
            "specialty": lambda: r.choice(SPECIALTIES),
            "sentence": lambda: (self._commit_message() if singular(table) == "commit"
                                 else f.sentence(nb_words=r.randint(5, 12))),
            "paragraph": lambda: f.paragraph(nb_sentences=2),
            "title": lambda: f.catch_phrase(),
            # what a link says on the page: a few words, no sentence
            "anchor": lambda: r.choice(["Read more", "Pricing", "Contact us", "Documentation",
                                        "About", "Sign in", "Download", "Blog", "Careers",
                                        "Privacy policy"]) if r.random() < 0.4 else
            " ".join(f.words(r.randint(1, 3))).capitalize(),
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
            "code": lambda: f.bothify("??-####").upper(),
            "region": lambda: r.choice(["North", "South", "East", "West", "Central"]),
            "category": lambda: r.choice(["standard", "premium", "basic", "internal",
                                          "external"]),
            "slug_name": lambda: f"{f.word()}-{f.word()}",
            "branch_name": lambda: (r.choice(["main", "develop"]) if r.random() < 0.2 else
                                    f"{r.choice(BRANCH_PREFIXES)}/{f.word()}-{f.word()}"),
            "tag": lambda: r.choice(TAG_WORDS) if r.random() < 0.8 else f.word(),
            "place": lambda: f.city(),
            "calendar_name": lambda: f"{f.first_name()}'s "
                                     f"{r.choice(['Work', 'Personal', 'Team', 'On-call'])}",
            "word": lambda: f.word(),
        }
        return gen.get(sem, gen["word"])()

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

    def _mime(self, row: dict[str, Any]) -> str:
        import mimetypes

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
        return f"{verb} {self.fake.word()} {what}"

    # ---- times: one lifecycle per row ------------------------------------------------------
    _SCHEDULED_START = {"start", "starts", "begin", "begins", "departure", "departs"}
    _SCHEDULED = _SCHEDULED_START | {"end", "ends", "arrival", "arrives"}

    def _upcoming(self, table: str, row: dict[str, Any]) -> bool:
        """Whether the row's scheduled start (already chosen: copied from its slot) is after
        the clock."""
        for c in self.tables[table].columns:
            if time_stem(c.name) in self._SCHEDULED_START and isinstance(row.get(c.name), str):
                t = parse_iso(row[c.name])
                return t is not None and t > self.clock
        return False

    def _lifecycle(self, table: str) -> tuple[str, dict[str, str]] | None:
        key = ("lifecycle", table)
        if key not in self._cache:
            self._cache[key] = lifecycle_columns(self.tables[table])
        return self._cache[key]

    def _floor(self, table: str, row: dict[str, Any]) -> datetime:
        """A record is created after every parent it belongs to."""
        floor = WINDOW_START
        for c in self.tables[table].columns:
            if c.foreign_key and row.get(c.name) is not None:
                parent = self.parent_row(c, row[c.name])
                if parent:
                    pt = parse_iso(parent.get("created_at"))
                    if pt and pt > floor:
                        floor = pt
        return floor

    def _stamp_needed(self, table: str, col: ColumnSpec, row: dict[str, Any]) -> bool | None:
        """Whether the row's status says this state timestamp is set (None: no opinion)."""
        lc = self._lifecycle(table)
        if lc is None:
            return None
        scol, stamps = lc
        state = next((st for st, c in stamps.items() if c == col.name), None)
        status = row.get(scol)
        if state is None or status is None:
            return None
        if status == state:
            return True
        rank, srank = state_rank(status), state_rank(state)
        if rank is None or srank is None or rank <= srank or srank == 2:
            return False
        return status not in NEGATIVE_ENDS  # reached by the normal path

    def _time_value(self, table: str, col: ColumnSpec, row: dict[str, Any], sem: str) -> Any:
        kind = sem.split(":")[0]
        r = self.rng
        group = time_group(col.name)
        stem = time_stem(col.name)
        tcols = [c for c in self.tables[table].columns
                 if c.type in ("date", "datetime") and c.name != col.name]
        done = {c.name: parse_iso(row.get(c.name)) for c in tcols if row.get(c.name)}
        by_group: dict[str | None, list[datetime]] = {}
        for c in tcols:
            if done.get(c.name) is not None:
                by_group.setdefault(time_group(c.name), []).append(done[c.name])  # type: ignore
        created = max(by_group.get("create", []), default=None)
        starts = max(by_group.get("start", []), default=None)
        needed = self._stamp_needed(table, col, row)
        if needed is False and col.nullable:
            return None
        floor = max(self._floor(table, row), created or WINDOW_START)
        clock = self.clock
        if group == "birth":
            dt = self._rand_time(datetime(1940, 1, 1), datetime(2008, 12, 31))
        elif group == "create":
            if created is not None:  # booked_at and created_at of one record: the same moment
                dt = created
            else:  # before a start copied from its container (booked before the slot)
                hi = min(clock - timedelta(hours=1), starts - timedelta(hours=1)) \
                    if starts is not None else clock - timedelta(hours=1)
                dt = self._rand_time(self._floor(table, row), max(self._floor(table, row), hi))
        elif group == "start":
            if stem in self._SCHEDULED:  # a scheduled time: past or upcoming (past once
                # attended: a completed visit or a no-show lies before the clock)
                status = row.get((self._lifecycle(table) or ("",))[0])
                hi = clock - timedelta(hours=1) if status in ATTENDED else \
                    clock + timedelta(days=75)
                dt = self._rand_time(max(floor, clock - timedelta(days=150)), max(floor, hi))
                dt = dt.replace(minute=(dt.minute // 15) * 15, second=0)
            else:  # an event that happened
                dt = self._rand_time(floor, max(floor, clock - timedelta(minutes=5)))
        elif group == "end":
            base = starts or floor
            if stem in self._SCHEDULED:
                dt = base + (timedelta(days=r.randint(1, 14)) if kind == "date"
                             else timedelta(minutes=r.choice([30, 45, 60, 90, 120])))
            else:
                hi = min(clock, base + timedelta(days=45))
                dt = self._rand_time(base, max(base, hi))
        elif group == "due":
            base = starts or created or floor
            dt = base + timedelta(days=r.choice([7, 14, 14, 21, 28]))
        else:  # updated, cancelled, archived, ...: after the record's past events
            if needed is None and stem.startswith(("deleted", "archived", "revoked")) and \
                    col.nullable and r.random() < 0.85:
                return None
            past = [v for v in done.values() if v is not None and v <= clock]
            base = max([floor, *past])
            if stem.startswith(("updated", "modified", "last")):
                dt = self._rand_time(base, max(base, min(clock, base + timedelta(days=120))))
            else:
                dt = self._rand_time(base, max(base, clock))
        if needed is None and col.nullable and group == "end" and r.random() < (
                0.1 if stem in self._SCHEDULED else 0.3):
            return None  # open-ended, or not returned yet
        return dt.date().isoformat() if kind == "date" else to_iso(dt)

    _TIME_ORDER = {"birth": 3, "create": 3, "start": 4, "due": 5, "end": 5, None: 6,
                   "later": 7}

    def _ordered(self, table: TableSpec) -> list[ColumnSpec]:
        key = ("order", table.name)
        if key not in self._cache or self._cache[key][0] is not table:
            self._cache[key] = (table, self._order(table))
        return self._cache[key][1]

    def _order(self, table: TableSpec) -> list[ColumnSpec]:
        vias = {r.via for r in self._routes(table.name)} | {
            r.column for r in self._routes(table.name) if r.kind == "siblings"}
        copied = {r.column for r in self._routes(table.name)
                  if r.kind == "via" and not table.column(r.column).foreign_key}

        def key(c: ColumnSpec) -> tuple[int, int]:
            if c.primary_key:
                return (0, 0)
            if c.foreign_key:
                return (1, 0 if c.name in vias else 1)
            if c.name in copied:  # from the container, before the times ordered after it
                return (1, 2)
            if c.type in ("date", "datetime"):
                return (self._TIME_ORDER[time_group(c.name)], 0)
            if c.name in ("status", "state") and c.enum:
                return (2, -1)  # the fields named for a state follow it
            if column_semantic(table.name, c) == "timezone":
                return (2, 1)  # after the country or address it belongs to
            return (2, 0)
        return sorted(table.columns, key=key)

    # ---- foreign keys along routes ---------------------------------------------------------
    def _routes(self, table: str) -> list[Route]:
        key = ("routes", table)
        if key not in self._cache:
            self._cache[key] = [r for r in fk_routes(list(self.tables.values()))
                                if r.table == table]
        return self._cache[key]

    def _implied(self, tname: str, column: str, row: dict[str, Any]) -> Any:
        """The value a route through an already chosen parent fixes for `column`."""
        t = self.tables[tname]
        for r in self._routes(tname):
            if r.kind == "via" and r.column == column and row.get(r.via) is not None:
                parent = self.parent_row(t.column(r.via), row[r.via])
                if parent is not None and parent.get(r.parent_column) is not None:
                    return parent[r.parent_column]
        return None

    def route_fk(self, tname: str, c: ColumnSpec, row: dict[str, Any], skew: bool,
                 own_id: Any) -> tuple[bool, Any]:
        """(decided, value) for an FK column that a route fixes or narrows."""
        ptable = c.foreign_key.split(".")[0]  # type: ignore[union-attr]
        filters = []
        for r in self._routes(tname):
            t = self.tables[tname]
            if r.kind == "via":
                if r.column == c.name and row.get(r.via) is not None:
                    parent = self.parent_row(t.column(r.via), row[r.via])
                    if parent is not None and parent.get(r.parent_column) is not None:
                        return True, parent[r.parent_column]
                    if parent is not None and c.nullable:  # the route leaves it unknown
                        return True, None
                if r.via == c.name:
                    want = row.get(r.column)
                    if want is None:  # another route may already fix the column
                        want = self._implied(tname, r.column, row)
                    if want is not None:
                        pc = r.parent_column
                        filters.append(lambda p, w=want, pc=pc: p.get(pc) == w)
            else:
                for mine, other in ((r.via, r.column), (r.column, r.via)):
                    if mine == c.name and row.get(other) is not None:
                        op = self.parent_row(t.column(other), row[other])
                        if op is not None and op.get(r.parent_column) is not None:
                            want, pc = op[r.parent_column], r.parent_column
                            filters.append(lambda p, w=want, pc=pc: p.get(pc) == w)
        if not filters:
            return False, None
        pcol = c.foreign_key.split(".")[1]  # type: ignore[union-attr]
        cands = [p.get(pcol) for p in self.rows.get(ptable, [])
                 if all(f(p) for f in filters) and p.get(pcol) is not None
                 and (ptable != tname or p.get(pcol) != own_id)]
        if ptable == tname and (not cands or self.rng.random() < 0.5):
            return True, None
        if not cands:
            return True, None
        return True, (self.zipf_choice(f"{ptable}|{len(cands)}|{cands[0]}", cands) if skew
                      else self.rng.choice(cands))

    def make(self, tname: str, *, skew: bool = False, overrides: dict[str, Any] | None = None,
             nulls: float = 0.05, tries: int = 8) -> dict[str, Any] | None:
        """Generate, check and append one row (None when uniqueness cannot be met)."""
        table = self.tables[tname]
        overrides = overrides or {}
        for attempt in range(tries):
            row: dict[str, Any] = {}
            rid = self.next_id(tname)
            dead_end = False
            for c in self._ordered(table):
                if c.name in overrides:
                    row[c.name] = overrides[c.name]
                elif c.primary_key and not c.foreign_key:
                    row[c.name] = rid if c.type == "integer" else self.fake.uuid4()
                elif c.foreign_key:
                    decided, v = self.route_fk(tname, c, row, skew, rid)
                    if not decided:
                        v = self.pick_parent(tname, c, skew, own_id=rid)
                    if v is None and not c.nullable:
                        if not decided:
                            return None  # no parent rows to point at
                        dead_end = True  # no parent on this route: try other parents
                        break
                    if v is not None and c.nullable and not decided and \
                            self.rng.random() < nulls:
                        v = None
                    row[c.name] = v
                elif (copied := self._implied(tname, c.name, row)) is not None:
                    if c.type in ("date", "datetime") and \
                            (parse_iso(copied) or self.clock) < self._floor(tname, row):
                        dead_end = True  # a slot that started before the patient existed:
                        break  # other parents on the next try
                    row[c.name] = copied
                elif c.nullable and not c.unique and self.rng.random() < nulls and \
                        c.name not in ("name", "title") and c.type not in ("date", "datetime"):
                    row[c.name] = None
                else:
                    row[c.name] = self.value(tname, c, row)
            if dead_end:
                continue
            for rule in ROW_RULES:
                rule(self, tname, row)
            if attempt < tries - 1 and not overrides and self._over_capacity(tname, row):
                continue  # another parent (a free slot), or another state, on the next try
            if not self.ok_unique(tname, row):
                for c in table.columns:  # make unique text columns unique by suffix
                    if (c.unique or any(c.name in g for g in table.unique_together)) and \
                            c.type == "text" and isinstance(row.get(c.name), str) and \
                            not c.enum and not c.foreign_key and c.name not in overrides and \
                            attempt >= 2 and \
                            column_semantic(tname, c) not in ("table_name", "isbn", "barcode"):
                        row[c.name] = _suffix(row[c.name], rid, column_semantic(tname, c))
                if not self.ok_unique(tname, row):
                    continue
            return self.commit(tname, row)
        return None

    def _over_capacity(self, tname: str, row: dict[str, Any]) -> bool:
        """Whether the row would be a second live record of a parent that holds one (a
        second live appointment in a slot, a second active loan of a copy)."""
        for inv in self.invariants("capacity", tname):
            if row.get(inv["column"]) not in inv["holding"] or row.get(inv["fk"]) is None:
                continue
            holding = set(inv["holding"])
            if sum(1 for r in self.rows[tname] if r.get(inv["fk"]) == row[inv["fk"]]
                   and r.get(inv["column"]) in holding) >= inv["limit"]:
                return True
        return False

    def curated_rows(self, tname: str, n: int | None = None) -> int:
        entity = CURATED_TABLES.get(tname) or singular(tname)
        data = CURATED.get(entity, {}).get("rows", [])
        made = 0
        have = {r.get("name") or r.get("code") for r in self.rows[tname]}
        for rec in data:
            if n is not None and made >= n:
                break
            if (rec.get("name") or rec.get("code")) in have:
                continue
            over = {k: v for k, v in rec.items() if k in {c.name for c in
                                                           self.tables[tname].columns}}
            if self.make(tname, overrides=over, nulls=0.0, tries=1) is not None:
                made += 1
        return made


def _numbers(values: list[Any], kind: type) -> list[Any]:
    """A declared enum as numbers of the column's kind; [] when any value is not one."""
    try:
        nums = [kind(float(v)) if kind is int else float(v) for v in values]
    except (TypeError, ValueError, OverflowError):
        return []
    return nums if all(float(n) == float(v) for n, v in zip(nums, values, strict=True)) else []


def _unique_key(row: dict[str, Any], group: tuple[str, ...]) -> tuple[Any, ...]:
    """The hashable value of a unique group: a JSON column (object or array) by its
    canonical text, so two equal objects still collide."""
    values = (row.get(c) for c in group)
    return tuple(json.dumps(v, sort_keys=True, default=str) if isinstance(v, (dict, list)) else v
                 for v in values)


def _suffix(value: str, rid: Any, sem: str) -> str:
    if sem == "email" and "@" in value:
        user, _, dom = value.partition("@")
        return f"{user}{rid}@{dom}"
    if sem in ("url", "file_path", "repo_path"):
        return f"{value.rstrip('/')}-{rid}"
    return f"{value} {rid}"
