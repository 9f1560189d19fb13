"""Values a source describes for a column whose name alone does not tell its kind: the examples
its argument descriptions give ("e.g. 'A1:D20'", "(e.g., 'Helvetica', 'Times New Roman')",
"Font size in points (e.g., 14, 36)"), the choices they list ("Can be: public_to_workspace,
private_to_team, private") and the file types the environment works with ("Excel workbooks
(.xlsx, .xlsm)"). Over the shipped corpus more than half of the text arguments fell back to a
random dictionary word ('range' "son", a workbook "/during/many/behavior.gif"); a value shaped
like the source's own example is one a user of that service would type."""

from __future__ import annotations

import random
import re

from agent_world.mining.offline.example_families import family_of

# "e.g. 'A1:D20'", "(e.g., 14, 36)", "for example: `main`", "such as \"work\"" (not the
# "like" of "directory-like structure")
_EXAMPLE_LEAD = re.compile(r"(?:\b(?:e\.\s?g\.?|eg\.|for example|for instance|such as|example:|"
                           r"examples:|(?<!-)like)|例如|比如|如|例えば|例：)\s*[:,：]?\s*", re.I)
_CHOICE_LEAD = re.compile(r"\b(?:can be|one of|(?:valid|accepted|allowed|possible|supported) "
                          r"(?:values|options)(?: are| include)?|options are|available \w+:|either)\s*[:]?\s*",
                          re.I)
# "Operation to perform: generate, deploy, describe, or delete": a colon, then three or more
# bare words, the last after "or"
_COLON_CHOICES = re.compile(r":\s*((?:[\w.-]+,\s*){2,}(?:or|and)\s+[\w.-]+)\s*(?:[.;)]|$)")
# "Travel mode: 'Car', 'Truck', 'Walking', or 'Bicycle' (default: 'Car')", "'summary'
# (default) or 'raw'": two or more quoted values, the last after "or"
_Q = r"['\"`][\w .:/+-]{1,30}['\"`](?:\s*\(default\))?"
_QUOTED_CHOICES = re.compile(rf"(?<!e\.g\. )(?<!e\.g\.\, )({_Q}(?:\s*,\s*{_Q})*,?\s+or\s+{_Q})")
# quoted values in brackets, closed by "etc.": ("2025", "2024", etc.)
_ETC = re.compile(r"\(((?:\s*[\"'`][^\"'`\n]{1,40}[\"'`]\s*,)+)\s*etc\.?\)")
# bare words in brackets, closed by "etc.": "(function, class, variable, method, etc.)"
_BARE_ETC = re.compile(r"\(((?:\s*[\w.-]{1,30}\s*,){2,})\s*etc\.?\)")
# "starts with PR- followed by a number"
_PREFIXED = re.compile(r"starts? with [\"'`]?([A-Za-z]{1,8}-?)[\"'`]? followed by (?:a )?"
                       r"(?:number|digits)")
_QUOTED = re.compile(r"'([^'\n]{1,60})'|\"([^\"\n]{1,60})\"|`([^`\n]{1,60})`|‘([^’\n]{1,60})’")
_CODE_PATH = re.compile(r"`[A-Za-z_]\w*(?:\.[A-Za-z_]\w*(?:\[\d+\])?)+`")
_BARE = re.compile(r"^[\w.@:/+$-]{1,40}$")
_CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")
# file types a user names when they say what a service works with (document-like ones: a
# '.json' in an API's description names its payload, not the files its users keep)
_FILE_TYPES = ("xlsx", "xlsm", "xls", "csv", "tsv", "docx", "doc", "odt", "pdf", "pptx", "ppt",
               "png", "jpg", "jpeg", "gif", "svg", "webp", "md", "txt", "mp3", "mp4", "wav",
               "zip", "epub", "ipynb")
# a format named in capitals ("PNG, JPG"), read in a column's description only
_FORMAT_WORD = re.compile(r"\b[A-Z][A-Z0-9]{1,4}\b")
_FILE_TYPE = re.compile(r"(?<![\w/])\.(" + "|".join(_FILE_TYPES) + r")\b", re.I)
_DIGITS = re.compile(r"\d+")
_A1 = re.compile(r"([\w ]+!)?([A-Z]{1,2})(\d+)(?::([A-Z]{1,2})(\d+))?")


def _segment(text: str, lead: re.Pattern[str]) -> list[str]:
    """The stretches of `text` after each `lead`, up to the closing bracket or the sentence's end."""
    out = []
    for m in lead.finditer(text):
        rest = text[m.end():]
        end = re.search(r"\)|\]|\.\s|\.$|;|\n|[。；）]", rest)
        out.append(rest[:end.start()] if end else rest)
    return out


def _items(segment: str) -> list[str]:
    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(segment)]
    if quoted:
        # '"Where does auth ...?", "Trace ..."': a quote closing one long example and opening
        # the next holds no value (', '); a lone '/' may be one (a delimiter)
        return [q.strip() for q in quoted if q.strip(" ,;")]
    parts = [p.strip(" .") for p in re.split(r",\s*|\s+or\s+|\s*\|\s*|[、，]", segment)]
    parts = [re.sub(r"^(?:and|or)\s+", "", p) for p in parts if p]
    # bare items are single tokens ("binance, coinbase"; "14, 36"), never prose
    return parts if parts and all(_BARE.match(p) for p in parts) else []


def described_examples(description: str) -> list[str]:
    """The example values a description gives, in its order, each once."""
    found = [item for seg in _segment(description, _EXAMPLE_LEAD) for item in _items(seg)]
    if _CJK.search(description):  # "（如 production/staging）": words apart, not a path
        found = [w for item in found for w in (
            item.split("/") if re.fullmatch(r"[a-z]+(?:/[a-z]+)+", item) else [item])]
    found += [item for m in _ETC.finditer(description) for item in _items(m.group(1))]
    found += [item for m in _BARE_ETC.finditer(description) for item in _items(m.group(1))]
    found += [f"{m.group(1)}123" for m in _PREFIXED.finditer(description)]
    if not found:  # "Range with sheet, 'Data!$B$2:$B$100', or a constant, '0.075'": quoted
        # values shaped like data are examples without an "e.g." (words may be options); in
        # backticks a dotted name is code ("retrieved from the `hardware.list` endpoint",
        # "can include `metadata.scrapeId`"), not a value ("The `respond-async` header")
        found = [q for q in _items(_CODE_PATH.sub("", description)) if is_structured(q)]
    # a description cut off mid-word ("Inline CSS styles are also supported (e.g., font-")
    return [f for f in dict.fromkeys(found) if not f.endswith("-")]


def described_choices(description: str) -> list[str]:
    """The values a description says are the only ones ("Can be: a, b or c")."""
    found = [item for seg in _segment(description, _CHOICE_LEAD) for item in _items(seg)]
    found += [item for m in _COLON_CHOICES.finditer(description) for item in _items(m.group(1))]
    found += [item for m in _QUOTED_CHOICES.finditer(description) for item in _items(m.group(1))]
    return list(dict.fromkeys(found)) if len(found) >= 2 else []


def described_file_types(text: str) -> list[str]:
    """The document file types a source's text names (".xlsx", ".docx"), most named first."""
    counts: dict[str, int] = {}
    for m in _FILE_TYPE.finditer(text):
        ext = m.group(1).lower()
        counts[ext] = counts.get(ext, 0) + 1
    return sorted(counts, key=lambda e: -counts[e])


def column_file_types(description: str) -> list[str]:
    """The document file types a column's description names, as extensions or in capitals:
    "the image file on disk (PNG, JPG, BMP, or TGA)" -> png, jpg."""
    return described_file_types(description) + [
        w.lower() for w in _FORMAT_WORD.findall(description) if w.lower() in _FILE_TYPES]


def is_structured(example: str) -> bool:
    """An example with digits or id punctuation ('PROJ-123', 'A1:D20', '2103.12345'): its
    shape is what matters, not its words."""
    return bool(re.search(r"\d", example)) or bool(re.fullmatch(r"[\w]+[:_./-][\w:_./-]+",
                                                                example))


def like(example: str, rng: random.Random) -> str:
    """A value of the example's shape: its digit runs redrawn (as many digits, no new
    leading zero), every other character kept; an A1 reference moved as a whole (its sheet
    kept, a range as tall and wide): 'A1:D20' → 'C7:F26', 'PROJ-123' → 'PROJ-482'."""
    def digits(m: re.Match[str]) -> str:
        run = m.group(0)
        first = "123456789"[rng.randrange(9)] if run[0] != "0" else "0"
        return first + "".join(str(rng.randrange(10)) for _ in run[1:])

    a1 = _A1.fullmatch(example)
    if a1:  # A1 notation: columns shifted together, rows moved together (a range stays one)
        sheet, c1, r1, c2, r2 = a1.groups()
        shift, top = rng.randrange(6), rng.randint(1, 40)
        col = lambda c: "".join(chr(min(ord("Z"), ord(ch) + shift)) for ch in c)  # noqa: E731
        out = f"{sheet or ''}{col(c1)}{top}"
        return out + (f":{col(c2)}{top + max(0, int(r2) - int(r1))}" if c2 else "")
    return _DIGITS.sub(digits, example)


def described_value(description: str, rng: random.Random, integer: bool = False
                    ) -> str | int | None:
    """A value for a column from what its description gives, or None when it gives nothing
    usable: a listed choice; a number between the examples' smallest and largest; an
    example's shape redrawn; or one of the examples as given."""
    if not description:
        return None
    choices = described_choices(description)
    if choices and not integer:
        return rng.choices(choices, weights=[1.0 / (i + 1) for i in range(len(choices))])[0]
    examples = described_examples(description)
    if integer:
        nums = [int(e) for e in examples if re.fullmatch(r"-?\d{1,9}", e)]
        if not nums:
            return None
        lo, hi = min(nums), max(nums)
        if lo == hi:
            lo, hi = max(0, lo // 2), hi * 2 if hi > 0 else hi + 10
        return rng.randint(lo, hi)
    if not examples:
        return None
    family = family_of(examples[0]) if len(examples) == 1 else None
    if family:  # one value of a kind its users type many of ('hashicorp', 'BTC/USDT', 'LHR')
        return rng.choices(family, weights=[1.0 / (i + 1) for i in range(len(family))])[0]
    example = rng.choice(examples)
    if "/" in example:  # a path or an endpoint names a place: kept, its placeholders filled
        return re.sub(r"\{[^{}]*\}", lambda _m: str(rng.randint(1, 99)), example)
    return like(example, rng) if is_structured(example) else example


__all__ = ["column_file_types", "described_choices", "described_examples", "described_file_types",
           "described_value", "is_structured", "like"]
