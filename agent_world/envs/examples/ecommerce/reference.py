"""The store's clock, seed and hand-written reference data: categories, products, coupons,
stock events, and the names, cities and streets generated customers are drawn from."""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path

CLOCK_START = "2026-04-14T10:30:00"
SEED = 20260414
NOW = datetime.fromisoformat(CLOCK_START)

CATEGORIES = [  # id, name, parent id, sku prefix
    (1, "Electronics", None, "ELE"), (2, "Home & Kitchen", None, "HOM"),
    (3, "Books", None, "BOK"), (4, "Sports & Outdoors", None, "SPO"),
    (5, "Beauty & Personal Care", None, "BEA"),
    (6, "Headphones & Audio", 1, "AUD"), (7, "Computer Accessories", 1, "CMP"),
    (8, "Smart Home", 1, "SMH"), (9, "Cookware", 2, "CKW"), (10, "Small Appliances", 2, "APL"),
    (11, "Bedding", 2, "BED"), (12, "Fiction", 3, "FIC"), (13, "Nonfiction", 3, "NFC"),
    (14, "Camping & Hiking", 4, "CAM"), (15, "Fitness", 4, "FIT"), (16, "Skincare", 5, "SKN"),
]
# name, brand, category id, price, variants, returnable: the catalogue, in products.csv
PRODUCTS: list[tuple[str, str, int, float, list[str], bool]] = [
    (r["name"], r["brand"], int(r["category_id"]), float(r["price"]),
     r["variants"].split(";") if r["variants"] else [], r["returnable"] == "yes")
    for r in csv.DictReader(
        (Path(__file__).parent / "products.csv").read_text(encoding="utf-8").splitlines())]
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
