"""Code of a tool comparing two points of a history from its contract
(contract_compare.py): the entity's current head against a target naming a reference (a
branch) or a snapshot (a commit, by any prefix of its hash), the per-path changes of the
snapshots in one ancestry but not the other.
"""

from __future__ import annotations

from agent_world.design.offline.contracts import Contract
from agent_world.design.offline.plans import pk_column
from agent_world.design.offline.render_contracts import _contract_key
from agent_world.design.offline.render_plans import _Body, _lit
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular


def _render_compare(b: _Body, spec: EnvSpec, c: Contract) -> None:
    o, refs, f = c.options, c.options.get("refs"), c.options["files"]
    snaps, link, parent, hashed = o["snapshots"], o["link"], o["parent"], o.get("hash")
    target = next(p.name for p in c.params if p.role == "text")
    pk = _lit(pk_column(spec.table(c.entity)))
    spk = pk_column(spec.table(snaps))
    noun = singular(c.entity).replace("_", " ")
    _contract_key(b, spec, c)
    # The current head, as the commit tool of the same schema moves it: the checked-out
    # reference's head where references record one, else the newest snapshot (the one a new
    # commit takes as its parent; git_log lists it first).
    sn = singular(snaps).replace("_", " ")
    rn, rns = (singular(refs["table"]).replace("_", " "), refs["table"].replace("_", " ")) \
        if refs else ("reference", "references")
    b.add(f"# the current head: the checked-out {rn}'s head where {rns} record one, else the "
          f"newest {sn}")
    newest = (f"ctx.one('SELECT * FROM \"{snaps}\" WHERE \"{link}\" = ? ORDER BY \"{spk}\" "
              f"DESC LIMIT 1', (row[{pk}],))")
    by_id = f"ctx.one('SELECT * FROM \"{snaps}\" WHERE \"{spk}\" = ?', "
    if refs and refs.get("head") and refs.get("status"):
        b.add(f"current = ctx.one('SELECT * FROM \"{refs['table']}\" WHERE \"{refs['link']}\" "
              f"= ? AND \"{refs['status']}\" = ? ORDER BY \"id\" LIMIT 1', "
              f"(row[{pk}], 'checked_out'))")
        b.add(f"head = {by_id}(current[{_lit(refs['head'])}],)) if current and "
              f"current[{_lit(refs['head'])}] is not None else None")
        b.add("if head is None:")
        b.add(f"head = {newest}", 2)
    else:
        b.add(f"head = {newest}")
    level = 1
    if refs:
        b.add(f"ref = ctx.one('SELECT * FROM \"{refs['table']}\" WHERE \"{refs['link']}\" = ? "
              f"AND \"{refs['name']}\" = ? ORDER BY \"id\" LIMIT 1', (row[{pk}], {target}))")
        b.add("if ref is not None:")
        if refs.get("head"):  # the reference's tip is its head column ...
            b.add(f"tip = {by_id}(ref[{_lit(refs['head'])}],)) if "
                  f"ref[{_lit(refs['head'])}] is not None else None", 2)
        else:  # ... or the newest snapshot linked to it
            th = refs["through"]
            b.add(f"tip = ctx.one('SELECT s.* FROM \"{snaps}\" s JOIN \"{th['table']}\" t ON "
                  f"t.\"{th['snapshot']}\" = s.\"{spk}\" WHERE t.\"{th['ref']}\" = ? ORDER BY "
                  f"s.\"{spk}\" DESC LIMIT 1', (ref['id'],))", 2)
        b.add("else:")
        level = 2
    what = " or ".join(([singular(refs["table"]).replace("_", " ")] if refs else [])
                       + ([singular(snaps).replace("_", " ")] if hashed else []))
    if hashed:  # a snapshot by any prefix of its hash, as git does; an ambiguous one refused
        b.add(f"found = ctx.query('SELECT * FROM \"{snaps}\" WHERE \"{link}\" = ? AND "
              f"substr(\"{hashed}\", 1, length(?)) = ? ORDER BY \"{spk}\" LIMIT 2', "
              f"(row[{pk}], {target}, {target})) if {target} else []", level)
        b.add("if len(found) > 1:", level)
        b.add(f"raise ToolError(f\"{{{target}!r}} names more than one "
              f"{singular(snaps).replace('_', ' ')} in this {noun}.\")", level + 1)
        b.add("if not found:", level)
        b.add(f"raise ToolError(f\"No {what} {{{target}!r}} in this {noun}.\")", level + 1)
        b.add("tip = found[0]", level)
    else:
        b.add(f"raise ToolError(f\"No {what} {{{target}!r}} in this {noun}.\")", level)
    # Each side's ancestry along the parent reference; the snapshots in one but not the other
    # are what differs. The schema keeps per-file change records, not file contents, so the
    # difference is read from those records: one entry per path, with the change of the
    # newest snapshot touching it and the lines added and deleted summed over them.
    b.add(f"# the {snaps.replace('_', ' ')} in one ancestry but not the other; per path: the newest change, "
          "lines summed")
    b.add(f"up = ('WITH RECURSIVE up(id) AS (SELECT ? UNION SELECT s.\"{parent}\" FROM "
          f"\"{snaps}\" s JOIN up ON s.\"{spk}\" = up.id WHERE s.\"{parent}\" IS NOT NULL) "
          "SELECT id FROM up')")
    b.add(f"mine = {{r['id'] for r in ctx.query(up, (head[{_lit(spk)}],))}} if head else set()")
    b.add(f"theirs = {{r['id'] for r in ctx.query(up, (tip[{_lit(spk)}],))}} if tip else set()")
    b.add("apart = sorted(mine ^ theirs)")
    b.add(f"changes = ctx.query(f'SELECT * FROM \"{f['table']}\" WHERE \"{f['link']}\" IN "
          f"({{\", \".join(\"?\" for _ in apart)}}) ORDER BY \"{f['link']}\", \"id\"', apart)")
    path = _lit(f["path"])
    entry = [f"'path': r[{path}]"]
    if f.get("change"):
        entry.append(f"{_lit(f['change'])}: None")
    entry += [f"{_lit(f[k])}: 0" for k in ("additions", "deletions") if f.get(k)]
    b.add("files = {}")
    b.add("for r in changes:")
    b.add(f"entry = files.setdefault(r[{path}], {{{', '.join(entry)}}})", 2)
    if f.get("change"):
        b.add(f"entry[{_lit(f['change'])}] = r[{_lit(f['change'])}]", 2)
    for k in ("additions", "deletions"):
        if f.get(k):
            b.add(f"entry[{_lit(f[k])}] += r[{_lit(f[k])}] or 0", 2)
    name = _lit(hashed or spk)
    b.add(f"return {{\"head\": head[{name}] if head else None, "
          f"\"target\": tip[{name}] if tip else None, "
          "\"files\": [files[p] for p in sorted(files)]}")
