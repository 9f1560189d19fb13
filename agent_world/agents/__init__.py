"""The agents: miner (today); tool designer, task synthesizer, ReAct verifier, diagnoser follow."""
