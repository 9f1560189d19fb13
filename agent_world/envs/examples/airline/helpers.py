"""Helpers the airline tools share (shipped once, in the spec's `helpers`): a reservation with
its flight and fare, the "still open" check, and charging a saved payment method."""

from agent_world.envs.toolkit import ToolError


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
