"""The `airline` example environment: schema, seed data and tool tests (tools in tools.py).

An environment folder in the toolkit form: `agent-world env build scripts/examples/airline` (or
scripts/build_examples.py) compiles it into the EnvSpec. All data comes from a fixed-seed
random.Random and the hand-written lists below, never from the current time, so the output is
identical on every run and every machine.

A handful of "anchor" customers and reservations are written by hand (Maria Gonzalez's
reservation MGX7Q2, the basic-fare BSC4LK, ...): the tool tests, the README tour and the
benchmarks refer to them. Everything else is generated around them.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

CLOCK_START = "2026-03-10T09:00:00"
SEED = 20260310
NOW = datetime.fromisoformat(CLOCK_START)
TODAY = NOW.date()

THEME = {
    "name": "Northwind Airlines reservations",
    "description": (
        "Customer-service back office of Northwind Airlines (IATA code NW), a US carrier with "
        "hubs in Chicago O'Hare, San Francisco and New York JFK. Agents search flights, book, "
        "change and cancel reservations under fare-class rules (basic / economy / business), "
        "add checked bags, assign seats, check passengers in and redeem loyalty miles for "
        "upgrades."),
    "taxonomy": {"l1": "Travel & Transportation", "l2": "Flight Booking", "l3": "airline"},
    "source_kind": "manual",
    "source_ref": "scripts/examples/airline",
}

# ---- reference data ---------------------------------------------------------------------------
# code, name, city, country, IANA time zone, UTC offset in hours during March 2026 (after US DST)
AIRPORTS = [
    ("ATL", "Hartsfield-Jackson Atlanta International Airport", "Atlanta", "US", "America/New_York", -4),
    ("BOS", "Boston Logan International Airport", "Boston", "US", "America/New_York", -4),
    ("CLT", "Charlotte Douglas International Airport", "Charlotte", "US", "America/New_York", -4),
    ("DEN", "Denver International Airport", "Denver", "US", "America/Denver", -6),
    ("DFW", "Dallas Fort Worth International Airport", "Dallas", "US", "America/Chicago", -5),
    ("DTW", "Detroit Metropolitan Wayne County Airport", "Detroit", "US", "America/Detroit", -4),
    ("EWR", "Newark Liberty International Airport", "Newark", "US", "America/New_York", -4),
    ("HNL", "Daniel K. Inouye International Airport", "Honolulu", "US", "Pacific/Honolulu", -10),
    ("IAH", "George Bush Intercontinental Airport", "Houston", "US", "America/Chicago", -5),
    ("JFK", "John F. Kennedy International Airport", "New York", "US", "America/New_York", -4),
    ("LAS", "Harry Reid International Airport", "Las Vegas", "US", "America/Los_Angeles", -7),
    ("LAX", "Los Angeles International Airport", "Los Angeles", "US", "America/Los_Angeles", -7),
    ("MIA", "Miami International Airport", "Miami", "US", "America/New_York", -4),
    ("MSP", "Minneapolis-Saint Paul International Airport", "Minneapolis", "US", "America/Chicago", -5),
    ("ORD", "Chicago O'Hare International Airport", "Chicago", "US", "America/Chicago", -5),
    ("PDX", "Portland International Airport", "Portland", "US", "America/Los_Angeles", -7),
    ("PHL", "Philadelphia International Airport", "Philadelphia", "US", "America/New_York", -4),
    ("PHX", "Phoenix Sky Harbor International Airport", "Phoenix", "US", "America/Phoenix", -7),
    ("SAN", "San Diego International Airport", "San Diego", "US", "America/Los_Angeles", -7),
    ("SEA", "Seattle-Tacoma International Airport", "Seattle", "US", "America/Los_Angeles", -7),
    ("SFO", "San Francisco International Airport", "San Francisco", "US", "America/Los_Angeles", -7),
    ("CDG", "Paris Charles de Gaulle Airport", "Paris", "FR", "Europe/Paris", 1),
    ("LHR", "London Heathrow Airport", "London", "GB", "Europe/London", 0),
    ("MEX", "Mexico City International Airport", "Mexico City", "MX", "America/Mexico_City", -6),
    ("NRT", "Narita International Airport", "Tokyo", "JP", "Asia/Tokyo", 9),
    ("YYZ", "Toronto Pearson International Airport", "Toronto", "CA", "America/Toronto", -4),
]
HUBS = {"ORD", "SFO", "JFK"}
OFFSET = {a[0]: a[5] for a in AIRPORTS}
COUNTRY = {a[0]: a[3] for a in AIRPORTS}

# tail number, model, business rows (4 across), economy rows (6 across), status, in service since
AIRCRAFT = [
    ("N301NW", "Airbus A320neo", 3, 23, "active", "2019-04-11"),
    ("N302NW", "Airbus A320neo", 3, 23, "active", "2019-08-02"),
    ("N303NW", "Airbus A320neo", 3, 23, "active", "2020-01-17"),
    ("N304NW", "Airbus A320neo", 3, 23, "maintenance", "2020-06-29"),
    ("N421NW", "Airbus A321neo", 4, 29, "active", "2021-03-05"),
    ("N422NW", "Airbus A321neo", 4, 29, "active", "2021-09-14"),
    ("N423NW", "Airbus A321neo", 4, 29, "active", "2022-05-20"),
    ("N837NW", "Boeing 737-800", 4, 24, "active", "2014-10-08"),
    ("N838NW", "Boeing 737-800", 4, 24, "active", "2015-02-26"),
    ("N789NW", "Boeing 787-9", 7, 37, "active", "2018-11-30"),
    ("N790NW", "Boeing 787-9", 7, 37, "active", "2019-07-15"),
    ("N773NW", "Boeing 777-300ER", 10, 46, "active", "2016-12-01"),
]
FLEET = {"narrow": ["N301NW", "N302NW", "N303NW", "N837NW", "N838NW"],
         "transcon": ["N421NW", "N422NW", "N423NW"],
         "wide": ["N789NW", "N790NW", "N773NW"]}

# origin, destination, flight number, local departure, block minutes, economy base fare (USD),
# fleet, operating days (offsets from the clock's date)
ROUTES = [
    ("SFO", "JFK", "NW100", "07:05", 330, 349, "transcon", [-4, -1, 0, 2, 5, 7, 9]),
    ("JFK", "SFO", "NW101", "17:40", 395, 349, "transcon", [-4, -1, 0, 2, 5, 7, 9]),
    ("ORD", "JFK", "NW330", "13:40", 135, 189, "narrow", [-2, 0, 3, 6, 10]),
    ("JFK", "ORD", "NW331", "08:10", 160, 189, "narrow", [-2, 1, 3, 6, 10]),
    ("SFO", "ORD", "NW214", "11:20", 255, 259, "narrow", [-3, 1, 4, 8]),
    ("ORD", "SFO", "NW215", "16:55", 280, 259, "narrow", [-3, 1, 4, 8]),
    ("LAX", "JFK", "NW402", "22:30", 320, 369, "transcon", [-1, 2, 6, 11]),
    ("JFK", "LAX", "NW403", "09:15", 385, 369, "transcon", [-1, 3, 6, 11]),
    ("DEN", "SEA", "NW518", "10:05", 170, 169, "narrow", [-5, 1, 5]),
    ("SEA", "DEN", "NW519", "15:30", 155, 169, "narrow", [-5, 1, 5]),
    ("ORD", "MIA", "NW622", "07:50", 190, 219, "narrow", [-3, 2, 7]),
    ("MIA", "ORD", "NW623", "13:15", 210, 219, "narrow", [-3, 2, 7]),
    ("JFK", "LHR", "NW900", "19:30", 415, 689, "wide", [-6, 0, 4, 8]),
    ("LHR", "JFK", "NW901", "11:45", 480, 689, "wide", [-5, 1, 5, 9]),
    ("SFO", "NRT", "NW870", "11:35", 660, 949, "wide", [-2, 10]),
    ("NRT", "SFO", "NW871", "17:10", 570, 949, "wide", [-1, 11]),
]
# operational events: (flight number, day offset) -> status / delay
CANCELLED = {("NW518", 1)}
DELAYS = {("NW101", 0): 95, ("NW331", 1): 45}
SOLD_OUT = {("NW100", 2, "business")}

FIRST_NAMES = [
    "Olivia", "Liam", "Emma", "Noah", "Ava", "Elijah", "Sophia", "Mateo", "Isabella", "Lucas",
    "Mia", "Ethan", "Amelia", "Aiden", "Harper", "Jackson", "Evelyn", "Sebastian", "Abigail",
    "Benjamin", "Ella", "Henry", "Scarlett", "Owen", "Grace", "Samuel", "Chloe", "Wyatt", "Nora",
    "Caleb", "Hannah", "Julian", "Layla", "Isaac", "Zoe", "Gabriel", "Aaliyah", "Anthony",
    "Camila", "Ryan", "Aria", "Nathan", "Leah", "Adrian", "Maya", "Thomas", "Sofia", "Andrew",
    "Naomi", "Joshua", "Ruth", "Hiroshi", "Yuki", "Arjun", "Ananya", "Wei", "Mei", "Omar",
    "Fatima", "Kwame", "Amara", "Diego", "Lucia", "Sean", "Siobhan", "Dmitri", "Katarina",
]
LAST_NAMES = [
    "Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller", "Davis", "Rodriguez",
    "Martinez", "Hernandez", "Lopez", "Wilson", "Anderson", "Thomas", "Taylor", "Moore",
    "Jackson", "Martin", "Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark",
    "Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King", "Wright", "Scott",
    "Torres", "Nguyen", "Hill", "Flores", "Green", "Adams", "Nelson", "Baker", "Hall", "Rivera",
    "Campbell", "Mitchell", "Carter", "Roberts", "Patel", "Kim", "Tanaka", "Sato", "Chen",
    "Wang", "Singh", "Murphy", "O'Brien", "Kowalski", "Novak", "Schmidt", "Rossi", "Haddad",
    "Mensah", "Silva", "Costa", "Ivanova", "Larsen", "Dubois", "Fischer",
]
EMAIL_DOMAINS = ["gmail.com", "outlook.com", "yahoo.com", "icloud.com", "proton.me", "aol.com"]
AREA_CODES = {"ATL": "404", "BOS": "617", "DEN": "303", "DFW": "214", "JFK": "212", "LAX": "310",
              "MIA": "305", "ORD": "312", "SEA": "206", "SFO": "415", "PHX": "602", "MSP": "612"}

# ---- schema -----------------------------------------------------------------------------------


def col(name: str, type_: str, **kw: Any) -> dict[str, Any]:
    return {"name": name, "type": type_, **kw}


TABLES: list[dict[str, Any]] = [
    {"name": "airports", "description": "Airports served by the network (IATA codes).", "columns": [
        col("iata_code", "text", primary_key=True, description="Three-letter IATA airport code."),
        col("name", "text", nullable=False),
        col("city", "text", nullable=False),
        col("country", "text", nullable=False, description="ISO 3166-1 alpha-2 country code."),
        col("timezone", "text", nullable=False, description="IANA time zone of local times."),
        col("is_hub", "boolean", nullable=False, default=False),
    ]},
    {"name": "aircraft", "description": "The fleet. Business rows are 4 across (A-D), economy "
     "rows 6 across (A-F) and follow the business rows.", "columns": [
        col("tail_number", "text", primary_key=True),
        col("model", "text", nullable=False),
        col("business_rows", "integer", nullable=False),
        col("economy_rows", "integer", nullable=False),
        col("status", "text", nullable=False, enum=["active", "maintenance", "retired"],
            default="active"),
        col("in_service_since", "date"),
    ]},
    {"name": "flights", "description": "Scheduled flight legs; departure/arrival in the local "
     "time of each airport.", "unique_together": [["flight_number", "scheduled_departure"]],
     "columns": [
        col("flight_id", "integer", primary_key=True),
        col("flight_number", "text", nullable=False, description="Marketing number, e.g. NW100."),
        col("origin", "text", nullable=False, foreign_key="airports.iata_code"),
        col("destination", "text", nullable=False, foreign_key="airports.iata_code"),
        col("aircraft_id", "text", nullable=False, foreign_key="aircraft.tail_number"),
        col("scheduled_departure", "datetime", nullable=False),
        col("scheduled_arrival", "datetime", nullable=False),
        col("status", "text", nullable=False, default="scheduled",
            enum=["scheduled", "delayed", "boarding", "departed", "landed", "cancelled"]),
        col("delay_minutes", "integer", nullable=False, default=0),
        col("gate", "text"),
    ]},
    {"name": "fares", "description": "Fare buckets per flight with their rules and live seat "
     "inventory.", "unique_together": [["flight_id", "fare_class"]], "columns": [
        col("fare_id", "integer", primary_key=True),
        col("flight_id", "integer", nullable=False, foreign_key="flights.flight_id"),
        col("fare_class", "text", nullable=False, enum=["basic", "economy", "business"]),
        col("price", "real", nullable=False, description="Per passenger, USD."),
        col("seats_total", "integer", nullable=False),
        col("seats_available", "integer", nullable=False),
        col("refundable", "boolean", nullable=False),
        col("cancellation_fee", "real", nullable=False, default=0.0,
            description="Per passenger, deducted from refunds of refundable fares."),
        col("change_fee", "real", description="Per passenger; NULL means changes not allowed."),
        col("free_checked_bags", "integer", nullable=False),
        col("seat_selection", "boolean", nullable=False),
    ]},
    {"name": "customers", "description": "Account holders who book reservations.", "columns": [
        col("customer_id", "integer", primary_key=True),
        col("first_name", "text", nullable=False),
        col("last_name", "text", nullable=False),
        col("email", "text", nullable=False, unique=True),
        col("phone", "text"),
        col("date_of_birth", "date"),
        col("home_airport", "text", foreign_key="airports.iata_code"),
        col("created_at", "datetime", nullable=False),
    ]},
    {"name": "loyalty_accounts", "description": "NorthMiles frequent-flyer accounts.", "columns": [
        col("loyalty_number", "text", primary_key=True),
        col("customer_id", "integer", nullable=False, unique=True,
            foreign_key="customers.customer_id"),
        col("tier", "text", nullable=False, enum=["member", "silver", "gold", "platinum"]),
        col("miles_balance", "integer", nullable=False),
        col("lifetime_miles", "integer", nullable=False),
        col("enrolled_on", "date", nullable=False),
    ]},
    {"name": "payment_methods", "description": "Saved cards and travel vouchers.", "columns": [
        col("payment_method_id", "text", primary_key=True),
        col("customer_id", "integer", nullable=False, foreign_key="customers.customer_id"),
        col("type", "text", nullable=False, enum=["credit_card", "debit_card", "travel_voucher"]),
        col("brand", "text", enum=["visa", "mastercard", "amex", "discover"]),
        col("last4", "text"),
        col("expiry", "text", description="YYYY-MM; valid through the end of that month."),
        col("balance", "real", description="Remaining value of a travel voucher, USD."),
    ]},
    {"name": "reservations", "description": "Bookings (PNRs): one flight, one fare class, one "
     "or more passengers.", "columns": [
        col("reservation_id", "text", primary_key=True, description="Six-character record locator."),
        col("customer_id", "integer", nullable=False, foreign_key="customers.customer_id"),
        col("flight_id", "integer", nullable=False, foreign_key="flights.flight_id"),
        col("fare_id", "integer", nullable=False, foreign_key="fares.fare_id"),
        col("status", "text", nullable=False, enum=["confirmed", "cancelled", "flown"]),
        col("passenger_count", "integer", nullable=False),
        col("fare_total", "real", nullable=False, description="Fare paid for all passengers, USD."),
        col("created_at", "datetime", nullable=False),
        col("cancelled_at", "datetime"),
        col("cancel_reason", "text"),
        col("booking_channel", "text", nullable=False, default="web",
            enum=["web", "mobile", "agent"]),
    ]},
    {"name": "passengers", "description": "Travellers on a reservation.", "columns": [
        col("passenger_id", "integer", primary_key=True),
        col("reservation_id", "text", nullable=False, foreign_key="reservations.reservation_id"),
        col("first_name", "text", nullable=False),
        col("last_name", "text", nullable=False),
        col("date_of_birth", "date", nullable=False),
        col("seat", "text", description="e.g. 14C; NULL until selected or checked in."),
        col("checked_bags", "integer", nullable=False, default=0),
        col("checked_in", "boolean", nullable=False, default=False),
    ]},
    {"name": "payments", "description": "Charges and refunds (USD) and miles redeemed.", "columns": [
        col("payment_id", "text", primary_key=True),
        col("reservation_id", "text", nullable=False, foreign_key="reservations.reservation_id"),
        col("payment_method_id", "text", foreign_key="payment_methods.payment_method_id",
            description="NULL for miles-only transactions."),
        col("kind", "text", nullable=False,
            enum=["fare", "change", "baggage", "upgrade", "refund"]),
        col("amount", "real", nullable=False),
        col("miles", "integer", nullable=False, default=0),
        col("created_at", "datetime", nullable=False),
    ]},
]

# ---- seed data --------------------------------------------------------------------------------


def _iso(dt: datetime) -> str:
    return dt.isoformat(timespec="seconds")


def _price(x: float) -> float:
    """Round a fare to whole dollars ending in 9, as airlines publish them."""
    return float(max(1, round(x / 10.0)) * 10 - 1)


def _fare_rules(fare_class: str, international: bool) -> dict[str, Any]:
    if fare_class == "basic":
        return {"refundable": False, "cancellation_fee": 0.0, "change_fee": None,
                "free_checked_bags": 0, "seat_selection": False}
    if fare_class == "economy":
        return {"refundable": True, "cancellation_fee": 200.0 if international else 100.0,
                "change_fee": 150.0 if international else 75.0,
                "free_checked_bags": 2 if international else 1, "seat_selection": True}
    return {"refundable": True, "cancellation_fee": 0.0, "change_fee": 0.0,
            "free_checked_bags": 2, "seat_selection": True}


class _Builder:
    def __init__(self) -> None:
        self.rng = random.Random(SEED)
        self.rows: dict[str, list[dict[str, Any]]] = {t["name"]: [] for t in TABLES}
        self.anchors: dict[str, Any] = {}
        self.flight_key: dict[tuple[str, int], dict[str, Any]] = {}
        self.fares: dict[tuple[int, str], dict[str, Any]] = {}
        self.seats: dict[int, set[str]] = {}
        self.booked: dict[int, int] = {}  # fare_id -> passengers in our reservations
        self.pnrs: set[str] = set()
        self.payment_ids: set[str] = set()
        self.emails: set[str] = set()
        self.next_passenger = 1

    # -- ids ------------------------------------------------------------------------------
    def pnr(self) -> str:
        while True:
            code = "".join(self.rng.choice("ABCDEFGHJKLMNPQRSTUVWXYZ23456789") for _ in range(6))
            if code not in self.pnrs:
                self.pnrs.add(code)
                return code

    def pay_id(self) -> str:
        while True:
            pid = "PAY-" + "".join(self.rng.choice("0123456789ABCDEF") for _ in range(8))
            if pid not in self.payment_ids:
                self.payment_ids.add(pid)
                return pid

    # -- reference tables -------------------------------------------------------------------
    def airports_and_fleet(self) -> None:
        for code, name, city, country, tz, _ in AIRPORTS:
            self.rows["airports"].append({"iata_code": code, "name": name, "city": city,
                                          "country": country, "timezone": tz,
                                          "is_hub": code in HUBS})
        for tail, model, brows, erows, status, since in AIRCRAFT:
            self.rows["aircraft"].append({"tail_number": tail, "model": model,
                                          "business_rows": brows, "economy_rows": erows,
                                          "status": status, "in_service_since": since})

    def flights(self) -> None:
        plane = {a[0]: a for a in AIRCRAFT}
        legs = []
        for origin, dest, number, dep, minutes, base, fleet, days in ROUTES:
            for day in days:
                hh, mm = map(int, dep.split(":"))
                departure = datetime.combine(TODAY + timedelta(days=day), datetime.min.time()
                                             ).replace(hour=hh, minute=mm)
                legs.append((departure, origin, dest, number, minutes, base, fleet, day))
        legs.sort(key=lambda leg: (leg[0], leg[3]))
        turn = {k: 0 for k in FLEET}
        for fid, (departure, origin, dest, number, minutes, base, fleet, day) in enumerate(
                legs, start=1):
            arrival = departure + timedelta(minutes=minutes,
                                            hours=OFFSET[dest] - OFFSET[origin])
            tail = FLEET[fleet][turn[fleet] % len(FLEET[fleet])]
            turn[fleet] += 1
            delay = DELAYS.get((number, day), 0)
            leaves = departure + timedelta(minutes=delay)
            lands = leaves + timedelta(minutes=minutes)  # same clock as NOW (naive)
            if (number, day) in CANCELLED:
                status = "cancelled"
            elif lands <= NOW:
                status = "landed"
            elif leaves <= NOW:
                status = "departed"
            elif leaves - NOW <= timedelta(minutes=40):
                status = "boarding"
            else:
                status = "delayed" if delay else "scheduled"
            gate = None
            if status != "cancelled" and -1 <= day <= 1:
                gate = self.rng.choice("ABCDE") + str(self.rng.randint(1, 38))
            flight = {"flight_id": fid, "flight_number": number, "origin": origin,
                      "destination": dest, "aircraft_id": tail,
                      "scheduled_departure": _iso(departure), "scheduled_arrival": _iso(arrival),
                      "status": status, "delay_minutes": delay, "gate": gate}
            self.rows["flights"].append(flight)
            self.flight_key[(number, day)] = flight
            self.seats[fid] = set()
            international = COUNTRY[origin] != "US" or COUNTRY[dest] != "US"
            demand = self.rng.choice([0.9, 1.0, 1.0, 1.1, 1.2, 1.35])
            if 0 <= day <= 3:
                demand += 0.15
            economy = _price(base * demand)
            prices = {"basic": _price(economy * 0.78), "economy": economy,
                      "business": _price(economy * (4.2 if international else 3.1))}
            _, _, brows, erows, _, _ = plane[tail]
            totals = {"business": brows * 4, "basic": round(erows * 6 * 0.3)}
            totals["economy"] = erows * 6 - totals["basic"]
            for fc in ("basic", "economy", "business"):
                fare = {"fare_id": len(self.rows["fares"]) + 1, "flight_id": fid,
                        "fare_class": fc, "price": prices[fc], "seats_total": totals[fc],
                        "seats_available": totals[fc], **_fare_rules(fc, international)}
                self.rows["fares"].append(fare)
                self.fares[(fid, fc)] = fare

    # -- people -------------------------------------------------------------------------------
    def customer(self, cid: int, first: str, last: str, **extra: Any) -> dict[str, Any]:
        rng = self.rng
        email = f"{first}.{last}".lower().replace("'", "") + "@" + rng.choice(EMAIL_DOMAINS)
        n = 2
        while email in self.emails:
            email = f"{first}.{last}{n}".lower().replace("'", "") + "@" + email.split("@")[1]
            n += 1
        self.emails.add(email)
        home = extra.pop("home_airport", None) or rng.choice(sorted(AREA_CODES))
        born = TODAY.replace(year=rng.randint(1952, 2003)) - timedelta(days=rng.randint(0, 364))
        row = {"customer_id": cid, "first_name": first, "last_name": last, "email": email,
               "phone": f"+1-{AREA_CODES[home]}-555-{rng.randint(100, 199):04d}",
               "date_of_birth": born.isoformat(), "home_airport": home,
               "created_at": _iso(datetime(rng.randint(2015, 2025), rng.randint(1, 12),
                                           rng.randint(1, 28), rng.randint(6, 22),
                                           rng.randint(0, 59)))}
        row.update(extra)
        self.emails.add(row["email"])
        self.rows["customers"].append(row)
        return row

    def loyalty(self, cid: int, lifetime: int, balance: int | None = None) -> dict[str, Any]:
        tier = ("platinum" if lifetime >= 100000 else "gold" if lifetime >= 50000
                else "silver" if lifetime >= 25000 else "member")
        while True:
            number = "NW" + "".join(self.rng.choice("0123456789") for _ in range(9))
            if all(a["loyalty_number"] != number for a in self.rows["loyalty_accounts"]):
                break
        if balance is None:
            balance = int(lifetime * self.rng.uniform(0.15, 0.8)) // 50 * 50
        row = {"loyalty_number": number, "customer_id": cid, "tier": tier,
               "miles_balance": balance, "lifetime_miles": lifetime,
               "enrolled_on": f"{self.rng.randint(2012, 2025)}-{self.rng.randint(1, 12):02d}-"
                              f"{self.rng.randint(1, 28):02d}"}
        self.rows["loyalty_accounts"].append(row)
        return row

    def payment_method(self, cid: int, type_: str, brand: str | None = None,
                       expiry: str | None = None, balance: float | None = None) -> str:
        pm_id = "pm_" + "".join(self.rng.choice("abcdefghjkmnpqrstuvwxyz23456789")
                                for _ in range(8))
        if type_ != "travel_voucher":
            brand = brand or self.rng.choice(["visa", "visa", "mastercard", "amex", "discover"])
            expiry = expiry or f"{self.rng.randint(2026, 2031)}-{self.rng.randint(1, 12):02d}"
        last4 = None if type_ == "travel_voucher" else f"{self.rng.randint(0, 9999):04d}"
        self.rows["payment_methods"].append({
            "payment_method_id": pm_id, "customer_id": cid, "type": type_, "brand": brand,
            "last4": last4, "expiry": expiry, "balance": balance})
        return pm_id

    # -- reservations ---------------------------------------------------------------------------
    def free_seat(self, flight: dict[str, Any], fare_class: str) -> str:
        plane = next(a for a in AIRCRAFT if a[0] == flight["aircraft_id"])
        brows, erows = plane[2], plane[3]
        if fare_class == "business":
            options = [f"{r}{c}" for r in range(1, brows + 1) for c in "ABCD"]
        else:
            options = [f"{r}{c}" for r in range(brows + 1, brows + erows + 1) for c in "ABCDEF"]
        options = [s for s in options if s not in self.seats[flight["flight_id"]]]
        seat = self.rng.choice(options)
        self.seats[flight["flight_id"]].add(seat)
        return seat

    def reservation(self, customer: dict[str, Any], flight: dict[str, Any], fare_class: str,
                    travellers: list[tuple[str, str, str]], pm_id: str, *,
                    pnr: str | None = None, created_at: datetime | None = None,
                    paid_per_seat: float | None = None, status: str | None = None,
                    seats: list[str | None] | None = None, bags: list[int] | None = None,
                    channel: str | None = None) -> dict[str, Any]:
        rng = self.rng
        fare = self.fares[(flight["flight_id"], fare_class)]
        departure = datetime.fromisoformat(flight["scheduled_departure"])
        if created_at is None:
            latest = min(NOW - timedelta(days=2), departure - timedelta(days=1))
            created_at = latest - timedelta(days=rng.randint(0, 60), minutes=rng.randint(0, 1400))
        if paid_per_seat is None:
            paid_per_seat = _price(fare["price"] * rng.uniform(0.85, 1.08))
        if status is None:
            status = "flown" if flight["status"] == "landed" else "confirmed"
        rid = pnr or self.pnr()
        self.pnrs.add(rid)
        count = len(travellers)
        res = {"reservation_id": rid, "customer_id": customer["customer_id"],
               "flight_id": flight["flight_id"], "fare_id": fare["fare_id"], "status": status,
               "passenger_count": count, "fare_total": round(paid_per_seat * count, 2),
               "created_at": _iso(created_at), "cancelled_at": None, "cancel_reason": None,
               "booking_channel": channel or rng.choice(["web", "web", "mobile", "agent"])}
        self.rows["reservations"].append(res)
        self.rows["payments"].append({
            "payment_id": self.pay_id(), "reservation_id": rid, "payment_method_id": pm_id,
            "kind": "fare", "amount": res["fare_total"], "miles": 0, "created_at": res["created_at"]})
        active = status != "cancelled"
        if active:
            self.booked[fare["fare_id"]] = self.booked.get(fare["fare_id"], 0) + count
        in_window = NOW <= departure <= NOW + timedelta(hours=24)
        boarded = flight["status"] in ("landed", "departed", "boarding")
        tier = next((a["tier"] for a in self.rows["loyalty_accounts"]
                     if a["customer_id"] == customer["customer_id"]), None)
        allowance = fare["free_checked_bags"] + (1 if tier in ("gold", "platinum") else 0)
        for i, (first, last, born) in enumerate(travellers):
            checked_in = active and (boarded or (in_window and seats is None
                                                 and flight["status"] != "cancelled"
                                                 and rng.random() < 0.5))
            if seats is not None:
                seat = seats[i]
                if seat:
                    self.seats[flight["flight_id"]].add(seat)
            elif active and (checked_in or (fare["seat_selection"] and rng.random() < 0.6)):
                seat = self.free_seat(flight, fare_class)
            else:
                seat = None
            n_bags = bags[i] if bags is not None else rng.choice([0, 0, 1, 1, 1, 2])
            extra = max(0, n_bags - allowance)
            if extra and bags is None and rng.random() < 0.6:
                n_bags, extra = allowance, 0
            if extra:
                self.rows["payments"].append({
                    "payment_id": self.pay_id(), "reservation_id": rid, "payment_method_id": pm_id,
                    "kind": "baggage", "amount": 40.0 * extra, "miles": 0,
                    "created_at": _iso(created_at + timedelta(minutes=rng.randint(5, 3000)))})
            self.rows["passengers"].append({
                "passenger_id": self.next_passenger, "reservation_id": rid, "first_name": first,
                "last_name": last, "date_of_birth": born, "seat": seat, "checked_bags": n_bags,
                "checked_in": checked_in})
            self.next_passenger += 1
        return res

    def cancel(self, res: dict[str, Any], when: datetime, reason: str,
               airline: bool = False) -> None:
        fare = next(f for f in self.rows["fares"] if f["fare_id"] == res["fare_id"])
        res["status"], res["cancelled_at"], res["cancel_reason"] = "cancelled", _iso(when), reason
        if airline or fare["fare_class"] == "business":
            refund = res["fare_total"]
        elif fare["refundable"]:
            refund = max(0.0, res["fare_total"] - fare["cancellation_fee"] * res["passenger_count"])
        else:
            refund = 0.0
        refund += sum(p["amount"] for p in self.rows["payments"]
                      if p["reservation_id"] == res["reservation_id"] and p["kind"] == "baggage")
        pm_id = next(p["payment_method_id"] for p in self.rows["payments"]
                     if p["reservation_id"] == res["reservation_id"] and p["kind"] == "fare")
        if refund > 0:
            self.rows["payments"].append({
                "payment_id": self.pay_id(), "reservation_id": res["reservation_id"],
                "payment_method_id": pm_id, "kind": "refund", "amount": round(refund, 2),
                "miles": 0, "created_at": _iso(when)})

    def person(self, last: str | None = None) -> tuple[str, str, str]:
        rng = self.rng
        born = TODAY.replace(year=rng.randint(1950, 2019)) - timedelta(days=rng.randint(0, 364))
        return (rng.choice(FIRST_NAMES), last or rng.choice(LAST_NAMES), born.isoformat())

    # -- the hand-written anchors -----------------------------------------------------------
    def anchors_(self) -> None:
        a = self.anchors
        fk = self.flight_key
        maria = self.customer(1, "Maria", "Gonzalez", home_airport="SFO",
                              email="maria.gonzalez@gmail.com", date_of_birth="1984-07-22")
        self.loyalty(1, lifetime=71850, balance=62400)
        a["maria_visa"] = self.payment_method(1, "credit_card", "visa", "2028-09")
        a["maria_voucher"] = self.payment_method(1, "travel_voucher", expiry="2026-12",
                                                 balance=150.0)
        james = self.customer(2, "James", "Whitfield", home_airport="ORD",
                              email="j.whitfield@outlook.com", date_of_birth="1979-02-03")
        a["james_expired"] = self.payment_method(2, "credit_card", "mastercard", "2025-11")
        a["james_amex"] = self.payment_method(2, "credit_card", "amex", "2027-05")
        priya = self.customer(3, "Priya", "Raman", home_airport="ORD",
                              email="priya.raman@icloud.com", date_of_birth="1990-11-09")
        self.loyalty(3, lifetime=212400, balance=145200)
        a["priya_visa"] = self.payment_method(3, "credit_card", "visa", "2029-01")
        daniel = self.customer(4, "Daniel", "Okafor", home_airport="SFO",
                               email="daniel.okafor@yahoo.com", date_of_birth="1995-05-30")
        self.loyalty(4, lifetime=8300, balance=8300)
        a["daniel_debit"] = self.payment_method(4, "debit_card", "visa", "2027-08")
        emily = self.customer(5, "Emily", "Chen", home_airport="DEN",
                              email="emily.chen@proton.me", date_of_birth="1988-12-14")
        a["emily_mc"] = self.payment_method(5, "credit_card", "mastercard", "2028-03")

        def at(day: str) -> datetime:
            return datetime.fromisoformat(day)

        a["MGX7Q2"] = self.reservation(
            maria, fk[("NW100", 7)], "economy",
            [("Maria", "Gonzalez", "1984-07-22"), ("Luis", "Gonzalez", "1982-03-15")],
            a["maria_visa"], pnr="MGX7Q2", created_at=at("2026-02-20T14:32:00"),
            paid_per_seat=349.0, seats=["12A", "12B"], bags=[1, 0], channel="web")
        a["FLW9RD"] = self.reservation(
            maria, fk[("NW101", -4)], "economy", [("Maria", "Gonzalez", "1984-07-22")],
            a["maria_visa"], pnr="FLW9RD", created_at=at("2026-01-28T09:12:00"),
            paid_per_seat=329.0, seats=["18C"], bags=[1], channel="mobile")
        a["BSC4LK"] = self.reservation(
            james, fk[("NW330", 3)], "basic", [("James", "Whitfield", "1979-02-03")],
            a["james_amex"], pnr="BSC4LK", created_at=at("2026-02-27T20:05:00"),
            paid_per_seat=149.0, seats=[None], bags=[0], channel="web")
        a["CNX2TB"] = self.reservation(
            james, fk[("NW622", 7)], "economy", [("James", "Whitfield", "1979-02-03")],
            a["james_amex"], pnr="CNX2TB", created_at=at("2026-02-11T11:40:00"),
            paid_per_seat=229.0, seats=[None], bags=[0], channel="agent")
        self._release(a["CNX2TB"])
        self.cancel(a["CNX2TB"], at("2026-03-02T16:25:00"), "change of plans")
        a["CHK5NX"] = self.reservation(
            priya, fk[("NW330", 0)], "economy", [("Priya", "Raman", "1990-11-09")],
            a["priya_visa"], pnr="CHK5NX", created_at=at("2026-02-24T08:55:00"),
            paid_per_seat=199.0, seats=[None], bags=[1], channel="mobile")
        a["BIZ3UP"] = self.reservation(
            priya, fk[("NW900", 4)], "business", [("Priya", "Raman", "1990-11-09")],
            a["priya_visa"], pnr="BIZ3UP", created_at=at("2026-02-15T19:20:00"),
            paid_per_seat=2899.0, seats=["3A"], bags=[2], channel="web")
        a["HQ8ZPM"] = self.reservation(
            daniel, fk[("NW214", 8)], "economy", [("Daniel", "Okafor", "1995-05-30")],
            a["daniel_debit"], pnr="HQ8ZPM", created_at=at("2026-03-09T18:20:00"),
            paid_per_seat=279.0, seats=[None], bags=[0], channel="mobile")
        a["CXL7AF"] = self.reservation(
            emily, fk[("NW518", 1)], "basic", [("Emily", "Chen", "1988-12-14")],
            a["emily_mc"], pnr="CXL7AF", created_at=at("2026-02-18T07:45:00"),
            paid_per_seat=129.0, seats=[None], bags=[0], channel="web")
        a["DPT3MW"] = self.reservation(
            emily, fk[("NW100", 0)], "economy",
            [("Emily", "Chen", "1988-12-14"), ("Kevin", "Chen", "1987-06-01")],
            a["emily_mc"], pnr="DPT3MW", created_at=at("2026-02-25T13:10:00"),
            paid_per_seat=369.0, seats=["21E", "21F"], bags=[1, 1], channel="web")

    # -- everything else ----------------------------------------------------------------------
    def crowd(self, n_customers: int = 80, n_reservations: int = 121) -> None:
        rng = self.rng
        pms: dict[int, list[str]] = {}
        for cid in range(6, n_customers + 1):
            self.customer(cid, rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES))
            if rng.random() < 0.68:
                self.loyalty(cid, lifetime=rng.choice([
                    rng.randint(500, 24000), rng.randint(500, 24000), rng.randint(25000, 49000),
                    rng.randint(50000, 99000), rng.randint(100000, 260000)]))
            kinds = ["credit_card"] + (["debit_card"] if rng.random() < 0.25 else [])
            if rng.random() < 0.12:
                kinds.append("travel_voucher")
            pms[cid] = []
            for kind in kinds:
                if kind == "travel_voucher":
                    pms[cid].append(self.payment_method(
                        cid, kind, expiry=f"{rng.choice([2026, 2027])}-{rng.randint(1, 12):02d}",
                        balance=float(rng.choice([50, 75, 100, 150, 200, 250, 400]))))
                else:
                    expired = rng.random() < 0.08
                    exp = (f"{rng.choice([2024, 2025])}-{rng.randint(1, 12):02d}" if expired
                           else None)
                    pms[cid].append(self.payment_method(cid, kind, expiry=exp))
        customers = {c["customer_id"]: c for c in self.rows["customers"]}
        flights = self.rows["flights"]
        weights = [0.5 if f["status"] == "cancelled" else 1.0 for f in flights]
        made = 0
        while made < n_reservations:
            cid = rng.randint(6, n_customers)
            flight = rng.choices(flights, weights)[0]
            fare_class = rng.choices(["basic", "economy", "business"], [25, 60, 15])[0]
            count = rng.choices([1, 2, 3, 4], [55, 27, 10, 8])[0]
            if fare_class == "business":
                count = min(count, 2)
            fare = self.fares[(flight["flight_id"], fare_class)]
            if self.booked.get(fare["fare_id"], 0) + count > fare["seats_total"] // 2:
                continue
            cust = customers[cid]
            travellers = [(cust["first_name"], cust["last_name"], cust["date_of_birth"])]
            family = rng.random() < 0.7
            while len(travellers) < count:
                travellers.append(self.person(cust["last_name"] if family else None))
            pm_id = rng.choice(pms[cid])
            res = self.reservation(cust, flight, fare_class, travellers, pm_id)
            departure = datetime.fromisoformat(flight["scheduled_departure"])
            created = datetime.fromisoformat(res["created_at"])
            if flight["status"] == "cancelled" and rng.random() < 0.4:
                self._release(res)
                self.cancel(res, NOW - timedelta(hours=rng.randint(2, 20)),
                            "flight cancelled by airline", airline=True)
            elif departure > NOW and rng.random() < 0.1:
                self._release(res)
                span = max(1, int((NOW - created).total_seconds() // 60))
                self.cancel(res, created + timedelta(minutes=rng.randint(1, span)),
                            rng.choice(["change of plans", "found a cheaper fare",
                                        "meeting cancelled", "illness", None]))
            elif departure <= NOW and flight["status"] != "cancelled" and rng.random() < 0.05:
                self._release(res)
                self.cancel(res, created + timedelta(days=1), "change of plans")
            made += 1

    def _release(self, res: dict[str, Any]) -> None:
        self.booked[res["fare_id"]] -= res["passenger_count"]
        for p in self.rows["passengers"]:
            if p["reservation_id"] == res["reservation_id"]:
                if p["seat"]:
                    self.seats[res["flight_id"]].discard(p["seat"])
                p["seat"], p["checked_in"] = None, False

    def inventory(self) -> None:
        """Seats sold to travellers outside this dataset, then what is left to sell."""
        flights = {f["flight_id"]: f for f in self.rows["flights"]}
        day_of = {f["flight_id"]: d for (_, d), f in self.flight_key.items()}
        for fare in self.rows["fares"]:
            flight = flights[fare["flight_id"]]
            day = day_of[fare["flight_id"]]
            if day <= 0:
                load = self.rng.uniform(0.82, 0.97)
            else:
                load = 0.3 + 0.45 * (1 - day / 14) + self.rng.uniform(-0.08, 0.08)
            if fare["fare_class"] == "business":
                load = min(load, 0.75)
            sold = max(round(fare["seats_total"] * load), self.booked.get(fare["fare_id"], 0))
            if flight["status"] == "cancelled":
                sold = self.booked.get(fare["fare_id"], 0)
            fare["seats_available"] = fare["seats_total"] - sold
            if (flight["flight_number"], day, fare["fare_class"]) in SOLD_OUT:
                fare["seats_available"] = 0


def build_data() -> tuple[dict[str, list[dict[str, Any]]], dict[str, Any]]:
    b = _Builder()
    b.airports_and_fleet()
    b.flights()
    b.anchors_()
    b.crowd()
    b.inventory()
    b.anchors["flight"] = b.flight_key
    b.anchors["fare"] = b.fares
    return b.rows, b.anchors


# ---- tool tests (the tools are in tools.py) ----------------------------------------------------
def build_tests(rows: dict[str, list[dict[str, Any]]], a: dict[str, Any]) -> list[dict[str, Any]]:
    fk, fares = a["flight"], a["fare"]

    def fid(number: str, day: int) -> int:
        return fk[(number, day)]["flight_id"]

    def price(number: str, day: int, fc: str) -> float:
        return fares[(fid(number, day), fc)]["price"]

    def pax(rid: str) -> list[int]:
        return [p["passenger_id"] for p in rows["passengers"] if p["reservation_id"] == rid]

    def test(name: str, tool: str, args: dict[str, Any], **expect: Any) -> dict[str, Any]:
        return {"name": name, "tool": tool, "arguments": args, "expect": expect}

    def err(name: str, tool: str, args: dict[str, Any], kind: str = "tool_error") -> dict:
        return test(name, tool, args, ok=False, error_kind=kind)

    def day(n: int) -> str:
        return (TODAY + timedelta(days=n)).isoformat()

    maria_pax, james_pax = pax("MGX7Q2"), pax("BSC4LK")
    on_flight = {r["reservation_id"] for r in rows["reservations"]
                 if r["flight_id"] == fid("NW100", 7) and r["status"] == "confirmed"}
    taken = {p["seat"] for p in rows["passengers"] if p["reservation_id"] in on_flight}
    open_seat = next(f"{r}{c}" for r in range(14, 34) for c in "CDABEF"
                     if f"{r}{c}" not in taken)
    us_airports = sum(1 for r in rows["airports"] if r["country"] == "US")
    mg_change = 75.0 * 2 + max(0.0, price("NW100", 9, "economy") - 349.0) * 2
    return [
        test("all airports", "list_airports", {}, min_items=len(rows["airports"])),
        test("airports in the US", "list_airports", {"country": "us"}, min_items=us_airports),
        err("no airports in an unserved country", "list_airports", {"country": "ZZ"}),
        err("country must be a 2-letter code", "list_airports", {"country": "USA"},
            "invalid_arguments"),

        test("upcoming SFO to JFK", "search_flights", {"origin": "SFO", "destination": "JFK"},
             min_items=3),
        test("business for two on a date", "search_flights",
             {"origin": "sfo", "destination": "jfk", "date": day(7), "fare_class": "business",
              "passengers": 2}, min_items=1),
        err("same origin and destination", "search_flights",
            {"origin": "JFK", "destination": "JFK"}),
        err("date in the past", "search_flights",
            {"origin": "SFO", "destination": "JFK", "date": day(-2)}),
        err("unknown airport", "search_flights", {"origin": "XXX", "destination": "JFK"}),
        err("city name instead of a code", "search_flights",
            {"origin": "San Francisco", "destination": "JFK"}, "invalid_arguments"),

        test("delayed flight today", "get_flight_status",
             {"flight_number": "NW101", "date": day(0)},
             contains={"status": "delayed", "delay_minutes": 95, "origin": "JFK"}),
        test("cancelled flight tomorrow", "get_flight_status",
             {"flight_number": "nw 518", "date": day(1)},
             contains={"status": "cancelled", "estimated_departure": None}),
        test("today's departed flight by default", "get_flight_status",
             {"flight_number": "NW100"}, contains={"flight_number": "NW100",
                                                   "status": "departed"}),
        err("unknown flight number", "get_flight_status", {"flight_number": "NW999"}),
        err("flight not operating that day", "get_flight_status",
            {"flight_number": "NW870", "date": day(1)}),

        test("customer by id", "get_customer", {"customer_id": 1},
             contains={"first_name": "Maria", "last_name": "Gonzalez", "home_airport": "SFO"}),
        test("customer by email", "get_customer", {"email": "J.Whitfield@Outlook.com"},
             contains={"customer_id": 2, "last_name": "Whitfield", "loyalty": None}),
        err("unknown customer", "get_customer", {"customer_id": 9999}),
        err("neither id nor email", "get_customer", {}, "invalid_arguments"),

        test("gold member balance", "get_loyalty_balance", {"customer_id": 1},
             contains={"tier": "gold", "miles_balance": 62400, "next_tier": "platinum",
                       "miles_to_next_tier": 100000 - 71850}),
        err("customer not enrolled", "get_loyalty_balance", {"customer_id": 2}),
        err("unknown customer", "get_loyalty_balance", {"customer_id": 9999}),

        test("economy reservation", "get_reservation", {"reservation_id": "MGX7Q2"},
             contains={"reservation_id": "MGX7Q2", "status": "confirmed",
                       "fare_class": "economy", "fare_total": 698.0, "customer_id": 1}),
        test("lower-case code", "get_reservation", {"reservation_id": "bsc4lk"},
             contains={"reservation_id": "BSC4LK", "fare_class": "basic"}),
        err("unknown code", "get_reservation", {"reservation_id": "ZZZZZZ"}),
        err("malformed code", "get_reservation", {"reservation_id": "12"}, "invalid_arguments"),

        test("Maria's reservations", "list_customer_reservations", {"customer_id": 1},
             min_items=2),
        test("James's cancelled reservations", "list_customer_reservations",
             {"customer_id": 2, "status": "cancelled"}, min_items=1),
        err("unknown customer", "list_customer_reservations", {"customer_id": 9999}),
        err("bad status filter", "list_customer_reservations",
            {"customer_id": 1, "status": "pending"}, "invalid_arguments"),

        test("book one economy seat", "book_reservation",
             {"customer_id": 1, "flight_id": fid("NW100", 9), "fare_class": "economy",
              "passengers": [{"first_name": "Maria", "last_name": "Gonzalez",
                              "date_of_birth": "1984-07-22"}],
              "payment_method_id": a["maria_visa"]},
             contains={"status": "confirmed", "passenger_count": 1,
                       "fare_total": price("NW100", 9, "economy"), "flight_number": "NW100"}),
        err("business sold out", "book_reservation",
            {"customer_id": 3, "flight_id": fid("NW100", 2), "fare_class": "business",
             "passengers": [{"first_name": "Priya", "last_name": "Raman",
                             "date_of_birth": "1990-11-09"}],
             "payment_method_id": a["priya_visa"]}),
        err("expired card", "book_reservation",
            {"customer_id": 2, "flight_id": fid("NW330", 6), "fare_class": "economy",
             "passengers": [{"first_name": "James", "last_name": "Whitfield",
                             "date_of_birth": "1979-02-03"}],
             "payment_method_id": a["james_expired"]}),
        err("voucher balance too low", "book_reservation",
            {"customer_id": 1, "flight_id": fid("NW100", 9), "fare_class": "business",
             "passengers": [{"first_name": "Maria", "last_name": "Gonzalez",
                             "date_of_birth": "1984-07-22"}],
             "payment_method_id": a["maria_voucher"]}),
        err("someone else's card", "book_reservation",
            {"customer_id": 2, "flight_id": fid("NW330", 6), "fare_class": "economy",
             "passengers": [{"first_name": "James", "last_name": "Whitfield",
                             "date_of_birth": "1979-02-03"}],
             "payment_method_id": a["maria_visa"]}),
        err("cancelled flight", "book_reservation",
            {"customer_id": 5, "flight_id": fid("NW518", 1), "fare_class": "economy",
             "passengers": [{"first_name": "Emily", "last_name": "Chen",
                             "date_of_birth": "1988-12-14"}],
             "payment_method_id": a["emily_mc"]}),
        err("no passengers", "book_reservation",
            {"customer_id": 1, "flight_id": fid("NW100", 9), "fare_class": "economy",
             "passengers": [], "payment_method_id": a["maria_visa"]}, "invalid_arguments"),

        test("economy refund less fee", "cancel_reservation",
             {"reservation_id": "MGX7Q2", "reason": "trip postponed"},
             contains={"status": "cancelled", "refund_amount": 698.0 - 2 * 100.0,
                       "refunded_to": a["maria_visa"]}),
        test("basic fare refunds nothing", "cancel_reservation", {"reservation_id": "BSC4LK"},
             contains={"status": "cancelled", "refund_amount": 0.0}),
        test("24-hour rule", "cancel_reservation", {"reservation_id": "HQ8ZPM"},
             contains={"status": "cancelled", "refund_amount": 279.0}),
        test("airline-cancelled flight", "cancel_reservation", {"reservation_id": "CXL7AF"},
             contains={"status": "cancelled", "refund_amount": 129.0}),
        test("business fully refundable", "cancel_reservation", {"reservation_id": "BIZ3UP"},
             contains={"status": "cancelled", "refund_amount": 2899.0}),
        err("already flown", "cancel_reservation", {"reservation_id": "FLW9RD"}),
        err("already cancelled", "cancel_reservation", {"reservation_id": "CNX2TB"}),
        err("flight already departed", "cancel_reservation", {"reservation_id": "DPT3MW"}),

        test("change to a later flight", "change_flight",
             {"reservation_id": "MGX7Q2", "new_flight_id": fid("NW100", 9),
              "payment_method_id": a["maria_visa"]},
             contains={"status": "confirmed", "new_flight_number": "NW100",
                       "change_fee": 150.0, "amount_charged": mg_change}),
        test("free rebooking off a cancelled flight", "change_flight",
             {"reservation_id": "CXL7AF", "new_flight_id": fid("NW518", 5)},
             contains={"amount_charged": 0.0, "new_flight_number": "NW518"}),
        err("payment needed", "change_flight",
            {"reservation_id": "MGX7Q2", "new_flight_id": fid("NW100", 9)}),
        err("basic fare cannot change", "change_flight",
            {"reservation_id": "BSC4LK", "new_flight_id": fid("NW330", 6)}),
        err("different route", "change_flight",
            {"reservation_id": "MGX7Q2", "new_flight_id": fid("NW330", 6),
             "payment_method_id": a["maria_visa"]}),

        test("bag within gold allowance", "add_baggage",
             {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[0], "bags": 1},
             contains={"checked_bags": 2, "fee": 0.0, "free_allowance": 2}),
        test("paid extra bag", "add_baggage",
             {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[0], "bags": 2,
              "payment_method_id": a["maria_visa"]},
             contains={"checked_bags": 3, "fee": 40.0}),
        err("fee due without payment", "add_baggage",
            {"reservation_id": "BSC4LK", "passenger_id": james_pax[0], "bags": 1}),
        err("more than three bags", "add_baggage",
            {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[0], "bags": 3,
             "payment_method_id": a["maria_visa"]}),
        err("passenger on another reservation", "add_baggage",
            {"reservation_id": "MGX7Q2", "passenger_id": james_pax[0], "bags": 1}),
        err("zero bags", "add_baggage",
            {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[0], "bags": 0},
            "invalid_arguments"),

        test("fix a typo in a name", "update_passenger",
             {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1], "first_name": "Luiz"},
             contains={"first_name": "Luiz", "last_name": "Gonzalez",
                       "updated_fields": ["first_name"]}),
        test("correct date of birth", "update_passenger",
             {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1],
              "date_of_birth": "1982-03-16"}, contains={"date_of_birth": "1982-03-16"}),
        err("name transfer refused", "update_passenger",
            {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1], "first_name": "Roberto"}),
        err("flown reservation", "update_passenger",
            {"reservation_id": "FLW9RD", "passenger_id": pax("FLW9RD")[0],
             "last_name": "Gonzales"}),
        err("nothing to update", "update_passenger",
            {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1]}, "invalid_arguments"),

        test("pick an economy seat", "assign_seat",
             {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1],
              "seat": open_seat.lower()},
             contains={"seat": open_seat, "previous_seat": "12B"}),
        err("seat already taken", "assign_seat",
            {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1], "seat": "12A"}),
        err("business seat on an economy fare", "assign_seat",
            {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1], "seat": "2A"}),
        err("basic fare has no seat selection", "assign_seat",
            {"reservation_id": "BSC4LK", "passenger_id": james_pax[0], "seat": "20C"}),
        err("malformed seat", "assign_seat",
            {"reservation_id": "MGX7Q2", "passenger_id": maria_pax[1], "seat": "99Z"},
            "invalid_arguments"),

        test("check in within 24 hours", "check_in", {"reservation_id": "CHK5NX"},
             contains={"reservation_id": "CHK5NX", "flight_number": "NW330"}),
        err("check-in not open yet", "check_in", {"reservation_id": "MGX7Q2"}),
        err("flight already departed", "check_in", {"reservation_id": "DPT3MW"}),
        err("flight cancelled", "check_in", {"reservation_id": "CXL7AF"}),

        test("upgrade two passengers", "upgrade_with_miles", {"reservation_id": "MGX7Q2"},
             contains={"fare_class": "business", "miles_redeemed": 30000,
                       "miles_balance": 32400}),
        err("not enough miles", "upgrade_with_miles", {"reservation_id": "HQ8ZPM"}),
        err("basic not eligible", "upgrade_with_miles", {"reservation_id": "BSC4LK"}),
        err("already business", "upgrade_with_miles", {"reservation_id": "BIZ3UP"}),
    ]
