"""The domain model that evidence is turned into: entities (`Entity`: kind, typed columns `Col`,
states, unique groups) and `DomainModel`, which creates entities by singular name (curated
names become reference entities), finds the person entity, links foreign keys (a join table
instead when the FK would close a cycle) and makes many-to-many join tables.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_world.mining.offline.naming import identifier, is_person, plural, singular
from agent_world.mining.offline.reference_data import CURATED


@dataclass
class Col:
    name: str
    type: str = "text"
    nullable: bool = True
    unique: bool = False
    enum: list[str] | None = None
    fk: str | None = None  # target entity
    description: str = ""
    declared: bool = False  # typed by the source: name heuristics do not change it


@dataclass
class Entity:
    name: str
    kind: str  # core, reference, activity, child, join
    cols: dict[str, Col] = field(default_factory=dict)
    states: list[str] = field(default_factory=list)
    unique_together: list[list[str]] = field(default_factory=list)
    description: str = ""
    written: bool = False  # some tool changes it
    wants_status: bool = False  # a status field without known values
    from_hint: bool = False  # documented by an entity hint (its fields are authoritative)
    declared_states: list[str] | None = None  # a status enum the source declares, as declared

    def add(self, col: Col) -> Col:
        # a field is keyed by its escaped name: a source field `from` reached as an argument
        # and as a declared field (already escaped to `from_`) is one column
        col.name = identifier(col.name, "col")
        have = self.cols.get(col.name)
        if have is None:
            self.cols[col.name] = col
            return col
        if have.declared:  # the source's declaration wins over what tools suggest
            have.description = have.description or col.description
            return have
        have.nullable = have.nullable and col.nullable
        have.unique = have.unique or col.unique
        if col.enum:
            have.enum = list(dict.fromkeys((have.enum or []) + col.enum))
        if col.fk and not have.fk:
            have.fk, have.type = col.fk, "integer"
        have.description = have.description or col.description
        return have

    def parents(self) -> list[str]:
        return [c.fk for c in self.cols.values() if c.fk and c.fk != self.name]


@dataclass
class DomainModel:
    entities: dict[str, Entity] = field(default_factory=dict)

    def ensure(self, name: str, kind: str = "core", description: str = "") -> Entity:
        name = identifier(singular(name), "entity")
        ent = self.entities.get(name)
        if ent is None:
            if name in CURATED and kind == "core":
                kind = "reference"
            ent = self.entities[name] = Entity(name=name, kind=kind, description=description)
        elif description and not ent.description:
            ent.description = description
        return ent

    def person(self) -> Entity:
        for e in self.entities.values():
            if is_person(e.name):
                return e
        for e in self.entities.values():  # a declared entity that looks like people
            if e.kind == "core" and "email" in e.cols and any(
                    c in e.cols for c in ("full_name", "name", "first_name", "given_name")):
                return e
        return self.ensure("user", "core", "people using the system")

    def reaches(self, start: str, goal: str) -> bool:
        seen, stack = set(), [start]
        while stack:
            cur = stack.pop()
            if cur == goal:
                return True
            if cur in seen or cur not in self.entities:
                continue
            seen.add(cur)
            stack.extend(self.entities[cur].parents())
        return False

    def link(self, child: Entity, col: str, parent: str, required: bool,
             description: str = "") -> None:
        """child.col -> parent.id, or a join table if that FK would close a cycle."""
        if parent != child.name and self.reaches(parent, child.name):
            self.join(child.name, parent)
            return
        child.add(Col(col, "integer", nullable=not required or parent == child.name,
                      fk=parent, description=description))

    def raw(self, name: str, kind: str, description: str = "") -> Entity:
        """An entity whose name is used as is (join and child tables)."""
        name = identifier(name, "t")
        if name not in self.entities:
            self.entities[name] = Entity(name=name, kind=kind, description=description)
        return self.entities[name]

    def join(self, a: str, b: str) -> Entity:
        a, b = singular(a), singular(b)
        if f"{b}_{plural(a)}" in self.entities:
            return self.entities[f"{b}_{plural(a)}"]
        ent = self.raw(f"{a}_{plural(b)}", "join", f"which {plural(b)} each {a} relates to")
        other = f"related_{b}_id" if a == b else f"{b}_id"
        ent.add(Col(f"{a}_id", "integer", nullable=False, fk=a))
        ent.add(Col(other, "integer", nullable=False, fk=b))
        if [f"{a}_id", other] not in ent.unique_together:
            ent.unique_together.append([f"{a}_id", other])
        return ent
