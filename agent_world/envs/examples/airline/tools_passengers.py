"""The airline tools that act on a reservation's travellers: bags, passenger details, seats,
check-in and upgrades with miles."""

from typing import Annotated

from pydantic import Field

from agent_world.envs.toolkit import Ctx, ToolError, tool

from .helpers import _booking, _charge, _require_open


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
