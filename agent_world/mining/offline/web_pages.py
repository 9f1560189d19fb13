"""What a fetched web page holds, kept consistent: its content type follows its status (a
redirect or an error page is HTML), its body follows its content type (Markdown for an HTML
page, as the fetch server returns it; JSON, CSV or plain text as served; no body for a binary
file, whose bytes are not stored) and its byte length follows its body."""

from __future__ import annotations

import json
from typing import Any

CONTENT_TYPES = [("text/html", 62), ("application/json", 12), ("text/plain", 8),
                 ("application/pdf", 5), ("text/markdown", 5), ("text/csv", 4),
                 ("image/png", 4)]
STATUS_CODES = [(200, 82), (301, 5), (302, 3), (404, 6), (403, 2), (500, 2)]
REDIRECTS = (301, 302, 307, 308)
_MARKDOWN = ("text/html", "text/markdown")


def page_body(fake: Any, rng: Any, url: str, title: str | None, code: Any,
              content_type: str | None) -> str | None:
    """What a fetch of `url` returned: the page on 200 (as its content type says), where it
    moved on a redirect, nothing on an error or for a binary file."""
    if code in REDIRECTS:
        return f"Moved to {str(url).rstrip('/')}/index.html"
    if code != 200:
        return None
    heading = title or fake.sentence(nb_words=4).rstrip(".")
    paragraphs = [fake.paragraph(nb_sentences=3) for _ in range(rng.randint(1, 4))]
    if content_type in _MARKDOWN or content_type is None:
        return f"# {heading}\n\n" + "\n\n".join(paragraphs)
    if content_type == "text/plain":
        return f"{heading}\n\n" + "\n\n".join(paragraphs)
    if content_type == "application/json":
        items = [{"id": i, "name": fake.word(), "updated": fake.date()}
                 for i in range(1, rng.randint(2, 5))]
        return json.dumps({"title": heading, "items": items}, indent=2)
    if content_type == "text/csv":
        rows = [f"{i},{fake.word()},{rng.randint(1, 500)}" for i in range(1, rng.randint(3, 8))]
        return "\n".join(["id,name,quantity", *rows])
    return None  # a PDF, an image: binary


def settle_page(fake: Any, rng: Any, row: dict[str, Any], columns: set[str]) -> None:
    """Make a page row's content type, body and byte length agree with its status."""
    code = row.get("status_code")
    if "content_type" in columns and code != 200:
        row["content_type"] = "text/html"  # a redirect notice or an error page
    ctype = row.get("content_type")
    row["body"] = page_body(fake, rng, row["url"], row.get("title"), code, ctype)
    if "byte_length" in columns:
        row["byte_length"] = len(row["body"].encode()) if row["body"] else \
            rng.randint(20_000, 2_000_000) if code == 200 else 0


__all__ = ["CONTENT_TYPES", "STATUS_CODES", "page_body", "settle_page"]
