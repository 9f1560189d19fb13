"""The airline's seed-data generator: reference tables, two weeks of flights with fares, the
hand-written anchor customers and reservations, a crowd of generated ones, and seat inventory."""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from typing import Any

from .reference import (
    AIRCRAFT,
    AIRPORTS,
    ANCHOR_BOOKINGS,
    ANCHOR_CANCELLED,
    AREA_CODES,
    CANCELLED,
    COUNTRY,
    DELAYS,
    EMAIL_DOMAINS,
    FIRST_NAMES,
    FLEET,
    HUBS,
    LAST_NAMES,
    NOW,
    OFFSET,
    ROUTES,
    SEED,
    SOLD_OUT,
    TODAY,
)
from .schema import TABLES


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

        people = {"maria": maria, "james": james, "priya": priya, "daniel": daniel,
                  "emily": emily}
        for (pnr, who, flight, fare_class, companions, card, booked, paid, seats, bags,
             channel) in ANCHOR_BOOKINGS:
            c = people[who]
            travellers = [(c["first_name"], c["last_name"], c["date_of_birth"]), *companions]
            a[pnr] = self.reservation(
                c, fk[flight], fare_class, travellers, a[card], pnr=pnr,
                created_at=datetime.fromisoformat(booked), paid_per_seat=paid, seats=seats,
                bags=bags, channel=channel)
            if pnr in ANCHOR_CANCELLED:
                when, reason = ANCHOR_CANCELLED[pnr]
                self._release(a[pnr])
                self.cancel(a[pnr], datetime.fromisoformat(when), reason)

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
