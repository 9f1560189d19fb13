"""Tool implementations of the `ecommerce` example environment (authoring module).

Each @tool function here becomes one tool (toolkit form, see agent_world.envs.toolkit): its
argument schema comes from the type hints and the docstring, and the helpers it calls are found
and shipped in the spec's shared `helpers` automatically. The worker runs the code with `ctx`
(database, clock, ids) and `ToolError`.
The pure helpers (`_order_totals`, `_return_refund`) are also used by the seed-data generator,
so seeded orders follow exactly the rules the tools apply.
"""


from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from agent_world.envs.toolkit import Ctx, ToolError, tool


class ItemsItem(TypedDict):
    product_id: Annotated[int, Field(ge=1)]
    quantity: Annotated[int, Field(ge=1, le=10, description="Units (1-10 per product).")]


# ---- helpers (shipped once, in the spec's helpers) ---------------------------------------------
def _order_totals(subtotal, discount, state, membership, shipping_method):
    """Shipping, sales tax and total of an order (pure: no database access)."""
    rates = {  # state base sales-tax rates, percent
        "AL": 4.0, "AK": 0.0, "AZ": 5.6, "AR": 6.5, "CA": 7.25, "CO": 2.9, "CT": 6.35,
        "DE": 0.0, "DC": 6.0, "FL": 6.0, "GA": 4.0, "HI": 4.0, "ID": 6.0, "IL": 6.25,
        "IN": 7.0, "IA": 6.0, "KS": 6.5, "KY": 6.0, "LA": 5.0, "ME": 5.5, "MD": 6.0,
        "MA": 6.25, "MI": 6.0, "MN": 6.875, "MS": 7.0, "MO": 4.225, "MT": 0.0, "NE": 5.5,
        "NV": 6.85, "NH": 0.0, "NJ": 6.625, "NM": 4.875, "NY": 4.0, "NC": 4.75, "ND": 5.0,
        "OH": 5.75, "OK": 4.5, "OR": 0.0, "PA": 6.0, "RI": 7.0, "SC": 6.0, "SD": 4.2,
        "TN": 7.0, "TX": 6.25, "UT": 6.1, "VT": 6.0, "VA": 5.3, "WA": 6.5, "WV": 6.0,
        "WI": 5.0, "WY": 4.0,
    }
    merchandise = round(subtotal - discount, 2)
    if shipping_method == "express":
        shipping = 7.99 if membership == "plus" else 14.99
    else:
        shipping = 0.0 if membership == "plus" or merchandise >= 50 else 5.99
    tax = round(merchandise * rates.get(state, 0.0) / 100, 2)
    return {"subtotal": round(subtotal, 2), "discount": round(discount, 2),
            "shipping_fee": shipping, "tax": tax,
            "total": round(merchandise + shipping + tax, 2)}


def _return_refund(line_amount, subtotal, discount, tax, reason):
    """Refund for returning `line_amount` worth of an order: its share of the discount and
    tax; shipping is not refunded and a $6.99 return label is deducted for change-of-mind."""
    share = line_amount / subtotal if subtotal else 0.0
    refund = line_amount - discount * share + tax * share
    if reason == "no_longer_needed":
        refund -= 6.99
    return round(max(0.0, refund), 2)


def _coupon_discount(ctx, code, lines, subtotal):
    """(coupon row, discount) for a cart, or ToolError saying why the coupon does not apply.
    `lines`: dicts with category_id, parent_id, unit_price and quantity."""
    coupon = ctx.one("SELECT * FROM coupons WHERE code = ?", (code.strip().upper(),))
    if coupon is None:
        raise ToolError(f"Unknown coupon code {code!r}.")
    today = ctx.today()
    if not coupon["active"]:
        raise ToolError(f"Coupon {coupon['code']} is no longer active.")
    if today < coupon["valid_from"]:
        raise ToolError(f"Coupon {coupon['code']} is not valid before {coupon['valid_from']}.")
    if today > coupon["valid_until"]:
        raise ToolError(f"Coupon {coupon['code']} expired on {coupon['valid_until']}.")
    if coupon["max_uses"] is not None and coupon["times_used"] >= coupon["max_uses"]:
        raise ToolError(f"Coupon {coupon['code']} has reached its usage limit.")
    if subtotal < coupon["min_order_total"]:
        raise ToolError(f"Coupon {coupon['code']} needs an order subtotal of at least "
                        f"${coupon['min_order_total']:.2f} (this one is ${subtotal:.2f}).")
    eligible = subtotal
    if coupon["category_id"] is not None:
        cat = coupon["category_id"]
        eligible = sum(li["unit_price"] * li["quantity"] for li in lines
                       if cat in (li["category_id"], li["parent_id"]))
        if eligible <= 0:
            name = ctx.one("SELECT name FROM categories WHERE category_id = ?", (cat,))["name"]
            raise ToolError(f"Coupon {coupon['code']} only applies to {name} products, and "
                            "there are none in this order.")
    if coupon["discount_type"] == "percent":
        discount = eligible * coupon["discount_value"] / 100
    else:
        discount = min(coupon["discount_value"], eligible)
    return coupon, round(discount, 2)


def _order(ctx, order_id):
    """The order row, or ToolError if there is none."""
    oid = str(order_id).strip().upper()
    order = ctx.one("SELECT * FROM orders WHERE order_id = ?", (oid,))
    if order is None:
        raise ToolError(f"No order with id {oid!r}.")
    return order


# ---- read tools ---------------------------------------------------------------------------------
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


# ---- write tools --------------------------------------------------------------------------------
@tool(write=True)
def place_order(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)],
        items: Annotated[list[ItemsItem], Field(min_length=1, max_length=20)],
        shipping_address_id: Annotated[int, Field(ge=1)],
        payment_method: Literal["credit_card", "paypal"],
        shipping_method: Literal["standard", "express"] = "standard",
        coupon_code: Annotated[str, Field(min_length=1)] = None,
):
    """Place an order for a customer and charge it. Checks that every product is active and in
    stock, the address is the customer's, the coupon (optional) applies and a credit_card
    payment has a saved card. Pricing: coupon discount, then shipping (standard free for plus
    members or from $50 after discount, else $5.99; express $14.99, $7.99 for plus), then the
    destination state's sales tax. Reserves the stock; the order starts as 'pending'.

    Args:
        customer_id: Customer id.
        items: Products and quantities, each product listed once.
        shipping_address_id: One of the customer's address ids.
        payment_method: credit_card charges the saved card.
        shipping_method: Delivery speed.
        coupon_code: Optional promotion code.
    """
    customer = ctx.one("SELECT * FROM customers WHERE customer_id = ?", (customer_id,))
    if customer is None:
        raise ToolError(f"No customer with id {customer_id}.")
    address = ctx.one("SELECT * FROM addresses WHERE address_id = ?", (shipping_address_id,))
    if address is None or address["customer_id"] != customer_id:
        raise ToolError(f"Address {shipping_address_id} is not one of customer {customer_id}'s "
                        "addresses.")
    if payment_method == "credit_card" and not customer["saved_card_last4"]:
        raise ToolError("The customer has no saved credit card; pay with paypal instead.")
    ids = [i["product_id"] for i in items]
    if len(set(ids)) != len(ids):
        raise ToolError("List each product once, with its total quantity.")
    lines, subtotal = [], 0.0
    for item in items:
        p = ctx.one("SELECT p.*, c.parent_id FROM products p JOIN categories c "
                    "ON c.category_id = p.category_id WHERE p.product_id = ?",
                    (item["product_id"],))
        if p is None:
            raise ToolError(f"Unknown product id {item['product_id']}.")
        if p["status"] != "active":
            raise ToolError(f"{p['name']} (product {p['product_id']}) is discontinued.")
        if p["stock_quantity"] < item["quantity"]:
            when = f"; restock expected {p['restock_date']}" if p["restock_date"] else ""
            raise ToolError(f"Only {p['stock_quantity']} of {p['name']} (product "
                            f"{p['product_id']}) in stock, {item['quantity']} requested{when}.")
        lines.append({**p, "unit_price": p["price"], "quantity": item["quantity"]})
        subtotal += p["price"] * item["quantity"]
    subtotal = round(subtotal, 2)
    coupon, discount = None, 0.0
    if coupon_code:
        coupon, discount = _coupon_discount(ctx, coupon_code, lines, subtotal)
    totals = _order_totals(subtotal, discount, address["state"], customer["membership"],
                           shipping_method)
    order_id = ctx.new_id("ORD-")
    now = ctx.now()
    ctx.execute(
        "INSERT INTO orders (order_id, customer_id, shipping_address_id, status, "
        "shipping_method, coupon_code, subtotal, discount, shipping_fee, tax, total, placed_at) "
        "VALUES (?, ?, ?, 'pending', ?, ?, ?, ?, ?, ?, ?, ?)",
        (order_id, customer_id, shipping_address_id, shipping_method,
         coupon["code"] if coupon else None, totals["subtotal"], totals["discount"],
         totals["shipping_fee"], totals["tax"], totals["total"], now))
    for li in lines:
        ctx.execute("INSERT INTO order_items (order_id, product_id, quantity, unit_price, "
                    "quantity_returned) VALUES (?, ?, ?, ?, 0)",
                    (order_id, li["product_id"], li["quantity"], li["unit_price"]))
        ctx.execute("UPDATE products SET stock_quantity = stock_quantity - ? "
                    "WHERE product_id = ?", (li["quantity"], li["product_id"]))
    if coupon:
        ctx.execute("UPDATE coupons SET times_used = times_used + 1 WHERE code = ?",
                    (coupon["code"],))
    payment_id = ctx.new_id("PAY-")
    ctx.execute("INSERT INTO payments (payment_id, order_id, kind, method, amount, card_last4, "
                "created_at) VALUES (?, ?, 'charge', ?, ?, ?, ?)",
                (payment_id, order_id, payment_method, totals["total"],
                 customer["saved_card_last4"] if payment_method == "credit_card" else None, now))
    return {"order_id": order_id, "status": "pending", **totals,
            "items": [{"product_id": li["product_id"], "name": li["name"],
                       "quantity": li["quantity"], "unit_price": li["unit_price"]}
                      for li in lines],
            "coupon_code": coupon["code"] if coupon else None, "payment_id": payment_id}


@tool(write=True)
def cancel_order(
        ctx: Ctx,
        order_id: Annotated[str, Field(pattern=r"^[A-Za-z]{3}-[0-9A-Fa-f]{8}$")],
        reason: Annotated[str, Field(max_length=200)] = None,
):
    """Cancel an order that has not shipped yet (pending or processing): refunds everything paid to
    the original payment method, returns the items to stock and releases the coupon use. Shipped
    or delivered orders cannot be cancelled (use return_item).

    Args:
        order_id: Order id such as 'ORD-3F9A2C71' (case-insensitive).
        reason: Why, for the record.
    """
    order = _order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] == "cancelled":
        raise ToolError(f"Order {oid} is already cancelled.")
    if order["status"] in ("shipped", "delivered"):
        raise ToolError(f"Order {oid} is already {order['status']} and can no longer be "
                        "cancelled; once delivered, items can be returned with return_item.")
    items = ctx.query("SELECT product_id, quantity FROM order_items WHERE order_id = ?", (oid,))
    for item in items:
        ctx.execute("UPDATE products SET stock_quantity = stock_quantity + ? "
                    "WHERE product_id = ?", (item["quantity"], item["product_id"]))
    paid = ctx.db.scalar(
        "SELECT coalesce(sum(CASE kind WHEN 'charge' THEN amount ELSE -amount END), 0) "
        "FROM payments WHERE order_id = ?", (oid,))
    charge = ctx.one("SELECT method, card_last4 FROM payments WHERE order_id = ? AND kind = "
                     "'charge' ORDER BY created_at LIMIT 1", (oid,))
    refund = round(paid, 2)
    if refund > 0:
        ctx.execute("INSERT INTO payments (payment_id, order_id, kind, method, amount, "
                    "card_last4, created_at) VALUES (?, ?, 'refund', ?, ?, ?, ?)",
                    (ctx.new_id("PAY-"), oid, charge["method"], refund, charge["card_last4"],
                     ctx.now()))
    if order["coupon_code"]:
        ctx.execute("UPDATE coupons SET times_used = max(0, times_used - 1) WHERE code = ?",
                    (order["coupon_code"],))
    ctx.execute("UPDATE orders SET status = 'cancelled', cancelled_at = ?, cancel_reason = ? "
                "WHERE order_id = ?", (ctx.now(), reason, oid))
    return {"order_id": oid, "status": "cancelled", "refund_amount": refund,
            "refund_method": charge["method"], "items_restocked": sum(i["quantity"] for i in items)}


@tool(write=True)
def return_item(
        ctx: Ctx,
        order_id: Annotated[str, Field(pattern=r"^[A-Za-z]{3}-[0-9A-Fa-f]{8}$")],
        product_id: Annotated[int, Field(ge=1)],
        quantity: Annotated[int, Field(ge=1, le=10)],
        reason: Literal["damaged", "wrong_item", "not_as_described", "no_longer_needed", "other"],
):
    """Start a return for units of one product of a delivered order, within 30 days of delivery.
    Final-sale items cannot be returned. Refund = the units' price less their share of the order
    discount plus their share of tax; shipping is not refunded and 'no_longer_needed' returns
    pay a $6.99 return label. Damaged or wrong items are refunded at once; otherwise the refund
    follows when the item arrives.

    Args:
        order_id: Order id such as 'ORD-3F9A2C71' (case-insensitive).
        product_id: Product to return.
        quantity: Units to return.
        reason: Return reason.
    """
    from datetime import datetime, timedelta

    order = _order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] != "delivered":
        raise ToolError(f"Order {oid} is {order['status']}; only delivered orders can be "
                        "returned.")
    delivered = datetime.fromisoformat(order["delivered_at"])
    if datetime.fromisoformat(ctx.now()) > delivered + timedelta(days=30):
        raise ToolError(f"The 30-day return window for order {oid} closed on "
                        f"{(delivered + timedelta(days=30)).date().isoformat()}.")
    item = ctx.one("SELECT i.*, p.name, p.returnable FROM order_items i JOIN products p "
                   "ON p.product_id = i.product_id WHERE i.order_id = ? AND i.product_id = ?",
                   (oid, product_id))
    if item is None:
        raise ToolError(f"Product {product_id} is not part of order {oid}.")
    if not item["returnable"]:
        raise ToolError(f"{item['name']} is a final-sale item and cannot be returned.")
    left = item["quantity"] - item["quantity_returned"]
    if quantity > left:
        raise ToolError(f"Only {left} unit(s) of {item['name']} can still be returned "
                        f"({item['quantity']} bought, {item['quantity_returned']} already "
                        "returned).")
    refund = _return_refund(item["unit_price"] * quantity, order["subtotal"], order["discount"],
                            order["tax"], reason)
    immediate = reason in ("damaged", "wrong_item")
    status = "refunded" if immediate else "approved"
    return_id = ctx.new_id("RMA-")
    now = ctx.now()
    ctx.execute("INSERT INTO returns (return_id, order_item_id, quantity, reason, status, "
                "refund_amount, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                (return_id, item["order_item_id"], quantity, reason, status, refund, now))
    ctx.execute("UPDATE order_items SET quantity_returned = quantity_returned + ? "
                "WHERE order_item_id = ?", (quantity, item["order_item_id"]))
    if immediate and refund > 0:
        charge = ctx.one("SELECT method, card_last4 FROM payments WHERE order_id = ? AND "
                         "kind = 'charge' ORDER BY created_at LIMIT 1", (oid,))
        ctx.execute("INSERT INTO payments (payment_id, order_id, kind, method, amount, "
                    "card_last4, created_at) VALUES (?, ?, 'refund', ?, ?, ?, ?)",
                    (ctx.new_id("PAY-"), oid, charge["method"], refund, charge["card_last4"],
                     now))
    return {"return_id": return_id, "order_id": oid, "product_id": product_id,
            "quantity": quantity, "status": status, "refund_amount": refund,
            "instructions": ("Refund issued; no need to send the item back." if immediate else
                             "Ship the item back within 14 days with the prepaid label; the "
                             "refund is issued when it arrives.")}


@tool(write=True)
def add_address(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)],
        recipient: Annotated[str, Field(min_length=1)],
        line1: Annotated[str, Field(min_length=1)],
        city: Annotated[str, Field(min_length=1)],
        state: Annotated[str, Field(pattern=r"^[A-Za-z]{2}$")],
        postal_code: Annotated[str, Field(pattern=r"^\d{5}(-\d{4})?$")],
        line2: str = None,
        label: Annotated[str, Field(min_length=1)] = "Home",
        make_default: bool = False,
):
    """Save a new US shipping address for a customer (at most 10). The first address, or one added
    with make_default, becomes the default.

    Args:
        customer_id: Customer id.
        recipient: Name on the parcel.
        line1: Street address.
        city: City.
        state: Two-letter US state code, e.g. 'CA'.
        postal_code: US ZIP code, 5 digits or ZIP+4.
        line2: Apartment, suite, unit (optional).
        label: Short name such as 'Home' or 'Work'.
        make_default: Make this the default address.
    """
    valid_states = {
        "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL",
        "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE",
        "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD",
        "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY"}
    if ctx.one("SELECT customer_id FROM customers WHERE customer_id = ?", (customer_id,)) is None:
        raise ToolError(f"No customer with id {customer_id}.")
    state = state.upper()
    if state not in valid_states:
        raise ToolError(f"{state!r} is not a US state code; we only ship within the US.")
    count = ctx.db.scalar("SELECT count(*) FROM addresses WHERE customer_id = ?", (customer_id,))
    if count >= 10:
        raise ToolError("A customer can save at most 10 addresses; update an existing one.")
    default = make_default or count == 0
    if default:
        ctx.execute("UPDATE addresses SET is_default = 0 WHERE customer_id = ?", (customer_id,))
    cur = ctx.execute(
        "INSERT INTO addresses (customer_id, label, recipient, line1, line2, city, state, "
        "postal_code, country, is_default) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'US', ?)",
        (customer_id, label, recipient.strip(), line1.strip(), line2, city.strip(), state,
         postal_code, 1 if default else 0))
    return {"address_id": cur.lastrowid, "customer_id": customer_id, "label": label,
            "is_default": default}


@tool(write=True, require_any=('recipient', 'line1', 'line2', 'city', 'state', 'postal_code', 'label', 'make_default'))
def update_address(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)],
        address_id: Annotated[int, Field(ge=1)],
        recipient: Annotated[str, Field(min_length=1)] = None,
        line1: Annotated[str, Field(min_length=1)] = None,
        line2: str = None,
        city: Annotated[str, Field(min_length=1)] = None,
        state: Annotated[str, Field(pattern=r"^[A-Za-z]{2}$")] = None,
        postal_code: Annotated[str, Field(pattern=r"^\d{5}(-\d{4})?$")] = None,
        label: Annotated[str, Field(min_length=1)] = None,
        make_default: bool = None,
):
    """Edit a saved address of a customer or make it the default. An address that an in-transit
    (shipped) order is going to cannot be edited; add a new one instead.

    Args:
        customer_id: Owner of the address.
        address_id: Address to edit.
        recipient: Name on the parcel.
        line1: Street address.
        line2: Apartment, suite, unit.
        city: City.
        state: Two-letter US state code, e.g. 'CA'.
        postal_code: US ZIP code, 5 digits or ZIP+4.
        label: Short name, e.g. 'Work'.
        make_default: true makes this the default address.
    """
    valid_states = {
        "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "DC", "FL", "GA", "HI", "ID", "IL",
        "IN", "IA", "KS", "KY", "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE",
        "NV", "NH", "NJ", "NM", "NY", "NC", "ND", "OH", "OK", "OR", "PA", "RI", "SC", "SD",
        "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY"}
    address = ctx.one("SELECT * FROM addresses WHERE address_id = ?", (address_id,))
    if address is None or address["customer_id"] != customer_id:
        raise ToolError(f"Address {address_id} is not one of customer {customer_id}'s "
                        "addresses.")
    changes = {k: v for k, v in (("recipient", recipient), ("line1", line1), ("line2", line2),
                                 ("city", city), ("state", state),
                                 ("postal_code", postal_code), ("label", label))
               if v is not None}
    if "state" in changes:
        changes["state"] = changes["state"].upper()
        if changes["state"] not in valid_states:
            raise ToolError(f"{state!r} is not a US state code; we only ship within the US.")
    if make_default is False and address["is_default"]:
        raise ToolError("Every customer keeps one default address: make another address the "
                        "default instead.")
    if changes:
        in_transit = ctx.one("SELECT order_id FROM orders WHERE shipping_address_id = ? AND "
                             "status = 'shipped' LIMIT 1", (address_id,))
        if in_transit is not None:
            raise ToolError(f"Address {address_id} is the destination of order "
                            f"{in_transit['order_id']}, which is in transit; it cannot be "
                            "edited until the order is delivered. Add a new address instead.")
    for field, value in changes.items():
        ctx.execute(f"UPDATE addresses SET {field} = ? WHERE address_id = ?", (value, address_id))
    if make_default:
        ctx.execute("UPDATE addresses SET is_default = (address_id = ?) WHERE customer_id = ?",
                    (address_id, customer_id))
    row = ctx.one("SELECT * FROM addresses WHERE address_id = ?", (address_id,))
    row["is_default"] = bool(row["is_default"])
    row["updated_fields"] = sorted(changes) + (["is_default"] if make_default else [])
    return row


@tool(write=True)
def apply_coupon(
        ctx: Ctx,
        order_id: Annotated[str, Field(pattern=r"^[A-Za-z]{3}-[0-9A-Fa-f]{8}$")],
        code: Annotated[str, Field(min_length=1)],
):
    """Add a coupon to a pending order (one coupon per order) and refund the difference to the
    original payment method. Fails with the reason if the coupon does not apply.

    Args:
        order_id: Order id such as 'ORD-3F9A2C71' (case-insensitive).
        code: Coupon code.
    """
    order = _order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] != "pending":
        raise ToolError(f"Order {oid} is {order['status']}; coupons can only be added to "
                        "pending orders.")
    if order["coupon_code"]:
        raise ToolError(f"Order {oid} already uses coupon {order['coupon_code']}; only one "
                        "coupon per order.")
    lines = ctx.query("SELECT i.unit_price, i.quantity, p.category_id, c.parent_id "
                      "FROM order_items i JOIN products p ON p.product_id = i.product_id "
                      "JOIN categories c ON c.category_id = p.category_id WHERE i.order_id = ?",
                      (oid,))
    coupon, discount = _coupon_discount(ctx, code, lines, order["subtotal"])
    customer = ctx.one("SELECT membership FROM customers WHERE customer_id = ?",
                       (order["customer_id"],))
    state = ctx.db.scalar("SELECT state FROM addresses WHERE address_id = ?",
                          (order["shipping_address_id"],))
    totals = _order_totals(order["subtotal"], discount, state, customer["membership"],
                           order["shipping_method"])
    refund = round(order["total"] - totals["total"], 2)
    ctx.execute("UPDATE orders SET coupon_code = ?, discount = ?, shipping_fee = ?, tax = ?, "
                "total = ? WHERE order_id = ?",
                (coupon["code"], totals["discount"], totals["shipping_fee"], totals["tax"],
                 totals["total"], oid))
    ctx.execute("UPDATE coupons SET times_used = times_used + 1 WHERE code = ?",
                (coupon["code"],))
    if refund != 0:
        charge = ctx.one("SELECT method, card_last4 FROM payments WHERE order_id = ? AND "
                         "kind = 'charge' ORDER BY created_at LIMIT 1", (oid,))
        ctx.execute("INSERT INTO payments (payment_id, order_id, kind, method, amount, "
                    "card_last4, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (ctx.new_id("PAY-"), oid, "refund" if refund > 0 else "charge",
                     charge["method"], abs(refund), charge["card_last4"], ctx.now()))
    return {"order_id": oid, "coupon_code": coupon["code"], "discount": totals["discount"],
            "shipping_fee": totals["shipping_fee"], "tax": totals["tax"],
            "total": totals["total"], "refund_amount": max(0.0, refund)}


@tool(write=True)
def change_shipping_address(
        ctx: Ctx,
        order_id: Annotated[str, Field(pattern=r"^[A-Za-z]{3}-[0-9A-Fa-f]{8}$")],
        address_id: Annotated[int, Field(ge=1)],
):
    """Ship a pending or processing order to another of the customer's saved addresses. Sales tax
    is recomputed for the new state; the difference is charged or refunded.

    Args:
        order_id: Order id such as 'ORD-3F9A2C71' (case-insensitive).
        address_id: One of the order's customer's address ids.
    """
    order = _order(ctx, order_id)
    oid = order["order_id"]
    if order["status"] not in ("pending", "processing"):
        raise ToolError(f"Order {oid} is {order['status']}; the shipping address can only be "
                        "changed before the order ships.")
    address = ctx.one("SELECT * FROM addresses WHERE address_id = ?", (address_id,))
    if address is None or address["customer_id"] != order["customer_id"]:
        raise ToolError(f"Address {address_id} is not one of customer {order['customer_id']}'s "
                        "addresses.")
    if address_id == order["shipping_address_id"]:
        raise ToolError(f"Order {oid} already ships to address {address_id}.")
    membership = ctx.db.scalar("SELECT membership FROM customers WHERE customer_id = ?",
                               (order["customer_id"],))
    totals = _order_totals(order["subtotal"], order["discount"], address["state"], membership,
                           order["shipping_method"])
    difference = round(totals["total"] - order["total"], 2)
    ctx.execute("UPDATE orders SET shipping_address_id = ?, tax = ?, total = ? "
                "WHERE order_id = ?", (address_id, totals["tax"], totals["total"], oid))
    if difference != 0:
        charge = ctx.one("SELECT method, card_last4 FROM payments WHERE order_id = ? AND "
                         "kind = 'charge' ORDER BY created_at LIMIT 1", (oid,))
        ctx.execute("INSERT INTO payments (payment_id, order_id, kind, method, amount, "
                    "card_last4, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (ctx.new_id("PAY-"), oid, "charge" if difference > 0 else "refund",
                     charge["method"], abs(difference), charge["card_last4"], ctx.now()))
    return {"order_id": oid, "shipping_address_id": address_id,
            "ships_to": f"{address['line1']}, {address['city']}, {address['state']} "
                        f"{address['postal_code']}",
            "tax": totals["tax"], "total": totals["total"], "tax_difference": difference}
