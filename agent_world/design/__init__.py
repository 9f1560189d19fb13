"""Stage 2: tool design from behaviour contracts, cross-validated in the sandbox."""
