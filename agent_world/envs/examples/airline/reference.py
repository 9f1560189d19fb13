"""The airline's clock, seed and hand-written reference data: airports, fleet, routes and
operational events, and the name lists the generated customers are drawn from."""

from __future__ import annotations

from datetime import datetime

CLOCK_START = "2026-03-10T09:00:00"
SEED = 20260310
NOW = datetime.fromisoformat(CLOCK_START)
TODAY = NOW.date()

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

# the anchor reservations the tool tests and tasks rely on: confirmation code, customer,
# (flight number, day from today), fare class, travellers besides the customer, card, booked
# at, paid per seat, seats, checked bags per traveller, channel
ANCHOR_BOOKINGS = [
    ("MGX7Q2", "maria", ("NW100", 7), "economy", [("Luis", "Gonzalez", "1982-03-15")],
     "maria_visa", "2026-02-20T14:32:00", 349.0, ["12A", "12B"], [1, 0], "web"),
    ("FLW9RD", "maria", ("NW101", -4), "economy", [], "maria_visa", "2026-01-28T09:12:00",
     329.0, ["18C"], [1], "mobile"),
    ("BSC4LK", "james", ("NW330", 3), "basic", [], "james_amex", "2026-02-27T20:05:00",
     149.0, [None], [0], "web"),
    ("CNX2TB", "james", ("NW622", 7), "economy", [], "james_amex", "2026-02-11T11:40:00",
     229.0, [None], [0], "agent"),
    ("CHK5NX", "priya", ("NW330", 0), "economy", [], "priya_visa", "2026-02-24T08:55:00",
     199.0, [None], [1], "mobile"),
    ("BIZ3UP", "priya", ("NW900", 4), "business", [], "priya_visa", "2026-02-15T19:20:00",
     2899.0, ["3A"], [2], "web"),
    ("HQ8ZPM", "daniel", ("NW214", 8), "economy", [], "daniel_debit", "2026-03-09T18:20:00",
     279.0, [None], [0], "mobile"),
    ("CXL7AF", "emily", ("NW518", 1), "basic", [], "emily_mc", "2026-02-18T07:45:00",
     129.0, [None], [0], "web"),
    ("DPT3MW", "emily", ("NW100", 0), "economy", [("Kevin", "Chen", "1987-06-01")],
     "emily_mc", "2026-02-25T13:10:00", 369.0, ["21E", "21F"], [1, 1], "web"),
]
# anchor reservations cancelled right after booking: code -> (when, reason)
ANCHOR_CANCELLED = {"CNX2TB": ("2026-03-02T16:25:00", "change of plans")}
