"""Tool implementations of the `airline` example environment (authoring module).

Each @tool function here becomes one tool (toolkit form, see agent_world.envs.toolkit): its
argument schema comes from the type hints and the docstring, and the helpers it calls are found
and shipped in the spec's shared `helpers` automatically. The worker runs the code with `ctx`
(database, clock, ids) and `ToolError`.

Times are ISO strings in each airport's local time; `ctx.now()` is the airline's system clock.
"""

from typing import Annotated, Literal

from pydantic import Field
from typing_extensions import TypedDict

from agent_world.envs.toolkit import Ctx, ToolError, tool


class PassengersItem(TypedDict):
    first_name: Annotated[str, Field(min_length=1, description="Given name.")]
    last_name: Annotated[str, Field(min_length=1, description="Family name.")]
    date_of_birth: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="YYYY-MM-DD.")]


# ---- helpers (shipped once, in the spec's helpers) ---------------------------------------------
def _booking(ctx, reservation_id):
    """The reservation joined with its flight and fare, or ToolError if there is none."""
    rid = str(reservation_id).strip().upper()
    row = ctx.one(
        "SELECT r.*, f.flight_number, f.origin, f.destination, f.scheduled_departure, "
        "f.scheduled_arrival, f.status AS flight_status, f.delay_minutes, f.aircraft_id, "
        "fa.fare_class, fa.price, fa.refundable, fa.cancellation_fee, fa.change_fee, "
        "fa.free_checked_bags, fa.seat_selection "
        "FROM reservations r JOIN flights f ON f.flight_id = r.flight_id "
        "JOIN fares fa ON fa.fare_id = r.fare_id WHERE r.reservation_id = ?", (rid,))
    if row is None:
        raise ToolError(f"No reservation found with confirmation code {rid!r}.")
    return row


def _require_open(ctx, booking):
    """ToolError unless the reservation is confirmed and its flight has not left yet."""
    from datetime import datetime, timedelta

    rid = booking["reservation_id"]
    if booking["status"] == "cancelled":
        raise ToolError(f"Reservation {rid} is cancelled.")
    if booking["status"] == "flown":
        raise ToolError(f"Reservation {rid} has already been flown.")
    if booking["flight_status"] in ("boarding", "departed", "landed"):
        raise ToolError(f"Flight {booking['flight_number']} of reservation {rid} is already "
                        f"{booking['flight_status']}; the reservation can no longer be modified.")
    leaves = (datetime.fromisoformat(booking["scheduled_departure"])
              + timedelta(minutes=booking["delay_minutes"] or 0))
    if leaves <= datetime.fromisoformat(ctx.now()):
        raise ToolError(f"Flight {booking['flight_number']} of reservation {rid} has already "
                        "departed.")


def _charge(ctx, customer_id, payment_method_id, amount, reservation_id, kind):
    """Charge `amount` USD to one of the customer's saved payment methods; the payment id."""
    pm = ctx.one("SELECT * FROM payment_methods WHERE payment_method_id = ?",
                 (payment_method_id,))
    if pm is None:
        raise ToolError(f"Unknown payment method {payment_method_id!r}.")
    if pm["customer_id"] != customer_id:
        raise ToolError(f"Payment method {payment_method_id} does not belong to customer "
                        f"{customer_id}.")
    if pm["expiry"] and pm["expiry"] < ctx.today()[:7]:
        what = ("travel voucher" if pm["type"] == "travel_voucher"
                else f"{pm['brand']} card ending in {pm['last4']}")
        raise ToolError(f"The {what} ({payment_method_id}) expired in {pm['expiry']}; use "
                        "another payment method.")
    if pm["type"] == "travel_voucher":
        if (pm["balance"] or 0) + 1e-9 < amount:
            raise ToolError(f"Travel voucher {payment_method_id} has a balance of "
                            f"${pm['balance'] or 0:.2f}, less than the ${amount:.2f} due.")
        ctx.execute("UPDATE payment_methods SET balance = round(balance - ?, 2) "
                    "WHERE payment_method_id = ?", (amount, payment_method_id))
    payment_id = ctx.new_id("PAY-")
    ctx.execute("INSERT INTO payments (payment_id, reservation_id, payment_method_id, kind, "
                "amount, miles, created_at) VALUES (?, ?, ?, ?, ?, 0, ?)",
                (payment_id, reservation_id, payment_method_id, kind, round(amount, 2),
                 ctx.now()))
    return payment_id


# ---- read tools ---------------------------------------------------------------------------------
@tool()
def list_airports(ctx: Ctx, country: Annotated[str, Field(pattern=r"^[A-Za-z]{2}$")] = None):
    """List the airports Northwind Airlines serves (IATA code, name, city, country, time zone,
    whether it is a hub). Use it to resolve a city name to an airport code before searching
    flights.

    Args:
        country: Only airports in this ISO 3166-1 alpha-2 country code, e.g. 'US' or 'GB'.
    """
    sql = ("SELECT iata_code, name, city, country, timezone, is_hub FROM airports")
    params = ()
    if country:
        sql += " WHERE country = ?"
        params = (country.upper(),)
    rows = ctx.query(sql + " ORDER BY iata_code", params)
    if not rows:
        raise ToolError(f"No airports served in country {country!r} (use an ISO code like 'US').")
    for r in rows:
        r["is_hub"] = bool(r["is_hub"])
    return rows


@tool()
def search_flights(
        ctx: Ctx,
        origin: Annotated[str, Field(pattern=r"^[A-Za-z]{3}$")],
        destination: Annotated[str, Field(pattern=r"^[A-Za-z]{3}$")],
        date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
        fare_class: Literal["basic", "economy", "business"] = None,
        passengers: Annotated[int, Field(ge=1, le=9)] = 1,
):
    """Find bookable flights between two airports: flights that are scheduled or delayed, have not
    departed, and have enough seats for the party in at least one fare class. Each result lists
    its fares (class, per-passenger price, seats left, refund/change/baggage rules). Without a
    date it searches the next 14 days.

    Args:
        origin: Departure airport IATA code, e.g. 'SFO'.
        destination: Arrival airport IATA code, e.g. 'JFK'.
        date: Departure date (YYYY-MM-DD, local time). Optional: omit for the next 14 days.
        fare_class: Only return this fare class.
        passengers: Party size; fares with fewer seats left are omitted.
    """
    from datetime import date as date_type
    from datetime import datetime, timedelta

    origin, destination = origin.upper(), destination.upper()
    if origin == destination:
        raise ToolError("Origin and destination must be different airports.")
    for code in (origin, destination):
        if ctx.one("SELECT iata_code FROM airports WHERE iata_code = ?", (code,)) is None:
            raise ToolError(f"Unknown airport code {code!r}; list_airports shows the airports "
                            "served.")
    now = ctx.now()
    if date is None:
        start = now
        end = (datetime.fromisoformat(now) + timedelta(days=14)).isoformat(timespec="seconds")
    else:
        try:
            day = date_type.fromisoformat(date)
        except ValueError:
            raise ToolError(f"Invalid date {date!r}; use YYYY-MM-DD.") from None
        if day.isoformat() < ctx.today():
            raise ToolError(f"{date} is in the past; flights can only be searched from "
                            f"{ctx.today()} on.")
        start = max(now, day.isoformat() + "T00:00:00")
        end = day.isoformat() + "T23:59:59"
    flights = ctx.query(
        "SELECT f.flight_id, f.flight_number, f.origin, f.destination, f.scheduled_departure, "
        "f.scheduled_arrival, f.status, f.delay_minutes, a.model AS aircraft "
        "FROM flights f JOIN aircraft a ON a.tail_number = f.aircraft_id "
        "WHERE f.origin = ? AND f.destination = ? AND f.scheduled_departure > ? "
        "AND f.scheduled_departure <= ? AND f.status IN ('scheduled', 'delayed') "
        "ORDER BY f.scheduled_departure", (origin, destination, start, end))
    results = []
    for f in flights:
        sql = ("SELECT fare_class, price, seats_available, refundable, change_fee, "
               "free_checked_bags FROM fares WHERE flight_id = ? AND seats_available >= ?")
        params = [f["flight_id"], passengers]
        if fare_class:
            sql += " AND fare_class = ?"
            params.append(fare_class)
        fares = ctx.query(sql + " ORDER BY price", params)
        if not fares:
            continue
        for fare in fares:
            fare["refundable"] = bool(fare["refundable"])
            fare["changes_allowed"] = fare["change_fee"] is not None
        f["fares"] = fares
        results.append(f)
    return results


@tool()
def get_flight_status(
        ctx: Ctx,
        flight_number: Annotated[str, Field(pattern=r"^[A-Za-z]{2} ?[0-9]{1,4}$")],
        date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
):
    """Operational status of a flight: scheduled/delayed/boarding/departed/landed/cancelled, delay,
    estimated times, gate and aircraft. Without a date it reports the next departure from today
    on (or the latest one if none is left).

    Args:
        flight_number: Flight number such as 'NW100' (a space is allowed).
        date: Local departure date (YYYY-MM-DD).
    """
    from datetime import datetime, timedelta

    number = flight_number.replace(" ", "").upper()
    if date is not None:
        rows = ctx.query("SELECT * FROM flights WHERE flight_number = ? "
                         "AND substr(scheduled_departure, 1, 10) = ?", (number, date))
        if not rows:
            if ctx.one("SELECT flight_id FROM flights WHERE flight_number = ?", (number,)):
                raise ToolError(f"Flight {number} does not operate on {date}.")
            raise ToolError(f"Unknown flight number {number!r}.")
        flight = rows[0]
    else:
        flight = ctx.one("SELECT * FROM flights WHERE flight_number = ? "
                         "AND scheduled_departure >= ? ORDER BY scheduled_departure LIMIT 1",
                         (number, ctx.today()))
        if flight is None:
            flight = ctx.one("SELECT * FROM flights WHERE flight_number = ? "
                             "ORDER BY scheduled_departure DESC LIMIT 1", (number,))
        if flight is None:
            raise ToolError(f"Unknown flight number {number!r}.")
    delay = timedelta(minutes=flight["delay_minutes"] or 0)
    ap = {a["iata_code"]: a for a in ctx.query(
        "SELECT iata_code, city FROM airports WHERE iata_code IN (?, ?)",
        (flight["origin"], flight["destination"]))}
    aircraft = ctx.one("SELECT model FROM aircraft WHERE tail_number = ?",
                       (flight["aircraft_id"],))
    cancelled = flight["status"] == "cancelled"
    return {
        "flight_id": flight["flight_id"],
        "flight_number": flight["flight_number"],
        "origin": flight["origin"],
        "origin_city": ap[flight["origin"]]["city"],
        "destination": flight["destination"],
        "destination_city": ap[flight["destination"]]["city"],
        "status": flight["status"],
        "scheduled_departure": flight["scheduled_departure"],
        "scheduled_arrival": flight["scheduled_arrival"],
        "estimated_departure": None if cancelled else (
            datetime.fromisoformat(flight["scheduled_departure"]) + delay
        ).isoformat(timespec="seconds"),
        "estimated_arrival": None if cancelled else (
            datetime.fromisoformat(flight["scheduled_arrival"]) + delay
        ).isoformat(timespec="seconds"),
        "delay_minutes": flight["delay_minutes"],
        "gate": flight["gate"],
        "aircraft": aircraft["model"],
        "tail_number": flight["aircraft_id"],
    }


@tool(require_any=('customer_id', 'email'))
def get_customer(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)] = None,
        email: Annotated[str, Field(min_length=3)] = None,
):
    """Look up a customer profile by id or email: contact details, saved payment methods (with
    expiry and voucher balances) and loyalty summary. Use it to identify the caller and to pick
    a payment_method_id for a purchase.

    Args:
        customer_id: Customer id.
        email: Email address on file (case-insensitive).
    """
    if customer_id is None and email is None:
        raise ToolError("Give a customer_id or an email address.")
    if customer_id is not None:
        c = ctx.one("SELECT * FROM customers WHERE customer_id = ?", (customer_id,))
    else:
        c = ctx.one("SELECT * FROM customers WHERE lower(email) = lower(?)", (email.strip(),))
    if c is None:
        who = f"id {customer_id}" if customer_id is not None else f"email {email!r}"
        raise ToolError(f"No customer with {who}.")
    methods = ctx.query(
        "SELECT payment_method_id, type, brand, last4, expiry, balance FROM payment_methods "
        "WHERE customer_id = ? ORDER BY payment_method_id", (c["customer_id"],))
    for m in methods:
        m["expired"] = bool(m["expiry"] and m["expiry"] < ctx.today()[:7])
    loyalty = ctx.one("SELECT loyalty_number, tier, miles_balance FROM loyalty_accounts "
                      "WHERE customer_id = ?", (c["customer_id"],))
    c["payment_methods"] = methods
    c["loyalty"] = loyalty
    return c


@tool()
def get_loyalty_balance(ctx: Ctx, customer_id: Annotated[int, Field(ge=1)]):
    """NorthMiles loyalty account of a customer: tier, redeemable miles, lifetime miles and miles
    needed for the next tier. Errors if the customer is not enrolled.

    Args:
        customer_id: Customer id.
    """
    account = ctx.one("SELECT l.*, c.first_name, c.last_name FROM loyalty_accounts l "
                      "JOIN customers c ON c.customer_id = l.customer_id "
                      "WHERE l.customer_id = ?", (customer_id,))
    if account is None:
        if ctx.one("SELECT customer_id FROM customers WHERE customer_id = ?", (customer_id,)):
            raise ToolError(f"Customer {customer_id} is not enrolled in the loyalty program.")
        raise ToolError(f"No customer with id {customer_id}.")
    thresholds = [("silver", 25000), ("gold", 50000), ("platinum", 100000)]
    next_tier = next(((t, m) for t, m in thresholds if account["lifetime_miles"] < m), None)
    return {
        "loyalty_number": account["loyalty_number"],
        "customer_id": customer_id,
        "name": f"{account['first_name']} {account['last_name']}",
        "tier": account["tier"],
        "miles_balance": account["miles_balance"],
        "lifetime_miles": account["lifetime_miles"],
        "member_since": account["enrolled_on"],
        "next_tier": next_tier[0] if next_tier else None,
        "miles_to_next_tier": next_tier[1] - account["lifetime_miles"] if next_tier else 0,
    }


@tool()
def get_reservation(ctx: Ctx, reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")]):
    """Full details of one reservation: status, flight, fare class and its rules, passengers
    (seats, bags, check-in) and every payment/refund. Call it before changing or cancelling a
    reservation.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
    """
    b = _booking(ctx, reservation_id)
    passengers = ctx.query(
        "SELECT passenger_id, first_name, last_name, date_of_birth, seat, checked_bags, "
        "checked_in FROM passengers WHERE reservation_id = ? ORDER BY passenger_id",
        (b["reservation_id"],))
    for p in passengers:
        p["checked_in"] = bool(p["checked_in"])
    payments = ctx.query(
        "SELECT payment_id, kind, amount, miles, payment_method_id, created_at FROM payments "
        "WHERE reservation_id = ? ORDER BY created_at, payment_id", (b["reservation_id"],))
    return {
        "reservation_id": b["reservation_id"],
        "status": b["status"],
        "customer_id": b["customer_id"],
        "created_at": b["created_at"],
        "cancelled_at": b["cancelled_at"],
        "flight": {
            "flight_id": b["flight_id"], "flight_number": b["flight_number"],
            "origin": b["origin"], "destination": b["destination"],
            "scheduled_departure": b["scheduled_departure"],
            "scheduled_arrival": b["scheduled_arrival"], "status": b["flight_status"],
        },
        "fare_class": b["fare_class"],
        "fare_rules": {
            "refundable": bool(b["refundable"]), "cancellation_fee": b["cancellation_fee"],
            "change_fee": b["change_fee"], "changes_allowed": b["change_fee"] is not None,
            "free_checked_bags": b["free_checked_bags"],
            "seat_selection": bool(b["seat_selection"]),
        },
        "fare_total": b["fare_total"],
        "passengers": passengers,
        "payments": payments,
    }


@tool()
def list_customer_reservations(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)],
        status: Literal["confirmed", "cancelled", "flown"] = None,
):
    """A customer's reservations, latest departure first, with flight and fare summary. Optionally
    filter by reservation status.

    Args:
        customer_id: Customer id.
        status: Only reservations with this status.
    """
    if ctx.one("SELECT customer_id FROM customers WHERE customer_id = ?", (customer_id,)) is None:
        raise ToolError(f"No customer with id {customer_id}.")
    sql = ("SELECT r.reservation_id, r.status, r.passenger_count, r.fare_total, r.created_at, "
           "fa.fare_class, f.flight_number, f.origin, f.destination, f.scheduled_departure, "
           "f.status AS flight_status FROM reservations r "
           "JOIN flights f ON f.flight_id = r.flight_id JOIN fares fa ON fa.fare_id = r.fare_id "
           "WHERE r.customer_id = ?")
    params = [customer_id]
    if status:
        sql += " AND r.status = ?"
        params.append(status)
    return ctx.query(sql + " ORDER BY f.scheduled_departure DESC", params)


# ---- write tools --------------------------------------------------------------------------------
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


@tool(write=True)
def add_baggage(
        ctx: Ctx,
        reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")],
        passenger_id: Annotated[int, Field(ge=1)],
        bags: Annotated[int, Field(ge=1, le=3)],
        payment_method_id: Annotated[str, Field(min_length=1)] = None,
):
    """Add checked bags for one passenger of a reservation (at most 3 per passenger). Bags within
    the free allowance (fare's free bags, +1 for gold and platinum members) cost nothing; each
    bag beyond it costs $40, charged to payment_method_id.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
        passenger_id: passenger_id from get_reservation.
        bags: Number of bags to add.
        payment_method_id: Id of one of the reservation owner's saved payment methods (e.g.
            'pm_...'); see get_customer. Required when a bag fee is due.
    """
    b = _booking(ctx, reservation_id)
    rid = b["reservation_id"]
    _require_open(ctx, b)
    if b["flight_status"] == "cancelled":
        raise ToolError(f"Flight {b['flight_number']} is cancelled; change or cancel the "
                        "reservation instead.")
    p = ctx.one("SELECT * FROM passengers WHERE passenger_id = ? AND reservation_id = ?",
                (passenger_id, rid))
    if p is None:
        raise ToolError(f"Passenger {passenger_id} is not on reservation {rid}.")
    new_total = p["checked_bags"] + bags
    if new_total > 3:
        raise ToolError(f"At most 3 checked bags per passenger; {p['first_name']} "
                        f"{p['last_name']} already has {p['checked_bags']}.")
    tier = ctx.db.scalar("SELECT tier FROM loyalty_accounts WHERE customer_id = ?",
                         (b["customer_id"],))
    allowance = b["free_checked_bags"] + (1 if tier in ("gold", "platinum") else 0)
    paid_before = max(0, p["checked_bags"] - allowance)
    paid_after = max(0, new_total - allowance)
    fee = 40.0 * (paid_after - paid_before)
    payment_id = None
    if fee > 0:
        if not payment_method_id:
            raise ToolError(f"{paid_after - paid_before} bag(s) go beyond the free allowance "
                            f"of {allowance}; the fee is ${fee:.2f}. Give a payment_method_id.")
        payment_id = _charge(ctx, b["customer_id"], payment_method_id, fee, rid, "baggage")
    ctx.execute("UPDATE passengers SET checked_bags = ? WHERE passenger_id = ?",
                (new_total, passenger_id))
    return {"reservation_id": rid, "passenger_id": passenger_id, "checked_bags": new_total,
            "free_allowance": allowance, "fee": fee, "payment_id": payment_id}


@tool(write=True, require_any=('first_name', 'last_name', 'date_of_birth'))
def update_passenger(
        ctx: Ctx,
        reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")],
        passenger_id: Annotated[int, Field(ge=1)],
        first_name: Annotated[str, Field(min_length=1)] = None,
        last_name: Annotated[str, Field(min_length=1)] = None,
        date_of_birth: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")] = None,
):
    """Correct a passenger's name or date of birth before check-in. Tickets are not transferable: a
    name may change by at most 3 characters (typo fixes), so a different traveller needs a new
    booking.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
        passenger_id: passenger_id from get_reservation.
        first_name: Corrected first name.
        last_name: Corrected last name.
        date_of_birth: Corrected date of birth (YYYY-MM-DD).
    """
    from datetime import date as date_type

    def distance(a, b):
        prev = list(range(len(b) + 1))
        for i, ca in enumerate(a, 1):
            cur = [i]
            for j, cb in enumerate(b, 1):
                cur.append(min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (ca != cb)))
            prev = cur
        return prev[-1]

    if first_name is None and last_name is None and date_of_birth is None:
        raise ToolError("Nothing to update: give first_name, last_name or date_of_birth.")
    b = _booking(ctx, reservation_id)
    rid = b["reservation_id"]
    _require_open(ctx, b)
    p = ctx.one("SELECT * FROM passengers WHERE passenger_id = ? AND reservation_id = ?",
                (passenger_id, rid))
    if p is None:
        raise ToolError(f"Passenger {passenger_id} is not on reservation {rid}.")
    if p["checked_in"]:
        raise ToolError(f"{p['first_name']} {p['last_name']} is already checked in; details "
                        "can no longer be changed.")
    changes = {}
    for field, value in (("first_name", first_name), ("last_name", last_name)):
        if value is None:
            continue
        value = value.strip()
        if not value:
            raise ToolError(f"{field} must not be blank.")
        if distance(value.lower(), p[field].lower()) > 3:
            raise ToolError(f"Tickets are non-transferable: {field} may only be corrected by up "
                            f"to 3 characters ({p[field]!r} -> {value!r} is a different name).")
        changes[field] = value
    if date_of_birth is not None:
        try:
            born = date_type.fromisoformat(date_of_birth).isoformat()
        except ValueError:
            raise ToolError(f"Invalid date_of_birth {date_of_birth!r}; use YYYY-MM-DD."
                            ) from None
        if born >= ctx.today():
            raise ToolError(f"date_of_birth {born} must be in the past.")
        changes["date_of_birth"] = born
    for field, value in changes.items():
        ctx.execute(f"UPDATE passengers SET {field} = ? WHERE passenger_id = ?",
                    (value, passenger_id))
    row = ctx.one("SELECT passenger_id, first_name, last_name, date_of_birth FROM passengers "
                  "WHERE passenger_id = ?", (passenger_id,))
    row["reservation_id"] = rid
    row["updated_fields"] = sorted(changes)
    return row


@tool(write=True)
def assign_seat(
        ctx: Ctx,
        reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")],
        passenger_id: Annotated[int, Field(ge=1)],
        seat: Annotated[str, Field(pattern=r"^[1-9][0-9]?[A-Fa-f]$")],
):
    """Choose a seat for one passenger. Only economy and business fares include seat selection
    (basic fares get a seat at check-in). The seat must be in the cabin of the fare class
    (business: rows 1..N seats A-D; economy: the rows after, seats A-F) and not taken by another
    passenger on the flight.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
        passenger_id: passenger_id from get_reservation.
        seat: Seat such as '14C' (row number + letter).
    """
    b = _booking(ctx, reservation_id)
    rid = b["reservation_id"]
    _require_open(ctx, b)
    if b["flight_status"] == "cancelled":
        raise ToolError(f"Flight {b['flight_number']} is cancelled.")
    if not b["seat_selection"]:
        raise ToolError(f"{b['fare_class'].capitalize()} fares do not include seat selection; "
                        "seats are assigned at check-in.")
    p = ctx.one("SELECT * FROM passengers WHERE passenger_id = ? AND reservation_id = ?",
                (passenger_id, rid))
    if p is None:
        raise ToolError(f"Passenger {passenger_id} is not on reservation {rid}.")
    seat = seat.strip().upper()
    plane = ctx.one("SELECT * FROM aircraft WHERE tail_number = ?", (b["aircraft_id"],))
    row, letter = int(seat[:-1]), seat[-1]
    if b["fare_class"] == "business":
        if not (1 <= row <= plane["business_rows"] and letter in "ABCD"):
            raise ToolError(f"{seat} is not a business seat on the {plane['model']}: business is "
                            f"rows 1-{plane['business_rows']}, seats A-D.")
    else:
        first, last = plane["business_rows"] + 1, plane["business_rows"] + plane["economy_rows"]
        if not (first <= row <= last and letter in "ABCDEF"):
            raise ToolError(f"{seat} is not an economy seat on the {plane['model']}: economy is "
                            f"rows {first}-{last}, seats A-F.")
    taken = ctx.one("SELECT p.passenger_id FROM passengers p JOIN reservations r "
                    "ON r.reservation_id = p.reservation_id WHERE r.flight_id = ? "
                    "AND r.status = 'confirmed' AND p.seat = ? AND p.passenger_id != ?",
                    (b["flight_id"], seat, passenger_id))
    if taken is not None:
        raise ToolError(f"Seat {seat} on flight {b['flight_number']} is already taken.")
    ctx.execute("UPDATE passengers SET seat = ? WHERE passenger_id = ?", (seat, passenger_id))
    return {"reservation_id": rid, "passenger_id": passenger_id, "seat": seat,
            "previous_seat": p["seat"], "flight_number": b["flight_number"]}


@tool(write=True)
def check_in(ctx: Ctx, reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")]):
    """Check in every passenger of a reservation and issue boarding passes. Open from 24 hours
    until 45 minutes before (estimated) departure. Passengers without a seat get one assigned:
    basic fares from the back of the cabin.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
    """
    from datetime import datetime, timedelta

    b = _booking(ctx, reservation_id)
    rid = b["reservation_id"]
    _require_open(ctx, b)
    if b["flight_status"] == "cancelled":
        raise ToolError(f"Flight {b['flight_number']} is cancelled; check-in is not possible.")
    now = datetime.fromisoformat(ctx.now())
    leaves = (datetime.fromisoformat(b["scheduled_departure"])
              + timedelta(minutes=b["delay_minutes"] or 0))
    if leaves - now > timedelta(hours=24):
        opens = (leaves - timedelta(hours=24)).isoformat(timespec="minutes")
        raise ToolError(f"Check-in for flight {b['flight_number']} opens 24 hours before "
                        f"departure, at {opens}.")
    if leaves - now < timedelta(minutes=45):
        raise ToolError("Check-in closed 45 minutes before departure.")
    plane = ctx.one("SELECT * FROM aircraft WHERE tail_number = ?", (b["aircraft_id"],))
    taken = {r["seat"] for r in ctx.query(
        "SELECT p.seat FROM passengers p JOIN reservations r ON r.reservation_id = "
        "p.reservation_id WHERE r.flight_id = ? AND r.status = 'confirmed' "
        "AND p.seat IS NOT NULL", (b["flight_id"],))}
    if b["fare_class"] == "business":
        rows, letters = range(1, plane["business_rows"] + 1), "ABCD"
    else:
        rows = range(plane["business_rows"] + plane["economy_rows"], plane["business_rows"], -1)
        if b["fare_class"] != "basic":
            rows = reversed(rows)
        letters = "ABCDEF"
    free = [f"{r}{c}" for r in rows for c in letters if f"{r}{c}" not in taken]
    unseated = ctx.db.scalar("SELECT count(*) FROM passengers WHERE reservation_id = ? "
                             "AND seat IS NULL", (rid,))
    if unseated > len(free):
        raise ToolError(f"No free {b['fare_class']} seats left to assign on flight "
                        f"{b['flight_number']}; see an airport agent.")
    group = {"business": 1, "economy": 3, "basic": 5}[b["fare_class"]]
    passes = []
    for p in ctx.query("SELECT * FROM passengers WHERE reservation_id = ? "
                       "ORDER BY passenger_id", (rid,)):
        seat = p["seat"] or free.pop(0)
        ctx.execute("UPDATE passengers SET seat = ?, checked_in = 1 WHERE passenger_id = ?",
                    (seat, p["passenger_id"]))
        passes.append({"passenger_id": p["passenger_id"],
                       "name": f"{p['first_name']} {p['last_name']}", "seat": seat,
                       "boarding_group": group})
    return {"reservation_id": rid, "flight_number": b["flight_number"],
            "departure": leaves.isoformat(timespec="seconds"),
            "gate": ctx.db.scalar("SELECT gate FROM flights WHERE flight_id = ?",
                                  (b["flight_id"],)),
            "boarding_passes": passes}


@tool(write=True)
def upgrade_with_miles(
        ctx: Ctx,
        reservation_id: Annotated[str, Field(pattern=r"^[A-Za-z0-9]{6}$")],
):
    """Upgrade an economy reservation to business using the customer's NorthMiles: 15,000 miles per
    passenger within the US, 40,000 on international flights. Basic fares are not eligible;
    business seats must be available. Seats are released for reselection.

    Args:
        reservation_id: Six-character reservation confirmation code (record locator), e.g.
            'MGX7Q2'; case-insensitive.
    """
    b = _booking(ctx, reservation_id)
    rid = b["reservation_id"]
    _require_open(ctx, b)
    if b["flight_status"] == "cancelled":
        raise ToolError(f"Flight {b['flight_number']} is cancelled.")
    if b["fare_class"] == "business":
        raise ToolError(f"Reservation {rid} is already in business.")
    if b["fare_class"] == "basic":
        raise ToolError("Basic fares are not eligible for upgrades.")
    account = ctx.one("SELECT * FROM loyalty_accounts WHERE customer_id = ?",
                      (b["customer_id"],))
    if account is None:
        raise ToolError(f"Customer {b['customer_id']} has no loyalty account; upgrades are paid "
                        "with miles.")
    countries = {r["country"] for r in ctx.query(
        "SELECT country FROM airports WHERE iata_code IN (?, ?)",
        (b["origin"], b["destination"]))}
    per_passenger = 15000 if countries == {"US"} else 40000
    miles = per_passenger * b["passenger_count"]
    if account["miles_balance"] < miles:
        raise ToolError(f"Upgrading {b['passenger_count']} passenger(s) costs {miles:,} miles; "
                        f"the balance is {account['miles_balance']:,}.")
    biz = ctx.one("SELECT * FROM fares WHERE flight_id = ? AND fare_class = 'business'",
                  (b["flight_id"],))
    if biz is None or biz["seats_available"] < b["passenger_count"]:
        raise ToolError(f"Not enough business seats left on flight {b['flight_number']}.")
    ctx.execute("UPDATE loyalty_accounts SET miles_balance = miles_balance - ? "
                "WHERE loyalty_number = ?", (miles, account["loyalty_number"]))
    ctx.execute("UPDATE fares SET seats_available = seats_available + ? WHERE fare_id = ?",
                (b["passenger_count"], b["fare_id"]))
    ctx.execute("UPDATE fares SET seats_available = seats_available - ? WHERE fare_id = ?",
                (b["passenger_count"], biz["fare_id"]))
    ctx.execute("UPDATE reservations SET fare_id = ? WHERE reservation_id = ?",
                (biz["fare_id"], rid))
    ctx.execute("UPDATE passengers SET seat = NULL WHERE reservation_id = ?", (rid,))
    payment_id = ctx.new_id("PAY-")
    ctx.execute("INSERT INTO payments (payment_id, reservation_id, payment_method_id, kind, "
                "amount, miles, created_at) VALUES (?, ?, NULL, 'upgrade', 0, ?, ?)",
                (payment_id, rid, miles, ctx.now()))
    return {"reservation_id": rid, "fare_class": "business", "miles_redeemed": miles,
            "miles_balance": account["miles_balance"] - miles, "payment_id": payment_id}
