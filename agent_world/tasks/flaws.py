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
  another ("pull up sheet 25, then set borders on spreadsheet 5 with that sheet's range");
- `edits_a_reader`: the arena's own write in a service whose tools only read (delete an AWS
  documentation page, a note on an Obsidian note the reader can only read);
- `asks_a_past_call`: the arena's own look-up or edit of a table that logs a reading tool's
  calls ("look up module search 8", "delete that advanced search");
- `lost_its_input`: a call of the service's tool built without an argument the service
  requires (exa's web_fetch_exa without the urls it reads: "look up fetch 2");
- `names_an_added_label`: a record named by (or an answer that is) the name the miner gave a
  record its source names none for ("the funding rate named frontend-rate", "what is shard
  11's name?": 'inventory-shard');
- `reads_an_empty_record`: a read of records that hold nothing but an id, timestamps, keys
  and a name the miner made up ("find icon search 13 among the icon searches matching
  'catalog': when was it created?", "look up cache 8, then add that cache's exchange").
"""

from __future__ import annotations

from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular, snake, tokens
from agent_world.mining.offline.signatures import RESULT_COLUMNS
from agent_world.mining.offline.vocabulary import (
    ACT_NOUNS,
    CREATE_VERBS,
    NOUN_VERBS,
    PURE_READS,
    VERBS,
    WRITE_VERBS,
)
from agent_world.tasks.artefacts import same_ends
from agent_world.tasks.walks import FIELD_EDITS, IDENTIFIES
from agent_world.tasks.words import (
    acted_table,
    added_labels,
    empty_tables,
    lost_inputs,
    source_tools,
    split_words,
)

FLAWS = ("read_that_writes", "edits_search_results", "told_detour", "same_ends",
         "edits_what_it_created", "unrelated_record", "edits_a_reader", "asks_a_past_call",
         "lost_its_input", "names_an_added_label", "reads_an_empty_record")


def _first(tool: str) -> str:
    return (split_words(tool) or [""])[0]


def _created_key(create_tool: str) -> str:
    """The key a create's record is named by: create_hotel_note -> hotel_note_id."""
    return "_".join([*split_words(create_tool)[1:], "id"])


_BOOKKEEPING = {"id", "created_at", "updated_at", "status"}


def _reads_only(spec: EnvSpec, built: frozenset[str]) -> bool:
    """No source tool of the service (`built`: those built) writes: none built mutates, none
    left out is named for a write."""
    coverage = ((spec.provenance.stats or {}).get("tool_coverage") or {}).get("tools") or {}
    return bool(coverage) and not any(spec.tool(t).mutates for t in built) and not any(
        set(tokens(name)) & WRITE_VERBS for name in coverage if snake(name) not in built)


def _logs(spec: EnvSpec, built: frozenset[str]) -> set[str]:
    """Tables named for an act whose data columns are, three in four, the arguments of one
    source tool (`built`: those built) that only reads: a log of its calls."""
    readers = [{snake(p) for p in t.parameters.get("properties", {})}
               for t in spec.tools if t.name in built and not t.mutates]
    out = set()
    for table in spec.tables:
        last = singular(table.name).split("_")[-1]
        data = {c.name for c in table.columns if not c.foreign_key} - _BOOKKEEPING
        if (last in VERBS or last in ACT_NOUNS) and last not in NOUN_VERBS and \
                len(data) >= 2 and any(
                4 * len(data & args) >= 3 * len(data) for args in readers):
            out.add(table.name)
    return out


def names_an_added_label(steps: list[dict[str, Any]], spec: EnvSpec) -> bool:
    """A call past a create given, or a list's record picked by, a name the miner gave a
    record (`words.added_labels`): a create may name its new record, nothing else may."""
    labels = added_labels(spec)
    return bool(labels) and any(
        str(v) in labels for s in steps if _first(s["tool"]) not in CREATE_VERBS
        for v in {**s.get("given", {}), **(s.get("select") or {})}.values())


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
    built = source_tools(spec)
    own = [s for s in steps if s["tool"] in names and s["tool"] not in built]
    if any(spec.tool(s["tool"]).mutates for s in own) and _reads_only(spec, built):
        found.append("edits_a_reader")
    logs = _logs(spec, built) if own else set()
    if any(acted_table(spec, s["tool"], looked_up=True) in logs for s in own):
        found.append("asks_a_past_call")
    if any(s["tool"] in built and lost_inputs(spec, s["tool"]) for s in steps):
        found.append("lost_its_input")
    if names_an_added_label(steps, spec) or (
            task.get("reference_answer") is not None
            and str(task["reference_answer"]) in added_labels(spec)):
        found.append("names_an_added_label")
    empty = empty_tables(spec)
    if empty and any(s["tool"] in names and not spec.tool(s["tool"]).mutates
                     and acted_table(spec, s["tool"]) in empty for s in steps):
        found.append("reads_an_empty_record")
    return found


__all__ = ["FLAWS", "chain_flaws", "names_an_added_label"]
