"""Answers sent ahead: the statements a tool's call will most likely begin with, learned from
its last call, so the caller can run them before the worker asks.

Most tools begin with the same statements, their parameters taken from the call's arguments,
from the rows an earlier read returned (look up the reservation by the id given, then its
flight by the reservation's flight_id), from an earlier insert's rowid or from the call's clock
and ids (`ctx.now()`, `ctx.new_id(prefix)`: functions of the seed and the committed counters,
which this process holds). Each statement costs a round trip to the worker and back. A Forecast
remembers, per environment and tool, the leading statements of the tool's last call and where
each parameter came from; the next call runs them right after BEGIN, as the tool would, and
sends the answers with the request. The worker hands one out only when the tool sends exactly
that statement with exactly those parameters at that position, so the tool sees what it would
have seen; the first statement it sends itself says how many it took, and the writes run ahead
past that point are rolled back (each has its savepoint) before anything else runs. A miss
costs one wasted statement; a write whose parameters missed (computed by the tool) is never run
ahead again. Statements run ahead under the guard with the call's own rules (writes only in a
write call), within the call's deadline and a size budget: nothing runs that the tool could not
have run itself in that call, and nothing it did not run stays.

A `Forecast` keeps one tool's plan; `EpisodeDB` (agent_world.envs.hostdb) runs it and reports
how the call began.
"""

from __future__ import annotations

import math
import re
from typing import Any

from agent_world.envs.tool_context import call_clock, issued_id
from agent_world.envs.tool_sql import WRITES_COUNTER

MAX_AHEAD = 12  # leading statements learned per tool
MAX_AHEAD_BYTES = 64 << 10  # rows sent ahead per call
MAX_AHEAD_IDS = 8  # a parameter is looked for among the first ids of a prefix a call issues
AHEAD_SHARE = 0.25  # of the call's time limit, the most its statements run ahead may take
_SCALARS = (int, float, str, type(None))  # bool is an int; bytes and JSON stay out
_SELECT = re.compile(r"\s*select\b", re.IGNORECASE)
_HEX = frozenset("0123456789ABCDEF")


def _is_select(sql: str) -> bool:
    """A statement that can only read (SQLite runs one statement per execute; a SELECT cannot
    write, and no SQL function on this connection does). Remembered per text: a tool's calls
    send the same few statements over and over."""
    known = _SELECTS.get(sql)
    if known is None:
        known = _SELECT.match(sql) is not None
        if len(_SELECTS) >= _MEMO_SIZE:
            _SELECTS.clear()
        _SELECTS[sql] = known
    return known


_MEMO_SIZE = 4096  # statement texts (or clocks) remembered at most; then it starts over
_SELECTS: dict[str, bool] = {}
_NAMED: dict[tuple[str, int], dict[str, str]] = {}


def _named(clock_start: str, writes: int) -> dict[str, str]:
    """`ctx.now()`, `ctx.today()` and `ctx.clock` (as a parameter) after `writes` committed
    writes, remembered: every write call of an episode asks for them."""
    key = (clock_start, writes)
    named = _NAMED.get(key)
    if named is None:
        clock = call_clock(clock_start, writes)
        named = {"now": clock.isoformat(timespec="seconds"), "today": clock.date().isoformat(),
                 "clock": clock.isoformat(" ")}
        if len(_NAMED) >= _MEMO_SIZE:
            _NAMED.clear()
        _NAMED[key] = named
    return named


class CallValues:
    """What a call's tool can compute without the database: `ctx.now()`, `ctx.today()`,
    `ctx.clock` as a parameter, and the ids `ctx.new_id(prefix)` issues (see `ToolContext`)."""

    __slots__ = ("seed", "counters", "clock_start", "_named")

    def __init__(self, seed: int, clock_start: str, counters: dict[str, int]):
        self.seed, self.counters, self.clock_start = seed, counters, clock_start
        self._named: dict[str, str] | None = None

    @property
    def named(self) -> dict[str, str]:
        if self._named is None:  # only when a recipe asks (most calls never do)
            self._named = _named(self.clock_start, self.counters.get(WRITES_COUNTER, 0))
        return self._named

    def source(self, value: str) -> tuple | None:
        for name, known in self.named.items():
            if known == value:
                return ("k", name)
        if len(value) >= 8 and _HEX.issuperset(value[-8:]):
            prefix = value[:-8]
            start = self.counters.get(prefix, 0)
            for k in range(1, MAX_AHEAD_IDS + 1):
                if issued_id(self.seed, prefix, start + k) == value:
                    return ("i", prefix, k)
        return None

    def take(self, source: tuple) -> Any:
        if source[0] == "k":
            return self.named.get(source[1], _MISSING)
        return issued_id(self.seed, source[1], self.counters.get(source[1], 0) + source[2])


def _source(value: Any, args: dict[str, Any], firsts: list[tuple | None],
            known: CallValues | None) -> tuple:
    """Where a parameter value came from: an argument, a column of an earlier statement's
    first row (an insert's rowid for writes), the call's clock or ids, or a constant."""
    kind = type(value)
    if kind in _SCALARS or kind is bool:
        for key, arg in args.items():
            if type(arg) is kind and arg == value:
                return ("a", key)
        for i, row in enumerate(firsts):
            if row is not None:
                for j, col in enumerate(row):
                    if type(col) is kind and col == value:
                        return ("r", i, j)
        if kind is str and known is not None:
            found = known.source(value)
            if found is not None:
                return found
    return ("c", value)


def _take(source: tuple, args: dict[str, Any], firsts: list[tuple | None],
          known: CallValues | None) -> Any:
    kind = source[0]
    if kind == "c":
        return source[1]
    if kind == "a":
        value = args.get(source[1], _MISSING)
    elif kind == "r":
        row = firsts[source[1]] if source[1] < len(firsts) else None
        value = row[source[2]] if row is not None and source[2] < len(row) else _MISSING
    else:
        return _MISSING if known is None else known.take(source)
    if type(value) not in _SCALARS and type(value) is not bool:
        return _MISSING
    if type(value) is float and not math.isfinite(value):
        return _MISSING
    return value


_MISSING = object()


def _fill(recipe: Any, args: dict[str, Any], firsts: list[tuple | None],
          known: CallValues | None = None) -> Any:
    """A statement's parameters (as the worker would send them) from its recipe, or None."""
    if isinstance(recipe, dict):
        out = {k: _take(src, args, firsts, known) for k, src in recipe.items()}
        return None if any(v is _MISSING for v in out.values()) else out
    values = [_take(src, args, firsts, known) for src in recipe]
    return None if any(v is _MISSING for v in values) else values


def _computed(ahead: list[Any], sent: tuple[str, Any, Any]) -> bool:
    """Whether the tool sent the write run ahead with another value where the recipe had a
    constant: a value the tool computes (a refund, a sum), which will miss every time."""
    sql, wire, _ = sent
    if sql != ahead[0] or _is_select(sql) or type(wire) is not type(ahead[1]):
        return False
    recipe = ahead[4]
    if isinstance(wire, dict):
        keys = wire.keys() & recipe.keys()
        return any(recipe[k][0] == "c" and wire[k] != ahead[1].get(k) for k in keys)
    return any(src[0] == "c" and sent_v != ran_v for src, sent_v, ran_v
               in zip(recipe, wire, ahead[1], strict=False))


class Forecast:
    """The leading statements of one tool's last call (see above), and how well they
    predicted."""

    __slots__ = ("plan", "sent", "used", "deferred", "reruns", "missed")

    def __init__(self) -> None:
        self.plan: tuple[tuple[str, Any], ...] = ()
        self.sent = 0  # statements run ahead
        self.used = 0  # of those, answers the tool took
        self.deferred = 0  # calls run with deferred writes
        self.reruns = 0  # of those, calls run again because a deferred write failed
        self.missed: set[str] = set()  # writes the tool sent with other parameters than run

    def learn(self, leading: list[tuple[str, Any, tuple | None]], args: dict[str, Any],
              known: CallValues | None = None) -> None:
        firsts: list[tuple | None] = []
        plan = []
        for sql, wire, first in leading[:MAX_AHEAD]:
            if sql in self.missed:
                break
            if isinstance(wire, dict):
                recipe: Any = {k: _source(v, args, firsts, known) for k, v in wire.items()}
            elif isinstance(wire, list):
                recipe = [_source(v, args, firsts, known) for v in wire]
            else:
                break
            plan.append((sql, recipe))
            firsts.append(first)
        self.plan = tuple(plan)

    @property
    def defer(self) -> bool:
        """Whether the tool's next call may defer writes: not for a tool whose deferred writes
        often fail (one that inserts and catches the duplicate, say), as each failure costs
        the call twice."""
        return self.deferred < 32 or self.reruns * 8 < self.deferred

    @property
    def off(self) -> bool:
        """Given up on: most answers sent ahead were not used (tools whose first statements
        depend on their arguments in ways the recipes cannot follow)."""
        return self.sent >= 64 and self.used * 2 < self.sent
