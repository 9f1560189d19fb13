"""Agent-World arena: a self-evolving training arena for tool-using LLM agents."""

__version__ = "0.1.0"
