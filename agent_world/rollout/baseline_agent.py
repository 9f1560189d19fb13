"""The heuristic baseline agent: a LangChain chat model that solves tool tasks without an LLM.

    from agent_world.rollout.baseline_agent import BaselineChatModel
    agent = langchain.agents.create_agent(BaselineChatModel(seed=3), tools)

It is the offline verifier's policy and the training baseline. It sees exactly what any agent
sees — the instruction, the tools' names, descriptions and argument schemas, and the
observations that come back — and never the task's gold chain. Each turn it either calls one
tool or answers:

1. **Values it knows**: literals in the instruction (quoted text, e-mails, dates, codes
   such as `NW1234` or `C-00042`, numbers, money), each with the words just before it
   ("customer C-00042"), plus every field of every successful observation. Dates are read as
   a person writes them ("March 3, 2026 at 14:30", "3 March 2026", ISO) and, when the request
   states its own date ("today is March 1, 2026"), relative to it ("next Friday", "tomorrow",
   "in 3 days"); money as money ("$1,250.00" is 1250.0). They reach the tools as ISO dates and
   plain numbers.
2. **Which tool**: tools are ranked by the overlap between the instruction's words and the
   tool's name and description (rare words weigh more), with a bonus when an argument can be
   filled from the latest observation (chains progress) and a penalty for tools already used.
   Write tools need the instruction to use one of their verbs ("cancel", "book", ...). A tool
   is a candidate only when every required argument can be filled.
3. **Arguments**: an observation field with the argument's name (from the list element that
   best matches the instruction's literals), else an instruction literal whose kind and
   context fit the argument (an e-mail for `email`, "reservation ABC123" for
   `reservation_id`, an enum value the instruction mentions); optional arguments only from
   the instruction.
4. **Answer** when no relevant unused tool is left (or after `max_calls`): the field of the
   latest observations whose name best matches the question's words; "how many" counts the
   matching list items, "total" sums and "highest/lowest" picks by a numeric field.

`seed` and `temperature` make runs differ (ties and near-ties are broken at random), so five
verifier runs are five attempts, not one attempt five times. It can fail, and does: an
instruction that uses other words than the tool descriptions, or a value it cannot place,
leads it astray.
"""

from __future__ import annotations

import json
import math
import random
import re
from collections import Counter
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any

from dateutil import parser as date_parser
from dateutil.relativedelta import FR, MO, SA, SU, TH, TU, WE, relativedelta
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

_WORD = re.compile(r"[a-z][a-z0-9]+")
_STOP = frozenset("""a an the of for to in on at by with from and or is are was be been it its
this that these those my me i you your we our their his her them they what which who whose
how please can could would should will do does did has have had not no any all each every
one two as if then than so also into out up about just tell give let reply need want
there here get find look show let want use using via per""".split())
_WRITE_VERBS = frozenset("""book cancel change add update assign check upgrade place return
apply create delete remove set edit move modify save make register reserve issue refund
schedule submit send mark close open rename transfer redeem enroll renew pay charge""".split())
_LITERAL = re.compile(
    r"'([^']{1,80})'|\"([^\"]{1,80})\"|([\w.+-]+@[\w-]+(?:\.[\w-]+)+)|(\d{4}-\d{2}-\d{2}(?:T[\d:]+)?)"
    r"|\b([A-Z][A-Z0-9]*[-_]?\d[A-Z0-9-]*|[A-Z]{2,}\d*)\b"
    r"|(-?\$?(?<![\d,.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\d,])|-?\$?\d+(?:\.\d+)?)")

def words(text: str) -> list[str]:
    """Content words of a text (lower case, identifiers split, stop words dropped)."""
    text = re.sub(r"([a-z])([A-Z])", r"\1 \2", str(text)).replace("_", " ").lower()
    return [_stem(w) for w in _WORD.findall(text) if w not in _STOP]


def _stem(w: str) -> str:
    for suffix in ("ies", "es", "s"):
        if w.endswith(suffix) and len(w) > len(suffix) + 3:
            return w[: -len(suffix)] + ("y" if suffix == "ies" else "")
    return w


# dates as people write them: "March 3, 2026", "Mar 3rd 2026", "3 March 2026", with "at 14:30"
_MONTH = (r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
          r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?")
_DAY = r"\d{1,2}(?:st|nd|rd|th)?"
_CLOCK = r"(?:,?\s+(?:at\s+)?\d{1,2}:\d{2}(?::\d{2})?(?:\s*[ap]\.?m\.?)?)?"
_NATURAL_DATE = re.compile(rf"\b(?:{_MONTH}\s+{_DAY},?\s+\d{{4}}|{_DAY}\s+(?:of\s+)?{_MONTH},?"
                           rf"\s+\d{{4}}){_CLOCK}", re.I)
_WEEKDAYS = {"monday": MO, "tuesday": TU, "wednesday": WE, "thursday": TH, "friday": FR,
             "saturday": SA, "sunday": SU}
_RELATIVE = re.compile(
    r"\b(?:(next|this|coming|last)\s+(monday|tuesday|wednesday|thursday|friday|saturday|"
    r"sunday)|(today|tomorrow|yesterday)|in\s+(\d+|a|one|two|three)\s+(day|week)s?|"
    r"(\d+|a|one|two|three)\s+(day|week)s?\s+(from\s+(?:today|now)|ago))\b", re.I)
# the date a request says it is written on: what relative dates count from
_ANCHOR = re.compile(r"\b(?:today is|today's date is|it is|it's|as of|the date is|"
                     r"current date is)\s*$", re.I)
_SMALL = {"a": 1, "one": 1, "two": 2, "three": 3}


def _natural_date(text: str) -> str | None:
    """"March 3, 2026" → 2026-03-03; with a time → 2026-03-03T14:30:00 (None: not a date)."""
    clean = re.sub(r"(\d)(st|nd|rd|th)\b", r"\1", text, flags=re.I).replace(" at ", " ")
    try:
        when = date_parser.parse(clean, default=datetime(2000, 1, 1))
    except (ValueError, OverflowError):
        return None
    return when.isoformat() if ":" in text else when.date().isoformat()


def _relative_date(m: re.Match[str], anchor: date) -> str:
    """A relative date counted from the request's own date: "next Friday" is the first Friday
    after it, "this Friday" the first on or after it, "last Friday" the one before it."""
    which, weekday, word, n_in, unit_in, n_ago, unit_ago, direction = m.groups()
    if weekday:
        wd = _WEEKDAYS[weekday.lower()]
        w = which.lower()
        if w == "last":
            return (anchor + relativedelta(days=-1, weekday=wd(-1))).isoformat()
        start = anchor + timedelta(days=1) if w == "next" else anchor
        return (start + relativedelta(weekday=wd(+1))).isoformat()
    if word:
        return (anchor + timedelta(days={"today": 0, "tomorrow": 1,
                                         "yesterday": -1}[word.lower()])).isoformat()
    n, unit = (n_in, unit_in) if n_in else (n_ago, unit_ago)
    days = (int(n) if n.isdigit() else _SMALL[n.lower()]) * (7 if unit.lower() == "week" else 1)
    if direction and direction.lower() == "ago":
        days = -days
    return (anchor + timedelta(days=days)).isoformat()


def _natural_values(text: str) -> list[tuple[int, int, dict[str, Any]]]:
    """(start, end, literal) for the dates a request writes in words, relative ones included
    when it states its own date."""
    out = []
    anchor: date | None = None
    for m in _NATURAL_DATE.finditer(text):
        iso = _natural_date(m.group(0))
        if iso is None:
            continue
        said = _ANCHOR.search(text[max(0, m.start() - 25): m.start()])
        if said and anchor is None:
            anchor = date.fromisoformat(iso[:10])
        # "today is March 1, 2026": the phrase is the anchor, its "today" no other date
        start = m.start() - 25 + said.start() if said and m.start() >= 25 else \
            (said.start() if said else m.start())
        out.append((start, m.end(), {"value": iso, "kind": "date", "anchor": bool(said)}))
    taken = [(a, b) for a, b, _ in out]
    for m in _RELATIVE.finditer(text):
        if anchor is None or any(a <= m.start() < b for a, b in taken):
            continue
        out.append((m.start(), m.end(), {"value": _relative_date(m, anchor), "kind": "date",
                                         "anchor": False}))
    return out


def literals(text: str) -> list[dict[str, Any]]:
    """Values the instruction states, each with its kind and the words just before it."""
    found = _natural_values(text)
    masked = list(text)
    for a, b, _ in found:  # a date in words is one value, not a day and a year
        masked[a:b] = " " * (b - a)
    found += [(m.start(), m.end(), lit) for m in _LITERAL.finditer("".join(masked))
              if (lit := _literal(m)) is not None]
    out = []
    for start, end, lit in sorted(found, key=lambda f: f[0]):
        lit["context"] = words(text[max(0, start - 40): start])[-3:]
        role = _ROLE_AFTER.match(text, end)  # "timezone 33 as the source"
        if role:
            lit["context"].append(_stem(role.group(1).lower()))
        out.append(lit)
    return out


_ROLE_AFTER = re.compile(r"\s+as the ([A-Za-z]+)")


def _literal(m: re.Match[str]) -> dict[str, Any] | None:
    quoted, email, day, code, number = (m.group(1) or m.group(2)), m.group(3), \
        m.group(4), m.group(5), m.group(6)
    if quoted:
        return {"value": quoted, "kind": "text"}
    if email:
        return {"value": email, "kind": "email"}
    if day:
        return {"value": day, "kind": "date"}
    if code:
        return {"value": code, "kind": "code"}
    if number:
        raw = number.replace("$", "").replace(",", "")
        value: Any = float(raw) if "." in raw else int(raw)
        return {"value": value, "kind": "number", "money": "$" in number}
    return None


def _with_values(instruction: str) -> str:
    """The instruction with the ISO form of each date it writes in words appended, so a
    record's stored date matches the request's "March 3, 2026"."""
    extra = [lit["value"] for _, _, lit in _natural_values(instruction)]
    return instruction + (" " + " ".join(extra) if extra else "")


def _flatten(value: Any, prefix: str = "") -> list[tuple[str, Any]]:
    """(field name, scalar) pairs of an observation, nested dicts included."""
    out: list[tuple[str, Any]] = []
    if isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict):
                out += _flatten(v, k)
            elif not isinstance(v, list):
                out.append((k, v))
    return out


class BaselineChatModel(BaseChatModel):
    """Heuristic tool-using agent as a chat model (see the module docstring)."""

    seed: int = 0
    temperature: float = 0.35
    max_calls: int = 8
    tools: list[dict[str, Any]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "agent-world-baseline"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> BaselineChatModel:  # type: ignore[override]
        schemas = [convert_to_openai_tool(t)["function"] for t in tools]
        return self.model_copy(update={"tools": schemas})

    # -- one turn -------------------------------------------------------------------------------
    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None,
                  **kwargs: Any) -> ChatResult:
        instruction = next((str(m.content) for m in messages if isinstance(m, HumanMessage)), "")
        history = _history(messages)
        rng = random.Random(f"{self.seed}:{len(history)}:{instruction}")
        call = None
        bulk = _BULK.search(instruction) is not None
        if len(history) < self.max_calls + (MAX_BULK if bulk else 0):
            call = self._bulk_call(instruction, history) if bulk else None
            if call is None and not (bulk and _latest_list(history) is not None):
                call = self._next_call(instruction, history, rng, writes=not bulk)
                if call is not None and bulk:  # "every ...": the largest page there is
                    call = (call[0], {**_largest_page(self.tools, call[0]), **call[1]})
        if call is None:
            msg = AIMessage(content=_answer(instruction, history, rng))
        else:
            name, args = call
            msg = AIMessage(content="", tool_calls=[{
                "name": name, "args": args, "id": f"call_{len(history)}_{rng.randrange(10**6)}",
                "type": "tool_call"}])
        return ChatResult(generations=[ChatGeneration(message=msg)])

    def _bulk_call(self, instruction: str, history: list[dict[str, Any]]
                   ) -> tuple[str, dict[str, Any]] | None:
        """"... every one whose status is 'pending' ...": once a list is observed, the write
        the instruction's verbs name, once per element the instruction's values single out
        (the element's bare `id` stands for `<entity>_id`)."""
        found = _latest_list(history)
        if found is None:
            return None
        list_tool, items = found
        items = _filter_items(items, instruction)
        want = set(words(instruction))
        # a write by its verbs (opaque names hide them: the description's first words count)
        writes = [t for t in self.tools if t["name"] != list_tool and
                  (set(words(t["name"])) | set(words(t.get("description", ""))[:4]))
                  & _WRITE_VERBS & want and not
                  set(words(t["name"])[:1] + words(t.get("description", ""))[:1]) & _READS]
        writes.sort(key=lambda t: -len(want & (set(words(t["name"])) |
                                                set(words(t.get("description", ""))))))
        tried = {(h["tool"], json.dumps(h["args"], sort_keys=True)) for h in history}
        lits = literals(instruction)
        # what the listed things are called: the list tool's name and description words
        about = next((words(t["name"]) + words(t.get("description", ""))[:6]
                      for t in self.tools if t["name"] == list_tool), [])
        aliases = {f"{w}_id" for w in about}
        for tool in writes[:1]:
            required = (tool.get("parameters") or {}).get("required") or []
            for item in items:
                seen = dict(item)
                if "id" in item:
                    for alias in aliases:
                        seen.setdefault(alias, item["id"])
                args, _ = _fill(tool, lits, [], {"ok": True, "value": seen}, instruction)
                # the element must feed the write (its key), not a value of the instruction
                if args is not None and any(p in seen and args.get(p) == seen[p]
                                            for p in required) and \
                        (tool["name"], json.dumps(args, sort_keys=True)) not in tried:
                    return tool["name"], args
        return None

    def _next_call(self, instruction: str, history: list[dict[str, Any]],
                   rng: random.Random, writes: bool = True) -> tuple[str, dict[str, Any]] | None:
        if not self.tools:
            return None
        want = Counter(words(instruction))
        lits = literals(instruction)
        docs = {t["name"]: Counter(words(t["name"]) * 2 + words(t.get("description", "")))
                for t in self.tools}
        df = Counter(w for d in docs.values() for w in set(d))
        n = len(docs)
        used = Counter(h["tool"] for h in history if h["ok"])
        tried = {(h["tool"], json.dumps(h["args"], sort_keys=True)) for h in history}
        failed = Counter(h["tool"] for h in history if not h["ok"])
        latest = next((h for h in reversed(history) if h["ok"]), None)
        scored = []
        for tool in self.tools:
            name = tool["name"]
            doc = docs[name]
            relevance = sum(math.log(1 + n / df[w]) for w in want if w in doc)
            relevance /= math.sqrt(1 + len(doc)) ** 0.5
            if relevance <= 0:
                continue
            if not writes and _is_write(tool):
                continue  # a bulk request writes only once it has the list
            writes_ = _is_write(tool)
            if writes_ and not (set(want) & set(words(tool["name"])) & _WRITE_VERBS):
                verbs = set(words(tool.get("description", ""))[:4]) & _WRITE_VERBS
                if not verbs & set(want):
                    continue
            if writes_ and used[name]:
                continue
            args, from_latest = _fill(tool, lits, history, latest, instruction)
            if args is None:
                continue
            if (name, json.dumps(args, sort_keys=True)) in tried:
                continue
            score = relevance * (1.0 + 0.6 * from_latest) / (1 + used[name] + 2 * failed[name])
            scored.append((score, name, args))
        if not scored:
            return None
        scored.sort(key=lambda s: -s[0])
        best = scored[0][0]
        # stop when what is left is far less relevant than what the instruction asks for
        if history and best < 0.35 * max(self._relevance_ceiling(want, docs, df), 1e-9):
            return None
        near = [s for s in scored if s[0] >= best * (1 - self.temperature)]
        weights = [s[0] ** 4 for s in near]
        _, name, args = rng.choices(near, weights=weights)[0]
        return name, args

    @staticmethod
    def _relevance_ceiling(want: Counter, docs: dict[str, Counter], df: Counter) -> float:
        n = len(docs)
        return max(sum(math.log(1 + n / df[w]) for w in want if w in d)
                   / math.sqrt(1 + len(d)) ** 0.5 for d in docs.values())


_READS = frozenset({"list", "search", "get", "find", "count", "view", "show", "look",
                    "summarize", "statistic"})
_BULK = re.compile(r"\b(every|all)\b[^.?!]*\b(whose|with)\b", re.I)
MAX_BULK = 6  # extra calls a bulk request may take (one write per element)


def _largest_page(tools: list[dict[str, Any]], name: str) -> dict[str, Any]:
    props = next(((t.get("parameters") or {}).get("properties") or {} for t in tools
                  if t["name"] == name), {})
    return {p: props[p]["maximum"] for p in ("limit", "page_size", "max_results")
            if isinstance(props.get(p, {}).get("maximum"), int)}


def _latest_list(history: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]] | None:
    """The latest successful list observation (tool, its dict elements)."""
    for h in reversed(history):
        if h["ok"] and isinstance(h["value"], list):
            items = [i for i in h["value"] if isinstance(i, dict)]
            return (h["tool"], items) if items else None
    return None


def _is_write(tool: dict[str, Any]) -> bool:
    head = words(tool["name"])[:1] + words(tool.get("description", ""))[:1]
    return bool(set(head) & _WRITE_VERBS) and not set(head) & {"list", "search", "get",
                                                                "find", "check", "look"}


def _history(messages: list[BaseMessage]) -> list[dict[str, Any]]:
    """The calls made so far with their parsed observations."""
    results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
    out = []
    for m in messages:
        if isinstance(m, AIMessage):
            for tc in m.tool_calls:
                reply = results.get(tc["id"])
                text = str(reply.content) if reply is not None else ""
                ok = reply is not None and not text.startswith("Error") and \
                    getattr(reply, "status", "success") != "error"
                try:
                    value = json.loads(text) if ok else None
                except json.JSONDecodeError:
                    value = text
                out.append({"tool": tc["name"], "args": tc["args"], "ok": ok, "value": value})
    return out


def _pick_item(items: list[Any], instruction: str) -> Any:
    """The list element that best matches the instruction's literals and words."""
    text = _with_values(instruction).lower()
    want = set(words(instruction))

    def score(item: Any) -> float:
        s = 0.0
        for _, v in _flatten(item):
            sv = str(v).lower()
            if isinstance(v, str) and len(sv) >= 3 and sv in text:
                s += 2 + len(sv) / 20
            elif isinstance(v, int | float) and not isinstance(v, bool) and \
                    re.search(rf"(?<![\d.]){re.escape(str(v))}(?![\d.])", text):
                s += 1
            elif isinstance(v, str) and set(words(sv)) & want:
                s += 0.2
        return s

    dicts = [i for i in items if isinstance(i, dict)]
    if not dicts:
        return None
    return max(dicts, key=score)


def _observed(history: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Each successful observation as one dict (a list: its best-matching element)."""
    out = []
    for h in history:
        if not h["ok"]:
            continue
        v = h["value"]
        if isinstance(v, list):
            v = _pick_item(v, instruction)
        if isinstance(v, dict):
            out.append(v)
    return out


def _fill(tool: dict[str, Any], lits: list[dict[str, Any]], history: list[dict[str, Any]],
          latest: dict[str, Any] | None, instruction: str) -> tuple[dict[str, Any] | None, int]:
    params = tool.get("parameters", {}) or {}
    props = params.get("properties", {}) or {}
    required = set(params.get("required", []) or [])
    observed = _observed(history, instruction)
    latest_obs = _observed([latest], instruction) if latest else []
    args: dict[str, Any] = {}
    from_latest = 0
    for pname, schema in props.items():
        value, source = _value_for(pname, schema, lits, observed, latest_obs,
                                   optional=pname not in required, instruction=instruction)
        if value is None:
            if pname in required:
                return None, 0
            continue
        args[pname] = value
        from_latest += source == "latest"
    return args, from_latest


def _types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type", "string")
    return set(t) if isinstance(t, list) else {t}


def _value_for(pname: str, schema: dict[str, Any], lits: list[dict[str, Any]],
               observed: list[dict[str, Any]], latest: list[dict[str, Any]], optional: bool,
               instruction: str) -> tuple[Any, str]:
    types = _types(schema)
    pwords = set(words(pname))
    if "enum" in schema:
        text = instruction.lower()
        hits = [e for e in schema["enum"] if isinstance(e, str)
                and re.search(rf"(?<![a-z0-9]){re.escape(e.lower().replace('_', ' '))}(?![a-z])",
                              text.replace("_", " "))]
        if hits:
            # "status 'active'" names the argument right before its value: that one first
            def named(e: str) -> int:
                at = text.replace("_", " ").find(e.lower().replace("_", " "))
                return len(set(words(text[max(0, at - 30): at])[-3:]) & pwords)
            return max(hits, key=lambda e: (named(e), len(e))), "instruction"
        return None, ""
    if "array" in types or "object" in types:
        return None, ""  # structured arguments come only from a more capable agent
    # observation fields named like the argument (ids flow along a chain)
    if not optional:
        for source, pool in (("latest", latest), ("earlier", list(reversed(observed)))):
            for obs in pool:
                fields = dict(_flatten(obs))
                if pname in fields and fields[pname] is not None:
                    return _coerce(fields[pname], types), source
    # instruction literals whose kind and context fit
    best, best_score = None, 0.0
    for lit in lits:
        score = _fit(pname, pwords, types, lit)
        if score > best_score:
            best, best_score = lit, score
    if best is not None and best_score >= (1.5 if optional else 0.5):
        return _coerce(best["value"], types), "instruction"
    return None, ""


_DATE_WORDS = frozenset({"date", "day", "on", "from", "until", "since", "start", "end", "due",
                         "time", "deadline", "expire", "expiry", "birth", "dob", "when",
                         "departure", "arrival", "begin", "schedule", "scheduled"})
_MONEY_WORDS = frozenset({"price", "total", "amount", "fee", "cost", "balance", "refund",
                          "charge", "paid", "fare", "payment", "deposit", "fine", "credit",
                          "budget", "limit", "salary", "value"})


def _fit(pname: str, pwords: set[str], types: set[str], lit: dict[str, Any]) -> float:
    kind = lit["kind"]
    context = set(lit["context"])
    score = 1.0 * len(context & pwords)
    if lit["context"] and lit["context"][-1] in pwords:
        score += 0.5  # "holds of member 48", "reason 'late'": the word right before names it
    if kind == "email":
        return score + (2.0 if "email" in pwords else -5.0)
    if kind == "date":
        score -= 0.3 if lit.get("anchor") else 0.0  # the request's own date is a reference
        return score + (1.5 if pwords & _DATE_WORDS else -1.0)
    if kind == "number":
        if not types & {"integer", "number"}:
            return score - 0.5 if "string" not in types else score - 1.0
        return score + 0.3 + (0.5 if lit.get("money") and pwords & _MONEY_WORDS else 0.0)
    if kind == "code":
        if "string" not in types:
            return -1.0
        return score + (0.6 if pwords & {"id", "code", "number", "sku", "iata"} else 0.0)
    if "string" not in types:
        return -1.0
    return score + 0.2


def _coerce(value: Any, types: set[str]) -> Any:
    if "integer" in types and not isinstance(value, bool):
        try:
            if float(value) == int(float(value)):
                return int(float(value))
        except (TypeError, ValueError):
            pass
    if "number" in types and not isinstance(value, bool):
        try:
            return float(value)
        except (TypeError, ValueError):
            pass
    if "string" in types and not isinstance(value, str):
        return str(value)
    return value


# -- answering --------------------------------------------------------------------------------
def _answer(instruction: str, history: list[dict[str, Any]], rng: random.Random) -> str:
    ok = [h for h in history if h["ok"]]
    if not ok:
        return "I could not find the information needed."
    text = instruction.lower()
    question = _question_part(instruction)
    qwords = set(words(question))
    last = ok[-1]["value"]
    lists = [h["value"] for h in reversed(ok) if isinstance(h["value"], list)]
    if lists and re.search(r"\bhow many\b|\bnumber of\b|\bcount\b", text):
        items = [i for i in lists[0] if isinstance(i, dict)]
        selected = _filter_items(items, instruction)
        return str(len(selected))
    agg = re.search(r"\b(total|sum|combined|highest|largest|most|maximum|lowest|smallest|"
                    r"least|minimum|cheapest|average)\b", question)
    if lists and agg:
        items = _filter_items([i for i in lists[0] if isinstance(i, dict)], instruction)
        field = _best_field(items[0] if items else {}, qwords, numeric=True)
        if field and items:
            vals = [(float(i[field]), i) for i in items
                    if isinstance(i.get(field), int | float) and not isinstance(i[field], bool)]
            if vals:
                word = agg.group(1)
                if word in ("total", "sum", "combined"):
                    return _fmt(sum(v for v, _ in vals))
                if word == "average":
                    return _fmt(sum(v for v, _ in vals) / len(vals))
                pick = max if word in ("highest", "largest", "most", "maximum") else min
                v, item = pick(vals, key=lambda x: x[0])
                other = _best_field(item, qwords - set(words(field)), numeric=False,
                                    exclude={field})
                return f"{other and item.get(other) or ''} {_fmt(v)}".strip()
    candidates = _observed(list(reversed(ok)), instruction)
    numeric_q = re.search(r"\bhow (many|much)\b", text) is not None
    best_value, best_score = None, 0.0
    for depth, obs in enumerate(candidates):
        for field, value in _flatten(obs):
            fw = set(words(field))
            score = len(fw & qwords) / (1 + 0.5 * len(fw - qwords)) - 0.15 * depth
            if numeric_q and isinstance(value, int | float) and not isinstance(value, bool):
                score += 0.3
            if score > best_score + 1e-9 or (abs(score - best_score) < 1e-9 and rng.random() < .5):
                best_value, best_score = value, score
    if best_value is None or best_score <= 0:
        return json.dumps(last, default=str)[:300]
    if isinstance(best_value, bool):
        return "yes" if best_value else "no"
    return str(best_value)


def _question_part(instruction: str) -> str:
    m = re.search(r"(what|which|tell me|let me know|reply with|report|how|give me|"
                  r"find out|i need to know)\b.*", instruction, flags=re.I | re.S)
    return m.group(0) if m else instruction


def _filter_items(items: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """Items whose categorical values the instruction mentions (all items if none does)."""
    text = " " + re.sub(r"[^a-z0-9@._:-]+", " ", _with_values(instruction).lower()) + " "
    by_field: dict[str, set[str]] = {}
    for i in items:
        for k, v in _flatten(i):
            if isinstance(v, str) and 2 < len(v) < 30:
                by_field.setdefault(k, set()).add(v.lower())
    conds = []
    for k, vals in by_field.items():
        if len(vals) < 2:
            continue
        hits = {v for v in vals if f" {v.replace('_', ' ')} " in text.replace("_", " ")}
        if hits:
            conds.append((k, hits))
    if not conds:
        return items
    return [i for i in items if all(str(dict(_flatten(i)).get(k, "")).lower() in h
                                    for k, h in conds)]


def _best_field(item: dict[str, Any], qwords: set[str], numeric: bool,
                exclude: set[str] | frozenset[str] = frozenset()) -> str | None:
    best, best_score = None, 0.0
    for k, v in _flatten(item):
        if k in exclude:
            continue
        is_num = isinstance(v, int | float) and not isinstance(v, bool)
        if numeric and not is_num:
            continue
        score = len(set(words(k)) & qwords) + (0.1 if is_num else 0)
        if score > best_score:
            best, best_score = k, score
    return best


def _fmt(x: float) -> str:
    return str(int(x)) if x == int(x) else f"{x:.2f}"


__all__ = ["BaselineChatModel", "literals", "words"]
