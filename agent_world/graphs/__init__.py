"""LangGraph graphs: the pipeline (mine, build, synthesize, evaluate, evolve) and each agent alone."""
