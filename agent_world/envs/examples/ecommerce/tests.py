"""The store's tool tests: positive and refused calls for every tool, against the anchors."""

from __future__ import annotations

from typing import Any

from .helpers import _order_totals, _return_refund


def build_tests(rows: dict[str, list[dict[str, Any]]], a: dict[str, Any]) -> list[dict[str, Any]]:
    p = a["products"]

    def pid(name: str) -> int:
        return p[name]["product_id"]

    def test(name: str, tool: str, args: dict[str, Any], **expect: Any) -> dict[str, Any]:
        return {"name": name, "tool": tool, "arguments": args, "expect": expect}

    def err(name: str, tool: str, args: dict[str, Any], kind: str = "tool_error") -> dict:
        return test(name, tool, args, ok=False, error_kind=kind)

    def order(customer_id: int, address: str, payment_method: str,
              *items: tuple[dict[str, Any], int], **extra: str) -> dict[str, Any]:
        """place_order's arguments: (product, quantity) items shipped to an anchor address."""
        return {"customer_id": customer_id,
                "items": [{"product_id": prod["product_id"], "quantity": n} for prod, n in items],
                "shipping_address_id": a[address]["address_id"],
                "payment_method": payment_method, **extra}

    skillet, pan = p["10.25-Inch Cast Iron Skillet"], p["Nonstick 12-Inch Fry Pan"]
    flask = p["32 oz Wide Mouth Water Bottle, Pacific"]
    novel = p["Pride and Prejudice"]
    sony = p["WH-1000XM5 Wireless Noise Canceling Headphones, Black"]
    cleanser = p["Hydrating Facial Cleanser, 16 oz"]
    pending, delivered = a["pending"], a["delivered"]

    flask_order = _order_totals(flask["price"] * 2, 0.0, "CA", "plus", "standard")
    novel_order = _order_totals(novel["price"], 0.0, "TX", "standard", "standard")
    aisha_sub = round(flask["price"] + skillet["price"], 2)
    aisha_order = _order_totals(aisha_sub, 10.0, "NY", "standard", "express")
    home20 = round(sum([skillet["price"] * 1, pan["price"] * 1]) * 20.0 / 100, 2)
    with_home20 = _order_totals(pending["subtotal"], home20, "CA", "plus", "standard")
    sony_refund = _return_refund(sony["price"], delivered["subtotal"], delivered["discount"],
                                   delivered["tax"], "no_longer_needed")
    sony_damaged = _return_refund(sony["price"], delivered["subtotal"],
                                    delivered["discount"], delivered["tax"], "damaged")
    spring_cart = round(sony["price"] + novel["price"], 2)
    books = sum(1 for r in rows["products"] if r["category_id"] in (12, 13)
                and r["status"] == "active" and r["price"] <= 15)
    mixer = p["Artisan 5-Quart Tilt-Head Stand Mixer, Empire Red"]
    nest = p["Nest Learning Thermostat (4th gen)"]
    echo4 = p["Echo Dot (4th Gen) Smart Speaker"]
    new_address_id = len(rows["addresses"]) + 1
    return [
        test("all categories", "list_categories", {}, min_items=len(rows["categories"])),
        test("sub-categories of a department", "list_categories", {"parent": "electronics"},
             min_items=3),
        err("unknown department", "list_categories", {"parent": "Garden"}),

        test("keyword search", "search_products", {"query": "headphones"}, min_items=3),
        test("cheap books", "search_products",
             {"category": "Books", "max_price": 15, "sort": "price_asc", "limit": 50},
             min_items=books),
        err("price range reversed", "search_products", {"min_price": 100, "max_price": 20}),
        err("unknown category", "search_products", {"category": "Groceries"}),
        err("limit out of range", "search_products", {"query": "mouse", "limit": 0},
            "invalid_arguments"),

        test("product by id", "get_product", {"product_id": sony["product_id"]},
             contains={"name": sony["name"], "brand": "Sony", "returnable": True,
                       "category": "Headphones & Audio", "parent_category": "Electronics"}),
        test("product by sku", "get_product", {"sku": cleanser["sku"].lower()},
             contains={"product_id": cleanser["product_id"], "returnable": False}),
        err("unknown product", "get_product", {"product_id": 9999}),
        err("neither id nor sku", "get_product", {}, "invalid_arguments"),

        test("stock of three products", "check_inventory",
             {"product_ids": [mixer["product_id"], nest["product_id"], echo4["product_id"]]},
             equals=[
                 {"product_id": mixer["product_id"], "sku": mixer["sku"], "name": mixer["name"],
                  "status": "active", "stock_quantity": 2, "restock_date": None,
                  "availability": "low_stock"},
                 {"product_id": nest["product_id"], "sku": nest["sku"], "name": nest["name"],
                  "status": "active", "stock_quantity": 0, "restock_date": "2026-04-28",
                  "availability": "out_of_stock"},
                 {"product_id": echo4["product_id"], "sku": echo4["sku"], "name": echo4["name"],
                  "status": "discontinued", "stock_quantity": 0, "restock_date": None,
                  "availability": "discontinued"}]),
        err("unknown product id", "check_inventory", {"product_ids": [1, 9999]}),
        err("empty list", "check_inventory", {"product_ids": []}, "invalid_arguments"),

        test("customer by id", "get_customer", {"customer_id": 1},
             contains={"first_name": "Sarah", "membership": "plus", "saved_card_last4": "4417",
                       "order_count": 3}),
        test("customer by email", "get_customer", {"email": "Marcus.Lee@outlook.com"},
             contains={"customer_id": 2, "saved_card_last4": None}),
        err("unknown customer", "get_customer", {"customer_id": 9999}),
        err("neither id nor email", "get_customer", {}, "invalid_arguments"),

        test("Sarah's orders", "list_orders", {"customer_id": 1}, min_items=3),
        test("delivered orders only", "list_orders", {"customer_id": 2, "status": "delivered"},
             min_items=1),
        err("unknown customer", "list_orders", {"customer_id": 9999}),
        err("bad status", "list_orders", {"customer_id": 1, "status": "lost"},
            "invalid_arguments"),

        test("delivered order", "get_order", {"order_id": "ORD-8D41E0B5"},
             contains={"order_id": "ORD-8D41E0B5", "status": "delivered",
                       "coupon_code": "SPRING15", "total": delivered["total"]}),
        test("lower-case id", "get_order", {"order_id": "ord-c72b5e19"},
             contains={"order_id": "ORD-C72B5E19", "status": "shipped"}),
        err("unknown order", "get_order", {"order_id": "ORD-00000000"}),
        err("malformed id", "get_order", {"order_id": "12345"}, "invalid_arguments"),

        test("coupon applies", "validate_coupon",
             {"code": "spring15", "items": [{"product_id": sony["product_id"], "quantity": 1},
                                            {"product_id": novel["product_id"], "quantity": 1}]},
             contains={"valid": True, "code": "SPRING15", "subtotal": spring_cart,
                       "discount": round(spring_cart * 15.0 / 100, 2)}),
        test("expired coupon", "validate_coupon",
             {"code": "WINTER25", "items": [{"product_id": sony["product_id"], "quantity": 1}]},
             contains={"valid": False, "discount": 0.0}),
        test("category coupon without category items", "validate_coupon",
             {"code": "BOOKS5", "items": [{"product_id": sony["product_id"], "quantity": 1}]},
             contains={"valid": False}),
        err("unknown product in cart", "validate_coupon",
            {"code": "SPRING15", "items": [{"product_id": 9999, "quantity": 1}]}),

        test("plus member ships free", "place_order",
             order(1, "sarah_home", "credit_card", (flask, 2)),
             contains={"status": "pending", **flask_order}),
        test("small order pays shipping", "place_order",
             order(2, "marcus_home", "paypal", (novel, 1)),
             contains={"shipping_fee": 5.99, **novel_order}),
        test("welcome coupon with express shipping", "place_order",
             order(3, "aisha_home", "credit_card", (flask, 1), (skillet, 1),
                   shipping_method="express", coupon_code="welcome10"),
             contains={"coupon_code": "WELCOME10", **aisha_order}),
        err("out of stock", "place_order", order(1, "sarah_home", "credit_card", (nest, 1))),
        err("more than in stock", "place_order",
            order(1, "sarah_home", "credit_card", (mixer, 3))),
        err("discontinued product", "place_order",
            order(1, "sarah_home", "credit_card", (echo4, 1))),
        err("someone else's address", "place_order",
            order(1, "marcus_home", "credit_card", (flask, 1))),
        err("no saved card", "place_order", order(2, "marcus_home", "credit_card", (flask, 1))),
        err("coupon usage limit reached", "place_order",
            order(1, "sarah_home", "credit_card", (sony, 1), coupon_code="FLASH50")),
        err("coupon minimum not met", "place_order",
            order(2, "marcus_home", "paypal", (novel, 1), coupon_code="WELCOME10")),
        err("empty cart", "place_order",
            {"customer_id": 1, "items": [], "shipping_address_id": 1,
             "payment_method": "paypal"}, "invalid_arguments"),

        test("cancel a pending order", "cancel_order",
             {"order_id": "ORD-3F9A2C71", "reason": "ordered twice"},
             contains={"status": "cancelled", "refund_amount": pending["total"],
                       "refund_method": "credit_card", "items_restocked": 2}),
        test("cancel a processing order", "cancel_order", {"order_id": "ORD-E4A7190C"},
             contains={"status": "cancelled", "refund_amount": a["processing"]["total"],
                       "refund_method": "paypal", "items_restocked": 3}),
        err("already shipped", "cancel_order", {"order_id": "ORD-C72B5E19"}),
        err("already cancelled", "cancel_order", {"order_id": "ORD-5B0F3E62"}),
        err("unknown order", "cancel_order", {"order_id": "ORD-FFFFFFFF"}),

        test("change of mind return", "return_item",
             {"order_id": "ORD-8D41E0B5", "product_id": sony["product_id"], "quantity": 1,
              "reason": "no_longer_needed"},
             contains={"status": "approved", "refund_amount": sony_refund}),
        test("damaged item refunded at once", "return_item",
             {"order_id": "ORD-8D41E0B5", "product_id": sony["product_id"], "quantity": 1,
              "reason": "damaged"},
             contains={"status": "refunded", "refund_amount": sony_damaged}),
        err("final-sale item", "return_item",
            {"order_id": "ORD-8D41E0B5", "product_id": cleanser["product_id"], "quantity": 1,
             "reason": "not_as_described"}),
        err("more units than bought", "return_item",
            {"order_id": "ORD-8D41E0B5", "product_id": sony["product_id"], "quantity": 2,
             "reason": "damaged"}),
        err("return window closed", "return_item",
            {"order_id": "ORD-19E6D4A8",
             "product_id": pid("Flip 6 Portable Bluetooth Speaker, Blue"), "quantity": 1,
             "reason": "no_longer_needed"}),
        err("not delivered yet", "return_item",
            {"order_id": "ORD-C72B5E19",
             "product_id": pid("Duo 7-in-1 Electric Pressure Cooker, 6 Quart"), "quantity": 1,
             "reason": "damaged"}),
        err("unknown reason", "return_item",
            {"order_id": "ORD-8D41E0B5", "product_id": sony["product_id"], "quantity": 1,
             "reason": "too expensive"}, "invalid_arguments"),

        test("add an address", "add_address",
             {"customer_id": 3, "recipient": "Aisha Rahman", "line1": "350 5th Ave",
              "line2": "Floor 21", "city": "New York", "state": "ny", "postal_code": "10118",
              "label": "Work"},
             equals={"address_id": new_address_id, "customer_id": 3, "label": "Work",
                     "is_default": False}),
        test("new default address", "add_address",
             {"customer_id": 2, "recipient": "Marcus Lee", "line1": "4500 Duval St",
              "city": "Austin", "state": "TX", "postal_code": "78751", "make_default": True},
             contains={"is_default": True}),
        err("not a US state", "add_address",
            {"customer_id": 3, "recipient": "Aisha Rahman", "line1": "1 Yonge St",
             "city": "Toronto", "state": "ON", "postal_code": "12345"}),
        err("unknown customer", "add_address",
            {"customer_id": 9999, "recipient": "X Y", "line1": "1 Main St", "city": "Austin",
             "state": "TX", "postal_code": "78701"}),
        err("bad ZIP code", "add_address",
            {"customer_id": 3, "recipient": "Aisha Rahman", "line1": "350 5th Ave",
             "city": "New York", "state": "NY", "postal_code": "NY10118"},
            "invalid_arguments"),

        test("edit the work address", "update_address",
             {"customer_id": 1, "address_id": a["sarah_work"]["address_id"],
              "line2": "Suite 700"},
             contains={"line2": "Suite 700", "updated_fields": ["line2"], "is_default": False}),
        test("make the work address the default", "update_address",
             {"customer_id": 1, "address_id": a["sarah_work"]["address_id"],
              "make_default": True}, contains={"is_default": True}),
        err("address in transit", "update_address",
            {"customer_id": 1, "address_id": a["sarah_home"]["address_id"],
             "line1": "1460 Valencia St"}),
        err("someone else's address", "update_address",
            {"customer_id": 1, "address_id": a["marcus_home"]["address_id"], "city": "Dallas"}),
        err("nothing to change", "update_address",
            {"customer_id": 1, "address_id": a["sarah_work"]["address_id"]},
            "invalid_arguments"),

        test("category coupon on a pending order", "apply_coupon",
             {"order_id": "ORD-3F9A2C71", "code": "HOME20"},
             contains={"coupon_code": "HOME20", "discount": home20,
                       "total": with_home20["total"],
                       "refund_amount": round(pending["total"] - with_home20["total"], 2)}),
        err("order not pending", "apply_coupon", {"order_id": "ORD-E4A7190C", "code": "HOME20"}),
        err("coupon not yet valid", "apply_coupon",
            {"order_id": "ORD-3F9A2C71", "code": "SUMMER30"}),
        err("inactive coupon", "apply_coupon", {"order_id": "ORD-3F9A2C71", "code": "VIP30"}),
        err("unknown coupon", "apply_coupon", {"order_id": "ORD-3F9A2C71", "code": "FREESTUFF"}),

        test("ship to the work address", "change_shipping_address",
             {"order_id": "ORD-3F9A2C71", "address_id": a["sarah_work"]["address_id"]},
             contains={"shipping_address_id": a["sarah_work"]["address_id"],
                       "tax_difference": 0.0, "total": pending["total"]}),
        err("someone else's address", "change_shipping_address",
            {"order_id": "ORD-3F9A2C71", "address_id": a["marcus_home"]["address_id"]}),
        err("order already shipped", "change_shipping_address",
            {"order_id": "ORD-C72B5E19", "address_id": a["sarah_work"]["address_id"]}),
    ]
