"""Self-evolution: held-out split, evaluation, round records, the report."""
