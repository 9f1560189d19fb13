"""Self-evolution: held-out split, evaluation records, the diagnosis, round records, the report."""
