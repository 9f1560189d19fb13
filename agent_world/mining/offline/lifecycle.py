"""Step 5 of the algorithm: states. State words and phrases in text (`states_in`), their canonical
spelling (`state_token`), and `attribute_states`, which gives each state word or state verb to
the entity it is said of (adjective, preceding or following mention, the sentence's only
entity; a lifecycle sentence naming several states wins).
"""

from __future__ import annotations

import re
from collections import defaultdict

from agent_world.mining.offline.domain import DomainModel
from agent_world.mining.offline.evidence import Evidence
from agent_world.mining.offline.naming import (
    identifier,
    is_person,
    sentences,
    singular,
    singular_word,
)
from agent_world.mining.offline.vocabulary import STATE_SET, STATE_VERBS

# what a tool can reach, not a state its records are in: "List all available workspaces",
# "knowing which columns are available" (Asana's workspaces, monday's columns and AWS
# Pricing's service codes had an 'available' status that tasks counted)
_TOOL_SCOPE_WORDS = frozenset({"available", "unavailable"})
_PREPOSITIONS = {"for", "of", "to", "in", "on", "at", "from", "with", "by", "per"}
# words a gerund follows, not a state ("after running", "while processing")
_GERUND_CUES = frozenset({"after", "before", "while", "when", "by", "for", "of", "without",
                          "from", "on", "during", "since", "stop", "start", "keep", "avoid"})


def state_token(word: str) -> str:
    return word.replace("canceled", "cancelled")


def states_in(text: str) -> list[str]:
    low = " " + re.sub(r"[^a-z ]+", " ", text.lower()) + " "
    low = (low.replace(" in progress ", " in_progress ").replace(" in review ", " in_review ")
           .replace(" on hold ", " on_hold ").replace(" no show ", " no_show ")
           .replace(" checked out ", " checked_out ").replace(" sold out ", " sold_out ")
           .replace(" to do ", " todo "))
    out = []
    for w in low.split():
        if w in STATE_SET and w not in ("new", "review", "open", "done") or w in (
                "done", "open") and ("status" in low or "state" in low or "move" in low):
            out.append(state_token(w))
    return list(dict.fromkeys(out))


# "resolves a package name to a library ID", resolve_uid_to_selector, resolve_file_path: a
# look-up, not the settling of an issue (Context7's libraries had a 'resolved' status)
_LOOKUP_RESOLVE = re.compile(r"\bresolves?\b[^.]*?\bto\b|[_-](?:id|ids|to|path|uid)(?:[_-]|$)|"
                             r"(?:^|[_-])references?(?:[_-]|$)", re.I)


def verb_state(verb: str | None, entity: str, tool: str, description: str) -> str | None:
    """The state a tool's verb leaves its record in (cancel_order -> 'cancelled'), or None
    where the verb names no state of that record: a resolve that looks something up, an
    assign whose record is the person assigned (the assignment is the other record's)."""
    if verb not in STATE_VERBS:
        return None
    if verb == "resolve" and (_LOOKUP_RESOLVE.search(tool) or
                              _LOOKUP_RESOLVE.search(description.split(".")[0])):
        return None
    if verb == "assign" and is_person(entity):
        return None
    return STATE_VERBS[verb]


def set_as_status(tool_words: list[str], arg: str, enum: list[object] | None) -> bool:
    """Whether an argument of a tool named for a status (update_room_task_status) sets that
    status whatever it is called: its choices are all states (Chatwork's `body`: open|done)."""
    return bool(enum) and arg not in ("status", "state") and \
        bool({"status", "state", "statuses"} & set(tool_words)) and \
        all(state_token(str(e).lower()) in STATE_SET for e in enum or [])


def _norm_sentence(text: str) -> list[str]:
    low = " " + re.sub(r"[^a-z ]+", " ", text.lower().replace("_", " ")) + " "
    for a, b in ((" in progress ", " in_progress "), (" in review ", " in_review "),
                 (" on hold ", " on_hold "), (" no show ", " no_show "),
                 (" checked out ", " checked_out "), (" checked in ", " checked_in "),
                 (" sold out ", " sold_out "), (" to do ", " todo "),
                 (" in transit ", " in_transit "), (" on loan ", " on_loan "),
                 (" check out ", " check_out "), (" check in ", " check_in "),
                 (" pick up ", " pick_up "), (" roll back ", " roll_back ")):
        low = low.replace(a, b)
    return low.split()


def attribute_states(m: DomainModel, evidence: list[Evidence]) -> None:
    """Step 5: a state word belongs to the entity mentioned just before it (within 6 words;
    the subject rather than a prepositional phrase after it), else just after it (within 2: "an overdue loan"), else to the sentence's only entity; a
    state verb in a feature ("suspend a member account") gives its participle to the entity
    right after it. An entity hint's text speaks only of that entity. A lifecycle sentence
    (two or more states for the entity) wins over scattered words."""
    targets = {ent.name: ent for ent in m.entities.values()
               if ent.kind not in ("join", "child", "reference")}
    forms = sorted({(tuple(n.split("_")), n) for n in targets}
                   | {(tuple(singular(n).split("_")), n) for n in targets},
                   key=lambda f: -len(f[0]))
    per: dict[str, list[list[str]]] = defaultdict(list)
    for e in evidence:
        if e.kind not in ("feature", "source", "web", "entity", "tool"):
            continue
        only = identifier(singular(e.data.get("name", "")), "x") if e.kind == "entity" else None
        # a tool's name and argument list say what it takes, not what state anything is in
        # (asana_search_projects(workspace, name_pattern, archived?) gave workspaces an
        # 'archived' state; set_active_board an 'active' one): its description alone
        text = str(e.data.get("description") or "") if e.kind == "tool" else e.text
        for sentence in sentences(text):
            words = _norm_sentence(sentence)
            sing = [singular_word(w) for w in words]
            mentions: list[tuple[int, str]] = []
            inside: set[int] = set()  # mentions in a phrase after a preposition
            for i in range(len(words)):
                for ftoks, name in forms:
                    if tuple(sing[i:i + len(ftoks)]) == ftoks:
                        mentions.append((i + len(ftoks) - 1, name))
                        if any(w in _PREPOSITIONS for w in words[max(0, i - 2):i]):
                            inside.add(len(mentions) - 1)
                        break
            lifecycle_cue = any(w in ("status", "state", "states", "move", "moves", "marked",
                                      "becomes", "lifecycle") for w in words)
            found: dict[str, list[str]] = defaultdict(list)
            for p, w in enumerate(words):
                state = None
                if w == "returned" and e.kind == "tool" and (
                        words[p - 1:p] not in (["as"], ["mark"], ["marks"])):
                    # a tool's "the newest returned paper" is what it answers with, and so is
                    # "a deep link to the invoice is returned" (Filesystem's files were
                    # 'returned' and Xero's contacts too); only "marks it returned" is a state
                    continue
                if w.endswith("ing") and words[p - 1:p] and words[p - 1] in _GERUND_CUES:
                    # "advances each watch's cursor after running": a gerund, no state of
                    # arXiv's papers
                    continue
                if e.kind == "tool" and w in _TOOL_SCOPE_WORDS:
                    continue
                if w == "assigned" and (words[p + 1:p + 2] == ["to"] and e.kind == "tool" or any(
                        is_person(n) for i, n in mentions if i - p == 1)):
                    continue  # "cards assigned to the current user", "the assigned member"
                if w in STATE_SET and w not in ("new", "review", "open", "done", "ready"):
                    state = state_token(w)
                elif w in ("done", "open", "ready") and lifecycle_cue:
                    state = w
                verb = w if w in STATE_VERBS else w[:-1] if w[:-1] in STATE_VERBS else None
                if state is None and verb and e.kind == "feature" and w not in STATE_SET:
                    nxt = [n for i, n in mentions if 0 < i - p <= 4]
                    if nxt:
                        found[nxt[0]].append(STATE_VERBS[verb])
                    continue
                if state is None:
                    continue
                if only is not None:
                    target = only if only in targets else None
                else:  # "unpaid fines" (adjective) > "a copy is available" > "overdue the loan"
                    adj = [n for i, n in mentions if i - p == 1]
                    near = [k for k, (i, _) in enumerate(mentions) if 0 < p - i <= 6]
                    # "the hold for that title is marked ready": the subject, not the
                    # prepositional phrase after it
                    while len(near) > 1 and near[-1] in inside:
                        near.pop()
                    prev = [mentions[k][1] for k in near]
                    after = [n for i, n in mentions if 0 < i - p <= 2]
                    names = {n for _, n in mentions}
                    target = (adj or prev[-1:] or after or [None])[0] or (
                        next(iter(names)) if len(names) == 1 else None)
                if target:
                    found[target].append(state)
            for name, states in found.items():
                per[name].append(list(dict.fromkeys(states)))
    for name, lists in per.items():
        ent = targets[name]
        lifecycle = [st for st in lists if len(st) >= 2]
        states = [w for st in (lifecycle or lists) for w in st]
        if len(states) >= 2 or (states and (ent.wants_status or ent.states)):
            ent.states.extend(states)
