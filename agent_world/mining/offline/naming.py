"""Word-level helpers for names found in sources: splitting any identifier (snake_case,
camelCase, REST paths) into lower-case tokens, snake_case, singular and plural of the last word
(irregular, exceptional and uncountable nouns), a valid EnvSpec identifier from any string,
sentence splitting, the singular word set of a text, and whether a name denotes a person.
"""

from __future__ import annotations

import functools
import keyword
import re

from agent_world.mining.offline.vocabulary import PERSON_NOUNS

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_IRREGULAR = {"person": "people", "child": "children", "man": "men", "woman": "women",
              "analysis": "analyses", "criterion": "criteria", "diagnosis": "diagnoses",
              "mouse": "mice", "foot": "feet", "tooth": "teeth", "medium": "media",
              "bus": "buses", "gas": "gases"}
_IRREGULAR_INV = {v: k for k, v in _IRREGULAR.items()}
_SINGULAR_EXCEPTIONS = {"statuses": "status", "buses": "bus", "campuses": "campus",
                        "aliases": "alias", "viruses": "virus", "caches": "cache",
                        "movies": "movie", "cookies": "cookie", "species": "species",
                        "series": "series", "news": "news", "indices": "index",
                        "analyses": "analysis", "diagnoses": "diagnosis", "lives": "life",
                        "knives": "knife", "leaves": "leave", "heroes": "hero",
                        "potatoes": "potato", "tomatoes": "tomato", "quizzes": "quiz",
                        "gas": "gas", "canvas": "canvas", "atlas": "atlas"}
_UNCOUNTABLE = {"history", "data", "information", "metadata", "news", "equipment", "feedback",
                "software", "staff", "inventory", "media", "audit", "weather", "music",
                "research", "mail", "traffic", "health", "analytics", "species", "series",
                "postgres", "redis", "whois", "kubernetes"}  # products and protocols: their
# rows are postgres databases, never "a postgre"; "whois" is no plural of "whoi"
# words in -is that are singular; other -is words in tool names are plurals of -i words
# ('apis', 'wikis', 'emojis', 'clis')
_IS_SINGULAR = {"axis", "iris", "tennis", "chassis", "trellis", "pelvis", "mantis", "cannabis",
                "travis", "jarvis", "elvis", "paris", "this"}
# -uses words whose singular ends in -use though a consonant comes before it ('abuses');
# otherwise a consonant before -uses is a Latin -us ('omnifocuses', 'servicebuses', 'radiuses')
_USE_WORDS = ("abuse", "excuse", "accuse", "fuse", "muse", "refuse", "reuse", "misuse")


_VERSIONED = re.compile(r"(?<=[A-Za-z])(V\d+)$")  # 'getUploadURLV1': URL, V1
_VERSION = re.compile(r"v\d+")


def unversioned_camel(name: str) -> str:
    """`name` with a trailing API version split off as a word of its own ('URLV1' -> 'URL_V1'),
    so camel-case splitting and `is_version` see it."""
    return _VERSIONED.sub(r"_\1", name)


def is_version(token: str) -> bool:
    """Whether a lower-case word is an API version ('v1'), no part of what a name says."""
    return bool(_VERSION.fullmatch(token))


# product names written in camel case are one word ('WordPress' had made Hostinger's
# 'word_press_plugins', asked as "the word press plugins", beside its 'wordpress_themes')
_BRANDS = {("word", "press"): "wordpress", ("git", "hub"): "github", ("git", "lab"): "gitlab",
           ("you", "tube"): "youtube", ("java", "script"): "javascript",
           ("type", "script"): "typescript", ("mongo", "db"): "mongodb",
           ("dynamo", "db"): "dynamodb", ("open", "ai"): "openai", ("big", "query"): "bigquery",
           ("postgre", "sql"): "postgresql", ("my", "sql"): "mysql"}


def tokens(name: str) -> list[str]:
    """'createAppointment' / 'git_create_branch' / 'GET /a/{b}' -> lower-case word tokens."""
    spaced = _CAMEL.sub("_", unversioned_camel(name))
    out = [t for t in re.split(r"[^A-Za-z0-9]+", spaced.lower()) if t]
    i = 0
    while i < len(out) - 1:  # one pass: every brand is two tokens
        if (brand := _BRANDS.get((out[i], out[i + 1]))) is not None:
            out[i:i + 2] = [brand]
        i += 1
    return out


def slug(text: str) -> str:
    """'Clinic Booking API' -> 'clinic-booking-api'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


# words of a source's name that say what kind of package it is, not whose service it is
_PACKAGING = frozenset({"mcp", "server", "docs", "documentation", "doc", "api", "sdk", "tools",
                        "tool", "cli", "code", "assist", "search", "kb"})


@functools.cache  # asked for every docs page and body a service's rows hold
def brand(service: str) -> str:
    """Whose service a source is, from its name: 'apple-docs' -> 'apple', 'brave-search' ->
    'brave', 'google-maps-code-assist' -> 'google-maps' (its docs host, its CLI's name)."""
    words = tokens(service)
    return "-".join([w for w in words if w not in _PACKAGING] or words)


_NUMBERED = re.compile(r"(?<=[a-z])[1-9]$")


def unnumbered(name: str) -> str:
    """'color1' -> 'color', 'ns2' -> 'ns': one of several of a kind is of that kind."""
    return _NUMBERED.sub("", name)


def snake(name: str) -> str:
    return "_".join(tokens(name))


def is_plural_word(word: str) -> bool:
    return singular_word(word) != word


def singular_word(word: str) -> str:
    if word in _SINGULAR_EXCEPTIONS:
        return _SINGULAR_EXCEPTIONS[word]
    if word in _UNCOUNTABLE or len(word) <= 3:
        return word
    if word in _IRREGULAR_INV:
        return _IRREGULAR_INV[word]
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("uses"):  # houses, causes, reuses; statuses, servicebuses, radiuses
        if word == "uses" or word[-5] in "ao" or word.endswith(tuple(w + "s" for w in _USE_WORDS)):
            return word[:-1]
        return word[:-2]
    if word.endswith("is") and not word.endswith(("sis", "itis")) and word not in _IS_SINGULAR:
        return word[:-1]  # apis, wikis, emojis: plurals of -i words
    if word.endswith(("sses", "shes", "ches", "xes", "zzes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def plural_word(word: str) -> str:
    if word in _UNCOUNTABLE:
        return word
    if word in _IRREGULAR:
        return _IRREGULAR[word]
    if word.endswith("y") and len(word) > 1 and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    if word == "leaf":
        return "leaves"
    if word.endswith("s") and (len(word) <= 3 or not word[:-1].isalpha() or (
            word.endswith("is") and singular_word(word) != word)):
        return word  # already plural: ids, dbs, 15s, apis (an acronym's plural is no 'idses')
    if word.endswith(("s", "x", "z", "ch", "sh")):
        return word + "es"
    return word + "s"


def singular(name: str) -> str:
    parts = snake(name).split("_")
    return "_".join([*parts[:-1], singular_word(parts[-1])]) if parts else name


def plural(name: str) -> str:
    parts = snake(name).split("_")
    return "_".join([*parts[:-1], plural_word(parts[-1])]) if parts else name


def identifier(name: str, fallback: str = "env") -> str:
    """A valid EnvSpec identifier from any string."""
    s = snake(name) or fallback
    if s[0].isdigit():
        s = f"{fallback}_{s}"

    if keyword.iskeyword(s):
        s += "_"
    return s[:63]


def sentences(text: str) -> list[str]:
    return [s.strip() for s in re.split(r"(?<=[.!?;\n])\s+|\n", text) if s.strip()]


def word_set(text: str) -> set[str]:
    return {singular_word(t) for t in tokens(text) if len(t) > 2}


# the columns a record is known by: a clinician or a book without one is no record a service
# would hold, so they are never NULL (other nullable columns sometimes are)
LABEL_COLUMNS = frozenset({"name", "title", "subject", "full_name", "display_name", "first_name",
                           "last_name", "given_name", "family_name", "username", "user_name"})


# the description of the `name` the miner gives a record its source names no label for: tasks
# never ask for it nor name the record by it ("the shard named inventory-shard")
ADDED_LABEL = "A label for the record; the source gives it no name of its own."


def is_label(column: str) -> bool:
    return column in LABEL_COLUMNS


# a vowel letter that sounds like a consonant: "a user", "a unit", "a one-off", "a URL"
_CONSONANT_SOUND = (r"(?:u[bcdfgjklmnpqrstvwxyz][aeiouy]|uni|use|eu|one(?!r)"
                    r"|u(?:rls?|sb|uid|tc|i|x)\b)")
# "a" before a word that starts with a vowel sound, in any case: "a appointment", "a
# UptimeCheck" (not "a URL", "a OneDrive", nor the "A" of "E&A")
_A_BEFORE_VOWEL = re.compile(rf"(?<![\w&])a (?=[aeiouAEIOU])(?!(?i:{_CONSONANT_SOUND}))")
# the same with a capital "A", for reading a text: "A order"
A_BEFORE_VOWEL_SOUND = re.compile(rf"(?<![\w&])[Aa] (?=[aeiouAEIOU])"
                                  rf"(?!(?i:{_CONSONANT_SOUND}))")


# the name an application gives a new thing its creator named nothing ("Untitled table")
_PLACEHOLDER = "Untitled "


def placeholder_name(noun: str) -> str:
    return _PLACEHOLDER + noun.replace("_", " ")


def is_placeholder(value: object) -> bool:
    """A name no one gave (`placeholder_name`): the same for every new record, so asking for
    it asks nothing the request decided."""
    return isinstance(value, str) and value.startswith(_PLACEHOLDER)


def with_article(name: str) -> str:
    """`name` in words with its indefinite article: "an order", "a user", "a branch"."""
    words = name.replace("_", " ")
    return ("an " if _A_BEFORE_VOWEL.match(f"a {words.lower()}") else "a ") + words


def fix_articles(text: str) -> str:
    """"a" before a vowel sound made "an" ("create an appointment", still "a user")."""
    return _A_BEFORE_VOWEL.sub("an ", text)


def is_person(name: str) -> bool:
    return singular(name).split("_")[-1] in PERSON_NOUNS


def tool_identifier(name: str) -> str:
    """A source tool's name as the environment's tool (a Python function) can carry it:
    'certificate-list' -> 'certificate_list'; names that are identifiers already stay."""
    ident = re.sub(r"\W+", "_", name).strip("_")[:63]
    if not ident or ident[0].isdigit():
        ident = f"tool_{ident}"[:63]
    return ident + "_" if keyword.iskeyword(ident) else ident


# names a designed tool binds before it reads its arguments (Helm's `values` argument became
# the record being inserted: a dict holding itself)
_BOUND = {"ctx", "values", "clauses", "params", "where", "sql"}


def safe_name(name: str) -> str:
    """An argument name usable as a Python parameter of a designed tool."""
    name = re.sub(r"\W", "_", name)
    if not name or name[0].isdigit():
        name = f"arg_{name}"
    return name + "_" if keyword.iskeyword(name) or name in _BOUND else name
