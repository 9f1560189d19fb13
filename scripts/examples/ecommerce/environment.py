"""The `ecommerce` example environment: schema, seed data and tool tests (tools in tools.py).

An environment folder in the toolkit form: `agent-world env build scripts/examples/ecommerce`
(or scripts/build_examples.py) compiles it into the EnvSpec. All data comes from a fixed-seed
random.Random and the hand-written lists below, never from the current time, so the output is
identical on every run and every machine. Seeded orders are priced with the same `_order_totals`
/ `_return_refund` helpers the tools use.

Anchor records written by hand (Sarah Mitchell's pending order ORD-3F9A2C71, her delivered
order ORD-8D41E0B5, ...) are what the tool tests, the README tour and the benchmarks use.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from . import tools as t

CLOCK_START = "2026-04-14T10:30:00"
SEED = 20260414
NOW = datetime.fromisoformat(CLOCK_START)

THEME = {
    "name": "Brightcart online store",
    "description": (
        "Customer-support console of Brightcart, a US online retailer of electronics, home "
        "and kitchen goods, books, outdoor gear and skincare. Agents search the catalog, "
        "check stock, place and cancel orders, apply coupons, change shipping addresses and "
        "handle returns under the store's shipping, tax, coupon and 30-day return policies."),
    "taxonomy": {"l1": "Shopping & E-commerce", "l2": "Online Retail", "l3": "ecommerce"},
    "source_kind": "manual",
    "source_ref": "scripts/examples/ecommerce",
}

# ---- reference data ---------------------------------------------------------------------------
CATEGORIES = [  # id, name, parent id, sku prefix
    (1, "Electronics", None, "ELE"), (2, "Home & Kitchen", None, "HOM"),
    (3, "Books", None, "BOK"), (4, "Sports & Outdoors", None, "SPO"),
    (5, "Beauty & Personal Care", None, "BEA"),
    (6, "Headphones & Audio", 1, "AUD"), (7, "Computer Accessories", 1, "CMP"),
    (8, "Smart Home", 1, "SMH"), (9, "Cookware", 2, "CKW"), (10, "Small Appliances", 2, "APL"),
    (11, "Bedding", 2, "BED"), (12, "Fiction", 3, "FIC"), (13, "Nonfiction", 3, "NFC"),
    (14, "Camping & Hiking", 4, "CAM"), (15, "Fitness", 4, "FIT"), (16, "Skincare", 5, "SKN"),
]
# name, brand, category id, price, variants, returnable
PRODUCTS: list[tuple[str, str, int, float, list[str], bool]] = [
    ("WH-1000XM5 Wireless Noise Canceling Headphones", "Sony", 6, 399.99, ["Black", "Silver"], True),
    ("QuietComfort Ultra Earbuds", "Bose", 6, 299.00, ["Black", "White Smoke"], True),
    ("AirPods Pro (2nd generation)", "Apple", 6, 249.00, [], True),
    ("Flip 6 Portable Bluetooth Speaker", "JBL", 6, 129.95, ["Blue", "Black", "Red"], True),
    ("Soundcore Life Q30 Hybrid ANC Headphones", "Anker", 6, 79.99, [], True),
    ("HD 560S Open-Back Headphones", "Sennheiser", 6, 199.95, [], True),
    ("Charge 5 Waterproof Speaker", "JBL", 6, 179.95, [], True),
    ("MX Master 3S Wireless Mouse", "Logitech", 7, 99.99, ["Graphite", "Pale Gray"], True),
    ("K380 Multi-Device Bluetooth Keyboard", "Logitech", 7, 39.99, [], True),
    ("USB-C 7-in-1 Hub", "Anker", 7, 35.99, [], True),
    ("T7 Portable SSD 1TB", "Samsung", 7, 109.99, [], True),
    ("mStand Aluminum Laptop Stand", "Rain Design", 7, 49.90, [], True),
    ("C920s HD Pro Webcam", "Logitech", 7, 69.99, [], True),
    ("Ergonomic Mouse Pad with Wrist Rest", "Gimars", 7, 14.99, [], True),
    ("27-inch 4K UHD Monitor", "Dell", 7, 329.99, [], True),
    ("Echo Dot (5th Gen) Smart Speaker", "Amazon", 8, 49.99, ["Charcoal", "Glacier White"], True),
    ("Echo Dot (4th Gen) Smart Speaker", "Amazon", 8, 39.99, [], True),
    ("Nest Learning Thermostat (4th gen)", "Google", 8, 279.99, [], True),
    ("Smart Plug Mini, 4-Pack", "Kasa", 8, 24.99, [], True),
    ("Video Doorbell (2nd Gen)", "Ring", 8, 99.99, [], True),
    ("Hue White and Color Ambiance Starter Kit", "Philips", 8, 199.99, [], True),
    ("10.25-Inch Cast Iron Skillet", "Lodge", 9, 24.90, [], True),
    ("5.5 Qt Round Dutch Oven", "Le Creuset", 9, 420.00, ["Flame", "Marseille"], True),
    ("Tri-Ply Stainless Steel 10-Piece Cookware Set", "Cuisinart", 9, 249.99, [], True),
    ("Nonstick 12-Inch Fry Pan", "OXO", 9, 44.99, [], True),
    ("Classic 8-Inch Chef's Knife", "Wusthof", 9, 169.95, [], True),
    ("Bamboo Cutting Board Set, 3-Piece", "Totally Bamboo", 9, 29.99, [], True),
    ("Duo 7-in-1 Electric Pressure Cooker, 6 Quart", "Instant Pot", 10, 99.99, [], True),
    ("E310 Explorian Blender", "Vitamix", 10, 349.95, [], True),
    ("Vertuo Next Coffee and Espresso Maker", "Nespresso", 10, 169.00, [], True),
    ("AF101 Air Fryer, 4 Quart", "Ninja", 10, 99.99, [], True),
    ("2-Slice Compact Toaster", "Cuisinart", 10, 59.95, [], True),
    ("Electric Gooseneck Kettle 0.8L", "Cosori", 10, 39.99, [], True),
    ("Artisan 5-Quart Tilt-Head Stand Mixer", "KitchenAid", 10, 449.99, ["Empire Red", "Onyx Black"], True),
    ("Classic Percale Sheet Set", "Brooklinen", 11, 149.00, ["Queen", "King"], True),
    ("Down Alternative Comforter", "Linenspa", 11, 59.99, ["Queen", "King"], True),
    ("Shredded Memory Foam Pillow, 2-Pack", "Coop Home Goods", 11, 79.99, [], True),
    ("Weighted Blanket, 15 lb", "YnM", 11, 69.90, [], True),
    ("Waterproof Mattress Protector", "SafeRest", 11, 34.99, ["Queen", "King"], False),
    ("Pride and Prejudice", "Penguin Classics", 12, 10.00, [], True),
    ("The Great Gatsby", "Scribner", 12, 12.99, [], True),
    ("Frankenstein", "Penguin Classics", 12, 8.99, [], True),
    ("Moby-Dick", "Penguin Classics", 12, 14.00, [], True),
    ("The Count of Monte Cristo", "Penguin Classics", 12, 18.00, [], True),
    ("Dune", "Ace", 12, 10.99, [], True),
    ("The Hobbit", "Mariner Books", 12, 14.99, [], True),
    ("Beloved", "Vintage", 12, 16.00, [], True),
    ("Sapiens: A Brief History of Humankind", "Harper Perennial", 13, 24.99, [], True),
    ("Atomic Habits", "Avery", 13, 27.00, [], True),
    ("The Body: A Guide for Occupants", "Anchor", 13, 18.00, [], True),
    ("Thinking, Fast and Slow", "Farrar, Straus and Giroux", 13, 20.00, [], True),
    ("Salt, Fat, Acid, Heat", "Simon & Schuster", 13, 37.50, [], True),
    ("The Immortal Life of Henrietta Lacks", "Broadway Books", 13, 18.99, [], True),
    ("Half Dome SL 2+ Backpacking Tent", "REI Co-op", 14, 299.00, [], True),
    ("Cosmic 20 Down Sleeping Bag", "Kelty", 14, 189.95, [], True),
    ("PocketRocket 2 Backpacking Stove", "MSR", 14, 49.95, [], True),
    ("Ultralight Insulated Sleeping Pad", "Sea to Summit", 14, 129.95, [], True),
    ("Spot 400 Headlamp", "Black Diamond", 14, 49.95, [], True),
    ("32 oz Wide Mouth Water Bottle", "Hydro Flask", 14, 44.95, ["Black", "Pacific", "Snapper"], True),
    ("Chair One Camp Chair", "Helinox", 14, 119.95, [], True),
    ("SelectTech 552 Adjustable Dumbbells", "Bowflex", 15, 429.00, [], True),
    ("PRO Yoga Mat 6mm", "Manduka", 15, 129.00, ["Black", "Verve"], True),
    ("Resistance Bands Set, 5-Pack", "Fit Simplify", 15, 12.99, [], True),
    ("GRID Foam Roller", "TriggerPoint", 15, 36.99, [], True),
    ("SR-1 Bearing Speed Rope", "Rogue Fitness", 15, 19.00, [], True),
    ("Forerunner 165 GPS Running Watch", "Garmin", 15, 249.99, [], True),
    ("Hydrating Facial Cleanser, 16 oz", "CeraVe", 16, 17.99, [], False),
    ("Ultra Repair Cream", "First Aid Beauty", 16, 38.00, [], False),
    ("UV Clear Face Sunscreen SPF 46", "EltaMD", 16, 41.00, [], False),
    ("Hyaluronic Acid 2% + B5 Serum", "The Ordinary", 16, 9.90, [], False),
    ("Daily Moisturizing Lotion", "Cetaphil", 16, 14.49, [], False),
    ("Lip Sleeping Mask", "Laneige", 16, 24.00, [], False),
    ("Vitamin C Facial Serum", "TruSkin", 16, 29.99, [], False),
]
DISCONTINUED = {"Echo Dot (4th Gen) Smart Speaker"}
OUT_OF_STOCK = {"Nest Learning Thermostat (4th gen)": "2026-04-28"}
LOW_STOCK = {"Artisan 5-Quart Tilt-Head Stand Mixer, Empire Red": 2}

COUPONS = [  # code, description, type, value, min total, category, from, until, max, used, active
    ("SPRING15", "15% off your order of $50 or more", "percent", 15.0, 50.0, None,
     "2026-03-01", "2026-04-30", None, 412, True),
    ("WELCOME10", "$10 off orders of $40 or more", "fixed", 10.0, 40.0, None,
     "2025-01-01", "2026-12-31", 5000, 1843, True),
    ("HOME20", "20% off Home & Kitchen", "percent", 20.0, 0.0, 2,
     "2026-04-01", "2026-05-15", None, 96, True),
    ("BOOKS5", "$5 off books on orders of $20 or more", "fixed", 5.0, 20.0, 3,
     "2026-01-01", "2026-06-30", None, 230, True),
    ("WINTER25", "25% off winter sale", "percent", 25.0, 75.0, None,
     "2025-12-01", "2026-02-28", None, 1290, True),
    ("FLASH50", "$50 off orders of $200 or more (first 100 customers)", "fixed", 50.0, 200.0,
     None, "2026-04-01", "2026-04-30", 100, 100, True),
    ("SUMMER30", "30% off summer outdoor gear", "percent", 30.0, 0.0, 4,
     "2026-06-01", "2026-08-31", None, 0, True),
    ("VIP30", "30% off for VIP event guests", "percent", 30.0, 100.0, None,
     "2025-06-01", "2026-12-31", 200, 57, False),
]

FIRST_NAMES = [
    "Olivia", "Liam", "Emma", "Noah", "Ava", "Elijah", "Sophia", "Mateo", "Isabella", "Lucas",
    "Mia", "Ethan", "Amelia", "Aiden", "Harper", "Jackson", "Evelyn", "Sebastian", "Abigail",
    "Benjamin", "Ella", "Henry", "Scarlett", "Owen", "Grace", "Samuel", "Chloe", "Wyatt", "Nora",
    "Caleb", "Hannah", "Julian", "Layla", "Isaac", "Zoe", "Gabriel", "Aaliyah", "Anthony",
    "Camila", "Ryan", "Aria", "Nathan", "Leah", "Adrian", "Maya", "Thomas", "Sofia", "Andrew",
    "Naomi", "Joshua", "Priya", "Kenji", "Mei", "Omar", "Fatima", "Kwame", "Diego", "Lucia",
]
LAST_NAMES = [
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez",
    "Martinez", "Hernandez", "Lopez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore",
    "Jackson", "Martin", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark", "Ramirez",
    "Lewis", "Robinson", "Walker", "Young", "Allen", "King", "Wright", "Scott", "Torres",
    "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Baker", "Hall", "Rivera",
    "Campbell", "Carter", "Roberts", "Patel", "Kim", "Tanaka", "Chen", "Singh", "Murphy",
    "O'Connor", "Novak", "Schmidt", "Rossi", "Haddad", "Mensah", "Silva",
]
EMAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.com", "icloud.com", "proton.me", "hey.com"]
CITIES = [  # city, state, zip prefix, phone area code
    ("San Francisco", "CA", "941", "415"), ("Oakland", "CA", "946", "510"),
    ("Los Angeles", "CA", "900", "213"), ("San Diego", "CA", "921", "619"),
    ("Austin", "TX", "787", "512"), ("Houston", "TX", "770", "713"),
    ("Dallas", "TX", "752", "214"), ("Brooklyn", "NY", "112", "718"),
    ("New York", "NY", "100", "212"), ("Buffalo", "NY", "142", "716"),
    ("Seattle", "WA", "981", "206"), ("Portland", "OR", "972", "503"),
    ("Chicago", "IL", "606", "312"), ("Boston", "MA", "021", "617"),
    ("Miami", "FL", "331", "305"), ("Orlando", "FL", "328", "407"),
    ("Denver", "CO", "802", "303"), ("Atlanta", "GA", "303", "404"),
    ("Philadelphia", "PA", "191", "215"), ("Phoenix", "AZ", "850", "602"),
    ("Minneapolis", "MN", "554", "612"), ("Nashville", "TN", "372", "615"),
    ("Columbus", "OH", "432", "614"), ("Raleigh", "NC", "276", "919"),
    ("Salt Lake City", "UT", "841", "801"), ("Newark", "NJ", "071", "973"),
    ("Detroit", "MI", "482", "313"), ("Richmond", "VA", "232", "804"),
    ("Las Vegas", "NV", "891", "702"), ("Wilmington", "DE", "198", "302"),
]
STREETS = ["Maple Ave", "Oak St", "Pine St", "Cedar Ln", "Elm St", "Washington Blvd",
           "Lake Shore Dr", "Main St", "2nd Ave", "Park Pl", "Sunset Blvd", "Highland Ave",
           "Mission St", "Market St", "Broadway", "Grand Ave", "Riverside Dr", "College Ave",
           "Chestnut St", "Willow Way", "Hillcrest Rd", "Jefferson St", "Lincoln Ave"]
CARRIERS = ["UPS", "FedEx", "USPS"]
REASONS = ["damaged", "wrong_item", "not_as_described", "no_longer_needed", "other"]

# ---- schema -----------------------------------------------------------------------------------


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

# ---- seed data --------------------------------------------------------------------------------


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
        totals = t._order_totals(subtotal, discount, address["state"], customer["membership"],
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
        amount = t._return_refund(item["unit_price"] * qty, order["subtotal"], order["discount"],
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


# ---- tool tests (the tools are in tools.py) ----------------------------------------------------
def build_tests(rows: dict[str, list[dict[str, Any]]], a: dict[str, Any]) -> list[dict[str, Any]]:
    p = a["products"]

    def pid(name: str) -> int:
        return p[name]["product_id"]

    def test(name: str, tool: str, args: dict[str, Any], **expect: Any) -> dict[str, Any]:
        return {"name": name, "tool": tool, "arguments": args, "expect": expect}

    def err(name: str, tool: str, args: dict[str, Any], kind: str = "tool_error") -> dict:
        return test(name, tool, args, ok=False, error_kind=kind)

    skillet, pan = p["10.25-Inch Cast Iron Skillet"], p["Nonstick 12-Inch Fry Pan"]
    flask = p["32 oz Wide Mouth Water Bottle, Pacific"]
    novel = p["Pride and Prejudice"]
    sony = p["WH-1000XM5 Wireless Noise Canceling Headphones, Black"]
    cleanser = p["Hydrating Facial Cleanser, 16 oz"]
    pending, delivered = a["pending"], a["delivered"]

    flask_order = t._order_totals(flask["price"] * 2, 0.0, "CA", "plus", "standard")
    novel_order = t._order_totals(novel["price"], 0.0, "TX", "standard", "standard")
    aisha_sub = round(flask["price"] + skillet["price"], 2)
    aisha_order = t._order_totals(aisha_sub, 10.0, "NY", "standard", "express")
    home20 = round(sum([skillet["price"] * 1, pan["price"] * 1]) * 20.0 / 100, 2)
    with_home20 = t._order_totals(pending["subtotal"], home20, "CA", "plus", "standard")
    sony_refund = t._return_refund(sony["price"], delivered["subtotal"], delivered["discount"],
                                   delivered["tax"], "no_longer_needed")
    sony_damaged = t._return_refund(sony["price"], delivered["subtotal"],
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
             {"customer_id": 1, "items": [{"product_id": flask["product_id"], "quantity": 2}],
              "shipping_address_id": a["sarah_home"]["address_id"],
              "payment_method": "credit_card"},
             contains={"status": "pending", **flask_order}),
        test("small order pays shipping", "place_order",
             {"customer_id": 2, "items": [{"product_id": novel["product_id"], "quantity": 1}],
              "shipping_address_id": a["marcus_home"]["address_id"],
              "payment_method": "paypal"},
             contains={"shipping_fee": 5.99, **novel_order}),
        test("welcome coupon with express shipping", "place_order",
             {"customer_id": 3, "items": [{"product_id": flask["product_id"], "quantity": 1},
                                          {"product_id": skillet["product_id"], "quantity": 1}],
              "shipping_address_id": a["aisha_home"]["address_id"],
              "payment_method": "credit_card", "shipping_method": "express",
              "coupon_code": "welcome10"},
             contains={"coupon_code": "WELCOME10", **aisha_order}),
        err("out of stock", "place_order",
            {"customer_id": 1, "items": [{"product_id": nest["product_id"], "quantity": 1}],
             "shipping_address_id": a["sarah_home"]["address_id"],
             "payment_method": "credit_card"}),
        err("more than in stock", "place_order",
            {"customer_id": 1, "items": [{"product_id": mixer["product_id"], "quantity": 3}],
             "shipping_address_id": a["sarah_home"]["address_id"],
             "payment_method": "credit_card"}),
        err("discontinued product", "place_order",
            {"customer_id": 1, "items": [{"product_id": echo4["product_id"], "quantity": 1}],
             "shipping_address_id": a["sarah_home"]["address_id"],
             "payment_method": "credit_card"}),
        err("someone else's address", "place_order",
            {"customer_id": 1, "items": [{"product_id": flask["product_id"], "quantity": 1}],
             "shipping_address_id": a["marcus_home"]["address_id"],
             "payment_method": "credit_card"}),
        err("no saved card", "place_order",
            {"customer_id": 2, "items": [{"product_id": flask["product_id"], "quantity": 1}],
             "shipping_address_id": a["marcus_home"]["address_id"],
             "payment_method": "credit_card"}),
        err("coupon usage limit reached", "place_order",
            {"customer_id": 1, "items": [{"product_id": sony["product_id"], "quantity": 1}],
             "shipping_address_id": a["sarah_home"]["address_id"],
             "payment_method": "credit_card", "coupon_code": "FLASH50"}),
        err("coupon minimum not met", "place_order",
            {"customer_id": 2, "items": [{"product_id": novel["product_id"], "quantity": 1}],
             "shipping_address_id": a["marcus_home"]["address_id"],
             "payment_method": "paypal", "coupon_code": "WELCOME10"}),
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
