"""The store's clock, seed and hand-written reference data: categories, products, coupons,
stock events, and the names, cities and streets generated customers are drawn from."""

from __future__ import annotations

from datetime import datetime

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
