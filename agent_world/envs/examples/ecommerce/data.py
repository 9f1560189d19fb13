"""The store's seed-data generator: the catalog, the hand-written anchor customers and orders,
and a crowd of generated ones, priced with the tools' own helpers."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from .helpers import _order_totals, _return_refund
from .reference import (
    CARRIERS,
    CATEGORIES,
    CITIES,
    COUPONS,
    DISCONTINUED,
    EMAIL_DOMAINS,
    FIRST_NAMES,
    LAST_NAMES,
    LOW_STOCK,
    NOW,
    OUT_OF_STOCK,
    PRODUCTS,
    REASONS,
    SEED,
    STREETS,
)
from .schema import TABLES


def _iso(dt: datetime) -> str:
    return dt.isoformat(timespec="seconds")


class _Builder:
    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.rows: dict[str, list[dict[str, Any]]] = {tb["name"]: [] for tb in TABLES}
        self.products: dict[str, dict[str, Any]] = {}
        self.ids: set[str] = set()
        self.emails: set[str] = set()
        self.parent = {c[0]: c[2] for c in CATEGORIES}

    def new_id(self, prefix: str) -> str:
        while True:
            value = prefix + "".join(self.rng.choice("0123456789ABCDEF") for _ in range(8))
            if value not in self.ids:
                self.ids.add(value)
                return value

    # -- catalog ----------------------------------------------------------------------------------
    def catalog(self) -> None:
        rng = self.rng
        prefix = {c[0]: c[3] for c in CATEGORIES}
        for cid, name, parent, _ in CATEGORIES:
            self.rows["categories"].append({"category_id": cid, "name": name,
                                            "parent_id": parent})
        for name, brand, cat, price, variants, returnable in PRODUCTS:
            for variant in variants or [None]:
                pid = len(self.rows["products"]) + 1
                full = f"{name}, {variant}" if variant else name
                stock = rng.choice([0, 3, 8, 12, 18, 25, 40, 60, 85, 120, 200])
                if stock == 0 and rng.random() < 0.6:
                    stock = rng.randint(20, 90)
                restock = None
                if full in OUT_OF_STOCK:
                    stock, restock = 0, OUT_OF_STOCK[full]
                elif full in LOW_STOCK:
                    stock = LOW_STOCK[full]
                elif stock == 0:
                    restock = (NOW + timedelta(days=rng.randint(5, 30))).date().isoformat()
                status = "active"
                if name in DISCONTINUED:
                    stock, status = 0, "discontinued"
                row = {"product_id": pid,
                       "sku": f"{prefix[cat]}-{brand[:3].upper()}-{1000 + pid}",
                       "name": full, "brand": brand, "category_id": cat, "price": price,
                       "stock_quantity": stock, "restock_date": restock, "status": status,
                       "returnable": returnable, "rating": round(rng.uniform(3.6, 4.9), 1),
                       "review_count": rng.choice([rng.randint(12, 400), rng.randint(400, 25000)])}
                self.rows["products"].append(row)
                self.products[full] = row
        for code, desc, kind, value, minimum, cat, start, end, cap, used, active in COUPONS:
            self.rows["coupons"].append({
                "code": code, "description": desc, "discount_type": kind,
                "discount_value": value, "min_order_total": minimum, "category_id": cat,
                "valid_from": start, "valid_until": end, "max_uses": cap, "times_used": used,
                "active": active})

    # -- customers ----------------------------------------------------------------------------
    def customer(self, cid: int, first: str, last: str, *, email: str | None = None,
                 membership: str | None = None, card: str | None | bool = True,
                 city: tuple[str, str, str, str] | None = None) -> dict[str, Any]:
        rng = self.rng
        city = city or rng.choice(CITIES)
        if email is None:
            base = f"{first}.{last}".lower().replace("'", "")
            domain = rng.choice(EMAIL_DOMAINS)
            email, n = f"{base}@{domain}", 2
            while email in self.emails:
                email, n = f"{base}{n}@{domain}", n + 1
        self.emails.add(email)
        if card is True:
            card = f"{rng.randint(0, 9999):04d}" if rng.random() < 0.8 else None
        row = {"customer_id": cid, "first_name": first, "last_name": last, "email": email,
               "phone": f"+1-{city[3]}-555-{rng.randint(100, 199):04d}",
               "membership": membership or ("plus" if rng.random() < 0.3 else "standard"),
               "saved_card_last4": card or None,
               "created_at": _iso(datetime(rng.randint(2019, 2025), rng.randint(1, 12),
                                           rng.randint(1, 28), rng.randint(7, 23),
                                           rng.randint(0, 59)))}
        self.rows["customers"].append(row)
        return row

    def address(self, customer: dict[str, Any], *, label: str = "Home",
                line1: str | None = None, line2: str | None = None,
                city: tuple[str, str, str, str] | None = None, postal: str | None = None,
                default: bool = False) -> dict[str, Any]:
        rng = self.rng
        city = city or rng.choice(CITIES)
        row = {"address_id": len(self.rows["addresses"]) + 1,
               "customer_id": customer["customer_id"], "label": label,
               "recipient": f"{customer['first_name']} {customer['last_name']}",
               "line1": line1 or f"{rng.randint(10, 9899)} {rng.choice(STREETS)}",
               "line2": line2 if line1 else (f"Apt {rng.randint(1, 40)}{rng.choice('ABCD')}"
                                             if rng.random() < 0.3 else None),
               "city": city[0], "state": city[1],
               "postal_code": postal or f"{city[2]}{rng.randint(1, 99):02d}",
               "country": "US", "is_default": default}
        self.rows["addresses"].append(row)
        return row

    # -- orders -------------------------------------------------------------------------------------
    def order(self, customer: dict[str, Any], address: dict[str, Any],
              lines: list[tuple[dict[str, Any], int]], placed: datetime, *,
              order_id: str | None = None, status: str | None = None,
              coupon: str | None = None, method: str | None = None,
              shipping_method: str = "standard", shipped: datetime | None = None,
              delivered: datetime | None = None) -> dict[str, Any]:
        rng = self.rng
        subtotal = round(sum(p["price"] * q for p, q in lines), 2)
        discount = 0.0
        if coupon:
            c = next(c for c in self.rows["coupons"] if c["code"] == coupon)
            eligible = subtotal if c["category_id"] is None else sum(
                p["price"] * q for p, q in lines
                if c["category_id"] in (p["category_id"], self.parent[p["category_id"]]))
            discount = round(eligible * c["discount_value"] / 100 if c["discount_type"] ==
                             "percent" else min(c["discount_value"], eligible), 2)
        totals = _order_totals(subtotal, discount, address["state"], customer["membership"],
                                 shipping_method)
        if status is None:
            shipped = placed + timedelta(hours=rng.randint(18, 52))
            delivered = shipped + timedelta(days=rng.randint(2, 5), hours=rng.randint(0, 8))
            status = ("delivered" if delivered <= NOW else "shipped" if shipped <= NOW
                      else "processing" if NOW - placed > timedelta(hours=6) else "pending")
        if status not in ("shipped", "delivered"):
            shipped = delivered = None
        elif status == "shipped":
            delivered = None
        carrier = rng.choice(CARRIERS) if shipped else None
        tracking = None
        if carrier == "UPS":
            tracking = "1Z" + "".join(rng.choice("0123456789ABCDEFGHJKLMNPRSTUVWXY")
                                      for _ in range(16))
        elif carrier == "FedEx":
            tracking = "".join(rng.choice("0123456789") for _ in range(12))
        elif carrier == "USPS":
            tracking = "9400" + "".join(rng.choice("0123456789") for _ in range(18))
        order = {"order_id": order_id or self.new_id("ORD-"),
                 "customer_id": customer["customer_id"], "shipping_address_id":
                 address["address_id"], "status": status, "shipping_method": shipping_method,
                 "coupon_code": coupon, **totals, "placed_at": _iso(placed),
                 "shipped_at": _iso(shipped) if shipped else None,
                 "delivered_at": _iso(delivered) if delivered else None,
                 "cancelled_at": None, "cancel_reason": None, "carrier": carrier,
                 "tracking_number": tracking}
        self.ids.add(order["order_id"])
        self.rows["orders"].append(order)
        for product, qty in lines:
            self.rows["order_items"].append({
                "order_item_id": len(self.rows["order_items"]) + 1,
                "order_id": order["order_id"], "product_id": product["product_id"],
                "quantity": qty, "unit_price": product["price"], "quantity_returned": 0})
        if method is None:
            method = ("credit_card" if customer["saved_card_last4"] and rng.random() < 0.75
                      else "paypal")
        self.rows["payments"].append({
            "payment_id": self.new_id("PAY-"), "order_id": order["order_id"], "kind": "charge",
            "method": method, "amount": order["total"],
            "card_last4": customer["saved_card_last4"] if method == "credit_card" else None,
            "created_at": order["placed_at"]})
        return order

    def refund(self, order: dict[str, Any], amount: float, when: datetime) -> None:
        charge = next(p for p in self.rows["payments"]
                      if p["order_id"] == order["order_id"] and p["kind"] == "charge")
        self.rows["payments"].append({
            "payment_id": self.new_id("PAY-"), "order_id": order["order_id"], "kind": "refund",
            "method": charge["method"], "amount": amount, "card_last4": charge["card_last4"],
            "created_at": _iso(when)})

    def cancel(self, order: dict[str, Any], when: datetime, reason: str | None) -> None:
        order.update(status="cancelled", cancelled_at=_iso(when), cancel_reason=reason,
                     shipped_at=None, delivered_at=None, carrier=None, tracking_number=None)
        self.refund(order, order["total"], when)

    def return_(self, order: dict[str, Any], item: dict[str, Any], qty: int, reason: str,
                when: datetime, status: str) -> dict[str, Any]:
        amount = _return_refund(item["unit_price"] * qty, order["subtotal"], order["discount"],
                                  order["tax"], reason)
        row = {"return_id": self.new_id("RMA-"), "order_item_id": item["order_item_id"],
               "quantity": qty, "reason": reason, "status": status, "refund_amount": amount,
               "created_at": _iso(when)}
        self.rows["returns"].append(row)
        if status != "rejected":
            item["quantity_returned"] += qty
        if status == "refunded" and amount > 0:
            self.refund(order, amount, when + timedelta(days=0 if reason in
                                                        ("damaged", "wrong_item") else 6))
        return row

    # -- hand-written anchors --------------------------------------------------------------------
    def anchors(self) -> dict[str, Any]:
        p = self.products
        sf = next(c for c in CITIES if c[0] == "San Francisco")
        oak = next(c for c in CITIES if c[0] == "Oakland")
        austin = next(c for c in CITIES if c[0] == "Austin")
        brooklyn = next(c for c in CITIES if c[0] == "Brooklyn")
        sarah = self.customer(1, "Sarah", "Mitchell", email="sarah.mitchell@gmail.com",
                              membership="plus", card="4417", city=sf)
        marcus = self.customer(2, "Marcus", "Lee", email="marcus.lee@outlook.com",
                               membership="standard", card=None, city=austin)
        aisha = self.customer(3, "Aisha", "Rahman", email="aisha.rahman@proton.me",
                              membership="standard", card="0093", city=brooklyn)
        a: dict[str, Any] = {"sarah": sarah, "marcus": marcus, "aisha": aisha}
        a["sarah_home"] = self.address(sarah, line1="1452 Valencia St", line2="Apt 3",
                                       city=sf, postal="94110", default=True)
        a["sarah_work"] = self.address(sarah, label="Work", line1="1 Kaiser Plaza",
                                       line2="Suite 600", city=oak, postal="94612")
        a["marcus_home"] = self.address(marcus, line1="2210 Congress Ave", line2=None,
                                        city=austin, postal="78704", default=True)
        a["aisha_home"] = self.address(aisha, line1="88 Atlantic Ave", line2="Apt 4R",
                                       city=brooklyn, postal="11201", default=True)

        def at(s: str) -> datetime:
            return datetime.fromisoformat(s)

        a["pending"] = self.order(
            sarah, a["sarah_home"], [(p["10.25-Inch Cast Iron Skillet"], 1),
                                     (p["Nonstick 12-Inch Fry Pan"], 1)],
            at("2026-04-14T08:05:00"), order_id="ORD-3F9A2C71", status="pending",
            method="credit_card")
        a["delivered"] = self.order(
            sarah, a["sarah_home"],
            [(p["WH-1000XM5 Wireless Noise Canceling Headphones, Black"], 1),
             (p["Hydrating Facial Cleanser, 16 oz"], 2), (p["Atomic Habits"], 1)],
            at("2026-03-30T19:42:00"), order_id="ORD-8D41E0B5", status="delivered",
            coupon="SPRING15", method="credit_card", shipped=at("2026-03-31T15:10:00"),
            delivered=at("2026-04-03T13:25:00"))
        a["shipped"] = self.order(
            sarah, a["sarah_home"], [(p["Duo 7-in-1 Electric Pressure Cooker, 6 Quart"], 1)],
            at("2026-04-10T11:02:00"), order_id="ORD-C72B5E19", status="shipped",
            method="credit_card", shipped=at("2026-04-12T09:30:00"))
        a["old"] = self.order(
            marcus, a["marcus_home"], [(p["Flip 6 Portable Bluetooth Speaker, Blue"], 1)],
            at("2026-02-10T12:15:00"), order_id="ORD-19E6D4A8", status="delivered",
            method="paypal", shipped=at("2026-02-11T16:40:00"),
            delivered=at("2026-02-16T11:05:00"))
        a["processing"] = self.order(
            marcus, a["marcus_home"], [(p["PRO Yoga Mat 6mm, Black"], 1),
                                       (p["Resistance Bands Set, 5-Pack"], 2)],
            at("2026-04-13T16:20:00"), order_id="ORD-E4A7190C", status="processing",
            method="paypal")
        a["cancelled"] = self.order(
            marcus, a["marcus_home"], [(p["Forerunner 165 GPS Running Watch"], 1)],
            at("2026-03-22T21:04:00"), order_id="ORD-5B0F3E62", status="processing",
            method="paypal")
        self.cancel(a["cancelled"], at("2026-03-22T21:31:00"), "ordered by mistake")
        return a

    # -- everything else ------------------------------------------------------------------------
    def crowd(self, n_customers: int = 60) -> None:
        rng = self.rng
        active = [r for r in self.rows["products"] if r["status"] == "active"]
        for cid in range(4, n_customers + 1):
            city = rng.choice(CITIES)
            cust = self.customer(cid, rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES), city=city)
            addresses = [self.address(cust, city=city, default=True)]
            if rng.random() < 0.3:
                addresses.append(self.address(cust, label=rng.choice(["Work", "Parents",
                                                                      "Vacation home"])))
            for _ in range(rng.choice([0, 1, 2, 2, 3, 3])):
                recent = rng.random() < 0.22  # a steady trickle of orders still in flight
                placed = NOW - timedelta(minutes=rng.randint(45, 8 * 24 * 60) if recent
                                         else rng.randint(8 * 24 * 60, 150 * 24 * 60))
                count = rng.choices([1, 2, 3, 4], [45, 30, 15, 10])[0]
                products = rng.sample(active, count)
                lines = [(pr, rng.choices([1, 2, 3], [80, 15, 5])[0]) for pr in products]
                subtotal = sum(pr["price"] * q for pr, q in lines)
                day = placed.date().isoformat()
                coupon = None
                if rng.random() < 0.2:
                    options = [c["code"] for c in self.rows["coupons"]
                               if c["active"] and c["valid_from"] <= day <= c["valid_until"]
                               and subtotal >= c["min_order_total"] and c["code"] != "FLASH50"
                               and (c["category_id"] is None or any(
                                   c["category_id"] in (pr["category_id"],
                                                        self.parent[pr["category_id"]])
                                   for pr, _ in lines))]
                    coupon = rng.choice(options) if options else None
                order = self.order(cust, rng.choice(addresses), lines, placed, coupon=coupon,
                                   shipping_method="express" if rng.random() < 0.12
                                   else "standard")
                if order["status"] != "shipped" and rng.random() < 0.07:
                    self.cancel(order, placed + timedelta(minutes=rng.randint(5, 50)),
                                rng.choice(["ordered by mistake", "found a better price",
                                            "shipping too slow", None]))
                    continue
                if order["status"] == "delivered" and rng.random() < 0.16:
                    items = [i for i in self.rows["order_items"]
                             if i["order_id"] == order["order_id"]
                             and self.rows["products"][i["product_id"] - 1]["returnable"]]
                    if not items:
                        continue
                    item = rng.choice(items)
                    delivered = datetime.fromisoformat(order["delivered_at"])
                    when = delivered + timedelta(days=rng.randint(1, 25), hours=rng.randint(0, 9))
                    if when >= NOW:
                        continue
                    reason = rng.choice(REASONS)
                    age = NOW - when
                    status = ("refunded" if reason in ("damaged", "wrong_item") or
                              age > timedelta(days=10) else
                              "approved" if age > timedelta(days=2) else "requested")
                    if reason == "other" and rng.random() < 0.4:
                        status = "rejected"
                    self.return_(order, item, 1, reason, when, status)
        used = {}
        for o in self.rows["orders"]:
            if o["coupon_code"] and o["status"] != "cancelled":
                used[o["coupon_code"]] = used.get(o["coupon_code"], 0) + 1
        for c in self.rows["coupons"]:
            if c["code"] != "FLASH50":
                c["times_used"] += used.get(c["code"], 0)


def build_data() -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    b = _Builder()
    b.catalog()
    anchors = b.anchors()
    b.crowd()
    anchors["products"] = b.products
    return b.rows, anchors
