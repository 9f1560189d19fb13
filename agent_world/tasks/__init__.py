"""Task model, tool-dependency graph, random walks, programmatic tasks, trust gates."""
