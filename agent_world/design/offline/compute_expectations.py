"""Tests of computing tools (SQL, a table's columns, diff, status, commit, time zones, a
fetched page) and of creates that book what they hold: results computed from the seed
rows.
"""

from __future__ import annotations

import hashlib
from datetime import datetime, timedelta
from typing import Any

from agent_world.design.offline.compare_expectations import CompareTests
from agent_world.design.offline.contract_computations import FETCH_MAX_LENGTH
from agent_world.design.offline.contract_expectations import (
    _offset_minutes,
    _offset_str,
)
from agent_world.design.offline.contracts import Guard
from agent_world.design.offline.plans import pk_column
from agent_world.design.offline.seed_rows import Test, _noun, _unknown
from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.naming import singular, snake


class ComputeTests(CompareTests):
    """Tests of computing tools: the result computed here from the seed rows."""

    def business(self) -> list[TableSpec]:
        names = self.c.options.get("tables") or []
        return [self.spec.table(n) for n in names if self.rows(n)]

    def compute_sql_select(self) -> list[Test]:
        q = self.c.params[0].name
        out = []
        for t in self.business()[:2]:
            cols = [c.name for c in t.columns if c.type in ("integer", "text", "real")
                    and c.name != "id"][:2]
            pk = pk_column(t) or "id"
            rows = self.rows(t.name)
            sel = ", ".join(f'"{c}"' for c in [pk, *cols])
            out.append(self.test(f"runs a SELECT over {t.name}", {
                q: f'SELECT {sel} FROM "{t.name}" ORDER BY "{pk}" LIMIT 3'},
                equals=[{c: r.get(c) for c in [pk, *cols]} for r in rows[:3]], changes=[]))
            out.append(self.test(f"counts {t.name}", {q: f'SELECT count(*) AS n FROM "{t.name}";'},
                                 equals=[{"n": len(rows)}], changes=[]))
        t = (self.business() or [self.table])[0]
        out.append(self.test("a write is refused", {q: f'DELETE FROM "{t.name}"'}, ok=False,
                             error_kind="tool_error", changes=[]))
        out.append(self.test("two statements are refused", {
            q: f'SELECT 1; DELETE FROM "{t.name}"'}, ok=False, error_kind="tool_error",
            changes=[]))
        return out

    def compute_sql_write(self) -> list[Test]:
        q = self.c.params[0].name
        out = []
        for t in self.business()[:2]:
            pk = pk_column(t) or "id"
            col = next((c for c in t.columns if c.type == "text" and not c.unique and not c.enum
                        and not c.primary_key and not c.foreign_key), None)
            rows = self.rows(t.name)
            if col is None or not rows:
                continue
            row = rows[len(rows) // 2]
            out.append(self.test(f"updates one {singular(t.name)}", {
                q: f"UPDATE \"{t.name}\" SET \"{col.name}\" = 'edited' WHERE \"{pk}\" = "
                   f"{row[pk]}"}, equals={"rows_affected": 1},
                changes=[{"table": t.name, "op": "update", "key": {pk: row[pk]},
                          "values": {col.name: "edited"}}]))
        t = (self.business() or [self.table])[0]
        out.append(self.test("a SELECT is refused", {q: f'SELECT * FROM "{t.name}"'}, ok=False,
                             error_kind="tool_error", changes=[]))
        return out

    def compute_create_table(self) -> list[Test]:
        q = self.c.params[0].name
        name_col = self.c.options["name_column"]
        # in row order: a set's order of strings changes with the process's hash seed, and
        # the test it picks goes into the spec's fingerprint (which seeds task synthesis)
        taken = [r.get(name_col) for r in self.rows(self.c.entity)]
        new = next(n for n in ("reviews", "notes_2", "events_log") if n not in taken)
        values = {name_col: new, **{k: self.d.now for k, v in self.c.effects[0].set.items()
                                    if v.source == "now"}}
        out = [self.test("registers the new table", {
            q: f"CREATE TABLE {new} (id INTEGER PRIMARY KEY, body TEXT)"}, contains=values,
            changes=[{"table": self.c.entity, "op": "insert", "values": values}])]
        old = next((n for n in taken if isinstance(n, str)), None)
        if old:
            out.append(self.test("an existing name is refused", {
                q: f"CREATE TABLE {old} (id INTEGER)"}, ok=False, error_kind="tool_error",
                changes=[]))
        out.append(self.test("not a CREATE TABLE is refused", {q: "DROP TABLE x"}, ok=False,
                             error_kind="tool_error", changes=[]))
        return out

    def compute_describe_table(self) -> list[Test]:
        key = self.c.key()
        assert key is not None
        out = []
        for row in self.rows(self.c.entity):
            name = row.get(key.column or "")
            if name in {t.name for t in self.spec.tables}:
                cols = [c.name for c in self.spec.table(name).columns]
                out.append(self.test(f"describes {name}", {key.name: name}, pluck="name",
                                     equals=cols))
                if len(out) == 2:
                    break
        return out + self.refusals(None)[-1:]

    def _changes_of(self, row: dict[str, Any]) -> list[dict[str, Any]]:
        o = self.c.options
        return sorted((r for r in self.rows(o["table"]) if r.get(o["link"]) == row[self.pk]),
                      key=lambda r: (r.get(o["path"]) or "", r.get("id")))

    def _repo_args(self, row: dict[str, Any]) -> dict[str, Any] | None:
        built = self.args_for(row)
        return built[0] if built else None

    def compute_diff(self) -> list[Test]:
        o = self.c.options
        out = []
        target = next((p for p in self.c.params if p.role == "row"), None)
        for row in self.rows(self.c.entity):
            changes = self._changes_of(row)
            if o.get("staged") is not None:
                changes = [r for r in changes if bool(r.get(o["staged_column"])) is o["staged"]]
            if not any(r.get(o["diff"]) for r in changes):
                continue
            args = {self.c.key().name: row[self.c.key().column]}  # type: ignore[union-attr]
            if target is not None:
                mine = next((r for r in self.rows(target.ref_table or "")
                             if r.get(target.column or "") == row[self.pk]), None)
                if mine is None:
                    continue
                args[target.name] = mine.get(target.ref_column or "")
            out.append(self.test("returns the diff of the changed files", args, equals={
                "files": [r.get(o["path"]) for r in changes],
                "diff": "\n".join(r[o["diff"]] for r in changes if r.get(o["diff"]))},
                changes=[]))
            if target is not None:
                other = next((r for r in self.rows(target.ref_table or "")
                              if r.get(target.column or "") != row[self.pk]
                              and r.get(target.ref_column or "") not in
                              {x.get(target.ref_column or "") for x in
                               self.rows(target.ref_table or "")
                               if x.get(target.column or "") == row[self.pk]}), None)
                if other is not None:
                    out.append(self.test(f"a {target.name} of another "
                                         f"{singular(self.c.entity)} is refused", {
                                             **args, target.name: other.get(target.ref_column or "")},
                                         ok=False, error_kind="tool_error"))
            break
        return out + self.refusals(None)[-1:]

    def compute_status(self) -> list[Test]:
        o = self.c.options
        out = []
        for row in self.rows(self.c.entity):
            changes = self._changes_of(row)
            if not changes:
                continue
            st, change, path = o["staged_column"], o.get("change"), o["path"]
            want = {"staged": [r[path] for r in changes if r.get(st)],
                    "unstaged": [r[path] for r in changes if not r.get(st)
                                 and (not change or r.get(change) != "untracked")],
                    "untracked": [r[path] for r in changes if not r.get(st)
                                  and change and r.get(change) == "untracked"]}
            out.append(self.test("lists staged, unstaged and untracked paths", {
                self.c.key().name: row[self.c.key().column]},  # type: ignore[union-attr]
                equals=want, changes=[]))
            if len(out) == 2:
                break
        return out + self.refusals(None)[-1:]

    def _absent(self, g: Guard, args: dict[str, Any]) -> bool:
        """Whether no row of the guard's table matches it under these arguments."""
        return not any(all(r.get(c) in v for c, v in g.where.items()) and
                       all(r.get(c) == args.get(a) for c, a in g.match.items())
                       for r in self.rows(g.table or ""))

    def _make_absent(self, g: Guard, args: dict[str, Any], new: dict[str, Any]) -> bool:
        """Move the last argument the guard matches (the pickup branch) to a value where nothing
        matches; False when every value matches something."""
        col, arg = list(g.match.items())[-1]
        p = self.c.param(arg)
        if p is None or p.column is None:
            return False
        parent = fk_target_of(self.table, p.column)
        for r in self.rows(parent or ""):
            if self._absent(g, {**args, arg: r.get("id")}):
                args[arg] = new[p.column] = r.get("id")
                return True
        return False

    def compute_commit(self) -> list[Test]:
        """A repository with staged changes: the commit, its file changes, the staged rows
        gone, the checked-out branch moved; nothing staged and an unknown repository are
        refused."""
        o = self.c.options
        repo_p, msg_p = self.c.params[0], self.c.params[1]
        rt = self.spec.table(repo_p.ref_table or "")
        rpk = pk_column(rt) or "id"
        staged_of: dict[Any, list[dict[str, Any]]] = {}
        for r in self.rows(o["changes"]):
            if r.get(o["staged"]) in (True, 1):
                staged_of.setdefault(r.get(o["link"]), []).append(r)
        repos = [r for r in self.rows(rt.name) if r.get(repo_p.ref_column or "") is not None]
        out: list[Test] = []
        repo = next((r for r in repos if staged_of.get(r[rpk])), None)
        if repo is not None:
            out.append(self._commit_test(repo, sorted(
                staged_of[repo[rpk]], key=lambda r: (r.get(o["path"]), r.get("id")))))
        bare = next((r for r in repos if not staged_of.get(r[rpk])), None)
        if bare is not None:
            out.append(self.test("refused: nothing staged", {
                repo_p.name: bare[repo_p.ref_column or ""], msg_p.name: "Nothing here"},
                ok=False, error_kind="tool_error", changes=[]))
        out.append(self.test(f"refused: unknown {repo_p.name}", {
            repo_p.name: _unknown(self.spec, rt.name, repo_p.ref_column or "", repo_p.type),
            msg_p.name: "Nowhere"}, ok=False, error_kind="tool_error", changes=[]))
        return out

    def _commit_test(self, repo: dict[str, Any], staged: list[dict[str, Any]]) -> Test:
        o = self.c.options
        repo_p, msg_p = self.c.params[0], self.c.params[1]
        rpk = pk_column(self.spec.table(repo_p.ref_table or "")) or "id"
        now, message = self.d.now, "Record the staged changes"
        commits = self.rows(self.c.entity)
        new_id = max((r.get(self.pk) or 0 for r in commits), default=0) + 1
        br = o.get("branch")
        branch = next((r for r in self.rows(br["table"]) if r.get(br["link"]) == repo[rpk]
                       and r.get(br["status"]) == "checked_out"), None) if br else None
        parent = branch.get(br["head"]) if branch else None
        if parent is None:
            mine = [r[self.pk] for r in commits if r.get(o["repo_fk"]) == repo[rpk]]
            parent = max(mine) if mine else None
        values: dict[str, Any] = {o["repo_fk"]: repo[rpk], "message": message}
        if o.get("sha"):
            key = f"{repo[rpk]}:{parent if o.get('parent') else None}:{message}:{now}"
            values[o["sha"]] = hashlib.sha1(key.encode()).hexdigest()
        if o.get("parent"):
            values[o["parent"]] = parent
        values.update({n: now for n in o["now"]})
        changes: list[dict[str, Any]] = [{"table": self.c.entity, "op": "insert",
                                          "values": values}]
        f = o.get("files")
        for r in staged if f else []:
            v: dict[str, Any] = {f["link"]: new_id, "path": r.get(o["path"])}
            if f.get("change") and o.get("change"):
                ch = r.get(o["change"])
                v[f["change"]] = "added" if ch == "untracked" else ch
            for key, mark in (("additions", "+"), ("deletions", "-")):
                if f.get(key) and o.get("diff"):
                    v[f[key]] = sum(1 for ln in (r.get(o["diff"]) or "").splitlines()
                                    if ln.startswith(mark) and not ln.startswith(mark * 3))
            changes.append({"table": f["table"], "op": "insert", "values": v})
        changes += [{"table": o["changes"], "op": "delete", "key": {"id": r["id"]}}
                    for r in staged]
        if branch is not None:
            bv: dict[str, Any] = {br["head"]: new_id}
            if any(col.name == "updated_at" for col in self.spec.table(br["table"]).columns):
                bv["updated_at"] = now
            changes.append({"table": br["table"], "op": "update", "key": {"id": branch["id"]},
                            "values": bv})
            th = br.get("through")
            if th:
                tv = {th["branch"]: branch["id"], th["commit"]: new_id}
                if th.get("now"):
                    tv[th["now"]] = now
                changes.append({"table": th["table"], "op": "insert", "values": tv})
        return self.test("commits the staged changes", {
            repo_p.name: repo[repo_p.ref_column or ""], msg_p.name: message},
            contains={**values, "files": [r.get(o["path"]) for r in staged]}, changes=changes)

    def _offset(self, zone: dict[str, Any], instant: datetime) -> int:
        """The zone's offset at `instant` (UTC): after its last transition, else standard."""
        o = self.c.options
        tr = o.get("transitions")
        standard = _offset_minutes(zone.get(o["offset"]))
        if not tr:
            return standard
        pk = pk_column(self.spec.table(self.c.entity))
        when = instant.isoformat(timespec="seconds")
        past = [r for r in self.rows(tr["table"]) if r.get(tr["link"]) == zone.get(pk)
                and str(r.get(tr["at"]) or "") <= when]
        return _offset_minutes(max(past, key=lambda r: r[tr["at"]])[tr["after"]]) if past \
            else standard

    def compute_convert(self) -> list[Test]:
        src, time_p, dst = self.c.params[:3]
        o = self.c.options
        zones = [r for r in self.rows(self.c.entity) if r.get(o["name"])]
        out = []
        pairs = [(zones[0], zones[-1], "12:30"), (zones[-1], zones[0], "23:15")] \
            if len(zones) > 1 else []
        if o.get("transitions"):  # a pair whose offsets today are not their standard ones
            today = datetime.fromisoformat(self.d.now).date()
            noon = datetime.combine(today, datetime.min.time()) + timedelta(hours=12)
            shifted = [z for z in zones if self._offset(z, noon) != _offset_minutes(
                z.get(o["offset"]))]
            if shifted:
                pairs.append((zones[0], shifted[0], "08:45"))
                pairs.append((shifted[-1], zones[0], "21:10"))
        for a, z, clock in pairs:
            h, m = (int(x) for x in clock.split(":"))
            ma, mz = _offset_minutes(a.get(o["offset"])), _offset_minutes(z.get(o["offset"]))
            if o.get("transitions"):
                local = datetime.combine(datetime.fromisoformat(self.d.now).date(),
                                         datetime.min.time()) + timedelta(hours=h, minutes=m)
                ma = self._offset(a, local - timedelta(minutes=ma))
                mz = self._offset(z, local - timedelta(minutes=ma))
            day, t = divmod(h * 60 + m - ma + mz, 24 * 60)
            out.append(self.test(f"converts {clock} from {a[o['name']]} to {z[o['name']]}", {
                src.name: a[o["name"]], time_p.name: clock, dst.name: z[o["name"]]}, equals={
                "source": {"timezone": a[o["name"]], "time": clock,
                           "utc_offset": _offset_str(ma)},
                "target": {"timezone": z[o["name"]], "time": f"{t // 60:02d}:{t % 60:02d}",
                           "utc_offset": _offset_str(mz)},
                "time_difference": f"{(mz - ma) / 60:+g}h", "day_offset": day}, changes=[]))
        if zones:
            out.append(self.test("an unknown zone is refused", {
                src.name: "Nowhere/Unknown", time_p.name: "10:00", dst.name: zones[0][o["name"]]},
                ok=False, error_kind="tool_error"))
        return out

    def compute_fetch(self) -> list[Test]:
        """A page read whole and in pieces (the cut continues where it ended), an error page
        and an unknown URL refused: derived from the stored pages, not from the tool."""
        url = self.c.params[0]
        opt = {snake(p.name): p.name for p in self.c.params if p.role == "option"}
        pages = [r for r in self.rows(self.c.entity) if r.get("url")]
        ok = [r for r in pages if (r.get("status_code") or 0) < 400 and r.get("body")]
        out = []

        def page(r: dict[str, Any], start: int, size: int) -> dict[str, Any]:
            body = r["body"]
            want = {"url": r["url"], "status_code": r["status_code"],
                    "content": body[start:start + size]}
            if self.c.options.get("content_type"):
                want["content_type"] = r.get("content_type")
            if start + size < len(body):
                want["next_start_index"] = start + size
            return want

        for r in sorted(ok, key=lambda r: len(r["body"]))[-1:]:
            out.append(self.test("a page is read", {url.name: r["url"]},
                                 equals=page(r, 0, FETCH_MAX_LENGTH), changes=[]))
            if "max_length" in opt and len(r["body"]) > 10:
                cut = {url.name: r["url"], opt["max_length"]: 10}
                out.append(self.test("a long page is cut where asked", cut,
                                     equals=page(r, 0, 10), changes=[]))
                if "start_index" in opt:
                    out.append(self.test("the next piece starts where the cut ended",
                                         {**cut, opt["start_index"]: 10},
                                         equals=page(r, 10, 10), changes=[]))
        bad = next((r for r in pages if (r.get("status_code") or 0) >= 400), None)
        if bad is not None:
            out.append(self.test("an error page is refused", {url.name: bad["url"]}, ok=False,
                                 error_kind="tool_error",
                                 error_contains=str(bad["status_code"]), changes=[]))
        out.append(self.test("an unknown URL is refused",
                             {url.name: "https://nowhere.invalid/none"}, ok=False,
                             error_kind="tool_error", error_contains=_noun(self.c.entity),
                             changes=[]))
        return out

    def compute_clock(self) -> list[Test]:
        zone = self.c.params[0]
        o = self.c.options
        out = []
        named = [r for r in self.rows(self.c.entity) if r.get(o["name"])]
        now = datetime.fromisoformat(self.d.now)
        # two zones, one of them on daylight saving time now when the transitions say so
        shifted = [z for z in named if self._offset(z, now) != _offset_minutes(z.get(o["offset"]))]
        picks: list[dict[str, Any]] = []
        for z in [*named[:1], *shifted[:1], *named[1:2]]:
            if all(z is not p for p in picks):
                picks.append(z)
        for z in picks[:2]:
            mz = self._offset(z, now)
            local = now + timedelta(minutes=mz)
            out.append(self.test(f"the time in {z[o['name']]}", {zone.name: z[o["name"]]},
                                 equals={"timezone": z[o["name"]],
                                         "datetime": local.isoformat(timespec="seconds")
                                         + _offset_str(mz), "utc_offset": _offset_str(mz)},
                                 changes=[]))
        out.append(self.test("an unknown zone is refused", {zone.name: "Nowhere/Unknown"},
                             ok=False, error_kind="tool_error"))
        return out

    def create_tests(self) -> list[Test]:
        """The plain insert tests, with the coupled rows the contract names (the slot a new
        appointment books) and a refusal per guard on a referenced record."""
        tests = self.d._create(self.plan)
        coupled = [e for e in self.c.effects if e.coupled]
        guards = [g for g in self.c.guards if g.row != "entity" and g.kind == "state_in"]
        absent = [g for g in self.c.guards if g.kind == "none_where" and g.match]
        apart = [g for g in self.c.guards if g.kind == "no_overlap"]
        out = []
        for t in tests:
            exp = t["expect"]
            if not exp.get("changes") or exp.get("ok") is False:
                out.append(t)
                continue
            args = dict(t["arguments"])
            new = dict(exp["changes"][0]["values"])
            ok = True
            for g in guards:
                p = self.c.param(g.row)
                if p is None or p.ref_table is None:
                    continue
                good = [r for r in self.rows(p.ref_table) if r.get(g.column or "") in g.values]
                cur = self.ref_row(p, args.get(p.name))
                if cur is not None and cur.get(g.column or "") in g.values:
                    continue
                if not good:
                    ok = False
                    break
                args[p.name] = good[0].get(p.ref_column or "")
                new[p.column or ""] = good[0].get(pk_column(self.spec.table(p.ref_table)) or "id")
            for g in absent:
                if not self._absent(g, args):
                    ok = self._make_absent(g, args, new)
            for g in apart:
                ok = ok and self._make_apart(g, args, new)
            if not ok:
                continue
            new.update(self.d.copied_values(self.plan, new))  # from the container chosen now
            changes = [{**exp["changes"][0], "values": new}]
            for e in coupled:
                parent = next((r for r in self.rows(e.table) if r.get("id") == new.get(e.link)),
                              None)
                if parent is None:
                    continue
                values = {k: self.value(v, new, args, {}) for k, v in e.set.items()}
                if any(parent.get(k) != v for k, v in values.items()):
                    changes.append({"table": e.table, "op": "update", "key": {"id": parent["id"]},
                                    "values": values})
            contains = {k: v for k, v in (exp.get("contains") or {}).items()}
            contains.update({k: v for k, v in new.items() if k in contains})
            out.append({**t, "arguments": args, "expect": {**exp, "contains": contains,
                                                          "changes": changes}})
            for g in absent:
                taken = next((r for r in self.rows(g.table or "")
                              if all(r.get(c) in v for c, v in g.where.items())
                              and all(r.get(c) is not None for c in g.match)), None)
                if taken is not None:
                    out.append(self.test(f"refused: a {singular(g.table or '')} is "
                                         f"{'/'.join(map(str, *g.where.values()))} there", {
                                             **args, **{a: taken[c] for c, a in g.match.items()}},
                                         ok=False, error_kind="tool_error", changes=[]))
            for g in apart:
                clash = self._clash(g, guards)
                if clash is not None:
                    out.append(self.test(f"refused: {g.message}", {**args, **clash}, ok=False,
                                         error_kind="tool_error", changes=[]))
            for g in guards:
                p = self.c.param(g.row)
                if p is None or p.ref_table is None:
                    continue
                bad = next((r for r in self.rows(p.ref_table)
                            if r.get(g.column or "") not in g.values), None)
                if bad is not None:
                    out.append(self.test(f"refused: {g.row} with {g.column} "
                                         f"{bad.get(g.column or '')!r}",
                                         {**args, p.name: bad.get(p.ref_column or "")}, ok=False,
                                         error_kind="tool_error", changes=[]))
        return out

    # -- no_overlap: the periods a person's live records hold ------------------------------
    def _spans(self, g: Guard) -> dict[Any, tuple[Any, Any]]:
        """Each period record's (start, end), by its key (a slot's starts_at, ends_at)."""
        parent = fk_target_of(self.spec.table(g.table or ""), g.column or "") or ""
        ppk = pk_column(self.spec.table(parent)) or "id"
        return {r.get(ppk): (r.get(g.path[0]), r.get(g.path[1])) for r in self.rows(parent)}

    def _overlaps(self, g: Guard, person: Any, period: Any,
                  spans: dict[Any, tuple[Any, Any]]) -> bool:
        """Whether `person` has a live record whose period overlaps the record `period`
        (`spans`: `_spans(g)`, read once per create test)."""
        span = spans.get(period)
        if span is None or None in span:
            return False
        held = [spans[r.get(g.column)] for r in self.rows(g.table or "")
                if r.get(g.link or "") == person and r.get(g.column) in spans
                and all(r.get(c) in v for c, v in g.where.items())]
        return any(s is not None and e is not None and s < span[1] and e > span[0]
                   for s, e in held)

    def _make_apart(self, g: Guard, args: dict[str, Any], new: dict[str, Any]) -> bool:
        """Keep a positive create clear of the guard: another person when the one chosen
        already holds an overlapping period; False when nobody is free then."""
        spans = self._spans(g)
        if not self._overlaps(g, new.get(g.link or ""), new.get(g.column or ""), spans):
            return True
        p = self.c.param(g.row)
        if p is None or p.ref_table is None:
            return False
        pk = pk_column(self.spec.table(p.ref_table)) or "id"
        free = next((r for r in self.rows(p.ref_table)
                     if not self._overlaps(g, r.get(pk), new.get(g.column or ""), spans)),
                    None)
        if free is None:
            return False
        args[p.name] = free.get(p.ref_column or "")
        new[g.link or ""] = free.get(pk)
        return True

    def _clash(self, g: Guard, takes: list[Guard]) -> dict[str, Any] | None:
        """Arguments (person, period) of a create the guard alone refuses: a period free to
        take (every other guard on it holds) overlapping one the person already holds."""
        person, period = self.c.param(g.row), self.c.param(g.arg or "")
        if person is None or period is None or not person.ref_table or not period.ref_table:
            return None
        rules = [t for t in takes if t.row == period.name]
        ppk = pk_column(self.spec.table(person.ref_table)) or "id"
        spk = pk_column(self.spec.table(period.ref_table)) or "id"
        spans = self._spans(g)
        for candidate in self.rows(period.ref_table):
            if not all(candidate.get(t.column or "") in t.values for t in rules):
                continue
            who = next((r for r in self.rows(person.ref_table)
                        if self._overlaps(g, r.get(ppk), candidate.get(spk), spans)), None)
            if who is not None:
                return {person.name: who.get(person.ref_column or ""),
                        period.name: candidate.get(period.ref_column or "")}
        return None


def fk_target_of(table: TableSpec, column: str) -> str | None:
    col = next((c for c in table.columns if c.name == column), None)
    return col.foreign_key.split(".")[0] if col is not None and col.foreign_key else None
