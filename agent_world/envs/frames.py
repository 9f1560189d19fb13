"""The tool worker's wire protocol: length-prefixed frames between the caller and the worker,
statement parameters as they travel (both ways), and a tool's result encoded as JSON text.

The protocol itself (requests, replies, statement frames) is described in
`agent_world.envs.worker`.
"""

from __future__ import annotations

import base64
import json
import marshal
import math
import os
import re
import select
import sqlite3
import struct
import time
from datetime import date, datetime
from typing import Any

import orjson

MAX_RESULT_BYTES = 1 << 20  # a tool's JSON result; larger is an error and rolls back
# objects and arrays a result may nest: the caller's json and pydantic recurse once a level
MAX_RESULT_DEPTH = 64
MAX_FRAME_BYTES = 64 << 20  # any protocol frame (arguments included)
_RAW_RESULT = "_result_json"  # reply key holding the result already encoded as JSON text
_HEADER = struct.Struct(">I")
_MARSHAL_FLAG = 1 << 31  # header bit: the body is marshal, not JSON
BYTES_KEY = "$bytes"  # a bytes parameter on the wire: {BYTES_KEY: base64}
FLOAT_KEY = "$float"  # inf, -inf or nan on the wire: {FLOAT_KEY: "inf"}
DEFAULT_SPIN_US = 100  # see InputWaiter


class InputWaiter:
    """Keeps the worker awake for `spin_s` after it sent a frame, polling for the caller's
    next one, before it sleeps in `read`.

    Why: on a virtual machine, waking a process that sleeps on the other core can cost more
    than the work of a step (the interrupt between cores goes through the hypervisor; figures
    in docs/environments.md). A caller stepping many episodes sends the next
    request (or a statement's answer) well within that window, so the worker takes it without
    being woken. Bounded: an idle worker polls for `spin_s` once per frame, then sleeps; it
    yields the core to any other task that is ready meanwhile."""

    def __init__(self, fd: int, spin_s: float):
        self.spin_s = spin_s
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    def wait(self) -> None:
        """Return when the input has something to read or `spin_s` passed (the read that
        follows blocks as before). Frames strictly alternate, so nothing is ever left in the
        reader's buffer that this poll of the descriptor would miss."""
        if self.spin_s <= 0:
            return
        poll, clock, yield_core = self._poll.poll, time.perf_counter, os.sched_yield
        end = clock() + self.spin_s
        while not poll(0) and clock() < end:
            yield_core()


# Statement parameters on the wire: the worker sends what sqlite3 would bind (`_wire_params`),
# the caller decodes it (`_params`); bytes and inf/nan travel as {BYTES_KEY: ...}/{FLOAT_KEY: ...}.
_INT64 = (-(1 << 63), 1 << 63)


def _wire_param(value: Any, where: str) -> Any:
    """A statement parameter as JSON: what sqlite3's adapters would bind, computed here."""
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        if not _INT64[0] <= value < _INT64[1]:
            raise OverflowError("Python int too large to convert to SQLite INTEGER")
        return value
    if isinstance(value, float):  # JSON has no inf or NaN: they travel as text
        return value if math.isfinite(value) else {FLOAT_KEY: repr(float(value))}
    if isinstance(value, dict | list):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, bytes | bytearray | memoryview):
        return {BYTES_KEY: base64.b64encode(bytes(value)).decode()}
    if isinstance(value, datetime):
        return value.isoformat(" ")
    if isinstance(value, date):
        return value.isoformat()
    raise sqlite3.ProgrammingError(
        f"Error binding parameter {where}: type '{type(value).__name__}' is not supported")


def _wire_params(params: Any) -> Any:
    if isinstance(params, dict):
        return {str(k): _wire_param(v, f":{k}") for k, v in params.items()}
    if isinstance(params, str | bytes) or not hasattr(params, "__iter__"):
        raise sqlite3.ProgrammingError("parameters are of unsupported type")
    return [_wire_param(v, str(i)) for i, v in enumerate(params, start=1)]


def _from_wire(value: Any) -> Any:
    if isinstance(value, dict):
        if len(value) == 1 and isinstance(value.get(FLOAT_KEY), str):
            number = value[FLOAT_KEY]
            if number not in ("inf", "-inf", "nan"):
                raise ValueError("parameters must be numbers, strings, null or bytes")
            return float(number)
        if set(value) != {BYTES_KEY} or not isinstance(value[BYTES_KEY], str):
            raise ValueError("parameters must be numbers, strings, null or bytes")
        return base64.b64decode(value[BYTES_KEY], validate=True)
    if isinstance(value, list):
        raise ValueError("a parameter cannot be a list (bind JSON as text)")
    return value


_PLAIN = frozenset({int, float, str, type(None), bool})  # what binds as it travels


def _params(raw: Any, many: bool) -> Any:
    if not many:  # the common case: plain values, nothing to decode
        kind = type(raw)
        if kind is list and all(type(v) in _PLAIN for v in raw):
            return raw
        if kind is dict and all(type(v) in _PLAIN for v in raw.values()):
            return raw

    def one(p: Any) -> Any:
        if isinstance(p, dict):
            return {k: _from_wire(v) for k, v in p.items()}
        if isinstance(p, list):
            return [_from_wire(v) for v in p]
        raise ValueError("parameters must be a list or an object")
    if many:
        if not isinstance(raw, list):
            raise ValueError("executemany needs a list of parameter sets")
        return [one(p) for p in raw]
    return one(raw)


_LONG_DIGITS = re.compile(rb"\d{19}")


def loads_json(data: bytes) -> Any:
    """JSON text as `json.loads` reads it, through orjson (several times faster) wherever that
    reads the same: not for integers past 64 bits (orjson makes them floats) nor for what it
    refuses (NaN, lone surrogates), which json reads instead. ValueError if it is not JSON."""
    if _LONG_DIGITS.search(data) is None:
        try:
            return orjson.loads(data)
        except orjson.JSONDecodeError:
            pass
    return json.loads(data.decode())


# json's own encoder, made once: it defines what a result may be (orjson would turn NaN into
# null and dates into text, both silent changes of what the tool returned)
_encode_json = json.JSONEncoder(ensure_ascii=False, allow_nan=False).encode


def encode_result(result: Any) -> dict[str, Any]:
    """The reply for a tool's return value, encoded once: the JSON text travels as is after the
    reply frame's envelope. Values JSON cannot carry (sets, bytes, dates, NaN, lone
    surrogates) are an error of the tool, not silently changed; so is nesting past
    MAX_RESULT_DEPTH."""
    try:
        payload = _encode_json(result).encode()
    except (TypeError, ValueError) as exc:  # UnicodeEncodeError is a ValueError
        return {"ok": False, "kind": "tool_exception",
                "message": f"result is not JSON: {exc} (return dicts, lists, str, int, "
                           "float, bool or None)"}
    except RecursionError:
        return _too_deep()
    if len(payload) > MAX_RESULT_BYTES:
        return {"ok": False, "kind": "tool_exception",
                "message": f"result too large ({len(payload):,} bytes; the limit is "
                           f"{MAX_RESULT_BYTES:,}): return fewer rows"}
    # nesting needs as many brackets: most results have too few to be worth walking
    if (payload.count(b"[") + payload.count(b"{") > MAX_RESULT_DEPTH
            and _nests_deeper(result, MAX_RESULT_DEPTH)):
        return _too_deep()
    return {"ok": True, _RAW_RESULT: payload}


def _too_deep() -> dict[str, Any]:
    return {"ok": False, "kind": "tool_exception",
            "message": f"result nests objects and arrays more than {MAX_RESULT_DEPTH} levels "
                       "deep: return flatter data"}


def _nests_deeper(value: Any, limit: int) -> bool:
    """Whether objects and arrays (lists, tuples, dicts) in `value` nest past `limit`. The
    base classes' own iterators, as json's encoder uses: a subclass's methods are tool code."""
    stack = [(value, 1)] if isinstance(value, dict | list | tuple) else []
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            return True
        children = (dict.values(node) if isinstance(node, dict) else list.__iter__(node)
                    if isinstance(node, list) else tuple.__iter__(node))
        for child in children:
            if isinstance(child, dict | list | tuple):
                stack.append((child, depth + 1))
    return False


def _read_exact(stream: Any, size: int) -> bytes | None:
    # A pipe returns at most its buffer (64 KiB) per read: loop until the frame is whole.
    chunks = []
    while size > 0:
        chunk = stream.read(size)
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: Any, trusted: bool = False) -> dict[str, Any] | None:
    """One frame, or None at end of stream (or when the frame is cut short, oversized or not a
    JSON object). Only a `trusted` reader (the worker, reading its caller) accepts marshal
    frames: marshal is fast and carries bytes, but must never read what tool code wrote."""
    header = _read_exact(stream, _HEADER.size)
    if header is None:
        return None
    size, packed = frame_size(header)
    if size > MAX_FRAME_BYTES or (packed and not trusted):
        return None
    body = _read_exact(stream, size)
    return None if body is None else decode_body(body, packed)


def frame_size(header: bytes) -> tuple[int, bool]:
    """(body size, whether the body is marshal) from a frame's 4-byte header."""
    (size,) = _HEADER.unpack(header)
    return size & ~_MARSHAL_FLAG, bool(size & _MARSHAL_FLAG)


def decode_body(body: bytes, packed: bool = False) -> dict[str, Any] | None:
    """A frame's message, or None when it is not one. A JSON frame may end with a newline and
    a tool's result as JSON text (`loads_json`: exact as json reads it); the envelope is read
    with orjson (safe and fast on what the worker sends; JSON encoders never write a raw
    newline)."""
    try:
        if packed:
            message = marshal.loads(body)
        else:
            cut = body.find(b"\n")
            message = orjson.loads(body if cut < 0 else body[:cut])
            if cut >= 0 and isinstance(message, dict):
                message["result"] = loads_json(body[cut + 1:])
    except (ValueError, EOFError, TypeError):  # orjson.JSONDecodeError is a ValueError
        return None
    return message if isinstance(message, dict) else None


def encode_packed(message: dict[str, Any]) -> bytes:
    """A marshal frame (caller -> worker only: requests and statement answers). marshal is
    exact for every value JSON can carry and then some (bytes); a value it cannot carry goes
    through JSON first, as the JSON protocol would have sent it."""
    try:
        data = marshal.dumps(message)
    except ValueError:  # e.g. a str subclass among the arguments
        data = marshal.dumps(json.loads(json.dumps(message, ensure_ascii=False)))
    if len(data) > MAX_FRAME_BYTES:
        raise ValueError(f"message too large ({len(data):,} bytes; the limit is "
                         f"{MAX_FRAME_BYTES:,})")
    return _HEADER.pack(len(data) | _MARSHAL_FLAG) + data


def encode_frame(message: dict[str, Any], strict: bool = False) -> bytes:
    """A JSON frame (worker -> caller): orjson for the envelope, then the result's JSON text
    from `encode_result` after a newline. A message orjson cannot encode (a lone surrogate
    in an error message, an integer past 64 bits) goes through json, with unencodable
    characters replaced unless `strict` (statements: those are the tool's error)."""
    raw = message.pop(_RAW_RESULT, None)
    try:
        data = orjson.dumps(message)
    except TypeError:
        text = json.dumps(message, ensure_ascii=False)
        data = text.encode() if strict else text.encode("utf-8", "replace")
    if raw is not None:
        data = b"%b\n%b" % (data, raw)
    if len(data) > MAX_FRAME_BYTES:
        raise ValueError(f"message too large ({len(data):,} bytes; the limit is "
                         f"{MAX_FRAME_BYTES:,})")
    return _HEADER.pack(len(data)) + data


def write_frame(stream: Any, message: dict[str, Any], strict: bool = False) -> None:
    stream.write(encode_frame(message, strict))
    stream.flush()
