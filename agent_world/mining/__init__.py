"""Stage 1: real tool ecosystems -> themes, taxonomy and relational databases."""
