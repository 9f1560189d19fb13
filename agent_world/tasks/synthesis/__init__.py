"""Stage 3: task synthesis -- candidates, phrasing, gates, the ReAct verifier."""
