"""LangGraph state machines: mine (today); build, synthesize, evaluate, evolve follow."""
