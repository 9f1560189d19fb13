"""The record of one self-evolution round, as stored in the catalog (`Catalog.put_round`)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field


class CurvePoint(BaseModel):
    step: int
    reward: float
    loss: float | None = None


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
    diagnosis: dict[str, Any] = Field(default_factory=dict)  # Diagnosis.model_dump()
    diagnosis_text: str = ""
    target_error: str | None = None
    counts: dict[str, int] = Field(default_factory=dict)  # envs, tools, tasks by kind
    curve: list[CurvePoint] = Field(default_factory=list)  # training reward per step
    warm_start: list[float] = Field(default_factory=list)  # supervised loss per step before it
    seconds: dict[str, float] = Field(default_factory=dict)  # per stage

    def row(self) -> dict[str, Any]:
        """One line of the per-round table."""
        before, after = self.before.get("pass_rate"), self.after.get("pass_rate")
        te = self.target_error
        return {"round": self.round, "before": before, "after": after,
                "target_error": te or "-",
                "target_before": (self.before.get("errors") or {}).get(te, 0) if te else 0,
                "target_after": (self.after.get("errors") or {}).get(te, 0) if te else 0,
                "targeted_tasks": self.counts.get("targeted_tasks", 0),
                "train_tasks": self.counts.get("train_tasks", 0),
                "steps": len(self.curve), "checkpoint": self.checkpoint}


__all__ = ["CurvePoint", "RoundRecord"]
