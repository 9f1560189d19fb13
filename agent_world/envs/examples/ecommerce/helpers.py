"""Helpers the store's tools share (shipped once, in the spec's `helpers`): order totals
(shipping, tax), return refunds, coupon discounts and order look-up. The pure ones
(`_order_totals`, `_return_refund`) also price the seeded orders, so the seed data follows
exactly the rules the tools apply."""

from agent_world.envs.toolkit import ToolError


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
