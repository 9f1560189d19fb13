"""The tool-dependency graph of an environment (networkx).

An edge A → B means an output field of tool A can feed an argument of tool B. Inputs come from
the tools' argument schemas; outputs from observation: every tool test that is expected to
succeed is run in a fresh episode and the fields of its result (nested objects and list
elements included) are recorded with their value types and sample values. A field feeds an
argument when

- names are equal (`customer_id` → `customer_id`): strength 1.0;
- the argument name ends with the field name after a role word (`flight_id` →
  `new_flight_id`, `branch_id` → `pickup_branch_id`): 0.8. A prefix that names a table says
  whose value the argument wants: `repo_path` takes a repository's path (not a changed file's),
  `clinician_location_id` is no slot's `location_id`, `table_name` no customer's name;
- the field is a bare `id`/`code` and the argument is `<table>_id` for a table whose records
  the producing tool returns (`id` of `get_order` → `order_id`; not the `id` of the rows a
  `read_query` returns → `query_id`): 0.6;
- and the value types are compatible; observed values that also appear among the argument's
  tested values add 0.2 (capped at 1.0).

One field feeds one argument of a tool: the current time's zone is a conversion's source, not
also its target (a conversion from a zone to itself); the argument that takes it is the
same-named one, else one whose role reads as a source (`source_`, `from_`), else the strongest.

The edge weight is the strongest binding (halved for an optional argument: a filter fed by a
field is a weak dependency); `bindings` lists every (field, argument, required, strength).
Graphs are saved per environment version (and per version of these rules, `GRAPH_RULES`) as
node-link JSON in `<home>/toolgraphs/` and drawn with matplotlib (`agent-world env graph ENV`).
"""

from __future__ import annotations

import json
from collections import defaultdict
from pathlib import Path
from typing import Any

import networkx as nx

from agent_world.config import resolve_home
from agent_world.envs.episode import EnvRuntime, default_runtime
from agent_world.envs.spec import EnvSpec, ToolSpec
from agent_world.mining.offline.naming import singular_word
from agent_world.mining.offline.vocabulary import ROLE_PREFIXES
from agent_world.tasks.words import FROM_ROLES, TIMESTAMPS, runs_sql

_BARE = {"id", "code", "key", "number", "uuid"}
# words before a field that say which of a record's values it is, not whose: a unit price is
# a price, a target text a text
# (a pickup branch is a branch, a shipping address an address)
_QUALIFIERS = ROLE_PREFIXES | {"unit", "current", "total", "start", "end", "min", "max",
                               "pickup", "return", "billing", "shipping", "sender", "receiver",
                               "owner", "child", "replacement", "assigned", "referring"}
_MAX_SAMPLES = 40
# bumped when the binding rules change: a graph saved under older rules is rebuilt
GRAPH_RULES = 5
# role words that read as where a value comes from (the one of a pair that takes a field)
_SOURCE_ROLES = tuple(sorted(FROM_ROLES | {"src", "old", "current", "original"}))


def observe_outputs(spec: EnvSpec, runtime: EnvRuntime | None = None) -> dict[str, dict]:
    """tool -> {"fields": {field: {"types": [...], "samples": [...]}}, "returns": kind}
    from running the tool tests that should succeed (each in a freshly reset episode)."""
    runtime = runtime or default_runtime()
    out: dict[str, dict] = {t.name: {"fields": {}, "returns": None} for t in spec.tools}
    episode = runtime.open(spec)
    try:
        for test in spec.tests:
            if not test.expect.ok or test.expect.error_kind is not None:
                continue
            episode.reset()
            obs = episode.step(test.tool, test.arguments)
            if obs.ok:
                _record(out[test.tool], obs.result)
    finally:
        episode.close()
    return out


def _record(entry: dict[str, Any], result: Any) -> None:
    entry["returns"] = entry["returns"] or ("list" if isinstance(result, list) else
                                            "object" if isinstance(result, dict) else "scalar")
    # the fields of the records themselves, not of records nested in them (a title's copies)
    top = entry.setdefault("top", [])
    for item in result if isinstance(result, list) else [result]:
        if isinstance(item, dict):
            top += [k for k, v in item.items() if not isinstance(v, dict | list) and k not in top]
    for name, value in _fields(result):
        f = entry["fields"].setdefault(name, {"types": [], "samples": []})
        kind = _kind(value)
        if kind not in f["types"]:
            f["types"].append(kind)
        if len(f["samples"]) < _MAX_SAMPLES and value not in f["samples"]:
            f["samples"].append(value)


def _fields(value: Any, depth: int = 0) -> list[tuple[str, Any]]:
    out: list[tuple[str, Any]] = []
    if depth > 3:
        return out
    if isinstance(value, list):
        for item in value[:20]:
            out += _fields(item, depth + 1)
    elif isinstance(value, dict):
        for k, v in value.items():
            if isinstance(v, dict | list):
                out += _fields(v, depth + 1)
            elif v is not None:
                out.append((k, v))
    return out


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return "string"


def _param_types(schema: dict[str, Any]) -> set[str]:
    t = schema.get("type", "string")
    types = set(t) if isinstance(t, list) else {t}
    if "number" in types:
        types.add("integer")
    return types


def _entity_words(tool: ToolSpec) -> set[str]:
    parts = tool.name.lower().split("_")
    words = set(parts[1:] if len(parts) > 1 else parts)
    return words | {w[:-1] for w in words if w.endswith("s")}


def tested_values(spec: EnvSpec) -> dict[tuple[str, str], list[Any]]:
    """(tool, argument) -> values its successful tests pass."""
    out: dict[tuple[str, str], list[Any]] = defaultdict(list)
    for test in spec.tests:
        if test.expect.ok and test.expect.error_kind is None:
            for k, v in test.arguments.items():
                out[(test.tool, k)].append(v)
    return out


def table_columns(spec: EnvSpec) -> dict[str, set[str]]:
    """table -> its column names."""
    return {t.name: {c.name for c in t.columns} for t in spec.tables}


def _named_tables(word: str, tables: dict[str, set[str]]) -> list[str]:
    """Tables a name prefix names: the table itself (`branch` → branches) or its short form
    (`repo` → repositories)."""
    out = []
    for name in tables:
        one = singular_word(name)
        if word in (name, one) or (len(word) >= 3 and "_" not in one and one.startswith(word)):
            out.append(name)
    return out


_GENERIC = frozenset({"id", *TIMESTAMPS})


def record_tables(produced: set[str], tables: dict[str, set[str]],
                  tool: str | None = None) -> set[str]:
    """Tables whose records a tool returns, judged from its observed result fields: the
    closest table (Jaccard over column names), and any whose own columns (beyond id, keys
    and timestamps, at least two) all appear and are not all the closest table's too (a
    record with another one nested; a link table's two keys on an appointment make no
    clinician location of it). Of tables with the same columns (Google Calendar's calendars
    and colors), those the `tool`'s name names are the ones it returns (get_color returns
    colors: its id is no calendar's)."""
    if not produced or not tables:
        return set()

    def jaccard(cols: set[str]) -> float:
        return len(cols & produced) / len(cols | produced)

    best = max(tables, key=lambda t: jaccard(tables[t]))
    # of the closest tables (a tie: the same columns), the one the tool's name names; else
    # the first
    ties = [t for t in tables if jaccard(tables[t]) == jaccard(tables[best])]
    best = next((t for t in ties if tool and singular_word(t) in tool.lower()), best)
    out = {best} if jaccard(tables[best]) > 0 else set()
    for t, cols in tables.items():
        own = {c for c in cols - _GENERIC if not c.endswith("_id")}
        # columns the closest table has too are its own record's, no sign of a nested one (a
        # Tailwind utility's category and name made a Tailwind doc of it, and its id was fed
        # get_tailwind_doc: "the tailwind doc of that tailwind utility")
        if len(own) >= 2 and own <= produced and not own <= tables[best]:
            out.add(t)
    if tool is None:
        return out
    named = {t for t in out if singular_word(t) in tool.lower()}
    return {t for t in out if t in named or not any(tables[t] == tables[n] for n in named)}


def binding_strength(field: str, field_info: dict[str, Any], producer: ToolSpec, param: str,
                     schema: dict[str, Any], tested: list[Any],
                     tables: dict[str, set[str]] | None = None,
                     produced: set[str] | None = None, top: set[str] | None = None) -> float:
    """How strongly an output field of `producer` matches argument `param` (0: not at all).
    `tables` (table -> columns) and `produced` (every field the producer returns) let a
    prefix that names a table demand the producer's records be of that table; without them
    the producer's name stands for its entity. `top`: the fields of the records the producer
    returns, without those nested in them: a bare `id` is the id of those records (a title's
    id, not one of its copies')."""
    if not set(field_info.get("types", [])) & _param_types(schema) and \
            "string" not in _param_types(schema):
        return 0.0
    if "array" in _param_types(schema) or "object" in _param_types(schema):
        return 0.0

    def of_producer(word: str, fields: set[str] | None = produced) -> bool | None:
        """Whether the producer returns records of the table `word` names (None: it names
        no table)."""
        if tables is None or fields is None:
            return word in _entity_words(producer) or None
        named = _named_tables(word, tables)
        return bool(set(named) & record_tables(fields, tables, producer.name)) if named \
            else None

    if field == param:
        strength = 1.0
    elif param.endswith("_" + field) and len(field) > 2:
        owner = param[: -len(field) - 1].split("_")
        if owner[0] in ROLE_PREFIXES and len(owner) > 1:
            owner = owner[1:]  # `from_object_type` wants an object's type in a role
        mine = of_producer("_".join(owner))
        if mine is False:
            return 0.0  # `repo_path` wants a repository's path, not a changed file's
        if mine is None and not set(owner) <= _QUALIFIERS and \
                not set(owner) <= _entity_words(producer):
            # a thing no table holds: `font_name` wants a font's name, `file_path` a file's
            # path, `full_name` a person's; a location's name is none of them
            return 0.0
        strength = 0.8
    elif field in _BARE and param.endswith("_" + field) and \
            of_producer(param[: -len(field) - 1], top or produced):
        strength = 0.6
    else:
        return 0.0
    if "enum" in schema and not set(map(str, field_info.get("samples", []))) & \
            set(map(str, schema["enum"])):
        return 0.0
    if tested and set(map(str, field_info.get("samples", []))) & set(map(str, tested)):
        strength += 0.2
    return min(1.0, strength)


def build_tool_graph(spec: EnvSpec, outputs: dict[str, dict] | None = None,
                     runtime: EnvRuntime | None = None) -> nx.DiGraph:
    """The weighted tool-dependency graph of `spec` (see the module docstring)."""
    outputs = outputs if outputs is not None else observe_outputs(spec, runtime)
    tested = tested_values(spec)
    tables = table_columns(spec)
    g = nx.DiGraph(env=spec.name, fingerprint=spec.fingerprint)
    for t in spec.tools:
        params = t.parameters.get("properties", {})
        g.add_node(t.name, mutates=t.mutates, description=t.description,
                   required=list(t.parameters.get("required", [])),
                   params=sorted(params), returns=outputs.get(t.name, {}).get("returns"),
                   outputs=sorted(outputs.get(t.name, {}).get("fields", {})))
    for a in spec.tools:
        fields = outputs.get(a.name, {}).get("fields", {})
        # a query's rows are of whatever table the query names: a product row's id fed
        # get_customer ("open that row's customer")
        if not fields or runs_sql(spec, a.name):
            continue
        top = set(outputs.get(a.name, {}).get("top") or []) or None
        for b in spec.tools:
            if a.name == b.name:
                continue
            bindings = []
            required = set(b.parameters.get("required", []))
            for param, schema in b.parameters.get("properties", {}).items():
                best = max(((binding_strength(f, info, a, param, schema,
                                              tested.get((b.name, param), []), tables,
                                              set(fields), top), f)
                            for f, info in fields.items()), default=(0.0, ""))
                if best[0] > 0:
                    bindings.append({"field": best[1], "param": param,
                                     "required": param in required,
                                     "strength": round(best[0], 3)})
            bindings = one_argument_per_field(bindings)
            if bindings:
                # an optional filter fed by a field is a weak dependency: half weight
                weight = max(x["strength"] * (1.0 if x["required"] else 0.5) for x in bindings)
                g.add_edge(a.name, b.name, weight=round(weight, 3), bindings=bindings)
    return g


def one_argument_per_field(bindings: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each field feeds one argument: the same-named one, else a source-like role
    (`source_timezone`, not also `target_timezone`), else the strongest."""
    def rank(b: dict[str, Any]) -> tuple:
        return (b["param"] == b["field"], b["param"].startswith(_SOURCE_ROLES),
                b["strength"], b["required"])

    best: dict[str, dict[str, Any]] = {}
    for b in bindings:
        if b["field"] not in best or rank(b) > rank(best[b["field"]]):
            best[b["field"]] = b
    return [b for b in bindings if best[b["field"]] is b]


def _graph_path(home: str | Path | None, env: str, fingerprint: str) -> Path:
    return resolve_home(home) / "toolgraphs" / f"{env}-{fingerprint}-r{GRAPH_RULES}.json"


def save_graph(g: nx.DiGraph, home: str | Path | None = None) -> Path:
    path = _graph_path(home, g.graph["env"], g.graph["fingerprint"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nx.node_link_data(g, edges="edges"), indent=1, default=str))
    return path


def load_graph(spec: EnvSpec, home: str | Path | None = None) -> nx.DiGraph | None:
    path = _graph_path(home, spec.name, spec.fingerprint)
    if not path.is_file():
        return None
    return nx.node_link_graph(json.loads(path.read_text()), edges="edges")


def tool_graph(spec: EnvSpec, home: str | Path | None = None,
               runtime: EnvRuntime | None = None) -> nx.DiGraph:
    """The saved graph of this environment version, built and saved on first use."""
    g = load_graph(spec, home)
    if g is None:
        g = build_tool_graph(spec, runtime=runtime)
        save_graph(g, home)
    return g


def draw_graph(g: nx.DiGraph, path: str | Path) -> Path:
    """A picture of the graph: write tools in orange, edge width by weight."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = max(len(g), 1)
    fig, ax = plt.subplots(figsize=(6 + n * 0.35, 5 + n * 0.3))
    pos = nx.spring_layout(g, seed=7, k=2.2 / max(n, 1) ** 0.5)
    colors = ["#f4a261" if g.nodes[v].get("mutates") else "#8ecae6" for v in g]
    nx.draw_networkx_nodes(g, pos, node_color=colors, node_size=900, ax=ax)
    nx.draw_networkx_labels(g, pos, font_size=7, ax=ax)
    widths = [0.5 + 2.5 * d.get("weight", 0.5) for _, _, d in g.edges(data=True)]
    nx.draw_networkx_edges(g, pos, width=widths, alpha=0.55, arrowsize=12,
                           connectionstyle="arc3,rad=0.08", node_size=900, ax=ax)
    ax.set_title(f"{g.graph.get('env', '')}: {len(g)} tools, {g.number_of_edges()} edges "
                 "(orange: writes)")
    ax.axis("off")
    out = Path(path)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return out


__all__ = ["binding_strength", "build_tool_graph", "draw_graph", "load_graph",
           "observe_outputs", "one_argument_per_field", "record_tables", "save_graph",
           "table_columns", "tested_values", "tool_graph"]
