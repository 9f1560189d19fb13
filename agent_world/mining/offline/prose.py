"""Text a person would write in a record's free-text fields: messages and comments, error
messages, reasons, meeting titles, descriptions, a command's output, an agent's instruction, a
phrase a find or replace names — by what the column is for, from templates
over everyday words, not Faker's lorem ('Explain herself music crime carry project less speak
director.'), which a request then quotes back to the agent ("set its summary to …", "the
alarm whose message is 'Little tend drive.'")."""

from __future__ import annotations

import random
import re

from faker import Faker

_TEAMS = ["design", "platform", "sales", "support", "data", "mobile", "finance", "marketing",
          "security", "ops"]
_THINGS = ["report", "invoice", "draft", "release", "dashboard", "proposal", "budget",
           "roadmap", "contract", "migration", "onboarding doc", "test plan", "pricing page",
           "backlog", "launch checklist"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "tomorrow", "end of day",
         "next week"]
_MESSAGES = [
    "Can you take a look at the {thing} before {day}?",
    "The {thing} is ready for review.",
    "Thanks {name}, I'll follow up {day}.",
    "Reminder: the {team} sync starts at {time}.",
    "Please update the {thing} by {day}.",
    "Moved the {thing} to next sprint, blocked on the {team} team.",
    "Shared the {thing} with {name} for sign-off.",
    "Looks good to me, approved.",
    "Could we push the {thing} review to {day}?",
    "{name} asked for the latest numbers in the {thing}.",
    "Fixed the typo in the {thing} and re-sent it.",
    "Customer reported an issue with the {thing}; investigating.",
]
_ERRORS = [
    "Connection timed out after 30s", "Permission denied", "Rate limit exceeded (429)",
    "Invalid credentials", "Resource not found", "Disk quota exceeded",
    "Upstream service unavailable (503)", "Request payload too large",
    "Certificate has expired", "Validation failed: missing required field 'name'",
]
# why a charge was waived, a booking cancelled, or anything else stopped
_WAIVERS = ["first-time courtesy waiver", "charged in error", "returned on time through the "
            "drop box", "hardship waiver", "duplicate charge"]
_CANCELS = ["ordered twice", "no longer needed", "scheduling conflict", "found a better price",
            "requested by the customer", "travel plans changed"]
_REASONS = ["requested by the customer", "duplicate entry", "no longer needed",
            "scheduling conflict", "budget was cut", "replaced by a newer version",
            "entered by mistake", "on hold until next quarter"]
_MEETINGS = ["Weekly {team} sync", "1:1 with {name}", "Quarterly planning", "{Thing} review",
             "Sprint retrospective", "Interview: {name} {last}", "Lunch with {name}",
             "{Team} all-hands", "Dentist appointment", "Flight to {city}"]
_DESCRIPTIONS = [
    "{Thing} for the {team} team.", "Tracks the {team} team's {things}.",
    "Shared {thing} owned by {name} {last}.", "Working copy of the Q{q} {thing}.",
    "Used by the {team} team to plan the {thing}.",
    "Archive of past {things}; read-only.",
]
# what a command printed: a build's, a test run's, a server's
_OUTPUTS = ["Build succeeded in {q}.{time_s}s", "{n} passed, 0 failed", "Listening on "
            "http://0.0.0.0:8080", "Compiled {n} files with no errors", "Done. {n} rows "
            "written", "Deployment complete: revision {n} is serving traffic", "Already up "
            "to date.", "Installed {n} packages in {q}.{time_s}s"]
# what a browser automation is told to do, and what a coding or research agent is
_BROWSER_STEPS = ["Click the 'Sign in' button and wait for the dashboard to load",
                  "Extract the product names and prices from the page",
                  "Fill the email field with the test account and submit the form",
                  "Scroll to the footer and list every link it holds",
                  "Open the first search result and copy its title",
                  "Accept the cookie banner, then open the pricing page"]
_INSTRUCTIONS = ["Add error handling to the fetch call",
                 "Rename the variable to match the {thing} it holds",
                 "Write a unit test for the {thing} parser",
                 "Summarise the findings in three bullet points",
                 "Keep the public API unchanged; only refactor the internals",
                 "Cite a source for every figure in the {thing}"]
# what a service says beside its results
_NOTICES = ["Results are limited to the first 100 records.",
            "This endpoint is deprecated; use version 2.",
            "Data may be delayed by up to 15 minutes.",
            "Some records were omitted because of access restrictions.",
            "Abstracts are not available for every article."]
# a test case's steps and what must hold before them
_TEST_STEPS = ["Open the login page", "Enter a valid email and password", "Click 'Sign in'",
               "Check that the dashboard shows the user's name", "Add a product to the cart",
               "Open the cart and check the total", "Log out from the account menu"]
_PRECONDITIONS = ["The user is signed out", "A product is in the cart",
                  "The test account exists and is verified", "The app is on the home screen",
                  "Feature flag 'new-checkout' is on"]
# a query's step: the resolution of a range query
_INTERVALS = ["15s", "30s", "60s", "5m", "1h"]
# a to-do's or a checklist item's text
_TODOS = ["Send the {thing} to {name}", "Book the venue for the {team} offsite",
          "Review the {thing}", "Renew the SSL certificate", "Update the {team} roadmap",
          "Call {name} about the {thing}", "Archive last quarter's {things}"]
# the words on a slide, a text box, a sticky note or a shape
_SLIDE_TEXTS = ["Agenda", "Q{q} results", "Thank you!", "Next steps", "Customer journey",
                "{Team} roadmap", "Revenue up {n}% year over year", "Questions?", "Key risks"]
# what a page's alert, confirm or prompt dialog says
_ALERTS = ["Are you sure you want to leave this page?", "Your session has expired.",
           "Changes saved.", "Please enter a valid email address.", "Delete this item?"]
# a memory's observation of an entity (a knowledge graph's facts about a person)
_OBSERVATIONS = ["Prefers email over phone calls", "Works on the {team} team",
                 "Lives in {city}", "Speaks Spanish and English", "Allergic to peanuts",
                 "Joined in Q{q} 2024", "Owns the {thing}"]
# a paragraph of a document (Word's, Google Docs')
_PARAGRAPHS = ["This proposal covers the {thing} for the {team} team.",
               "Revenue grew {n}% in Q{q}, led by the {thing}.",
               "All figures are in US dollars unless stated otherwise.",
               "The {team} team owns the {thing} from Q{q}.",
               "Appendix A lists the open risks and who follows each up.",
               "{name} {last} will present the {thing} at the next all-hands."]
# what a service's record (a model, a tag, a repository, a policy) is for: who uses it
_RECORD_DESCRIPTIONS = ["Used by the {team} team.", "Owned by {name} {last}.",
                        "Set up by the {team} team in Q{q}.", "Shared with the {team} team.",
                        "Maintained by {name} {last}; reviewed every quarter.",
                        "For the {team} team's {day} reviews."]
# a project's status update: how it stands and why
_STATUS_UPDATES = ["On track: the {thing} ships {day} as planned.",
                   "At risk: the {thing} is waiting on the {team} team.",
                   "Off track: the {thing} slipped a week; {name} is re-planning it.",
                   "On track: {q} of 4 milestones done, the {thing} is next.",
                   "At risk: two open bugs block the {thing}; the fixes land {day}."]
# what is typed into a field or held on a clipboard
_TYPED = ["test@example.com", "hello world", "{city}", "4111 1111 1111 1111", "Order #{n}",
          "{name} {last}", "https://example.com/{thing}"]
# an out-of-office reply, and a chart's, a slicer's or an image's caption
_AUTOREPLIES = ["I'm out of the office until {day} with limited access to email.",
                "Thanks for your message. I'm on leave and will reply when I'm back.",
                "I'm travelling this week; for anything urgent contact {name}."]
_AWAY = ["Out of office", "Away until {day}", "On leave", "Automatic reply: out of office"]
_CAPTIONS = ["Revenue by region", "Monthly active users", "Q{q} pipeline by stage",
             "Tickets opened per day", "{Team} headcount", "Error rate, last 7 days"]
# a phrase of a document a find, replace or anchor names
_PHRASES = ["{Thing}", "Q{q} {thing}", "{Team} team", "Terms and Conditions", "Next steps",
            "draft", "TODO", "Executive summary", "{thing} owner", "Action items",
            "{Team} {thing}", "Introduction"]
_QUESTIONS = ["How do I reset my password?", "When is the {thing} due?",
              "Who owns the {thing}?", "Can I change the delivery date?",
              "Why was my card declined?", "Where can I find last month's {thing}?"]


# each message template as a pattern: what tells a chat message from text of another kind
_CHAT = [re.compile(re.sub(r"\\\{\w+\\\}", ".+", re.escape(m)) + "$") for m in _MESSAGES]


def is_chat(text: str) -> bool:
    """Whether `text` is one of the chat messages `prose` writes ('Thanks Ann, I'll follow
    up Tuesday.')."""
    return any(p.match(text) for p in _CHAT)


def prose_kind(name: str, table: str) -> str:
    """Which kind of free text a column holds, by its name and table."""
    words = set(name.lower().split("_"))
    if words & {"error", "errors", "exception", "failure", "warning", "warnings", "stderr"}:
        return "error"
    if words & {"stdout", "output", "log", "logs"}:
        return "output"
    if words & {"notice", "notices"}:
        return "notice"
    if words & {"precondition", "preconditions"}:
        return "precondition"
    if words & {"step", "steps"}:
        return "interval" if re.search(r"quer|metric|series|range", table) else "test_step"
    if words & {"find", "replace", "replacement", "target", "anchor", "match"} or \
            name.lower() in ("old_text", "new_text", "old_string", "new_string"):
        return "phrase"  # a find's, a replace's, an anchor's: a few words of a document
    if words & {"text", "content", "body"} and not words & {"message", "comment"} and \
            not re.search(r"comment|repl|message|note", table):
        if re.search(r"checklist|todo|task_item|subtask", table):
            return "todo"
        if re.search(r"status_update|project_status|portfolio_status|goal_status", table):
            return "status_update"  # Asana's project status text had been chat messages
        if re.search(r"slide|text_box|sticky|stickie|shape|figma_node|^nodes$", table):
            return "slide_text"
        if re.search(r"alert|dialog", table):
            return "alert"
        if re.search(r"input|send_key|keyboard|clipboard|keystroke", table):
            return "typed"
        if re.search(r"paragraph|^lines$|block|^documents$|tabs$|table_cell", table):
            return "paragraph"
    if re.search(r"vacation|autorepl|out_of_office", table):
        return "away" if words & {"subject", "title"} else "autoreply"
    if words & {"caption", "alt"}:
        return "caption"
    if words & {"snippet", "excerpt"}:
        return "description"  # a result's summary of what it found
    if words & {"observation", "observations"} or "observation" in table:
        return "observation"
    if words & {"paragraph"} or name.lower() in ("line_text", "header_text"):
        return "paragraph"
    if words & {"instruction", "instructions"}:
        return "browser_step" if re.search(r"stagehand|browser|page|selenium|playwright|tab|"
                                           r"observe|act\b", table) else "instruction"
    if words & {"reason", "reasons"}:
        return "waiver" if re.search(r"waiv|fine|fee|charge|refund|penalt", f"{name} {table}") \
            else "cancel" if re.search(r"cancel|order|booking|reservation|appointment",
                                       f"{name} {table}") else "reason"
    if words & {"question", "prompt", "query"}:
        return "question"
    if words & {"summary", "subject", "title"} and re.search(r"event|meeting|calendar|"
                                                              r"appointment", table):
        return "meeting"
    if words & {"description", "details", "bio", "about", "summary"}:
        return "description"
    return "message"


_PRODUCT_MAKES = ["Ergonomic", "Compact", "Wireless", "Classic", "Organic", "Portable",
                  "Deluxe", "Smart", "Stainless", "Recycled"]
_PRODUCTS = ["Desk Lamp", "Water Bottle", "Backpack", "Headphones", "Coffee Grinder", "Yoga Mat",
             "Notebook", "Keyboard", "Office Chair", "Blender", "Phone Case", "Rain Jacket",
             "Cutting Board", "Throw Blanket", "Running Shoes"]
_TITLES = ["Q{q} {thing}", "{Team} {thing}", "{Thing} notes", "{Thing} for {name}",
           "{Team} {thing} v{q}", "{Team} weekly {thing}", "{Thing} review"]


def prose(kind: str, rng: random.Random, fake: Faker) -> str:
    """One line of free text of `kind` ('message', 'error', 'reason', 'question', 'meeting',
    'description', 'title', 'product', 'output', 'instruction', 'browser_step', 'phrase',
    'notice', 'test_step', 'precondition', 'interval', 'todo', 'slide_text', 'alert', 'typed',
    'paragraph', 'observation', 'autoreply', 'away', 'caption', 'status_update',
    'record_description')."""
    if kind == "error":
        return rng.choice(_ERRORS)
    if kind in ("reason", "waiver", "cancel"):
        return rng.choice({"waiver": _WAIVERS, "cancel": _CANCELS}.get(kind, _REASONS))
    if kind == "product":
        return f"{rng.choice(_PRODUCT_MAKES)} {rng.choice(_PRODUCTS)}"
    pool = {"question": _QUESTIONS, "meeting": _MEETINGS, "title": _TITLES,
            "description": _DESCRIPTIONS, "output": _OUTPUTS, "instruction": _INSTRUCTIONS,
            "browser_step": _BROWSER_STEPS, "phrase": _PHRASES, "notice": _NOTICES,
            "test_step": _TEST_STEPS, "precondition": _PRECONDITIONS,
            "interval": _INTERVALS, "todo": _TODOS, "slide_text": _SLIDE_TEXTS,
            "alert": _ALERTS, "typed": _TYPED, "paragraph": _PARAGRAPHS,
            "observation": _OBSERVATIONS, "autoreply": _AUTOREPLIES, "away": _AWAY,
            "caption": _CAPTIONS, "status_update": _STATUS_UPDATES,
            "record_description": _RECORD_DESCRIPTIONS}.get(kind, _MESSAGES)
    thing = rng.choice(_THINGS)
    team = rng.choice(_TEAMS)
    slots = {"thing": thing, "Thing": thing[0].upper() + thing[1:], "things": thing + "s",
             "team": team, "Team": team.title(), "name": fake.first_name(),
             "last": fake.last_name(), "day": rng.choice(_DAYS), "q": rng.randint(1, 4),
             "time": f"{rng.randint(8, 17)}:{rng.choice(['00', '30'])}", "city": fake.city(),
             "n": rng.randint(2, 240), "time_s": rng.randint(1, 9)}
    return rng.choice(pool).format(**slots)


__all__ = ["is_chat", "prose", "prose_kind"]
