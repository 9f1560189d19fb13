"""`train(..., warm_start_steps=N)`: a fresh run fine-tunes on the tasks' gold solutions first."""

from __future__ import annotations

from agent_world.training import api, sft
from agent_world.training.drills import drill_tasks
from agent_world.training.grpo import GRPOConfig


def test_warm_start_fits_gold_solutions_before_grpo(tmp_path, runtime, monkeypatch):
    tasks = drill_tasks("cancel", limit=3, runtime=runtime)
    losses: list[list[float]] = []
    real = sft.sft

    def recording(*args, **kwargs):
        losses.append(real(*args, **kwargs))
        return losses[-1]

    monkeypatch.setattr(sft, "sft", recording)
    config = GRPOConfig(tasks_per_step=1, group_size=2, max_turns=2, max_new_tokens=8,
                        device="cpu")
    out = api.train("tiny", tasks, tmp_path / "run", steps=1, config=config,
                    warm_start_steps=12)
    assert out.checkpoint.is_dir() and len(out.curve) == 1
    assert len(losses) == 1 and len(losses[0]) == 12
    first, last = losses[0][:3], losses[0][-3:]
    assert sum(last) < sum(first)  # the gold conversations were actually fitted
    # a resumed run does not warm-start again
    api.train("tiny", tasks, tmp_path / "run", steps=2, config=config, warm_start_steps=12)
    assert len(losses) == 1
    # the checkpoint says how the policy was prompted: evaluation loads it the same way
    policy = api.load_policy(str(out.checkpoint))
    assert policy.compact_tools is True and policy.max_new_tokens == 8
    assert policy.max_total_tokens == config.max_total_tokens
