"""The record of one self-evolution round, as stored in the catalog (`Catalog.put_round`)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import BaseModel, Field


class CurvePoint(BaseModel):
    step: int
    reward: float
    loss: float | None = None
    kl: float | None = None
    pass_rate: float | None = None  # of the step's rollouts
    call_rate: float | None = None  # rollouts with at least one well-formed call


class RoundRecord(BaseModel):
    """Round r: the evaluation it started from, the diagnosis, the tasks it added, the training
    run, the evaluation after it and the policy checkpoint it left."""

    thread: str
    round: int
    status: Literal["running", "done"] = "running"
    policy_before: str = ""
    checkpoint: str = ""  # the policy after this round
    before_eval: str = ""  # evaluation ids in the catalog
    after_eval: str = ""
    before: dict[str, Any] = Field(default_factory=dict)  # EvalReport.summary()
    after: dict[str, Any] = Field(default_factory=dict)
    warm_eval: str = ""  # after the supervised warm start, before GRPO ("": not measured)
    warm: dict[str, Any] = Field(default_factory=dict)
    diagnosed_eval: str = ""  # the evaluation the diagnosis read
    fresh_before: dict[str, Any] = Field(default_factory=dict)  # its fresh set, when it was one
    fresh_after_eval: str = ""  # a fresh held-out set, evaluated after this round
    fresh_after: dict[str, Any] = Field(default_factory=dict)
    settings: dict[str, Any] = Field(default_factory=dict)  # seed, policy, sizes, versions
    links: dict[str, str] = Field(default_factory=dict)  # LangSmith: what → URL (tracing on)
    diagnosis: dict[str, Any] = Field(default_factory=dict)  # Diagnosis.model_dump()
    diagnosis_text: str = ""
    target_error: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)  # envs, tools, tasks by kind
    curve: list[CurvePoint] = Field(default_factory=list)  # training reward per step
    warm_start: list[float] = Field(default_factory=list)  # supervised loss per step before it
    seconds: dict[str, float] = Field(default_factory=dict)  # per stage

    def row(self) -> dict[str, Any]:
        """One line of the per-round table (rates with their counts, for the intervals)."""
        before, after = self.before.get("pass_rate"), self.after.get("pass_rate")
        te = self.target_error
        count = lambda d: (d.get("passes"), d.get("attempts")) if d else None  # noqa: E731
        return {"round": self.round, "before": before, "after": after,
                "before_n": count(self.before), "after_n": count(self.after),
                "warm": self.warm.get("pass_rate") if self.warm else None,
                "warm_n": count(self.warm),
                "fresh_after": self.fresh_after.get("pass_rate") if self.fresh_after else None,
                "fresh_after_n": count(self.fresh_after),
                "target_error": te or "-",
                "target_before": (self.before.get("errors") or {}).get(te, 0) if te else 0,
                "target_after": (self.after.get("errors") or {}).get(te, 0) if te else 0,
                "targeted_tasks": self.counts.get("targeted_tasks", 0),
                # what this round trained on (its mix), not the replay pool so far
                "train_tasks": self.counts.get("trained_on", self.counts.get("train_tasks", 0)),
                "steps": len(self.curve), "checkpoint": self.checkpoint}


def wilson(passes: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a pass rate (95 % by default): (low, high), (0, 1) for n=0.
    Unlike the normal approximation it stays inside [0, 1] and is not zero-width at 0 or n."""
    if n <= 0:
        return 0.0, 1.0
    p = passes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # the interval holds p; rounding alone put its ends past p at 0/n and n/n (0/48: 1e-17)
    return min(p, max(0.0, centre - half)), max(p, min(1.0, centre + half))


def rate_text(passes: int | None, n: int | None) -> str:
    """"17 % (4/24; 95 % CI 7–37 %)", or "-" when there was no evaluation."""
    if passes is None or not n:
        return "-"
    lo, hi = wilson(int(passes), int(n))
    return f"{passes / n:.0%} ({passes}/{n}; 95% CI {lo:.0%}–{hi:.0%})"


__all__ = ["CurvePoint", "RoundRecord", "rate_text", "wilson"]
