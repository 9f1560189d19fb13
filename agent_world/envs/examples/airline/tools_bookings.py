"""The airline tools that write reservations: book, cancel, change to another flight."""

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from agent_world.envs.toolkit import Ctx, ToolError, tool

from .helpers import _booking, _charge, _require_open


class PassengersItem(TypedDict):
    first_name: Annotated[str, Field(min_length=1, description="Given name.")]
    last_name: Annotated[str, Field(min_length=1, description="Family name.")]
    date_of_birth: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD.")]


@tool(write=True)
def book_reservation(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)],
        flight_id: Annotated[int, Field(ge=1)],
        fare_class: Literal["basic", "economy", "business"],
        passengers: Annotated[list[PassengersItem], Field(min_length=1, max_length=9)],
        payment_method_id: Annotated[str, Field(min_length=1)],
):
    """Book seats on a flight for one to nine passengers in one fare class and charge the fare to a
    saved payment method of the customer. Fails if the flight is not bookable (cancelled,
    departed, or within 60 minutes of departure), if the fare class has too few seats, or if the
    payment method is not the customer's, is expired, or is a voucher with too little balance.
    Returns the new confirmation code.

    Args:
        customer_id: The customer who owns and pays for the booking.
        flight_id: flight_id from search_flights.
        fare_class: Fare class for every passenger on the reservation.
        passengers: Travellers, names as on their ID.
        payment_method_id: Id of one of the reservation owner's saved payment methods (e.g.
            'pm_...'); see get_customer.
    """
    from datetime import date as date_type
    from datetime import datetime, timedelta

    if ctx.one("SELECT customer_id FROM customers WHERE customer_id = ?", (customer_id,)) is None:
        raise ToolError(f"No customer with id {customer_id}.")
    flight = ctx.one("SELECT * FROM flights WHERE flight_id = ?", (flight_id,))
    if flight is None:
        raise ToolError(f"No flight with id {flight_id}.")
    if flight["status"] not in ("scheduled", "delayed"):
        raise ToolError(f"Flight {flight['flight_number']} on "
                        f"{flight['scheduled_departure'][:10]} is {flight['status']} and cannot "
                        "be booked.")
    cutoff = datetime.fromisoformat(ctx.now()) + timedelta(minutes=60)
    if datetime.fromisoformat(flight["scheduled_departure"]) <= cutoff:
        raise ToolError("Bookings close 60 minutes before departure.")
    fare = ctx.one("SELECT * FROM fares WHERE flight_id = ? AND fare_class = ?",
                   (flight_id, fare_class))
    if fare is None:
        raise ToolError(f"Flight {flight['flight_number']} has no {fare_class} fare.")
    count = len(passengers)
    if fare["seats_available"] < count:
        raise ToolError(f"Only {fare['seats_available']} {fare_class} seat(s) left on flight "
                        f"{flight['flight_number']}; {count} requested.")
    today = ctx.today()
    for p in passengers:
        try:
            born = date_type.fromisoformat(p["date_of_birth"]).isoformat()
        except ValueError:
            raise ToolError(f"Invalid date_of_birth {p['date_of_birth']!r}; use YYYY-MM-DD."
                            ) from None
        if born >= today:
            raise ToolError(f"date_of_birth {born} must be in the past.")
        if not p["first_name"].strip() or not p["last_name"].strip():
            raise ToolError("Passenger names must not be blank.")
    alphabet = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
    while True:
        rid = "".join(ctx.rng.choice(alphabet) for _ in range(6))
        if ctx.one("SELECT 1 AS x FROM reservations WHERE reservation_id = ?", (rid,)) is None:
            break
    total = round(fare["price"] * count, 2)
    ctx.execute("INSERT INTO reservations (reservation_id, customer_id, flight_id, fare_id, "
                "status, passenger_count, fare_total, created_at, booking_channel) "
                "VALUES (?, ?, ?, ?, 'confirmed', ?, ?, ?, 'agent')",
                (rid, customer_id, flight_id, fare["fare_id"], count, total, ctx.now()))
    payment_id = _charge(ctx, customer_id, payment_method_id, total, rid, "fare")
    ids = []
    for p in passengers:
        cur = ctx.execute("INSERT INTO passengers (reservation_id, first_name, last_name, "
                          "date_of_birth, checked_bags, checked_in) VALUES (?, ?, ?, ?, 0, 0)",
                          (rid, p["first_name"].strip(), p["last_name"].strip(),
                           p["date_of_birth"]))
        ids.append(cur.lastrowid)
    ctx.execute("UPDATE fares SET seats_available = seats_available - ? WHERE fare_id = ?",
                (count, fare["fare_id"]))
    return {"reservation_id": rid, "status": "confirmed", "flight_number":
            flight["flight_number"], "scheduled_departure": flight["scheduled_departure"],
            "fare_class": fare_class, "passenger_count": count, "passenger_ids": ids,
            "fare_total": total, "payment_id": payment_id}


@tool(write=True)
def cancel_reservation(
        ctx: Ctx,
        reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")],
        reason: Annotated[str, Field(max_length=200)] = None,
):
    """Cancel a confirmed reservation before departure and refund it to the original payment
    method. Refund rules: full refund if the airline cancelled the flight or the booking was
    made within the last 24 hours; otherwise basic fares refund nothing, economy fares refund
    the fare minus the per-passenger cancellation fee, business fares are fully refundable. Paid
    baggage fees are always refunded, miles used for upgrades are returned. Flown, departed or
    already cancelled reservations cannot be cancelled.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
        reason: Why the customer cancels (kept on the reservation).
    """
    from datetime import datetime, timedelta

    b = _booking(ctx, reservation_id)
    rid = b["reservation_id"]
    if b["status"] == "cancelled":
        raise ToolError(f"Reservation {rid} is already cancelled.")
    if b["status"] == "flown":
        raise ToolError(f"Reservation {rid} has already been flown and cannot be cancelled.")
    now = datetime.fromisoformat(ctx.now())
    airline_cancelled = b["flight_status"] == "cancelled"
    if not airline_cancelled:
        leaves = (datetime.fromisoformat(b["scheduled_departure"])
                  + timedelta(minutes=b["delay_minutes"] or 0))
        if b["flight_status"] in ("boarding", "departed", "landed") or leaves <= now:
            raise ToolError(f"Flight {b['flight_number']} has already departed; reservation "
                            f"{rid} can no longer be cancelled.")
    within_24h = now - datetime.fromisoformat(b["created_at"]) <= timedelta(hours=24)
    fare_total = b["fare_total"]
    if airline_cancelled:
        rule, fare_refund = "flight cancelled by the airline: full refund", fare_total
    elif within_24h:
        rule, fare_refund = "cancelled within 24 hours of booking: full refund", fare_total
    elif not b["refundable"]:
        rule, fare_refund = f"{b['fare_class']} fares are non-refundable", 0.0
    else:
        fee = (b["cancellation_fee"] or 0) * b["passenger_count"]
        fare_refund = max(0.0, fare_total - fee)
        rule = (f"{b['fare_class']} fare: refund less a ${b['cancellation_fee']:.2f} "
                "per-passenger cancellation fee" if fee else f"{b['fare_class']} fare: "
                "fully refundable")
    bag_fees = ctx.db.scalar("SELECT coalesce(sum(amount), 0) FROM payments "
                             "WHERE reservation_id = ? AND kind = 'baggage'", (rid,))
    upgrade_miles = ctx.db.scalar("SELECT coalesce(sum(miles), 0) FROM payments "
                                  "WHERE reservation_id = ? AND kind = 'upgrade'", (rid,))
    refund = round(fare_refund + bag_fees, 2)
    method = ctx.db.scalar("SELECT payment_method_id FROM payments WHERE reservation_id = ? "
                           "AND kind = 'fare' ORDER BY created_at LIMIT 1", (rid,))
    if refund > 0 or upgrade_miles > 0:
        ctx.execute("INSERT INTO payments (payment_id, reservation_id, payment_method_id, kind, "
                    "amount, miles, created_at) VALUES (?, ?, ?, 'refund', ?, ?, ?)",
                    (ctx.new_id("PAY-"), rid, method if refund > 0 else None, refund,
                     upgrade_miles, ctx.now()))
    if refund > 0 and method:
        ctx.execute("UPDATE payment_methods SET balance = round(balance + ?, 2) "
                    "WHERE payment_method_id = ? AND type = 'travel_voucher'", (refund, method))
    if upgrade_miles:
        ctx.execute("UPDATE loyalty_accounts SET miles_balance = miles_balance + ? "
                    "WHERE customer_id = ?", (upgrade_miles, b["customer_id"]))
    ctx.execute("UPDATE reservations SET status = 'cancelled', cancelled_at = ?, "
                "cancel_reason = ? WHERE reservation_id = ?", (ctx.now(), reason, rid))
    ctx.execute("UPDATE fares SET seats_available = seats_available + ? WHERE fare_id = ?",
                (b["passenger_count"], b["fare_id"]))
    ctx.execute("UPDATE passengers SET seat = NULL, checked_in = 0 WHERE reservation_id = ?",
                (rid,))
    return {"reservation_id": rid, "status": "cancelled", "refund_amount": refund,
            "refunded_to": method if refund > 0 else None, "miles_refunded": upgrade_miles,
            "rule": rule}


@tool(write=True)
def change_flight(
        ctx: Ctx,
        reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")],
        new_flight_id: Annotated[int, Field(ge=1)],
        payment_method_id: Annotated[str, Field(min_length=1)] = None,
):
    """Move a confirmed reservation to another flight on the same route and in the same fare class.
    Costs the fare's per-passenger change fee plus any increase in fare (no refund if the new
    fare is cheaper), charged to payment_method_id. Basic fares cannot be changed. If the
    airline cancelled the original flight, rebooking is free for every fare class. Seat
    assignments are released.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
        new_flight_id: flight_id of the replacement flight (search_flights).
        payment_method_id: Id of one of the reservation owner's saved payment methods (e.g.
            'pm_...'); see get_customer. Required when the change costs money.
    """
    from datetime import datetime, timedelta

    b = _booking(ctx, reservation_id)
    rid = b["reservation_id"]
    airline_cancelled = b["flight_status"] == "cancelled"
    if b["status"] != "confirmed":
        raise ToolError(f"Reservation {rid} is {b['status']} and cannot be changed.")
    if not airline_cancelled:
        _require_open(ctx, b)
    if b["change_fee"] is None and not airline_cancelled:
        raise ToolError(f"{b['fare_class'].capitalize()} fares cannot be changed; the "
                        "reservation can only be cancelled.")
    if new_flight_id == b["flight_id"]:
        raise ToolError(f"Reservation {rid} is already on flight {new_flight_id}.")
    new = ctx.one("SELECT * FROM flights WHERE flight_id = ?", (new_flight_id,))
    if new is None:
        raise ToolError(f"No flight with id {new_flight_id}.")
    if (new["origin"], new["destination"]) != (b["origin"], b["destination"]):
        raise ToolError(f"Flight {new['flight_number']} flies {new['origin']}-"
                        f"{new['destination']}, not {b['origin']}-{b['destination']}; changes "
                        "must keep the same route.")
    if new["status"] not in ("scheduled", "delayed"):
        raise ToolError(f"Flight {new['flight_number']} on {new['scheduled_departure'][:10]} "
                        f"is {new['status']}.")
    if (datetime.fromisoformat(new["scheduled_departure"])
            <= datetime.fromisoformat(ctx.now()) + timedelta(minutes=60)):
        raise ToolError("Changes close 60 minutes before the new flight departs.")
    fare = ctx.one("SELECT * FROM fares WHERE flight_id = ? AND fare_class = ?",
                   (new_flight_id, b["fare_class"]))
    count = b["passenger_count"]
    if fare is None or fare["seats_available"] < count:
        left = 0 if fare is None else fare["seats_available"]
        raise ToolError(f"Only {left} {b['fare_class']} seat(s) left on flight "
                        f"{new['flight_number']}; {count} needed.")
    change_fee = 0.0 if airline_cancelled else b["change_fee"] * count
    paid_per_seat = b["fare_total"] / count
    difference = 0.0 if airline_cancelled else max(0.0, fare["price"] - paid_per_seat) * count
    cost = round(change_fee + difference, 2)
    payment_id = None
    if cost > 0:
        if not payment_method_id:
            raise ToolError(f"This change costs ${cost:.2f} (change fee ${change_fee:.2f} + "
                            f"fare difference ${difference:.2f}); give a payment_method_id.")
        payment_id = _charge(ctx, b["customer_id"], payment_method_id, cost, rid, "change")
    ctx.execute("UPDATE fares SET seats_available = seats_available + ? WHERE fare_id = ?",
                (count, b["fare_id"]))
    ctx.execute("UPDATE fares SET seats_available = seats_available - ? WHERE fare_id = ?",
                (count, fare["fare_id"]))
    ctx.execute("UPDATE reservations SET flight_id = ?, fare_id = ?, fare_total = round(? , 2) "
                "WHERE reservation_id = ?",
                (new_flight_id, fare["fare_id"], b["fare_total"] + difference, rid))
    ctx.execute("UPDATE passengers SET seat = NULL, checked_in = 0 WHERE reservation_id = ?",
                (rid,))
    return {"reservation_id": rid, "status": "confirmed", "new_flight_number":
            new["flight_number"], "new_departure": new["scheduled_departure"],
            "change_fee": round(change_fee, 2), "fare_difference": round(difference, 2),
            "amount_charged": cost, "payment_id": payment_id,
            "note": "Seat assignments were released; choose new seats or check in."}
