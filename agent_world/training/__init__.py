"""Rollouts, rewards, embedded GRPO and the OpenRLHF bridge."""
