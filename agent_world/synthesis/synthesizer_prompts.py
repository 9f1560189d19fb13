"""Prompts of the task synthesizer (kept apart from its code)."""

WRITE_TASK_SYSTEM = """You write tasks for evaluating tool-using assistants.
You get the facts of a task as JSON: what the user states (values), what has to be done step by
step (described by what each step does, never by tool names), and what the final answer is.
Write the request a real user would send: natural, specific, stating every given value exactly
as written, never naming a tool or function, never revealing the answer. Then write a rubric:
3 to 5 short, checkable criteria a grader uses to judge a reply.
Reply with JSON only: {"instruction": "...", "rubric": ["...", "..."]}"""

WRITE_TASK_USER = """Task facts:
{facts}

Tool names that must NOT appear in the request: {forbidden}"""

JUDGE_NATURAL_SYSTEM = """You judge whether a request to a tool-using assistant reads like one a
real user of this service would write. Rate it from 1 to 5:
5: a person would write exactly this; 4: natural, a little stiff; 3: understandable, plainly
machine-made in places; 2: awkward or ungrammatical, template phrases, argument names instead of
words; 1: unreadable, contradictory or nonsensical for the service.
Judge the wording and whether the request makes sense for the service, not whether it is easy.
Give one short reason naming what reads badly (or "reads naturally")."""

JUDGE_NATURAL_USER = """Service: {service} — {description}

Request:
{instruction}"""
