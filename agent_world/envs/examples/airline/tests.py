"""The airline's tool tests: positive and refused calls for every tool, against the anchors."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from .reference import TODAY


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

    def booking(customer_id: int, flight: tuple[str, int], fare_class: str,
                card: str) -> dict[str, Any]:
        """book_reservation's arguments: the customer flies alone, paying with `card`."""
        c = next(r for r in rows["customers"] if r["customer_id"] == customer_id)
        who = {k: c[k] for k in ("first_name", "last_name", "date_of_birth")}
        return {"customer_id": customer_id, "flight_id": fid(*flight), "fare_class": fare_class,
                "passengers": [who], "payment_method_id": a[card]}

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
        test("customer by loyalty number (any case)", "get_customer",
             {"loyalty_number": next(a["loyalty_number"] for a in rows["loyalty_accounts"]
                                     if a["customer_id"] == 1).lower()},
             contains={"customer_id": 1, "last_name": "Gonzalez"}),
        err("unknown customer", "get_customer", {"customer_id": 9999}),
        err("unknown loyalty number", "get_customer", {"loyalty_number": "NW000000000"}),
        err("malformed loyalty number", "get_customer", {"loyalty_number": "12345"},
            "invalid_arguments"),
        err("neither id, email nor loyalty number", "get_customer", {}, "invalid_arguments"),

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
             booking(1, ("NW100", 9), "economy", "maria_visa"),
             contains={"status": "confirmed", "passenger_count": 1,
                       "fare_total": price("NW100", 9, "economy"), "flight_number": "NW100"}),
        err("business sold out", "book_reservation",
            booking(3, ("NW100", 2), "business", "priya_visa")),
        err("expired card", "book_reservation",
            booking(2, ("NW330", 6), "economy", "james_expired")),
        err("voucher balance too low", "book_reservation",
            booking(1, ("NW100", 9), "business", "maria_voucher")),
        err("someone else's card", "book_reservation",
            booking(2, ("NW330", 6), "economy", "maria_visa")),
        err("cancelled flight", "book_reservation",
            booking(5, ("NW518", 1), "economy", "emily_mc")),
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
