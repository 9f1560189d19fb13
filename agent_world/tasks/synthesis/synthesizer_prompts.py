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
