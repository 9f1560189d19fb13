"""The airline's tables: airports, fleet, flights, fares, customers, loyalty, payment methods,
reservations, passengers and payments."""

from __future__ import annotations

from typing import Any


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
