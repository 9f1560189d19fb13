"""Code of computing tools from their contract: SQL over the data, a table's columns, a
repository's diff, status and commit, time-zone conversion and clocks, a fetched page.
"""

from __future__ import annotations

from agent_world.design.offline.contract_computations import FETCH_MAX_LENGTH
from agent_world.design.offline.contracts import Contract
from agent_world.design.offline.plans import pk_column
from agent_world.design.offline.render_compare import _render_compare
from agent_world.design.offline.render_contracts import _contract_key, _dict_expr, _resolve_rows
from agent_world.design.offline.render_plans import _Body, _lit
from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import singular, snake


def _render_compute(b: _Body, spec: EnvSpec, c: Contract) -> None:
    o = c.options
    query = next((p.name for p in c.params if p.role == "text"), "query")
    if c.computation == "sql_select":
        b.add(f"sql = _one_statement({query}, ('SELECT', 'WITH'), 'read-only SELECT')")
        b.add("return ctx.query(sql)")
    elif c.computation == "sql_write":
        b.add(f"sql = _one_statement({query}, ('INSERT', 'UPDATE', 'DELETE'), "
              "'INSERT, UPDATE or DELETE')")
        b.add("cur = ctx.execute(sql)")
        b.add("return {\"rows_affected\": cur.rowcount}")
    elif c.computation == "describe_table":
        _contract_key(b, spec, c)
        col = c.key().column  # type: ignore[union-attr]
        b.add(f"name = row[{_lit(col)}].replace('\"', '\"\"')")
        b.add("cur = ctx.execute(f'SELECT * FROM \"{name}\" LIMIT 0')")
        b.add("return [{\"name\": d[0]} for d in cur.description]")
    elif c.computation == "compare":
        _render_compare(b, spec, c)
    elif c.computation in ("diff", "status"):
        _contract_key(b, spec, c)
        pk = pk_column(spec.table(c.entity))
        _resolve_rows(b, spec, c)
        for p in c.params:
            if p.role == "row" and p.column:
                b.add(f"if {p.name}_row[{_lit(p.column)}] != row[{_lit(pk)}]:")
                b.add(f"raise ToolError(f\"No {singular(p.ref_table or '')} {{{p.name}!r}} in "
                      f"this {singular(c.entity)}.\")", 2)
        staged = o["staged_column"]
        b.add(f"changes = ctx.query('SELECT * FROM \"{o['table']}\" WHERE \"{o['link']}\" = ? "
              f"ORDER BY \"{o['path']}\", \"id\"', (row[{_lit(pk)}],))")
        if c.computation == "diff":
            if o.get("staged") is not None:
                b.add(f"changes = [r for r in changes if bool(r[{_lit(staged)}]) is "
                      f"{bool(o['staged'])}]")
            b.add(f"return {{\"files\": [r[{_lit(o['path'])}] for r in changes], "
                  f"\"diff\": \"\\n\".join(r[{_lit(o['diff'])}] for r in changes "
                  f"if r[{_lit(o['diff'])}])}}")
        else:
            change = o.get("change")
            untracked = f" and r[{_lit(change)}] == 'untracked'" if change else " and False"
            tracked = f" and r[{_lit(change)}] != 'untracked'" if change else ""
            b.add(f"return {{\"staged\": [r[{_lit(o['path'])}] for r in changes if "
                  f"r[{_lit(staged)}]],")
            b.add(f"        \"unstaged\": [r[{_lit(o['path'])}] for r in changes if not "
                  f"r[{_lit(staged)}]{tracked}],")
            b.add(f"        \"untracked\": [r[{_lit(o['path'])}] for r in changes if not "
                  f"r[{_lit(staged)}]{untracked}]}}")
    elif c.computation == "convert":
        _resolve_rows(b, spec, c)
        src, time_arg, dst = (c.params[0].name, c.params[1].name, c.params[2].name)
        off, name = _lit(o["offset"]), _lit(o["name"])
        b.add(f"a, z = _minutes({src}_row[{off}]), _minutes({dst}_row[{off}])")
        b.add(f"hours, minutes = (int(x) for x in {time_arg}.split(':'))")
        tr = o.get("transitions")
        if tr:  # today's offsets: the zones' daylight saving time from the transitions table
            pk = _lit(pk_column(spec.table(c.entity)))
            where = f"{_lit(tr['table'])}, {_lit(tr['link'])}, {_lit(tr['at'])}, " \
                    f"{_lit(tr['after'])}"
            b.add("local = datetime.combine(ctx.clock.date(), datetime.min.time()) + "
                  "timedelta(hours=hours, minutes=minutes)")
            b.add(f"a = _offset_at(ctx, {src}_row[{pk}], local - timedelta(minutes=a), a, "
                  f"{where})")
            b.add(f"z = _offset_at(ctx, {dst}_row[{pk}], local - timedelta(minutes=a), z, "
                  f"{where})")
        b.add("total = hours * 60 + minutes - a + z")
        b.add("day, clock = divmod(total, 24 * 60)")
        b.add(f"return {{\"source\": {{\"timezone\": {src}_row[{name}], \"time\": {time_arg}, "
              "\"utc_offset\": _offset_text(a)},")
        b.add(f"        \"target\": {{\"timezone\": {dst}_row[{name}], "
              "\"time\": f\"{clock // 60:02d}:{clock % 60:02d}\", \"utc_offset\": _offset_text(z)},")
        b.add("        \"time_difference\": f\"{(z - a) / 60:+g}h\", \"day_offset\": day}")
    elif c.computation == "clock":
        _resolve_rows(b, spec, c)
        zone = c.params[0].name
        off, name = _lit(o["offset"]), _lit(o["name"])
        b.add(f"z = _minutes({zone}_row[{off}])")
        tr = o.get("transitions")
        if tr:  # the offset the zone has now (daylight saving time from the transitions)
            b.add(f"z = _offset_at(ctx, {zone}_row[{_lit(pk_column(spec.table(c.entity)))}], "
                  f"ctx.clock, z, {_lit(tr['table'])}, {_lit(tr['link'])}, {_lit(tr['at'])}, "
                  f"{_lit(tr['after'])})")
        b.add("local = ctx.clock + timedelta(minutes=z)")
        b.add(f"return {{\"timezone\": {zone}_row[{name}], "
              "\"datetime\": local.isoformat(timespec='seconds') + _offset_text(z), "
              "\"utc_offset\": _offset_text(z)}")
    elif c.computation == "create_table":
        name_col = o["name_column"]
        b.add(f"sql = _one_statement({query}, ('CREATE',), 'CREATE TABLE')")
        b.add("m = re.match(r'(?is)CREATE\\s+TABLE\\s+(?:IF\\s+NOT\\s+EXISTS\\s+)?[\"`\\[]?(\\w+)', "
              "sql)")
        b.add("if m is None:")
        b.add("raise ToolError(\"Refused: not a CREATE TABLE statement.\")", 2)
        b.add("table_name = m.group(1)")
        b.add(f"if ctx.one('SELECT 1 FROM \"{c.entity}\" WHERE \"{name_col}\" = ?', "
              "(table_name,)):")
        b.add("raise ToolError(f\"Refused: a table named {table_name!r} already exists.\")", 2)
        b.add("now = ctx.now()")
        effect = c.effects[0]
        b.add(f"return _insert(ctx, {_lit(c.entity)}, "
              f"{_lit(pk_column(spec.table(c.entity)))}, {_dict_expr(effect.set, 'row', spec)})")
    elif c.computation == "fetch":
        _resolve_rows(b, spec, c)
        url = c.params[0].name
        opt = {snake(p.name): p.name for p in c.params if p.role == "option"}
        start, length = opt.get("start_index"), opt.get("max_length")
        b.add(f"page = {url}_row")
        b.add("if page['status_code'] is not None and page['status_code'] >= 400:")
        b.add(f"raise ToolError(f\"Failed to fetch {{{url}}} - status code "
              "{page['status_code']}.\")", 2)
        b.add("body = page['body'] or ''")
        b.add(f"start = max(0, {start} or 0)" if start else "start = 0")
        b.add(f"size = {length} if {length} and {length} > 0 else {FETCH_MAX_LENGTH}" if length
              else f"size = {FETCH_MAX_LENGTH}")
        b.add("if start and start >= len(body):")
        b.add("raise ToolError(f\"No more content: start_index {start} is past its end "
              "({len(body)} characters).\")", 2)
        b.add("content = body[start:start + size]")
        b.add("out = {'url': page['url'], 'status_code': page['status_code'], "
              "'content': content}")
        if c.options.get("content_type"):
            b.add("out['content_type'] = page['content_type']")
        b.add("if start + size < len(body):")
        b.add("out['next_start_index'] = start + size  # cut: call again from here", 2)
        b.add("return out")
    elif c.computation == "commit":
        _render_commit(b, spec, c)
    else:
        raise ValueError(f"no renderer for computation {c.computation!r}")


def _render_commit(b: _Body, spec: EnvSpec, c: Contract) -> None:
    """git commit: the staged changes become the commit's file changes and leave the staging
    area; the checked-out branch's head moves to the commit."""
    o = c.options
    _resolve_rows(b, spec, c)
    repo, msg = c.params[0].name, c.params[1].name
    rpk = pk_column(spec.table(c.params[0].ref_table or ""))
    pk = pk_column(spec.table(c.entity))
    b.add(f"staged = ctx.query('SELECT * FROM \"{o['changes']}\" WHERE \"{o['link']}\" = ? AND "
          f"\"{o['staged']}\" = 1 ORDER BY \"{o['path']}\", \"id\"', ({repo}_row[{_lit(rpk)}],))")
    b.add("if not staged:")
    b.add("raise ToolError(\"Refused: nothing to commit (no staged changes).\")", 2)
    b.add("now = ctx.now()")
    br = o.get("branch")
    parent = "None"
    if br:
        b.add(f"branch = ctx.one('SELECT * FROM \"{br['table']}\" WHERE \"{br['link']}\" = ? AND "
              f"\"{br['status']}\" = ? ORDER BY \"id\" LIMIT 1', "
              f"({repo}_row[{_lit(rpk)}], 'checked_out'))")
        parent = f"branch[{_lit(br['head'])}] if branch else None"
    if o.get("parent"):
        b.add(f"parent = {parent}")
        b.add("if parent is None:")
        b.add(f"last = ctx.one('SELECT \"{pk}\" FROM \"{c.entity}\" WHERE \"{o['repo_fk']}\" = ? "
              f"ORDER BY \"{pk}\" DESC LIMIT 1', ({repo}_row[{_lit(rpk)}],))", 2)
        b.add(f"parent = last[{_lit(pk)}] if last else None", 2)
    values = [f"{_lit(o['repo_fk'])}: {repo}_row[{_lit(rpk)}]", f"'message': {msg}"]
    if o.get("sha"):
        b.add(f"sha = hashlib.sha1(f\"{{{repo}_row[{_lit(rpk)}]}}:{{"
              f"{'parent' if o.get('parent') else 'None'}}}:{{{msg}}}:{{now}}\".encode()).hexdigest()")
        values.append(f"{_lit(o['sha'])}: sha")
    if o.get("parent"):
        values.append(f"{_lit(o['parent'])}: parent")
    values += [f"{_lit(n)}: now" for n in o["now"]]
    b.add(f"new = _insert(ctx, {_lit(c.entity)}, {_lit(pk)}, {{{', '.join(values)}}})")
    f = o.get("files")
    if f:
        b.add("for change in staged:")
        vals = [f"{_lit(f['link'])}: new[{_lit(pk)}]", f"'path': change[{_lit(o['path'])}]"]
        if f.get("change") and o.get("change"):
            vals.append(f"{_lit(f['change'])}: 'added' if change[{_lit(o['change'])}] == "
                        f"'untracked' else change[{_lit(o['change'])}]")
        for key, mark in (("additions", "+"), ("deletions", "-")):
            if f.get(key) and o.get("diff"):
                vals.append(f"{_lit(f[key])}: sum(1 for ln in (change[{_lit(o['diff'])}] or '')"
                            f".splitlines() if ln.startswith({mark!r}) and not "
                            f"ln.startswith({mark * 3!r}))")
        b.add(f"_insert(ctx, {_lit(f['table'])}, 'id', {{{', '.join(vals)}}})", 2)
    b.add(f"ctx.execute('DELETE FROM \"{o['changes']}\" WHERE \"{o['link']}\" = ? AND "
          f"\"{o['staged']}\" = 1', ({repo}_row[{_lit(rpk)}],))")
    if br:
        b.add("if branch:")
        b.add(f"ctx.execute('UPDATE \"{br['table']}\" SET \"{br['head']}\" = ?"
              + (", \"updated_at\" = ?" if _has_col(spec, br["table"], "updated_at") else "")
              + f" WHERE \"id\" = ?', [new[{_lit(pk)}]"
              + (", now" if _has_col(spec, br["table"], "updated_at") else "")
              + ", branch['id']])", 2)
        th = br.get("through")
        if th:
            vals = [f"{_lit(th['branch'])}: branch['id']", f"{_lit(th['commit'])}: new[{_lit(pk)}]"]
            if th.get("now"):
                vals.append(f"{_lit(th['now'])}: now")
            b.add(f"_insert(ctx, {_lit(th['table'])}, 'id', {{{', '.join(vals)}}})", 2)
    b.add(f"return {{**new, \"files\": [change[{_lit(o['path'])}] for change in staged]}}")


def _has_col(spec: EnvSpec, table: str, column: str) -> bool:
    return any(col.name == column for col in spec.table(table).columns)
