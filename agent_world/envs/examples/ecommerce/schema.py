"""The store's tables: categories, products, customers, addresses, coupons, orders, order
items, payments and returns."""

from __future__ import annotations

from typing import Any

from .reference import CARRIERS, REASONS


def col(name: str, type_: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **kw}


TABLES: list[dict[str, Any]] = [
    {"name": "categories", "description": "Two-level product taxonomy.", "columns": [
        col("category_id", "integer", primary_key=True),
        col("name", "text", nullable=False, unique=True),
        col("parent_id", "integer", foreign_key="categories.category_id",
            description="NULL for top-level departments."),
    ]},
    {"name": "products", "description": "The catalog with live stock levels.", "columns": [
        col("product_id", "integer", primary_key=True),
        col("sku", "text", nullable=False, unique=True),
        col("name", "text", nullable=False),
        col("brand", "text", nullable=False),
        col("category_id", "integer", nullable=False, foreign_key="categories.category_id"),
        col("price", "real", nullable=False, description="USD."),
        col("stock_quantity", "integer", nullable=False),
        col("restock_date", "date", description="Expected restock for out-of-stock items."),
        col("status", "text", nullable=False, enum=["active", "discontinued"], default="active"),
        col("returnable", "boolean", nullable=False, default=True,
            description="False for final-sale items (opened personal care, bedding hygiene)."),
        col("rating", "real"),
        col("review_count", "integer", nullable=False, default=0),
    ]},
    {"name": "customers", "description": "Shopper accounts.", "columns": [
        col("customer_id", "integer", primary_key=True),
        col("first_name", "text", nullable=False),
        col("last_name", "text", nullable=False),
        col("email", "text", nullable=False, unique=True),
        col("phone", "text"),
        col("membership", "text", nullable=False, enum=["standard", "plus"], default="standard",
            description="Plus members get free standard shipping and cheaper express."),
        col("saved_card_last4", "text", description="Card on file; NULL if none."),
        col("created_at", "datetime", nullable=False),
    ]},
    {"name": "addresses", "description": "Saved US shipping addresses.", "columns": [
        col("address_id", "integer", primary_key=True),
        col("customer_id", "integer", nullable=False, foreign_key="customers.customer_id"),
        col("label", "text", nullable=False, default="Home"),
        col("recipient", "text", nullable=False),
        col("line1", "text", nullable=False),
        col("line2", "text"),
        col("city", "text", nullable=False),
        col("state", "text", nullable=False, description="Two-letter USPS state code."),
        col("postal_code", "text", nullable=False),
        col("country", "text", nullable=False, default="US"),
        col("is_default", "boolean", nullable=False, default=False),
    ]},
    {"name": "coupons", "description": "Promotion codes.", "columns": [
        col("code", "text", primary_key=True),
        col("description", "text", nullable=False),
        col("discount_type", "text", nullable=False, enum=["percent", "fixed"]),
        col("discount_value", "real", nullable=False),
        col("min_order_total", "real", nullable=False, default=0.0),
        col("category_id", "integer", foreign_key="categories.category_id",
            description="Only products in this category (or its sub-categories) count."),
        col("valid_from", "date", nullable=False),
        col("valid_until", "date", nullable=False),
        col("max_uses", "integer"),
        col("times_used", "integer", nullable=False, default=0),
        col("active", "boolean", nullable=False, default=True),
    ]},
    {"name": "orders", "description": "Customer orders and their fulfilment state.", "columns": [
        col("order_id", "text", primary_key=True),
        col("customer_id", "integer", nullable=False, foreign_key="customers.customer_id"),
        col("shipping_address_id", "integer", nullable=False,
            foreign_key="addresses.address_id"),
        col("status", "text", nullable=False,
            enum=["pending", "processing", "shipped", "delivered", "cancelled"]),
        col("shipping_method", "text", nullable=False, enum=["standard", "express"],
            default="standard"),
        col("coupon_code", "text", foreign_key="coupons.code"),
        col("subtotal", "real", nullable=False),
        col("discount", "real", nullable=False, default=0.0),
        col("shipping_fee", "real", nullable=False),
        col("tax", "real", nullable=False),
        col("total", "real", nullable=False),
        col("placed_at", "datetime", nullable=False),
        col("shipped_at", "datetime"),
        col("delivered_at", "datetime"),
        col("cancelled_at", "datetime"),
        col("cancel_reason", "text"),
        col("carrier", "text", enum=CARRIERS),
        col("tracking_number", "text"),
    ]},
    {"name": "order_items", "description": "Lines of an order, at the price paid.",
     "unique_together": [["order_id", "product_id"]], "columns": [
        col("order_item_id", "integer", primary_key=True),
        col("order_id", "text", nullable=False, foreign_key="orders.order_id"),
        col("product_id", "integer", nullable=False, foreign_key="products.product_id"),
        col("quantity", "integer", nullable=False),
        col("unit_price", "real", nullable=False),
        col("quantity_returned", "integer", nullable=False, default=0),
    ]},
    {"name": "payments", "description": "Charges and refunds per order (USD).", "columns": [
        col("payment_id", "text", primary_key=True),
        col("order_id", "text", nullable=False, foreign_key="orders.order_id"),
        col("kind", "text", nullable=False, enum=["charge", "refund"]),
        col("method", "text", nullable=False, enum=["credit_card", "paypal"]),
        col("amount", "real", nullable=False),
        col("card_last4", "text"),
        col("created_at", "datetime", nullable=False),
    ]},
    {"name": "returns", "description": "Return requests (RMAs) for order items.", "columns": [
        col("return_id", "text", primary_key=True),
        col("order_item_id", "integer", nullable=False, foreign_key="order_items.order_item_id"),
        col("quantity", "integer", nullable=False),
        col("reason", "text", nullable=False, enum=REASONS),
        col("status", "text", nullable=False,
            enum=["requested", "approved", "refunded", "rejected"]),
        col("refund_amount", "real", nullable=False),
        col("created_at", "datetime", nullable=False),
    ]},
]
