"""What a tool does, as a request: its description's first clause with the user-story
framing, conditions, third-person verbs and markup taken off (`action_phrase`), and what a
summary tool measures (`summary_of`); a description that says no act in English (a noun
phrase, a command router's blurb, another language) is said from the tool's name."""

from __future__ import annotations

import re
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.mining.offline.naming import fix_articles, plural_word, singular_word
from agent_world.mining.offline.vocabulary import QUALITY_WORDS, VERBS
from agent_world.tasks.words import entity_plural, split_words, tool_entity

_DETERMINERS = frozenset({"a", "an", "the", "this", "that", "these", "those", "its", "their",
                          "one", "each", "every", "all", "any", "some", "no"})
_PREPOSITIONS = (r"(?:from|to|at|in|into|with|by|using|for|on|of|via|as|before|after|since|until|"
                 r"within|over|across|between|per)")
_THIRD_PERSON = re.compile(r"^(\w+?)(ches|shes|sses|xes|ies|s)\b")


_SUMMARY = re.compile(r"^Statistics of the (.+?) of (.+?):")


def summary_of(spec: EnvSpec, tool: str) -> tuple[str, str] | None:
    """(measure, records) of a summary tool ("Statistics of the byte length of pages: ..."
    -> ("byte length", "pages")); None for any other tool."""
    m = _SUMMARY.match(spec.tool(tool).description)
    return (m.group(1), m.group(2)) if m else None


def action_phrase(spec: EnvSpec, tool: str) -> str:
    """What a tool does, as a request: its description's first clause, user-story framing
    and third-person verbs removed, no tool name left in it."""
    summary = summary_of(spec, tool)
    if summary is not None:  # "go over the byte lengths of the pages", not "statistic of ..."
        measure, records = summary
        return f"go over the {entity_plural(measure)} of the {records}"
    # a source that escaped its line breaks ("... go live.\\n Use this tool ...")
    desc = " ".join(spec.tool(tool).description.replace("\\n", " ").split())
    # a tag or an emoji before the act ("[Tauri Apps Only] Start ...", "Notion | Retrieve a
    # user"), and Markdown emphasis, are no words of it
    desc = _LEAD.sub("", desc).replace("**", "")
    # one of its own arguments named in code after a preposition ("into a sheet from `at`,
    # overwriting cells"): the task states that value in its own words, so the act ends there
    own_args = "|".join(re.escape(a) for a in spec.tool(tool).parameters.get("properties", {}))
    cut = re.search(rf"(?:,?\s+(?:based|depending))?\s+{_PREPOSITIONS}\s+`(?:{own_args})`",
                    desc) if own_args else None
    if cut and len(desc[:cut.start()].split()) >= 2:
        desc = desc[:cut.start()]
    desc = desc.replace("`", "")
    # a Markdown link says its text ("using the [Postman Collection v2.1.0 schema](https://...)")
    desc = re.sub(r"\[([^\]]{1,80})\]\([^)\s]*\)", r"\1", desc)
    # Go-doc style, the tool's own name as the subject: "delete_application deletes application"
    own = re.match(rf"^{re.escape(tool)}\s+([a-z]+?)(e?s)\b", desc, re.I)
    if own and {own.group(1), own.group(1) + own.group(2)[:-1]} & (VERBS | {"return"}):
        desc = desc[own.start(1):]
    if _ROUTER.search(desc):  # a command router's blurb: said from its name
        return _name_phrase(spec, tool, router=True)
    if _SHOUTED.match(desc):  # a warning to the model first, no act: said from its name
        return _name_phrase(spec, tool)
    # a breadcrumb ("Docs-Base-App-Create a Base App-Create a base app in ..."): the act is
    # its first crumb that starts with a verb
    crumbs = [c.strip() for c in re.split(r"(?<=\w)-(?=[A-Z])", desc)]
    if len(crumbs) >= 3 and all(len(c.split()) <= 3 for c in crumbs[:2]):
        desc = next((c for c in crumbs[1:] if c.split(" ", 1)[0].lower() in
                     VERBS | {"obtain"} and " " in c), desc)
    m = re.search(r"\bI want to (.+?)(?: so that\b|[.;]|$)", desc, re.I)
    if m:
        desc = m.group(1)
    else:
        # "Members can place holds" (not "Restrict what can be entered": no subject)
        m = re.match(r"^[A-Z](?:(?!\b(?:what|which|who|how|that|where)\b)[\w ]){0,40}? "
                     r"can (.+)", desc)
        # ... a subject, not an act ("Inspect a URL to see if it is indexed or can be
        # indexed" is no "be indexed")
        if m and desc.split(" ", 1)[0].lower() not in VERBS:
            desc = m.group(1)
    # "If a browser dialog was opened, use this command to handle it": the act on the thing
    # the condition names; any other leading condition is no part of the request
    cond = re.match(r"^if (?:an? |the )?([\w -]{2,40}?) (?:is|was|are|were|has been|have been) "
                    r"\w+, (?:use this (?:command|tool) to )?(\w+) (?:it|them)\b", desc, re.I)
    if cond:
        desc = f"{cond.group(2)} the {cond.group(1)}"
    else:
        desc = re.sub(r"^(?:if|when|whenever) [^,]{1,80}, (?=[a-z])", "", desc, flags=re.I)
    desc = _FRAMING.sub("", desc)  # before the cuts: "use this as the primary tool to discover"
    # "Goal Seek: change the constant ...": a name before the colon, the act after it
    named = re.match(r"^(?:[A-Z][\w-]*\s?){1,4}:\s+([a-z]+)\b(.*)", desc)
    if named and named.group(1) not in _DETERMINERS:
        desc = named.group(1) + named.group(2)
    # a condition or qualifier of the tool is no part of what the user asks: "place a hold on
    # a title when no copy is available", "cancel a hold at any time before it is collected"
    # and so is what the tool allows or what comes after it: "create a new branch from an
    # optional base branch", "suspend a member account and reactivate it later"
    clause = re.split(r"(?<=[A-Za-z0-9)])[.:;](\s|$)|(?<=[A-Za-z])\.(?=[A-Z][a-z])|\s\(|,? unless\b"
                      r"|, optionally\b| in id order"
                      r"| (?:when|whenever|if|once|so that|(?<!the )provided|before) (?!\w+ing\b)"
                      r"| at any\b"
                      # what follows the act: an explanation after a dash, examples, a purpose
                      r"|\s[-–—]\s|,? (?:such as|including|ideal for|helping|which|allowing)\b"
                      r"| to (?:show|display|visualize|help|understand|discover|observe|see|"
                      r"extract|identify|determine|detect|ensure|gain|assess|evaluate)\b"
                      r"| up to \w+ times?\b| Error Responses\b"
                      # how many it takes and where they came from: the request gives them
                      # ("fetch documentation for one or more URLs extracted from previous
                      # tool calls responses for the url ...")
                      r"| (?:for|of|on) one or (?:more|several)\b| extracted from\b"
                      # how well it is built is no part of the act: "add footnote with robust
                      # validation and Word compliance"
                      r"| with (?:robust|comprehensive|advanced|enhanced|full|proper|automatic|"
                      r"intelligent|smart|built-in|detailed)\b"
                      r"| (?:from|with|using|by|on|in) (?:an? )?optional\b"
                      r"|,? and \w+ (?:it|them) (?:later|again)\b|,? and optionally\b"
                      r"| by (?:scanning|entering|giving|passing|providing|specifying|using)\b"
                      # how the record is found is the key's to say: "by its index", "by exact
                      # UUID or exact name", "by application name"
                      # (the designer's own "get one loan by id" stays as it is)
                      r"|,? (?:(?:addressed|specified|identified) )?by (?!id\b)"
                      r"(?:its |their |the |exact )?(?:\w+ )?"
                      r"(?i:name|id|uuid|index|key)\b"
                      r"|,? (?:that|which) (?:has|have|is|are)(?: not| already| still)? "
                      r"(?:been |yet )?\w+(?:ed|en)\b",
                      desc, maxsplit=1)[0].strip().rstrip(" .,;:")
    # a cut that left its joint behind: "execute any kubectl command with the"
    clause = re.sub(r"(?:\s+(?:with|for|to|of|in|on|from|by|using|and|or|the|a|an))+$", "",
                    clause)
    # "create a slot and return the new record": what the tool hands back is no request
    clause = re.sub(r",? (?:and )?(?:return(?:s|ing)?|giv(?:es|ing)) (?:the|a|it|its)\b.*$", "",
                    clause, flags=re.I)
    # "Use this tool to create a dashboard": the framing is about the tool, not the request
    clause = _FRAMING.sub("", clause)
    # "returns list of applications", "returns an AppProject": a read, said as one
    clause = re.sub(r"^returns? (?:a |the )?list of\b", "list", clause, flags=re.I)
    clause = re.sub(r"^returns?\b", "get", clause, flags=re.I)
    # how it is done is no part of the act: "permanently delete a message", "partially update
    # Bitbucket resources" ask to delete, to update
    clause = _without_adverbs(clause)
    first = clause.split(" ", 1)[0]
    m = _THIRD_PERSON.match(first.lower())
    if m and not first.lower().endswith(("ss", "us")) and first.lower() not in {
            "this", "is", "has", "was"}:
        stem, suffix = m.groups()
        base = stem + ("y" if suffix == "ies" else suffix[:-2] if suffix != "s" else "")
        clause = base + clause[len(first):]
    # the verb after "and" too: "build and deploy a Node.js application", as a source that
    # wrote "Build and deploys ..." meant
    both = re.match(r"^(\w+ and )(\w+?)(es|s)\b", clause)
    if both and (both.group(2) in VERBS or both.group(2) + "e" in VERBS):
        verb = both.group(2) if both.group(2) in VERBS else both.group(2) + "e"
        clause = both.group(1) + verb + clause[both.end():]
    # a tool named like a common word must not leak into the text; the act itself stays (the
    # browser's "click", "hover" and "drag" are tools and the verbs of their descriptions)
    act, sep, rest = clause.partition(" ")
    if act.lower() not in VERBS and act.lower() not in split_words(tool):
        act, sep, rest = "", "", clause
    for t in spec.tools:
        rest = re.sub(rf"\b{re.escape(t.name)}\b", tool_entity(spec, t.name), rest)
    clause = act + sep + rest
    # the service's own name first is a noun phrase, no act ("Azure Developer CLI"); a run of
    # verbs is how the tool works, no request ("download, safely process, cache, and return
    # bounded original LaTeX source")
    first_word = clause.split(" ", 1)[0].lower() if clause else ""
    if not clause or _CJK.search(clause) or _NO_ACT.search(clause) or _VERB_RUN.match(clause) or \
            re.match(r"^[a-z]+_\w+ ", clause) or \
            len(clause.split()) < 2 or _noun_phrase(clause, tool) or \
            first_word in spec.name.lower().split("_") and first_word not in VERBS:
        return _name_phrase(spec, tool)
    # a format is no word of the act ("write a body measurement for a new YYYY-MM-DD date")
    clause = re.sub(r"\s*\b(?:YYYY-MM-DD(?:THH:MM(?::SS)?)?|HH:MM(?::SS)?)\b", "", clause)
    # a shouted phrase is said in plain case ("issue that request FROM THE HOST")
    clause = _SHOUTED_RUN.sub(lambda m: m.group(0).lower(), clause)
    # "PREFERRED TOOL", "MEP": an acronym or a shouted word keeps its case
    phrase = clause if clause[1:2].isupper() else clause[0].lower() + clause[1:]
    # "create a appointment" reads badly in any generated description
    return fix_articles(phrase)


_FRAMING = re.compile(r"^(?:use (?:this|the)(?: tool| API| command)?(?: as (?:the|a|an) "
                      r"[\w ]{1,30}?)? to|this tool (?:will |can |lets you |allows "
                      r"you to |helps (?:you )?(?:to )?)?|tool to|allows (?:you|users) to|"
                      r"lets (?:you|users) |used to|helps (?:you )?(?:to )?) ", re.I)
# before the act: a bracketed tag, a symbol or emoji, or a product name and a bar
_LEAD = re.compile(r"^(?:\[[^\]]{1,40}\]\s*|[^\w\s\[(]+\s*|(?:[\w/-]+ ){0,2}\| )+")
# a command router's blurb ("Azure Monitor operations - Commands for ..."), read on the whole
# description; a clause that says no act in English: another script, the tool itself, a bare
# label ("read-only")
# a warning to the calling model where the act would be ("MANDATORY FIRST STEP: This tool MUST
# be called before any other Shopify tools")
_SHOUTED = re.compile(r"^(?:MANDATORY|IMPORTANT|CRITICAL|REQUIRED|WARNING|ALWAYS|NEVER|DO NOT|"
                      r"MUST|INTERNAL|DEPRECATED)\b")
# a run of capitals with an English function word in it: emphasis, no acronym ("REST API")
_SHOUTED_RUN = re.compile(r"\b(?=[A-Z ]*\b(?:THE|FROM|NOT|ONLY|MUST|NEVER|ALWAYS|ALL|DO)\b)"
                          r"[A-Z]{2,}(?: [A-Z]{2,})+\b")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")
_VERB_RUN = re.compile(r"^\w+(?:, (?:\w+ )?\w+){2,},? and \w+ ", re.I)
_ROUTER = re.compile(r"\boperations [-–] | [-–] commands\b|\bcommands for\b", re.I)
# an adverb or two before the act ("immediately and permanently delete"), a verb after them
_ADVERBS = re.compile(r"^(?:\w{3,}ly,? (?:and )?){1,2}(?=(\w+) )", re.I)


def _without_adverbs(clause: str) -> str:
    """`clause` without the adverbs before its verb (a verb ending in -ly, apply, stays)."""
    m = _ADVERBS.match(clause)
    if m is None or m.group(0).split()[0].lower() in VERBS:
        return clause
    verb = m.group(1).lower()  # "deletes": the third person is made plain after this
    return clause[m.end():] if {verb, verb[:-1], verb[:-2]} & VERBS else clause


# how a noun phrase starts: a determiner, an adjective or a noun by its ending ("operational
# status of a flight", "comprehensive investigation of a DAG"; not -ment, -ance, -ed: increment,
# advance and embed are acts too), a compound adjective ("general-purpose image analysis",
# "non-blocking probe"); a compound verb is an act ("soft-delete a store", "re-issue a request")
_ADJECTIVE = re.compile(r"^\w+(?:al|ive|ous|ic|ful|tion|sion|ness|ity)$")
_VERB_PREFIXES = frozenset({"re", "pre", "co", "un", "de", "auto", "soft", "hard", "bulk",
                            "batch", "multi", "cross", "double", "force", "dry"})


def _noun_phrase(clause: str, tool: str) -> bool:
    """Whether `clause` names a thing rather than an act: said from the tool's name then
    (z_ai's analyze_image, "General-purpose image analysis for scenarios ...": "I need you to
    general-purpose image analysis")."""
    first = clause.split(" ", 1)[0].lower()
    if first in QUALITY_WORDS:
        # how well the tool works, named in its name too (add_footnote_enhanced: "Enhanced
        # footnote addition with guaranteed superscript formatting" is no act)
        return True
    if first in VERBS or first in split_words(tool):
        return False
    if "-" in first:
        head, *_, last = first.split("-")
        return head not in _VERB_PREFIXES and last not in VERBS
    # a known verb's past participle is an adjective: "enhanced search analytics"
    done = first.endswith("ed") and {first[:-1], first[:-2]} & VERBS
    return first in _DETERMINERS or bool(_ADJECTIVE.match(first)) or bool(done)


_NO_ACT = re.compile(r"\bMCP server\b|^use this tool\b|^this tool\b|^read-only$|\bexample cURL\b|"
                     r"^(?:purpose|guardrails|overview|summary|note)\b", re.I)
# the act a description in Chinese names first (amap's "根据城市名称...查询指定城市的天气")
_CJK_VERBS = [("规划", "plan"), ("创建", "create"), ("删除", "delete"), ("更新", "update"),
              ("修改", "update"), ("上传", "upload"), ("下载", "download"), ("部署", "deploy")]
_READS = frozenset({"get", "list", "search", "find", "read", "fetch", "show", "query"})


def _name_phrase(spec: EnvSpec, tool: str, router: bool = False) -> str:
    """What a tool does, from its name: "get the weather" (amap's maps_weather, described in
    Chinese), "run the monitor command" (an Azure command router's, `router`)."""
    ent = tool_entity(spec, tool)
    if router and len(split_words(tool)) == 1:  # Azure's "search" routes search commands
        return f"run the {' '.join(split_words(tool))} command"  # as named: cosmos, applens
    words = split_words(tool)
    verb = next((w for w in words if w in VERBS), None)
    desc = spec.tool(tool).description
    if verb is None and _CJK.search(desc):
        verb = next((v for cjk, v in _CJK_VERBS if cjk in desc), None)
        if verb is None:  # 查询, 搜索, 获取: a look-up
            return f"look up the {ent}"
        return f"{verb} the {ent}" if verb == "plan" else fix_articles(f"{verb} a {ent}")
    if verb in _READS or verb is None and not spec.tool(tool).mutates:
        many = verb in ("list", "search") or words[-1].endswith("s") and \
            words[-1] not in ("status", "details", "access", "address")
        return f"look up the {entity_plural(ent) if many else ent}"
    if verb is None:
        return f"run the {' '.join(split_words(tool))} command"
    return fix_articles(f"{verb} a {ent}")


# the argument a command router takes its command in (coolify's projects(action='create'))
_ROUTE_ARGS = ("action", "operation")
# "manage <records> ...", "create, update, or delete <a record> ...": a router's blurb
_MANAGE = re.compile(r"^manage (?:the |a |an )?(?:single )?(?P<what>[\w/.-]+(?: [\w/.-]+){0,3}?)"
                     r"(?=$| with\b| for\b| and\b| in\b| on\b| via\b|[,(;:])", re.I)
_VERB_LIST = re.compile(r"^(?:\w+, )+(?:\w+,? )?(?:or|and) \w+ (?P<what>.+)$", re.I)
_NEW = frozenset({"create", "add", "new", "register", "provision"})


def routed(act: str, given: dict[str, Any]) -> str:
    """A command router's act said as the command it is given, which leaves `given`: "create
    a project", not "manage project with action 'create'" (coolify's projects); "delete a
    question in a monday.com form", not "create, update, or delete a question ... with action
    'delete'". Any other act, or a command that is no verb, stays as it is."""
    p = next((p for p in _ROUTE_ARGS if isinstance(given.get(p), str)), None)
    verb = given[p].strip().lower() if p else ""
    said = {w.strip(",.").lower() for w in act.split()}
    if not verb or verb not in VERBS and verb not in said:  # the blurb's own: "cordon, drain"
        return act
    listed = _VERB_LIST.match(act)
    if listed and verb in {w.strip(",").lower() for w in act.split()[:5]}:
        given.pop(p)
        return f"{verb} {listed.group('what')}"
    m = _MANAGE.match(act)
    if m is None:
        return act
    *head, last = m.group("what").split()
    one = " ".join([*head, singular_word(last)])
    given.pop(p)
    if verb in ("list", "search"):
        return f"{verb} the {' '.join([*head, plural_word(singular_word(last))])}"
    return fix_articles(f"{verb} a {one}") if verb in _NEW else f"{verb} the {one}"


__all__ = ["action_phrase", "routed", "summary_of"]
