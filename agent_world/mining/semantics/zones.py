"""Time zones and countries: the IANA zones of a country (`country_zones`, the populous
first), a zone's standard offset and daylight saving (`zone_offsets`), the zones tzdata ships
(`known_zones`) and the country of a US-style postal address (`address_country`)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from datetime import datetime, timedelta
from functools import lru_cache
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from faker.providers.address.en_US import Provider as _UsAddress
from faker.providers.geo import Provider as _Geo


@lru_cache(maxsize=1)
def _zone_table() -> dict[str, tuple[str, ...]]:
    """ISO 3166 country code -> its IANA zones (tzdata's zone.tab and zone1970.tab), ordered
    by how many real places Faker's geo data has in each (the populous zones first)."""
    zones: dict[str, set[str]] = defaultdict(set)
    base = resources.files("tzdata").joinpath("zoneinfo")
    for name in ("zone.tab", "zone1970.tab"):
        for line in base.joinpath(name).read_text(encoding="utf-8").splitlines():
            if line.startswith("#") or not line.strip():
                continue
            parts = line.split("\t")
            if len(parts) >= 3:
                for cc in parts[0].split(","):
                    zones[cc].add(parts[2])
    places = Counter((p[3], p[4]) for p in _Geo.land_coords)
    return {cc: tuple(sorted(zs, key=lambda z, cc=cc: (-places[(cc, z)], z)))
            for cc, zs in zones.items()}


def country_zones(country: str) -> tuple[str, ...]:
    """The IANA zones of an ISO 3166 alpha-2 country (the populous ones first); () unknown."""
    return _zone_table().get(country.upper(), ()) if isinstance(country, str) else ()


def zone_offsets(zone: str) -> tuple[str, bool]:
    """(standard UTC offset, observes DST) of an IANA zone, from the system's tzdata."""
    try:
        tz = ZoneInfo(zone)
    except (ZoneInfoNotFoundError, ValueError):
        return "", False
    jan = datetime(2026, 1, 15, 12, tzinfo=tz).utcoffset() or timedelta(0)
    jul = datetime(2026, 7, 15, 12, tzinfo=tz).utcoffset() or timedelta(0)
    std = min(jan, jul)
    minutes = int(std.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}", jan != jul


def known_zones(like: str | None = None) -> tuple[str, ...]:
    """The IANA zones of tzdata's zone tables, sorted (the shipped package, not the machine's
    own tz database); `like`: only those with its standard offset and daylight saving."""
    zones = sorted({z for zs in _zone_table().values() for z in zs})
    if like is not None:
        want = zone_offsets(like)
        zones = [z for z in zones if zone_offsets(z) == want] if want[0] else []
    return tuple(zones)


_US_STATES = frozenset(_UsAddress.states_abbr)
_US_TERRITORIES = frozenset(getattr(_UsAddress, "territories_abbr", ()))  # own ISO codes
_POSTAL_TAIL = re.compile(r",\s*([A-Z]{2})\s+\d{5}(?:-\d{4})?\s*$")


def address_country(address: Any) -> str | None:
    """The country of a US-style postal address ("..., WA 98101"): US for a state, the
    territory's own ISO code (GU, PR, ...) for a territory; None when it cannot be told."""
    if not isinstance(address, str):
        return None
    m = _POSTAL_TAIL.search(address)
    if m is None:
        return None
    code = m.group(1)
    if code in _US_TERRITORIES:
        return code
    return "US" if code in _US_STATES else None
