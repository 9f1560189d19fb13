"""Prompts of the training stage, kept apart from code."""

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
