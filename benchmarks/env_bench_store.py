"""The benchmark environment of `env_bench.py`: 10 tables, 1,000 seed rows (generated with
random.Random(0)), foreign keys between tables, one read tool (`get_item`, one product row by
primary key) and one write tool (`restock`)."""

from __future__ import annotations

import random
import textwrap
from datetime import date, datetime, timedelta
from typing import Any

from agent_world.envs import EnvSpec

ROW_COUNTS = {  # 1,000 seed rows over 10 tables
    "categories": 20, "suppliers": 30, "warehouses": 10, "customers": 150, "products": 150,
    "inventory": 150, "orders": 150, "order_items": 200, "payments": 90, "reviews": 50,
}



def _col(name: str, type_: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **kw}


def _pk() -> dict[str, Any]:
    return _col("id", "integer", primary_key=True, nullable=False)


def _fk(name: str, target: str, nullable: bool = False) -> dict[str, Any]:
    return _col(name, "integer", foreign_key=target, nullable=nullable)


TABLES: list[dict[str, Any]] = [
    {"name": "categories", "columns": [
        _pk(), _col("name", "text", nullable=False, unique=True),
        _fk("parent_id", "categories.id", nullable=True)]},
    {"name": "suppliers", "columns": [
        _pk(), _col("name", "text", nullable=False), _col("country", "text"),
        _col("email", "text", unique=True), _col("rating", "real")]},
    {"name": "warehouses", "columns": [
        _pk(), _col("code", "text", nullable=False, unique=True), _col("city", "text"),
        _col("capacity", "integer")]},
    {"name": "customers", "columns": [
        _pk(), _col("name", "text", nullable=False), _col("email", "text", unique=True),
        _col("city", "text"), _col("tier", "text", enum=["bronze", "silver", "gold"]),
        _col("created_at", "datetime")]},
    {"name": "products", "columns": [
        _pk(), _col("sku", "text", nullable=False, unique=True),
        _col("name", "text", nullable=False), _fk("category_id", "categories.id"),
        _fk("supplier_id", "suppliers.id"), _col("price", "real", nullable=False),
        _col("active", "boolean", default=True), _col("attributes", "json")]},
    {"name": "inventory", "unique_together": [["product_id", "warehouse_id"]], "columns": [
        _pk(), _fk("product_id", "products.id"), _fk("warehouse_id", "warehouses.id"),
        _col("quantity", "integer", nullable=False, default=0), _col("updated_at", "datetime")]},
    {"name": "orders", "columns": [
        _pk(), _fk("customer_id", "customers.id"),
        _col("status", "text", nullable=False,
             enum=["pending", "paid", "shipped", "delivered", "cancelled"]),
        _col("placed_at", "datetime"), _col("total", "real")]},
    {"name": "order_items", "columns": [
        _pk(), _fk("order_id", "orders.id"), _fk("product_id", "products.id"),
        _col("quantity", "integer", nullable=False), _col("unit_price", "real")]},
    {"name": "payments", "columns": [
        _pk(), _fk("order_id", "orders.id"),
        _col("method", "text", enum=["card", "paypal", "transfer"]),
        _col("amount", "real", nullable=False), _col("paid_on", "date")]},
    {"name": "reviews", "columns": [
        _pk(), _fk("product_id", "products.id"), _fk("customer_id", "customers.id"),
        _col("rating", "integer", nullable=False), _col("body", "text"),
        _col("created_at", "datetime")]},
]

GET_ITEM_SOURCE = textwrap.dedent("""\
    def get_item(ctx, id):
        row = ctx.one("SELECT * FROM products WHERE id = ?", (id,))
        if row is None:
            raise ToolError(f"no item with id {id}")
        return row
    """)

RESTOCK_SOURCE = textwrap.dedent("""\
    def restock(ctx, id, quantity):
        cur = ctx.execute(
            "UPDATE inventory SET quantity = quantity + ?, updated_at = ? WHERE id = ?",
            (quantity, ctx.now(), id))
        if cur.rowcount == 0:
            raise ToolError(f"no inventory record {id}")
        return ctx.one("SELECT id, product_id, warehouse_id, quantity, updated_at "
                       "FROM inventory WHERE id = ?", (id,))
    """)

_WORDS = ("alpha bolt cable delta ember flux garnet harbor iris jade kilo lumen mesa nova onyx "
          "pixel quartz ridge sierra tundra ultra vivid willow xenon yarrow zephyr").split()
_CITIES = ["Lyon", "Osaka", "Austin", "Porto", "Leeds", "Pune", "Quito", "Perth", "Graz", "Cork"]
_FIRST = ["Ana", "Ben", "Chloe", "Dev", "Elif", "Femi", "Goran", "Hana", "Ivo", "Jun", "Kai", "Lea"]
_LAST = ["Ito", "Okafor", "Silva", "Novak", "Berg", "Khan", "Moreau", "Reyes", "Larsen", "Adeyemi"]


def build_rows(rng: random.Random) -> dict[str, list[dict[str, Any]]]:
    n = ROW_COUNTS
    t0 = datetime(2025, 1, 1, 8, 0, 0)

    def stamp(days: int = 365) -> str:
        return (t0 + timedelta(minutes=rng.randrange(days * 24 * 60))).isoformat(timespec="seconds")

    def words(k: int) -> str:
        return " ".join(rng.choice(_WORDS) for _ in range(k))

    rows: dict[str, list[dict[str, Any]]] = {}
    rows["categories"] = [
        {"id": i, "name": f"{_WORDS[(i - 1) % len(_WORDS)].title()} {i}",
         "parent_id": None if i <= 5 else rng.randint(1, 5)}
        for i in range(1, n["categories"] + 1)]
    rows["suppliers"] = [
        {"id": i, "name": f"{words(2).title()} Ltd", "country": rng.choice(["FR", "JP", "US", "PT"]),
         "email": f"sales{i}@supplier{i}.example", "rating": round(rng.uniform(2.5, 5.0), 1)}
        for i in range(1, n["suppliers"] + 1)]
    rows["warehouses"] = [
        {"id": i, "code": f"WH{i:02d}", "city": _CITIES[i - 1], "capacity": rng.randrange(1000, 50000, 500)}
        for i in range(1, n["warehouses"] + 1)]
    rows["customers"] = [
        {"id": i, "name": f"{rng.choice(_FIRST)} {rng.choice(_LAST)}",
         "email": f"customer{i}@mail.example", "city": rng.choice(_CITIES),
         "tier": rng.choice(["bronze", "bronze", "silver", "gold"]), "created_at": stamp()}
        for i in range(1, n["customers"] + 1)]
    rows["products"] = [
        {"id": i, "sku": f"SKU-{i:05d}", "name": words(3).title(),
         "category_id": rng.randint(1, n["categories"]), "supplier_id": rng.randint(1, n["suppliers"]),
         "price": round(rng.uniform(2, 500), 2), "active": rng.random() > 0.1,
         "attributes": {"color": rng.choice(["red", "blue", "black", "white"]),
                        "weight_g": rng.randint(50, 5000)}}
        for i in range(1, n["products"] + 1)]
    pairs = rng.sample([(p, w) for p in range(1, n["products"] + 1)
                        for w in range(1, n["warehouses"] + 1)], n["inventory"])
    rows["inventory"] = [
        {"id": i, "product_id": p, "warehouse_id": w, "quantity": rng.randint(0, 400),
         "updated_at": stamp()}
        for i, (p, w) in enumerate(pairs, start=1)]
    rows["orders"] = [
        {"id": i, "customer_id": rng.randint(1, n["customers"]),
         "status": rng.choice(["pending", "paid", "shipped", "delivered", "cancelled"]),
         "placed_at": stamp(), "total": 0.0}
        for i in range(1, n["orders"] + 1)]
    prices = {p["id"]: p["price"] for p in rows["products"]}
    items = []
    for i in range(1, n["order_items"] + 1):
        # every order gets an item first, then the rest land on random orders
        order = i if i <= n["orders"] else rng.randint(1, n["orders"])
        product = rng.randint(1, n["products"])
        items.append({"id": i, "order_id": order, "product_id": product,
                      "quantity": rng.randint(1, 5), "unit_price": prices[product]})
    rows["order_items"] = items
    totals: dict[int, float] = {}
    for it in items:
        totals[it["order_id"]] = totals.get(it["order_id"], 0.0) + it["quantity"] * it["unit_price"]
    for o in rows["orders"]:
        o["total"] = round(totals.get(o["id"], 0.0), 2)
    paid = rng.sample(range(1, n["orders"] + 1), n["payments"])
    rows["payments"] = [
        {"id": i, "order_id": o, "method": rng.choice(["card", "paypal", "transfer"]),
         "amount": rows["orders"][o - 1]["total"],
         "paid_on": (date(2025, 1, 1) + timedelta(days=rng.randrange(365))).isoformat()}
        for i, o in enumerate(paid, start=1)]
    rows["reviews"] = [
        {"id": i, "product_id": rng.randint(1, n["products"]),
         "customer_id": rng.randint(1, n["customers"]), "rating": rng.randint(1, 5),
         "body": words(rng.randint(4, 12)).capitalize() + ".", "created_at": stamp()}
        for i in range(1, n["reviews"] + 1)]
    return rows


def build_spec() -> EnvSpec:
    rows = build_rows(random.Random(0))
    assert sum(len(r) for r in rows.values()) == 1000 and len(TABLES) == 10
    return EnvSpec.from_dict({
        "name": "bench_store",
        "theme": {"name": "Benchmark store", "description": "Catalog, stock and orders.",
                  "taxonomy": {"l1": "Benchmarks", "l2": "Engine", "l3": "bench_store"}},
        "tables": TABLES,
        "rows": rows,
        "tools": [
            {"name": "get_item", "description": "One product (item) by its id.",
             "parameters": {"type": "object", "additionalProperties": False, "required": ["id"],
                            "properties": {"id": {"type": "integer", "minimum": 1}}},
             "source": GET_ITEM_SOURCE, "mutates": False},
            {"name": "restock", "description": "Add stock to an inventory record.",
             "parameters": {"type": "object", "additionalProperties": False,
                            "required": ["id", "quantity"],
                            "properties": {"id": {"type": "integer", "minimum": 1},
                                           "quantity": {"type": "integer", "minimum": 1}}},
             "source": RESTOCK_SOURCE, "mutates": True},
        ],
        "provenance": {"created_by": "benchmarks/env_bench.py"},
    }, origin="env_bench")
