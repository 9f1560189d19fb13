"""A realistic large environment for `env_bench.py`: an airline with 12 tables, ~9,000 flights and
~40,000 rows (a database over 3 MB), and tools that run 3-5 queries each, as customer-service
domains do. Built in code with a fixed seed; `in_process` runs the same tool code on one
persistent in-process SQLite connection, the baseline the engine is compared with."""

from __future__ import annotations

import random
import sqlite3
import textwrap
from datetime import date, timedelta
from pathlib import Path
from typing import Any

from agent_world.envs import EnvSpec

N_FLIGHTS = 9000
N_CUSTOMERS = 6000
N_RESERVATIONS = 8000


def _col(name: str, type_: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **kw}


def _pk() -> dict[str, Any]:
    return _col("id", "integer", primary_key=True, nullable=False)


def _fk(name: str, target: str) -> dict[str, Any]:
    return _col(name, "integer", nullable=False, foreign_key=f"{target}.id")


TABLES = [
    ("airports", [_pk(), _col("code", "text", unique=True, nullable=False), _col("city", "text"),
                  _col("country", "text")]),
    ("aircraft", [_pk(), _col("model", "text"), _col("seats", "integer", nullable=False)]),
    ("routes", [_pk(), _fk("origin_id", "airports"), _fk("destination_id", "airports"),
                _col("minutes", "integer")]),
    ("flights", [_pk(), _fk("route_id", "routes"), _fk("aircraft_id", "aircraft"),
                 _col("number", "text", nullable=False), _col("date", "date", nullable=False),
                 _col("seats", "integer", nullable=False),
                 _col("booked", "integer", nullable=False, default=0),
                 _col("price", "real", nullable=False),
                 _col("status", "text", enum=["scheduled", "delayed", "cancelled"],
                      default="scheduled")]),
    ("customers", [_pk(), _col("name", "text", nullable=False), _col("email", "text"),
                   _col("phone", "text"), _col("address", "text"), _col("tier", "text")]),
    ("loyalty", [_pk(), _fk("customer_id", "customers"), _col("miles", "integer")]),
    ("reservations", [_pk(), _fk("customer_id", "customers"), _fk("flight_id", "flights"),
                      _col("ref", "text", unique=True), _col("status", "text"),
                      _col("passengers", "integer"), _col("total", "real"),
                      _col("created_at", "datetime")]),
    ("passengers", [_pk(), _fk("reservation_id", "reservations"), _col("name", "text"),
                    _col("born", "date")]),
    ("payments", [_pk(), _fk("reservation_id", "reservations"), _col("amount", "real"),
                  _col("method", "text"), _col("paid_at", "datetime")]),
    ("baggage", [_pk(), _fk("reservation_id", "reservations"), _col("kg", "real")]),
    ("crew", [_pk(), _col("name", "text"), _col("role", "text")]),
    ("crew_assignments", [_pk(), _fk("flight_id", "flights"), _fk("crew_id", "crew")]),
]

# lookup columns a real port indexes (SQLite does not index foreign keys by itself)
INDEXED = {"passengers": ["reservation_id"], "payments": ["reservation_id"],
           "reservations": ["customer_id"], "flights": ["route_id"]}

TOOLS = {
    "reservation_details": (False, {"reservation_id": {"type": "integer"}}, '''
        def reservation_details(ctx, reservation_id):
            r = ctx.get_or_fail("reservations", id=reservation_id)
            f = ctx.one("SELECT f.number, f.date, f.status, a.code AS origin, b.code AS dest "
                        "FROM flights f JOIN routes r ON r.id = f.route_id "
                        "JOIN airports a ON a.id = r.origin_id "
                        "JOIN airports b ON b.id = r.destination_id WHERE f.id = ?",
                        (r["flight_id"],))
            people = ctx.query("SELECT name, born FROM passengers WHERE reservation_id = ? "
                               "ORDER BY id", (reservation_id,))
            paid = ctx.db.scalar("SELECT coalesce(sum(amount), 0) FROM payments "
                                 "WHERE reservation_id = ?", (reservation_id,))
            return {"ref": r["ref"], "status": r["status"], "flight": dict(f),
                    "passengers": people, "paid": paid}
        '''),
    "book": (True, {"customer_id": {"type": "integer"}, "flight_id": {"type": "integer"},
                    "passengers": {"type": "integer", "minimum": 1, "maximum": 4}}, '''
        def book(ctx, customer_id, flight_id, passengers):
            ctx.get_or_fail("customers", id=customer_id)
            f = ctx.get_or_fail("flights", id=flight_id)
            if f["status"] == "cancelled" or f["booked"] + passengers > f["seats"]:
                raise ToolError("flight is not bookable")
            ctx.execute("UPDATE flights SET booked = booked + ? WHERE id = ?",
                        (passengers, flight_id))
            total = round(f["price"] * passengers, 2)
            rid = ctx.execute(
                "INSERT INTO reservations (customer_id, flight_id, ref, status, passengers, "
                "total, created_at) VALUES (?, ?, ?, 'booked', ?, ?, ?)",
                (customer_id, flight_id, ctx.new_id("R"), passengers, total, ctx.now())).lastrowid
            ctx.execute("INSERT INTO payments (reservation_id, amount, method, paid_at) "
                        "VALUES (?, ?, 'card', ?)", (rid, total, ctx.now()))
            return {"reservation_id": rid, "total": total}
        '''),
}


def build_rows(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    def text(k: int) -> str:
        return " ".join(rng.choice(["north", "wind", "blue", "harbor", "lane", "park", "hill",
                                    "river", "stone", "field", "grove", "bay"]) for _ in range(k))

    rows: dict[str, list[dict[str, Any]]] = {}
    rows["airports"] = [{"id": i, "code": f"A{i:02d}", "city": text(2), "country": text(1)}
                        for i in range(1, 101)]
    rows["aircraft"] = [{"id": i, "model": text(2), "seats": rng.choice([120, 180, 240])}
                        for i in range(1, 61)]
    rows["routes"] = []
    for i in range(1, 401):
        a, b = rng.sample(range(1, 101), 2)
        rows["routes"].append({"id": i, "origin_id": a, "destination_id": b,
                               "minutes": rng.randint(45, 600)})
    start = date(2026, 3, 1)
    rows["flights"] = [{"id": i, "route_id": rng.randint(1, 400),
                        "aircraft_id": rng.randint(1, 60), "number": f"AW{i:05d}",
                        "date": (start + timedelta(days=i % 90)).isoformat(),
                        "seats": 180, "booked": rng.randint(0, 120),
                        "price": round(rng.uniform(59, 899), 2), "status": "scheduled"}
                       for i in range(1, N_FLIGHTS + 1)]
    rows["customers"] = [{"id": i, "name": text(2).title(), "email": f"c{i}@example.com",
                          "phone": f"+1 555 {i:07d}", "address": text(12),
                          "tier": rng.choice(["basic", "silver", "gold"])}
                         for i in range(1, N_CUSTOMERS + 1)]
    rows["loyalty"] = [{"id": i, "customer_id": i, "miles": rng.randint(0, 90000)}
                       for i in range(1, N_CUSTOMERS + 1)]
    rows["reservations"], rows["passengers"], rows["payments"] = [], [], []
    rows["baggage"] = []
    for i in range(1, N_RESERVATIONS + 1):
        n = rng.randint(1, 3)
        rows["reservations"].append({
            "id": i, "customer_id": rng.randint(1, N_CUSTOMERS),
            "flight_id": rng.randint(1, N_FLIGHTS), "ref": f"R{i:06d}", "status": "booked",
            "passengers": n, "total": round(rng.uniform(80, 2400), 2),
            "created_at": "2026-02-01T10:00:00"})
        for _ in range(n):
            rows["passengers"].append({"id": len(rows["passengers"]) + 1, "reservation_id": i,
                                       "name": text(2).title(), "born": "1990-05-17"})
        rows["payments"].append({"id": i, "reservation_id": i,
                                 "amount": rows["reservations"][-1]["total"], "method": "card",
                                 "paid_at": "2026-02-01T10:00:00"})
        if rng.random() < 0.6:
            rows["baggage"].append({"id": len(rows["baggage"]) + 1, "reservation_id": i,
                                    "kg": round(rng.uniform(5, 30), 1)})
    rows["crew"] = [{"id": i, "name": text(2).title(), "role": rng.choice(["pilot", "cabin"])}
                    for i in range(1, 301)]
    rows["crew_assignments"] = [{"id": i, "flight_id": 1 + (i * 7) % N_FLIGHTS,
                                 "crew_id": 1 + i % 300} for i in range(1, 20001)]
    return rows


def build_spec() -> EnvSpec:
    return EnvSpec.from_dict({
        "name": "bench_airline_large",
        "theme": {"name": "Airline (large benchmark)",
                  "taxonomy": {"l1": "Travel", "l2": "Airlines", "l3": "bench_airline_large"}},
        "tables": [{"name": n, "columns": cols,
                    "indexes": [{"columns": [c]} for c in INDEXED.get(n, [])]}
                   for n, cols in TABLES],
        "rows": build_rows(random.Random(0)),
        "tools": [{"name": name, "description": f"{name} (benchmark tool)", "mutates": mutates,
                   "parameters": {"type": "object", "properties": props,
                                  "required": list(props)},
                   "source": textwrap.dedent(src).strip() + "\n"}
                  for name, (mutates, props, src) in TOOLS.items()],
    }, origin="large benchmark spec")


class InProcess:
    """The baseline: the same tool functions on one persistent in-process SQLite connection,
    one transaction per call, the engine's own ToolContext and row type."""

    def __init__(self, spec: EnvSpec, template: Path, workdir: Path):
        from agent_world.envs import tool_context, tool_sql

        self.worker = tool_context
        path = workdir / "inprocess.sqlite"
        src = sqlite3.connect(template)
        self.conn = sqlite3.connect(path, isolation_level=None,
                                    detect_types=sqlite3.PARSE_DECLTYPES)
        src.backup(self.conn)
        src.close()
        self.conn.row_factory = tool_sql._row
        self.conn.execute("PRAGMA foreign_keys=ON")
        self.spec = spec
        self.counters: dict[str, int] = {}
        self.fns: dict[str, Any] = {}
        for t in spec.tools:
            ns: dict[str, Any] = {"ToolError": tool_context.ToolError}
            exec(compile(t.source, t.name, "exec"), ns)
            self.fns[t.name] = (ns[t.name], t.mutates)

    def step(self, tool: str, args: dict[str, Any]) -> Any:
        fn, mutates = self.fns[tool]
        self.conn.execute("BEGIN IMMEDIATE" if mutates else "BEGIN")
        ctx = self.worker.ToolContext(self.conn, 0, 0, self.spec.clock_start, self.counters)
        try:
            result = fn(ctx, **args)
        except BaseException:
            self.conn.rollback()
            raise
        self.conn.commit()
        for prefix, n in ctx.issued.items():  # ids advance as in the engine
            self.counters[prefix] = self.counters.get(prefix, 0) + n
        return result

    def close(self) -> None:
        self.conn.close()
