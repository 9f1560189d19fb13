"""From the domain model to schema: `model_to_tables` gives TableSpecs in foreign-key order with
each table's kind; `table_order` orders any table list parents first; `table_kinds` gives each
table's role (core, person, reference, activity, child, join, history, ...) from a spec's
provenance or by inference.
"""

from __future__ import annotations

from agent_world.envs.spec import EnvSpec
from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.domain import DomainModel
from agent_world.mining.offline.naming import identifier, is_person, plural, singular, snake
from agent_world.mining.offline.reference_data import CURATED, CURATED_TABLES


def model_to_tables(m: DomainModel) -> tuple[list[TableSpec], dict[str, str]]:
    """TableSpecs (FK order) and each table's kind."""
    names: dict[str, str] = {}
    for e in m.entities:  # `spec_file` (core) and `spec_files` (child) name one table: number
        name = plural(e) if m.entities[e].kind not in ("join", "child") else e
        stem, n = identifier(name, "t"), 2
        while identifier(name, "t") in {identifier(v, "t") for v in names.values()}:
            name, n = f"{stem}_{n}", n + 1
        names[e] = name
    order = _entity_order(m)
    tables, kinds = [], {}
    for ename in order:
        ent = m.entities[ename]
        cols = [ColumnSpec(name="id", type="integer", primary_key=True, nullable=False)]
        fks = [c for c in ent.cols.values() if c.fk]
        rest = [c for c in ent.cols.values() if not c.fk]
        rest.sort(key=lambda c: {"status": 0, "created_at": 1, "updated_at": 2}.get(c.name, -1))
        taken = {"id"}
        for c in fks + rest:
            if c.name == "id":
                continue
            fk = f"{names[c.fk]}.id" if c.fk else None
            cname = identifier(c.name, "col")
            stem, n = cname.rstrip("_"), 2
            while cname in taken:  # an escaped name (`from` -> `from_`) never collides
                cname, n = f"{stem}_{n}", n + 1
            taken.add(cname)
            cols.append(ColumnSpec(name=cname, type=c.type,
                                   nullable=c.nullable, unique=c.unique, enum=c.enum,
                                   foreign_key=fk, description=c.description[:200]))
        desc = ent.description or CURATED.get(ename, {}).get("description", "")
        tname = identifier(names[ename], "t")
        tables.append(TableSpec(name=tname, description=desc[:300], columns=cols,
                                unique_together=[g for g in ent.unique_together
                                                 if all(x in {c.name for c in cols} for x in g)]))
        kinds[tname] = "person" if is_person(ename) and ent.kind == "core" else ent.kind
    return tables, kinds


def _entity_order(m: DomainModel) -> list[str]:
    done: list[str] = []
    seen: set[str] = set()

    def visit(name: str, stack: tuple[str, ...] = ()) -> None:
        if name in seen or name in stack or name not in m.entities:
            return
        for p in m.entities[name].parents():
            visit(p, (*stack, name))
        seen.add(name)
        done.append(name)

    for name in m.entities:  # insertion order: hints, tool objects, references
        visit(name)
    return done


def table_order(tables: list[TableSpec]) -> list[str]:
    by = {t.name: t for t in tables}
    done: list[str] = []
    seen: set[str] = set()

    def visit(name: str, stack: tuple[str, ...] = ()) -> None:
        if name in seen or name in stack:
            return
        for c in by[name].columns:
            if c.foreign_key:
                p = c.foreign_key.split(".")[0]
                if p != name and p in by:
                    visit(p, (*stack, name))
        seen.add(name)
        done.append(name)

    for t in tables:
        visit(t.name)
    return done


def table_kinds(spec: EnvSpec) -> dict[str, str]:
    """Each table's role (core, person, reference, activity, child, join, history, lookup,
    tags, notes): recorded by the miner in provenance.stats, else inferred."""
    known = dict(spec.provenance.stats.get("table_kinds") or {})
    for t in spec.tables:
        if t.name in known:
            continue
        fks = [c.name for c in t.columns if c.foreign_key]
        if t.name.endswith("_history"):
            known[t.name] = "history"
        elif t.name in CURATED_TABLES:
            known[t.name] = "reference"
        elif len(fks) >= 2 and any(len(set(g) & set(fks)) >= 2 for g in t.unique_together):
            known[t.name] = "join"
        elif is_person(t.name) or {"email"} <= {c.name for c in t.columns} and any(
                c.name in ("name", "first_name", "full_name") for c in t.columns):
            known[t.name] = "person"
        else:
            known[t.name] = "core"
    return known


# verbs that file one existing record on another (add_tag_to_task) or take it off again
# (delete_dag_run deletes a run of a DAG: no link)
LINK_VERBS = frozenset({"add", "remove", "attach", "detach", "link", "unlink", "assign",
                        "unassign", "tag", "untag", "connect", "disconnect"})


def link_table(record: str | None, owner: str | None, refs: list[str], spec: EnvSpec
               ) -> str | None:
    """The join table a link tool writes: add_tag_to_task(task_gid, tag_gid) is told an
    existing task and an existing tag and files the one on the other (a `task_tags` row), it
    makes no tag. `record` and `owner`: the tables of the tool name's record and of what it
    acts on; `refs`: the tables its arguments name records of. None unless it names both and
    one table links them alone (two links, their keys and times)."""
    if not record or not owner or record == owner or not {record, owner} <= set(refs):
        return None
    for t in spec.tables:
        links = {c.foreign_key.split(".")[0] for c in t.columns if c.foreign_key}
        rest = [c for c in t.columns if not c.foreign_key and not c.primary_key
                and not c.name.endswith("_at")]
        if links == {record, owner} and not rest and t.name not in (record, owner):
            return t.name
    return None


def table_for_noun(noun: str | None, tables: dict[str, TableSpec]) -> str | None:
    """The table holding records of `noun` (its plural, itself, its head word's plural)."""
    cands = (plural(noun), noun, plural(noun.split("_")[-1])) if noun else ()
    return next((cand for cand in cands if cand in tables), None)


def entity_table(name: str, tables: dict[str, TableSpec]) -> str | None:
    """`table_for_noun` of a name as a source writes it ("Loan", "overdue loans")."""
    return table_for_noun(singular(snake(name)), tables)
