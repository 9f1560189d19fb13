"""The store's write tools: placing, cancelling and returning orders, the customer's address
book, and coupons and shipping addresses on open orders."""

from typing import Annotated, Literal

from pydantic import Field

from agent_world.envs.toolkit import Ctx, ToolError, tool

from .helpers import _coupon_discount, _order, _order_totals, _return_refund
from .tools import ItemsItem


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
