"""Tests of a tool comparing two points of a history (contract_compare.py), computed from the
seed rows: the same entity compared with different targets (a reference, a snapshot by a
prefix of its hash, its own head) gives different results, so a tool ignoring its target
fails; a target naming nothing in the entity is refused.
"""

from __future__ import annotations

from typing import Any

from agent_world.design.offline.contract_expectations import ContractTests
from agent_world.design.offline.plans import pk_column
from agent_world.design.offline.seed_rows import Test
from agent_world.mining.offline.naming import singular

UNKNOWN_TARGET = "no-such-ref"


class CompareTests(ContractTests):
    """`compute_compare`: the expected difference is computed here in plain Python with the
    rule the renderer writes (render_compare.py)."""

    def _snap_pk(self) -> str:
        return pk_column(self.spec.table(self.c.options["snapshots"])) or "id"

    def _head(self, row: dict[str, Any]) -> dict[str, Any] | None:
        o, refs, spk = self.c.options, self.c.options.get("refs"), self._snap_pk()
        snaps = self.rows(o["snapshots"])
        if refs and refs.get("head") and refs.get("status"):
            current = next((r for r in sorted(self.rows(refs["table"]),
                                              key=lambda r: r.get("id") or 0)
                            if r.get(refs["link"]) == row[self.pk]
                            and r.get(refs["status"]) == "checked_out"), None)
            if current is not None and current.get(refs["head"]) is not None:
                return next((s for s in snaps if s.get(spk) == current[refs["head"]]), None)
        mine = [s for s in snaps if s.get(o["link"]) == row[self.pk]]
        return max(mine, key=lambda s: s[spk]) if mine else None

    def _tip(self, ref: dict[str, Any]) -> dict[str, Any] | None:
        refs, spk = self.c.options["refs"], self._snap_pk()
        snaps = self.rows(self.c.options["snapshots"])
        if refs.get("head"):
            return next((s for s in snaps if ref.get(refs["head"]) is not None
                         and s.get(spk) == ref[refs["head"]]), None)
        th = refs["through"]
        linked = {t.get(th["snapshot"]) for t in self.rows(th["table"])
                  if t.get(th["ref"]) == ref.get("id")}
        mine = [s for s in snaps if s.get(spk) in linked]
        return max(mine, key=lambda s: s[spk]) if mine else None

    def _ancestry(self, snap: dict[str, Any] | None) -> set[Any]:
        o, spk = self.c.options, self._snap_pk()
        by_id = {s.get(spk): s for s in self.rows(o["snapshots"])}
        out: set[Any] = set()
        at = snap.get(spk) if snap else None
        while at is not None and at not in out:
            out.add(at)
            at = (by_id.get(at) or {}).get(o["parent"])
        return out

    def _expected(self, head: dict[str, Any] | None, tip: dict[str, Any] | None
                  ) -> dict[str, Any]:
        o, f = self.c.options, self.c.options["files"]
        apart = self._ancestry(head) ^ self._ancestry(tip)
        rows = sorted((r for r in self.rows(f["table"]) if r.get(f["link"]) in apart),
                      key=lambda r: (r.get(f["link"]), r.get("id") or 0))
        files: dict[str, dict[str, Any]] = {}
        for r in rows:
            entry = files.setdefault(r[f["path"]], {
                "path": r[f["path"]],
                **({f["change"]: None} if f.get("change") else {}),
                **{f[k]: 0 for k in ("additions", "deletions") if f.get(k)}})
            if f.get("change"):
                entry[f["change"]] = r.get(f["change"])
            for k in ("additions", "deletions"):
                if f.get(k):
                    entry[f[k]] += r.get(f[k]) or 0
        name = o.get("hash") or self._snap_pk()
        return {"head": head.get(name) if head else None,
                "target": tip.get(name) if tip else None,
                "files": [files[p] for p in sorted(files)]}

    def _targets(self, row: dict[str, Any]) -> list[tuple[str, Any, dict[str, Any] | None]]:
        """(test name, target argument, the snapshot it names) for one entity row: its
        references (those pointing at a snapshot first), then its snapshots by the shortest unique prefix of 7+ hash characters."""
        o, refs, spk = self.c.options, self.c.options.get("refs"), self._snap_pk()
        out: list[tuple[str, Any, dict[str, Any] | None]] = []
        names: set[Any] = set()
        if refs:
            for r in sorted(self.rows(refs["table"]), key=lambda r: r.get("id") or 0):
                name = r.get(refs["name"])
                if r.get(refs["link"]) != row[self.pk] or not name or name in names:
                    continue
                names.add(name)
                out.append((f"compared with a {singular(refs['table']).replace('_', ' ')}",
                            name, self._tip(r)))
            out.sort(key=lambda t: t[2] is None)  # a branch with commits first
        hashed = o.get("hash")
        if hashed:
            mine = sorted((s for s in self.rows(o["snapshots"])
                           if s.get(o["link"]) == row[self.pk]
                           and isinstance(s.get(hashed), str) and s.get(hashed)),
                          key=lambda s: s[spk])
            for s in mine:
                prefix = s[hashed][:7]
                if prefix in names or sum(x[hashed].startswith(prefix) for x in mine) != 1:
                    continue
                out.append((f"compared with a {singular(o['snapshots']).replace('_', ' ')} "
                            "by a prefix of its hash", prefix, s))
        return out

    def _is_snapshot_target(self, name: str) -> bool:
        return name.startswith(f"compared with a {singular(self.c.options['snapshots'])}"
                               .replace("_", " "))

    def compute_compare(self) -> list[Test]:
        key = self.c.key()
        target = next(p for p in self.c.params if p.role == "text")
        assert key is not None
        entities = sorted(self.rows(self.c.entity), key=lambda r: r.get(self.pk) or 0)
        # first an entity whose first reference points at a snapshot other than its head (a
        # branch with commits of its own)
        entities.sort(key=lambda r: not any(tip is not None and tip != self._head(r) and
                                            not self._is_snapshot_target(n)
                                            for n, _, tip in self._targets(r)[:1]))
        for row in entities:
            head = self._head(row)
            if head is None or row.get(key.column or "") is None:
                continue
            base = {key.name: row[key.column or ""]}
            picked: list[tuple[str, Any, dict[str, Any]]] = []
            candidates = [(n, v, self._expected(head, tip)) for n, v, tip in self._targets(row)]
            for first in (True, False):  # one of each kind first, then up to three in all
                for name, value, want in candidates:
                    if len(picked) == 3 or any(want == w for _, _, w in picked) or \
                            (first and any(n.split(" (")[0] == name for n, _, _ in picked)):
                        continue
                    if any(n == name for n, _, _ in picked):
                        name = f"{name} ({value})"
                    picked.append((name, value, want))
            if len(picked) < 2 or not any(w["files"] for _, _, w in picked):
                continue  # one result only: a tool ignoring its target would pass
            out = [self.test(name, {**base, target.name: value}, equals=want, changes=[])
                   for name, value, want in picked]
            taken = {v for _, v, _ in self._targets(row)}
            if UNKNOWN_TARGET not in taken:
                out.append(self.test(f"a {target.name} naming nothing here is refused",
                                     {**base, target.name: UNKNOWN_TARGET}, ok=False,
                                     error_kind="tool_error", changes=[]))
            refs = self.c.options.get("refs")
            hashed = self.c.options.get("hash")
            mine = [s.get(hashed) for s in self.rows(self.c.options["snapshots"])
                    if s.get(self.c.options["link"]) == row[self.pk]] if hashed else []
            other = next((r.get(refs["name"]) for r in self.rows(refs["table"])
                          if r.get(refs["link"]) != row[self.pk] and r.get(refs["name"])
                          and r.get(refs["name"]) not in taken and not any(
                              isinstance(h, str) and h.startswith(r[refs["name"]])
                              for h in mine)), None) if refs else None
            if other is not None:
                out.append(self.test(f"a {target.name} of another "
                                     f"{singular(self.c.entity).replace('_', ' ')} is refused",
                                     {**base, target.name: other}, ok=False,
                                     error_kind="tool_error", changes=[]))
            return out + self.refusals(None)[-1:]
        return self.refusals(None)[-1:]
