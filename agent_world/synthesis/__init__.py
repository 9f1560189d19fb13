"""Stage 3: task synthesis -- candidates from walks and programs, phrasing, the trust gates, the
ReAct verifier."""
