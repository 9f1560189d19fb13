"""The read tools of the `airline` example environment (toolkit form).

Each @tool function becomes one tool (see agent_world.envs.toolkit): its argument schema comes
from the type hints and the docstring, and the helpers it calls (helpers.py) are found and
shipped in the spec's shared `helpers` automatically. The worker runs the code with `ctx`
(database, clock, ids) and `ToolError`.

Times are ISO strings in each airport's local time; `ctx.now()` is the airline's system clock.
"""

from typing import Annotated, Literal

from pydantic import Field

from agent_world.envs.toolkit import Ctx, ToolError, tool

from .helpers import _booking


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


@tool(require_any=('customer_id', 'email', 'loyalty_number'))
def get_customer(
        ctx: Ctx,
        customer_id: Annotated[int, Field(ge=1)] = None,
        email: Annotated[str, Field(min_length=3)] = None,
        loyalty_number: Annotated[str, Field(pattern=r"^\s*[A-Za-z]{2}\d{9}\s*$")] = None,
):
    """Look up a customer profile by id, email or NorthMiles number: contact details, saved
    payment methods (with expiry and voucher balances) and loyalty summary. Use it to identify
    the caller and to pick a payment_method_id for a purchase.

    Args:
        customer_id: Customer id.
        email: Email address on file (case-insensitive).
        loyalty_number: NorthMiles number, e.g. 'NW123456789' (case-insensitive).
    """
    # One key is enough; the most specific one given wins.
    if customer_id is not None:
        c, who = ctx.one("SELECT * FROM customers WHERE customer_id = ?",
                         (customer_id,)), f"id {customer_id}"
    elif email is not None:
        c, who = ctx.one("SELECT * FROM customers WHERE lower(email) = lower(?)",
                         (email.strip(),)), f"email {email!r}"
    else:
        c, who = ctx.one("SELECT c.* FROM customers c JOIN loyalty_accounts l "
                         "ON l.customer_id = c.customer_id WHERE l.loyalty_number = ?",
                         (loyalty_number.strip().upper(),)), f"NorthMiles number {loyalty_number!r}"
    if c is None:
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
