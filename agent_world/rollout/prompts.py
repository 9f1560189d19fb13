"""Prompts of the rollout: the judge that scores a final answer, the system prompt of an agent
whose library offers the tools natively. Kept apart from code."""

JUDGE_PROMPT = """You grade an agent's answer to a task it solved with tools.
Task: {instruction}
Rubric:
{rubric}
Reference answer: {reference}
Agent's tool calls:
{trace}
Agent's final answer: {answer}

Score how well the final answer meets the rubric and matches the reference (1 = fully correct,
0 = wrong or missing). Reply with JSON only: {{"score": <number between 0 and 1>}}"""

# System prompt of an agent whose tools are offered natively by its library (verifiers, TRL):
# the schemas travel with the request, so the prompt only states how an episode ends.
TOOL_AGENT_PROMPT = """You solve the user's task with the tools you are given. Call them as \
needed; when the task is done, reply with the final answer in plain text (no tool call)."""
