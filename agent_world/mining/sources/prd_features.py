"""PRD features (bullets, user stories and table rows under feature-like headings) and the
tools proposed from action-like ones ("Members can renew a loan" -> ``renew_loan``)."""

from __future__ import annotations

import re

from agent_world.mining.sources.base import ToolDescription
from agent_world.mining.sources.prd_markdown import _Block, _inline

__all__ = ["feature_tool_name"]

# --------------------------------------------------------------------------- section matching

_FEATURE_HEADING = re.compile(
    r"\b(features?|requirements?|user stor(y|ies)|stories|use cases?|capabilit(y|ies)|"
    r"functionality|functions|scope|mvp|epics?|jobs to be done|key flows?|workflows?)\b",
    re.I,
)
_NOT_FEATURE_HEADING = re.compile(
    r"non[- ]?functional|out of scope|not in scope|non[- ]?goals?|open questions?|future|"
    r"later (phases?|releases?)|risks?|assumptions?|dependencies|metrics|success criteria|kpis?|"
    r"glossary|appendix|references|timeline|milestones|acceptance criteria|data model|"
    r"domain model|entit(y|ies)|schema|personas?|changelog|revision history",
    re.I,
)


def _classify(path: tuple[tuple[int, str], ...], include: re.Pattern[str]) -> bool:
    """Nearest heading decides: an excluding heading wins over an enclosing including one."""
    for _, heading in reversed(path):
        if include is _FEATURE_HEADING and _NOT_FEATURE_HEADING.search(heading):
            return False
        if include.search(heading):
            return True
    return False


# --------------------------------------------------------------------------- features

_STORY = re.compile(r"^as an?\s", re.I)


def _table_feature(header: list[str], row: list[str]) -> str:
    cells = [_inline(c) for c in row]
    lowered = [h.lower().strip() for h in header]
    if len(cells) >= 2 and lowered and lowered[0].startswith("as a"):
        article = "an" if cells[0][:1].lower() in "aeiou" else "a"
        parts = [f"As {article} {cells[0]}"]
        if len(cells) > 1 and cells[1]:
            want = cells[1]
            parts.append(want if want.lower().startswith("i ") else f"I want to {want}")
        if len(cells) > 2 and cells[2]:
            so = cells[2]
            parts.append(so if so.lower().startswith("so ") else f"so that {so}")
        return ", ".join(parts[:2]) + (f" {parts[2]}" if len(parts) > 2 else "")
    keep = [
        c
        for c, h in zip(cells, lowered + [""] * len(cells), strict=False)
        if c and h not in ("id", "#", "priority", "status", "owner", "estimate", "points")
    ]
    return " - ".join(keep)


def _features(blocks: list[_Block]) -> list[str]:
    features: list[str] = []
    parent_colon: dict[int, bool] = {}
    for block in blocks:
        if not _classify(block.path, _FEATURE_HEADING):
            continue
        if block.kind == "item":
            text = _inline(block.text)
            parent_colon[block.level] = text.endswith(":")
            if block.level == 0 or parent_colon.get(block.level - 1):
                if text and not text.endswith(":"):
                    features.append(text)
        elif block.kind == "para" and _STORY.match(_inline(block.text)):
            features.append(_inline(block.text))
        elif block.kind == "table" and len(block.rows) > 1:
            for row in block.rows[1:]:
                text = _table_feature(block.rows[0], row)
                if text:
                    features.append(text)
    return list(dict.fromkeys(features))

# --------------------------------------------------------------------------- feature -> tool

_ACTION_VERBS = frozenset(
    """
    add approve archive assign block book borrow browse buy cancel change check check_in
    check_out claim close comment compare confirm create deactivate delete download edit export
    extend filter find flag follow generate import invite issue join leave list log_in look_up
    mark merge message open order pay place print publish purchase rate reactivate redeem refund
    register reject remove renew reopen report request reschedule reserve resolve restore return
    review scan schedule search see sell send share sign_up sort submit subscribe suspend track
    transfer unsubscribe update upload view void waive withdraw upgrade downgrade tag rename
    split configure enable disable invoice charge refer accept decline retire move
    """.split()
)
_READ_ONLY_VERBS = frozenset(
    """
    browse check compare download export filter find list look_up print search see sort track
    view
    """.split()
)
_PARTICLES = {"in", "out", "up", "off", "on"}
_PHRASAL = {"check", "sign", "log", "look", "opt"}
_DETERMINERS = frozenset(
    """
    a an the their his her its my our your any all one some each every new existing multiple
    several other own this that these those current upcoming past single
    """.split()
)
_STOP = frozenset(
    """
    for to by with from in on at and or so that when if via using without within before after
    until as into onto per which who while through across online instantly quickly easily
    directly automatically again later anytime now here there it them themselves up out is are
    be they about between over under than even only also but not no once where whose of
    """.split()
)
_HEAD_OF = {"list", "lists", "history", "details", "status", "summary", "number", "count"}
_MODALS = frozenset("can could may shall will to".split())  # "... can renew", "want to renew"
_LETS = frozenset("let lets".split())  # "lets members renew"
_ADVERBS = frozenset("also easily quickly instantly directly still".split())


def _action_candidates(text: str) -> list[str]:
    """Texts that may start with the action verb: after a modal / "to" / "lets X", then the
    whole text (an imperative feature: "Search the catalog by author")."""
    words = text.split()
    out = []
    for i, word in enumerate(words):
        w = word.lower().strip(",;:")
        starts = [i + 1] if w in _MODALS else [i + 2, i + 3] if w in _LETS else []
        for j in starts:
            while j < len(words) and words[j].lower() in _ADVERBS:
                j += 1
            if j < len(words):
                out.append(" ".join(words[j:]))
    out.append(text)
    return out


def feature_tool_name(feature: str) -> tuple[str, bool] | None:
    """'Members can renew a loan online' -> ('renew_loan', False); None if not action-like."""
    text = _inline(feature)
    text = re.sub(r"^\s*(?:[A-Z]{1,5}-?\d+[.:)]?|\d+[.)])\s*", "", text)  # FR-1: / 1.
    for cand in _action_candidates(text):
        words = re.findall(r"[A-Za-z][A-Za-z'-]*", cand.lower())
        if not words:
            continue
        verb, rest = words[0], words[1:]
        if verb in _PHRASAL and rest and rest[0] in _PARTICLES:
            verb, rest = f"{verb}_{rest[0]}", rest[1:]
        if verb not in _ACTION_VERBS:
            continue
        if verb == "check" and rest and rest[0] in ("if", "whether"):
            continue
        obj: list[str] = []
        suffix = ""
        i = 0
        while i < len(rest) and rest[i] in _DETERMINERS:
            i += 1
        if i + 1 < len(rest) and rest[i] in _HEAD_OF and rest[i + 1] == "of":
            suffix = "" if rest[i].startswith("list") else rest[i]
            i += 2
            while i < len(rest) and rest[i] in _DETERMINERS:
                i += 1
        if rest[i : i + 2] == ["up", "to"]:  # "purchase up to 8 tickets"
            i += 2
        # a participle before the noun ("a returned copy") is not part of the tool name
        if i + 1 < len(rest) and rest[i].endswith("ed"):
            if rest[i + 1] in ("or", "and") and i + 3 < len(rest):
                i += 3  # "a damaged or lost copy"
            elif rest[i + 1] not in _STOP:
                i += 1
        while i < len(rest) and len(obj) < 2:
            word = rest[i].strip("'-")
            if word in _STOP or word in _DETERMINERS or not word:
                break
            obj.append(word.replace("'s", "").replace("-", "_"))
            i += 1
        if not obj:
            continue
        name = "_".join([verb, *obj] + ([suffix] if suffix else []))
        name = re.sub(r"[^a-z0-9_]+", "_", name).strip("_")
        return name, verb in _READ_ONLY_VERBS
    return None


def _feature_tools(features: list[str]) -> list[ToolDescription]:
    tools: dict[str, ToolDescription] = {}
    for feature in features:
        hit = feature_tool_name(feature)
        if hit is None:
            continue
        name, read_only = hit
        if name not in tools:
            tools[name] = ToolDescription(
                name=name, description=feature, read_only=read_only, tags=["from-prd-feature"]
            )
    return list(tools.values())
