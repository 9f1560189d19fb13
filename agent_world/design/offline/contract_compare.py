"""Contract of a tool comparing two points of a history ("shows differences between branches or
commits"): the file-level changes of the snapshots in one ancestry but not the other.

The schema holds such a history as a child of the entity (``commits`` of a repository) with
a self-reference to its parent (``parent_commit_id``), the per-file changes of each snapshot
(``commit_file_changes``: path, change type, additions, deletions) and, optionally, named
references to snapshots (``branches``, by a head column or through a link table such as
``branch_commits``). The tool's target argument names a reference or a snapshot (by any prefix
of its hash, as git does); the other side is the entity's current head.
"""

from __future__ import annotations

import re
from typing import Any

from agent_world.design.offline.contract_schema import (
    _arg_type,
    _Args,
    _has,
    _key_param,
    _name_column,
    _param,
    children,
    fk_target,
    pk_of,
    status_of,
)
from agent_world.design.offline.contracts import Contract
from agent_world.design.offline.plans import HASH_COLUMNS
from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.naming import singular, snake

# "differences between branches or commits", "compare two revisions", "changes between ..."
_BETWEEN = re.compile(r"\b(?:differences?|diffs?|changes|compares?|comparing)\b[^.]*?"
                      r"\bbetween\b([^.]*)", re.I)


def _history(spec: EnvSpec, entity: TableSpec) -> tuple[TableSpec, str, str] | None:
    """A child of `entity` holding snapshots with a parent (table, FK to entity, parent)."""
    for t, fk in children(spec, entity):
        parent = next((col.name for col in t.columns if fk_target(col) == t.name), None)
        if parent is not None and pk_of(t) is not None:
            return t, fk.name, parent
    return None


def _refs(spec: EnvSpec, entity: TableSpec, snaps: TableSpec, named: set[str]
          ) -> dict[str, Any] | None:
    """Named references to snapshots the description names ("branches"): the table, its
    name column, and how it points at its tip (a head column, or a link table whose newest
    snapshot is the tip)."""
    for t, fk in children(spec, entity):
        name = _name_column(t)
        if t.name == snaps.name or name is None or not ({t.name, singular(t.name)} & named):
            continue
        head = next((col.name for col in t.columns if fk_target(col) == snaps.name), None)
        through = next((lt for lt in spec.tables if lt.name not in (t.name, snaps.name) and
                        {fk_target(col) for col in lt.columns} >= {t.name, snaps.name}), None)
        if head is None and through is None:
            continue
        status = status_of(t)
        return {"table": t.name, "link": fk.name, "name": name.name, "head": head,
                "status": status.name if status is not None
                and "checked_out" in (status.enum or []) else None,
                "through": None if through is None else {
                    "table": through.name,
                    "ref": next(col.name for col in through.columns
                                if fk_target(col) == t.name),
                    "snapshot": next(col.name for col in through.columns
                                     if fk_target(col) == snaps.name)}}
    return None


def _compare(spec: EnvSpec, c: Contract, entity: TableSpec, words: list[str], text: set[str],
             desc: str, args: _Args, entry: dict[str, Any]) -> Contract | None:
    """``git_diff(repo_path, target)`` ("shows differences between branches or commits"):
    the per-path changes of the snapshots in the ancestry of the entity's head or of the
    target but not both; a target naming no reference and no snapshot is refused."""
    m = _BETWEEN.search(desc)
    history = _history(spec, entity)
    if m is None or history is None or entry.get("read_only") is False:
        return None
    snaps, link, parent = history
    named = {w.lower() for w in re.findall(r"[A-Za-z]+", m.group(1))}
    named |= {singular(w) for w in named}
    if not ({snaps.name, singular(snaps.name)} & named):
        return None
    files = next(((t, fk) for t, fk in children(spec, snaps) if _has(t, "path")), None)
    if files is None:
        return None
    used: set[str] = set()
    key = _key_param(spec, entity, args, text, used)
    targets = [a for a, i in args.raw.items() if a not in used and i.get("role") != "control"
               and _arg_type(i) == "string"]
    if len(targets) != 1 or key.ref_table != entity.name:
        return None
    ft, ffk = files
    refs = _refs(spec, entity, snaps, named)
    snap = singular(snaps.name).replace("_", " ")
    what = f"{singular(refs['table']).replace('_', ' ')} or {snap}" if refs else snap
    hashed = next((col.name for col in snaps.columns if col.name in HASH_COLUMNS), None)
    if refs is None and hashed is None:
        return None
    how = ", ".join(([f"a {singular(refs['table']).replace('_', ' ')} name"] if refs else [])
                    + ([f"a {snap} hash or a prefix of it"] if hashed else []))
    c.verb, c.computation, c.returns = "compute", "compare", "result"
    c.params = [key, _param(args.safe(targets[0]), "text", required=True, description=(
        f"The {what} to compare the current head with ({how})."))]
    for a, info in args.raw.items():
        if info.get("role") == "control":
            c.params.append(_param(args.safe(a), "ignore", type=_arg_type(info),
                                   description=f"{snake(a).replace('_', ' ').capitalize()}"
                                               " (accepted, no effect here)."))
    change = next((col.name for col in ft.columns if col.enum and "change" in col.name), None)
    c.options = {
        "snapshots": snaps.name, "link": link, "parent": parent,
        "hash": hashed,
        "refs": refs,
        "files": {"table": ft.name, "link": ffk.name, "path": "path", "change": change,
                  "additions": "additions" if _has(ft, "additions") else None,
                  "deletions": "deletions" if _has(ft, "deletions") else None}}
    c.evidence = [f"the {ft.name} of the {snaps.name} in one ancestry ({parent}) but not "
                  "the other, per path; an unknown target refused"]
    return c
