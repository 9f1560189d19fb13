"""How alike tools and environments are for an agent: name tokens, verb roles, parameters and
descriptions of tools, taxonomy and tool names of environments; the diagnoser targets the
training tools most like the ones the policy failed on."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from agent_world.evolution.diagnosis_model import EnvMeta, ToolMeta

VERB_ROLE = {
    **dict.fromkeys(("get", "fetch", "read", "show", "lookup", "describe", "view", "status",
                     "info", "detail", "details"), "read"),
    **dict.fromkeys(("list", "search", "find", "query", "count", "browse", "filter", "log",
                     "diff"), "search"),
    **dict.fromkeys(("create", "add", "book", "insert", "new", "place", "register", "open",
                     "make", "post", "commit", "write", "init", "buy", "purchase", "reserve",
                     "lend", "borrow", "issue", "send"), "create"),
    **dict.fromkeys(("update", "set", "change", "edit", "modify", "cancel", "pay", "return",
                     "renew", "close", "assign", "approve", "waive", "checkout", "move",
                     "rename", "convert", "apply"), "update"),
    **dict.fromkeys(("delete", "remove", "drop", "reset", "clear"), "delete"),
}


def tokens(text: str) -> set[str]:
    text = re.sub(r"([a-z])([A-Z])", r"\1_\2", text)
    # "reservations" and "reservation" name the same thing
    return {t[:-1] if len(t) > 4 and t.endswith("s") and not t.endswith("ss") else t
            for t in re.split(r"[^a-z0-9]+", text.lower()) if len(t) > 2}


def head_noun(name: str) -> str:
    """The thing a tool is about: the last word of its name that is no verb
    (list_customer_reservations → reservation)."""
    words = [t for t in re.split(r"[^a-z0-9]+", re.sub(r"([a-z])([A-Z])", r"\1_\2", name)
                                 .lower()) if t and t not in VERB_ROLE]
    return next(iter(tokens(words[-1])), words[-1]) if words else name.lower()


def _jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 0.0


def verb_role(name: str, meta: ToolMeta | None) -> str:
    for tok in re.split(r"[^a-z0-9]+", name.lower()):
        if tok in VERB_ROLE:
            return VERB_ROLE[tok]
    return "update" if meta is not None and meta.mutates else "read"


def tool_similarity(a: str, ma: ToolMeta | None, b: str, mb: ToolMeta | None) -> float:
    """How alike two tools are for the agent: name tokens, verb role, whether they write,
    parameter names and description words."""
    sim = _jaccard(tokens(a), tokens(b)) + 0.5 * (verb_role(a, ma) == verb_role(b, mb))
    if ma is not None and mb is not None:
        sim += 0.25 * (ma.mutates == mb.mutates)
        sim += 0.5 * _jaccard(set().union(*map(tokens, ma.parameters or [""])),
                              set().union(*map(tokens, mb.parameters or [""])))
        sim += 0.25 * _jaccard(tokens(ma.description), tokens(mb.description))
    return sim


def env_similarity(a: EnvMeta, b: EnvMeta) -> float:
    """Taxonomy path overlap (L1 counts most) plus tool-name token overlap."""
    pa, pb = [p.strip() for p in a.taxonomy.split("/")], [p.strip() for p in b.taxonomy.split("/")]
    tax = sum(w for w, x, y in zip((0.5, 0.3, 0.2), pa, pb, strict=False) if x and x == y)
    ta = set().union(*(tokens(t) for t in a.tools)) if a.tools else set()
    tb = set().union(*(tokens(t) for t in b.tools)) if b.tools else set()
    return tax + _jaccard(ta, tb)


def split_ref(ref: str) -> tuple[str, str]:
    env, _, tool = ref.partition("/")
    return env, tool


def meta_of(envs: Mapping[str, EnvMeta], ref: str) -> ToolMeta | None:
    env, tool = split_ref(ref)
    m = envs.get(env)
    return m.tool_info.get(tool) if m is not None else None


def analogue(ref: str, env: EnvMeta, envs: Mapping[str, EnvMeta],
              exclude: Iterable[str] = ()) -> tuple[float, str]:
    """The tool of training environment `env` most like `ref` ("env/tool"): (score, "env/t")."""
    src_env, tool = split_ref(ref)
    if src_env == env.name and tool in env.tools:
        return 10.0, ref
    skip = set(exclude)
    meta = meta_of(envs, ref)
    return max(((tool_similarity(tool, meta, t, env.tool_info.get(t)), f"{env.name}/{t}")
                for t in env.tools if t not in skip), default=(0.0, ""))


__all__ = ["VERB_ROLE", "analogue", "env_similarity", "head_noun", "meta_of", "split_ref",
           "tokens", "tool_similarity", "verb_role"]
