"""What a fetched web page holds, kept consistent: its content type follows its status (a
redirect or an error page is HTML), its body follows its content type (Markdown for an HTML
page, as the fetch server returns it; JSON, CSV or plain text as served; no body for a binary
file, whose bytes are not stored) and its byte length follows its body."""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import urlparse

from agent_world.mining.offline.prose import prose

CONTENT_TYPES = [("text/html", 62), ("application/json", 12), ("text/plain", 8),
                 ("application/pdf", 5), ("text/markdown", 5), ("text/csv", 4),
                 ("image/png", 4)]
STATUS_CODES = [(200, 82), (301, 5), (302, 3), (404, 6), (403, 2), (500, 2)]
REDIRECTS = (301, 302, 307, 308)
_MARKDOWN = ("text/html", "text/markdown")
# what a site's pages say, in the site's own voice
_PARAGRAPHS = [
    "{site} helps teams keep track of their {things} in one place.",
    "Plans start at ${price} per month, billed annually. Every plan includes unlimited users.",
    "Read the latest updates from the {site} team, from new features to {thing} tips.",
    "Questions about your {thing}? Contact support at support@{domain} or call us weekdays "
    "from 9:00 to 17:00.",
    "Version {v} adds faster search, a redesigned {thing} view and fixes for reported issues.",
    "We use cookies to improve your experience. By using this site you agree to our policy.",
    "Sign in to see your {things}, invoices and account settings.",
]
_THINGS = ["project", "invoice", "order", "report", "booking", "document", "task", "campaign"]


# the pages a site has (a URL had ended in random words: '/list/search/app')
SITE_PATHS = ["pricing", "about", "blog/launch-week-recap", "docs/getting-started", "careers",
              "contact", "products/standing-desk", "support/faq", "changelog", "features",
              "customers", "security", "integrations", "help/billing", "blog/how-we-ship",
              "events/summit-2025", "docs/api-reference", "legal/privacy", "status",
              "download"]
_IMAGE = re.compile(r"image|avatar|icon|thumbnail|logo|photo|picture|cover")


def site_url(fake: Any, rng: Any, column: str = "") -> str:
    """A page of a site ('https://www.perry.com/pricing', titled 'Pricing | Perry'), or an
    image on it for an image's column ('.../images/team-photo.png')."""
    if _IMAGE.search(column):
        return f"{fake.url()}images/{rng.choice(['logo', 'team-photo', 'hero', 'avatar'])}.png"
    return fake.url() + rng.choice(SITE_PATHS)


def page_title(url: str) -> str:
    """A page's title from where it is: its last path segment and its site ('Pricing | Cooper'),
    as a site titles its pages."""
    parts = urlparse(url)
    site = re.sub(r"^www\.", "", parts.hostname or "").split(".")[0].replace("-", " ").title()
    section = next((s for s in reversed(parts.path.split("/")) if s and "." not in s), "")
    section = section.replace("-", " ").replace("_", " ").strip().capitalize()
    return f"{section} | {site}" if section else site


def page_body(fake: Any, rng: Any, url: str, title: str | None, code: Any,
              content_type: str | None) -> str | None:
    """What a fetch of `url` returned: the page on 200 (as its content type says), where it
    moved on a redirect, nothing on an error or for a binary file."""
    if code in REDIRECTS:
        return f"Moved to {str(url).rstrip('/')}/index.html"
    if code != 200:
        return None
    heading = title or page_title(url)
    site, domain = heading.split(" | ")[-1], urlparse(url).hostname or "example.com"
    thing = rng.choice(_THINGS)
    paragraphs = [p.format(site=site, domain=domain.removeprefix("www."), thing=thing,
                           things=thing + "s", price=rng.choice([9, 12, 19, 29, 49]),
                           v=f"{rng.randint(1, 5)}.{rng.randint(0, 9)}")
                  for p in rng.sample(_PARAGRAPHS, rng.randint(1, 4))]
    if content_type in _MARKDOWN or content_type is None:
        return f"# {heading}\n\n" + "\n\n".join(paragraphs)
    if content_type == "text/plain":
        return f"{heading}\n\n" + "\n\n".join(paragraphs)
    if content_type == "application/json":
        items = [{"id": i, "name": prose("product", rng, fake),
                  "updated": fake.date_between(start_date="-3y").isoformat()}
                 for i in range(1, rng.randint(2, 5))]
        return json.dumps({"title": heading, "items": items}, indent=2)
    if content_type == "text/csv":
        rows = [f"{i},{prose('product', rng, fake)},{rng.randint(1, 500)}"
                for i in range(1, rng.randint(3, 8))]
        return "\n".join(["id,name,quantity", *rows])
    return None  # a PDF, an image: binary


def settle_page(fake: Any, rng: Any, row: dict[str, Any], columns: set[str]) -> None:
    """Make a page row's title, content type, body and byte length agree with its URL and
    status."""
    code = row.get("status_code")
    if "title" in columns and row.get("url"):  # a page the database grew has its site's title
        title = page_title(row["url"])
        row["title"] = title if code == 200 or code in REDIRECTS else \
            f"{'Page not found' if code == 404 else 'Error'} | {title.split(' | ')[-1]}"
    if "content_type" in columns and code != 200:
        row["content_type"] = "text/html"  # a redirect notice or an error page
    ctype = row.get("content_type")
    row["body"] = page_body(fake, rng, row["url"], row.get("title"), code, ctype)
    if "byte_length" in columns:
        row["byte_length"] = len(row["body"].encode()) if row["body"] else \
            rng.randint(20_000, 2_000_000) if code == 200 else 0


__all__ = ["CONTENT_TYPES", "SITE_PATHS", "STATUS_CODES", "page_body", "page_title",
           "settle_page", "site_url"]
