"""The read tools of the `ecommerce` example environment (toolkit form).

Each @tool function becomes one tool (see agent_world.envs.toolkit): its argument schema comes
from the type hints and the docstring, and the helpers it calls (helpers.py) are found and
shipped in the spec's shared `helpers` automatically. The worker runs the code with `ctx`
(database, clock, ids) and `ToolError`.
"""

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from agent_world.envs.toolkit import Ctx, ToolError, tool

from .helpers import _coupon_discount, _order


class ItemsItem(TypedDict):
    product_id: Annotated[int, Field(ge=1)]
    quantity: Annotated[int, Field(ge=1, le=10, description="Units (1-10 per product).")]


@tool()
def list_categories(ctx: Ctx, parent: Annotated[str, Field(min_length=1)] = None):
    """List product categories (departments and their sub-categories) with the number of active
    products in each. Give a parent department to list only its sub-categories.

    Args:
        parent: Department name, e.g. 'Electronics'.
    """
    sql = ("SELECT c.category_id, c.name, c.parent_id, p.name AS parent_name, "
           "(SELECT count(*) FROM products pr JOIN categories pc ON pc.category_id = "
           "pr.category_id WHERE pr.status = 'active' AND (pc.category_id = c.category_id "
           "OR pc.parent_id = c.category_id)) AS active_products "
           "FROM categories c LEFT JOIN categories p ON p.category_id = c.parent_id")
    params = ()
    if parent is not None:
        top = ctx.one("SELECT category_id FROM categories WHERE lower(name) = lower(?)",
                      (parent.strip(),))
        if top is None:
            raise ToolError(f"Unknown category {parent!r}; call list_categories without a "
                            "parent to see them all.")
        sql += " WHERE c.parent_id = ?"
        params = (top["category_id"],)
    rows = ctx.query(sql + " ORDER BY coalesce(c.parent_id, c.category_id), c.parent_id IS "
                     "NOT NULL, c.name", params)
    if not rows:
        raise ToolError(f"Category {parent!r} has no sub-categories.")
    return rows


@tool()
def search_products(
        ctx: Ctx,
        query: str = None,
        category: Annotated[str, Field(min_length=1)] = None,
        min_price: Annotated[float, Field(ge=0)] = None,
        max_price: Annotated[float, Field(ge=0)] = None,
        in_stock_only: bool = False,
        sort: Literal["relevance", "price_asc", "price_desc", "rating"] = "relevance",
        limit: Annotated[int, Field(ge=1, le=50)] = 10,
):
    """Search the active catalog by keywords (matched against name, brand and category; every word
    must match), category (a department includes its sub-categories), price range and stock.
    Returns product summaries; use get_product for details.

    Args:
        query: Keywords, e.g. 'noise canceling'.
        category: Category or department name, e.g. 'Books'.
        min_price: Lowest price, USD.
        max_price: Highest price, USD.
        in_stock_only: Leave out products with no stock.
        sort: Result order.
        limit: Maximum number of results.
    """
    if min_price is not None and max_price is not None and min_price > max_price:
        raise ToolError(f"min_price ({min_price}) is greater than max_price ({max_price}).")
    where, params = ["p.status = 'active'"], []
    if category is not None:
        cat = ctx.one("SELECT category_id FROM categories WHERE lower(name) = lower(?)",
                      (category.strip(),))
        if cat is None:
            names = ", ".join(r["name"] for r in ctx.query(
                "SELECT name FROM categories ORDER BY category_id"))
            raise ToolError(f"Unknown category {category!r}; categories: {names}.")
        where.append("(c.category_id = ? OR c.parent_id = ?)")
        params += [cat["category_id"], cat["category_id"]]
    words = [w for w in (query or "").lower().split() if w]
    for w in words:
        where.append("(lower(p.name) LIKE ? OR lower(p.brand) LIKE ? OR lower(c.name) LIKE ?)")
        params += [f"%{w}%"] * 3
    if min_price is not None:
        where.append("p.price >= ?")
        params.append(min_price)
    if max_price is not None:
        where.append("p.price <= ?")
        params.append(max_price)
    if in_stock_only:
        where.append("p.stock_quantity > 0")
    order = {"relevance": "p.rating DESC, p.product_id", "price_asc": "p.price, p.product_id",
             "price_desc": "p.price DESC, p.product_id",
             "rating": "p.rating DESC, p.review_count DESC, p.product_id"}[sort]
    if sort == "relevance" and words:
        order = "(lower(p.name) LIKE ?) DESC, " + order
        params.append(f"%{words[0]}%")
    rows = ctx.query(
        "SELECT p.product_id, p.sku, p.name, p.brand, c.name AS category, p.price, p.rating, "
        "p.review_count, p.stock_quantity > 0 AS in_stock FROM products p "
        "JOIN categories c ON c.category_id = p.category_id WHERE " + " AND ".join(where)
        + " ORDER BY " + order + " LIMIT ?", [*params, limit])
    for r in rows:
        r["in_stock"] = bool(r["in_stock"])
    return rows


@tool(require_any=('product_id', 'sku'))
def get_product(
        ctx: Ctx,
        product_id: Annotated[int, Field(ge=1)] = None,
        sku: Annotated[str, Field(min_length=3)] = None,
):
    """Full details of one product by id or SKU: price, stock, restock date, status, category path,
    rating and whether it can be returned.

    Args:
        product_id: Product id.
        sku: SKU, e.g. 'AUD-SON-1001'.
    """
    if product_id is None and sku is None:
        raise ToolError("Give a product_id or a sku.")
    sql = ("SELECT p.*, c.name AS category, pc.name AS parent_category FROM products p "
           "JOIN categories c ON c.category_id = p.category_id "
           "LEFT JOIN categories pc ON pc.category_id = c.parent_id ")
    if product_id is not None:
        row = ctx.one(sql + "WHERE p.product_id = ?", (product_id,))
    else:
        row = ctx.one(sql + "WHERE p.sku = ?", (sku.strip().upper(),))
    if row is None:
        who = f"id {product_id}" if product_id is not None else f"sku {sku!r}"
        raise ToolError(f"No product with {who}.")
    row["returnable"] = bool(row["returnable"])
    row["in_stock"] = row["stock_quantity"] > 0
    return row


@tool()
def check_inventory(
        ctx: Ctx,
        product_ids: Annotated[list[Annotated[int, Field(ge=1)]], Field(min_length=1, max_length=20, json_schema_extra={"uniqueItems": True})],
):
    """Stock level and availability (in_stock, low_stock under 5 units, out_of_stock with expected
    restock date, discontinued) of up to 20 products at once.

    Args:
        product_ids: Product ids to check.
    """
    marks = ", ".join("?" for _ in product_ids)
    rows = {r["product_id"]: r for r in ctx.query(
        f"SELECT product_id, sku, name, status, stock_quantity, restock_date FROM products "
        f"WHERE product_id IN ({marks})", list(product_ids))}
    missing = [pid for pid in product_ids if pid not in rows]
    if missing:
        raise ToolError(f"Unknown product id(s): {', '.join(map(str, missing))}.")
    out = []
    for pid in dict.fromkeys(product_ids):
        r = rows[pid]
        if r["status"] == "discontinued":
            r["availability"] = "discontinued"
        elif r["stock_quantity"] == 0:
            r["availability"] = "out_of_stock"
        elif r["stock_quantity"] < 5:
            r["availability"] = "low_stock"
        else:
            r["availability"] = "in_stock"
        out.append(r)
    return out


@tool(require_any=('customer_id', 'email'))
def get_customer(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)] = None,
        email: Annotated[str, Field(min_length=3)] = None,
):
    """Look up a customer by id or email: profile, membership (plus members ship free), whether a
    card is saved, saved addresses (default first) and number of orders.

    Args:
        customer_id: Customer id.
        email: Email address on file (case-insensitive).
    """
    if customer_id is None and email is None:
        raise ToolError("Give a customer_id or an email address.")
    if customer_id is not None:
        c = ctx.one("SELECT * FROM customers WHERE customer_id = ?", (customer_id,))
    else:
        c = ctx.one("SELECT * FROM customers WHERE lower(email) = lower(?)", (email.strip(),))
    if c is None:
        who = f"id {customer_id}" if customer_id is not None else f"email {email!r}"
        raise ToolError(f"No customer with {who}.")
    c["addresses"] = ctx.query(
        "SELECT address_id, label, recipient, line1, line2, city, state, postal_code, "
        "country, is_default FROM addresses WHERE customer_id = ? "
        "ORDER BY is_default DESC, address_id", (c["customer_id"],))
    for a in c["addresses"]:
        a["is_default"] = bool(a["is_default"])
    c["order_count"] = ctx.db.scalar("SELECT count(*) FROM orders WHERE customer_id = ?",
                                     (c["customer_id"],))
    return c


@tool()
def list_orders(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)],
        status: Literal["pending", "processing", "shipped", "delivered", "cancelled"] = None,
        limit: Annotated[int, Field(ge=1, le=100)] = 20,
):
    """A customer's orders, newest first, with status, total and item count. Optionally filter by
    status.

    Args:
        customer_id: Customer id.
        status: Only orders in this status.
        limit: Maximum number of orders.
    """
    if ctx.one("SELECT customer_id FROM customers WHERE customer_id = ?", (customer_id,)) is None:
        raise ToolError(f"No customer with id {customer_id}.")
    sql = ("SELECT o.order_id, o.status, o.placed_at, o.total, o.coupon_code, "
           "(SELECT sum(quantity) FROM order_items i WHERE i.order_id = o.order_id) AS items "
           "FROM orders o WHERE o.customer_id = ?")
    params = [customer_id]
    if status:
        sql += " AND o.status = ?"
        params.append(status)
    return ctx.query(sql + " ORDER BY o.placed_at DESC LIMIT ?", [*params, limit])


@tool()
def get_order(ctx: Ctx, order_id: Annotated[str, Field(pattern=r"^[A-Za-z]{3}-[0-9A-Fa-f]{8}$")]):
    """Everything about one order: status and dates, carrier and tracking number, items (with
    quantities already returned and whether they are returnable), price breakdown, shipping
    address, payments/refunds and returns.

    Args:
        order_id: Order id such as 'ORD-3F9A2C71' (case-insensitive).
    """
    order = _order(ctx, order_id)
    oid = order["order_id"]
    order["items"] = ctx.query(
        "SELECT i.order_item_id, i.product_id, p.name, p.sku, i.quantity, i.unit_price, "
        "round(i.quantity * i.unit_price, 2) AS line_total, i.quantity_returned, p.returnable "
        "FROM order_items i JOIN products p ON p.product_id = i.product_id "
        "WHERE i.order_id = ? ORDER BY i.order_item_id", (oid,))
    for item in order["items"]:
        item["returnable"] = bool(item["returnable"])
    order["shipping_address"] = ctx.one(
        "SELECT address_id, recipient, line1, line2, city, state, postal_code, country "
        "FROM addresses WHERE address_id = ?", (order["shipping_address_id"],))
    order["payments"] = ctx.query(
        "SELECT payment_id, kind, method, amount, card_last4, created_at FROM payments "
        "WHERE order_id = ? ORDER BY created_at, payment_id", (oid,))
    order["returns"] = ctx.query(
        "SELECT r.return_id, i.product_id, r.quantity, r.reason, r.status, r.refund_amount, "
        "r.created_at FROM returns r JOIN order_items i ON i.order_item_id = r.order_item_id "
        "WHERE i.order_id = ? ORDER BY r.created_at", (oid,))
    return order


@tool()
def validate_coupon(
        ctx: Ctx,
        code: Annotated[str, Field(min_length=1)],
        items: Annotated[list[ItemsItem], Field(min_length=1, max_length=20)],
        customer_id: Annotated[int, Field(ge=1)] = None,
):
    """Check whether a coupon code applies to a prospective cart and what it would save, without
    placing an order. Returns valid=false with the reason when a rule fails (inactive, not yet
    valid, expired, usage limit reached, minimum subtotal, category).

    Args:
        code: Coupon code.
        items: Products and quantities, each product listed once.
        customer_id: Customer the cart is for (optional).
    """
    lines, subtotal = [], 0.0
    for item in items:
        p = ctx.one("SELECT p.product_id, p.price, p.category_id, c.parent_id FROM products p "
                    "JOIN categories c ON c.category_id = p.category_id "
                    "WHERE p.product_id = ?", (item["product_id"],))
        if p is None:
            raise ToolError(f"Unknown product id {item['product_id']}.")
        lines.append({**p, "unit_price": p["price"], "quantity": item["quantity"]})
        subtotal += p["price"] * item["quantity"]
    subtotal = round(subtotal, 2)
    try:
        coupon, discount = _coupon_discount(ctx, code, lines, subtotal)
    except ToolError as exc:
        return {"code": code.strip().upper(), "valid": False, "reason": str(exc),
                "subtotal": subtotal, "discount": 0.0}
    return {"code": coupon["code"], "valid": True, "description": coupon["description"],
            "subtotal": subtotal, "discount": discount,
            "subtotal_after_discount": round(subtotal - discount, 2)}
