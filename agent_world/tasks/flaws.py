"""Flaws a graph task's chain can have that no gate's check sees, named for a reading of the
corpus's tasks; `corpus_bench.py` counts them over what synthesis emits (each should be 0: the
walks and the no-shortcut gate refuse them). Read from the task's plan (`origin["plan"]`)
without running it:

- `read_that_writes`: a call named as a read (get_issue, list_issue_types) changes the state;
- `edits_search_results`: a write on a table of what a web search finds (title, url, snippet);
- `told_detour`: a look-up that only hands on a value the request gave it ("look up customer
  C, then list customer C's orders");
- `same_ends`: a call from a value to itself (time converted from UTC to UTC);
- `edits_what_it_created`: an edit of the record the chain just created;
- `unrelated_record`: a record named apart from the chain given a plain value copied from
  another ("pull up sheet 25, then set borders on spreadsheet 5 with that sheet's range").
"""

from __future__ import annotations

from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.signatures import RESULT_COLUMNS
from agent_world.mining.offline.vocabulary import CREATE_VERBS, PURE_READS
from agent_world.tasks.artefacts import same_ends
from agent_world.tasks.walks import FIELD_EDITS, IDENTIFIES
from agent_world.tasks.words import acted_table, split_words

FLAWS = ("read_that_writes", "edits_search_results", "told_detour", "same_ends",
         "edits_what_it_created", "unrelated_record")


def _first(tool: str) -> str:
    return (split_words(tool) or [""])[0]


def _created_key(create_tool: str) -> str:
    """The key a create's record is named by: create_hotel_note -> hotel_note_id."""
    return "_".join([*split_words(create_tool)[1:], "id"])


def chain_flaws(task: dict[str, Any], spec: EnvSpec) -> list[str]:
    """The flaws of one task (its catalog payload) in the environment it was made in."""
    steps = ((task.get("origin") or {}).get("plan") or {}).get("steps") or []
    names = {t.name for t in spec.tools}
    found: list[str] = []
    results = {t.name for t in spec.tables if set(RESULT_COLUMNS) <= {c.name for c in t.columns}}
    writes = [s for s in steps if s["tool"] in names and spec.tool(s["tool"]).mutates]
    if any(_first(s["tool"]) in PURE_READS for s in writes):
        found.append("read_that_writes")
    if any(acted_table(spec, s["tool"]) in results for s in writes):
        found.append("edits_search_results")
    for j, step in enumerate(steps):
        told = {**step.get("given", {}), **(step.get("select") or {})}
        fed = [b["field"] for later in steps[j + 1:] for b in later.get("bound", {}).values()
               if b["step"] == j]
        if step["tool"] in names and not spec.tool(step["tool"]).mutates and fed and \
                all(f in told for f in fed):
            found.append("told_detour")
            break
    if any(same_ends({**s.get("given", {})}) for s in steps):
        found.append("same_ends")
    for s in steps:
        bound = s.get("bound", {})
        if _first(s["tool"]) in FIELD_EDITS and any(
                _first(steps[b["step"]]["tool"]) in CREATE_VERBS
                and b["field"] in ("id", _created_key(steps[b["step"]]["tool"]))
                for b in bound.values()):
            found.append("edits_what_it_created")
            break
    for s in steps:
        bound = s.get("bound", {})
        if bound and any(IDENTIFIES.search(p) for p in s.get("given", {})) and \
                not any(IDENTIFIES.search(p) for p in bound):
            found.append("unrelated_record")
            break
    return found


__all__ = ["FLAWS", "chain_flaws"]
