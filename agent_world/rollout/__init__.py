"""One rollout step and one reward: tool view -> call -> observation, scored."""
