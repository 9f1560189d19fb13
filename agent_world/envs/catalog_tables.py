"""The catalog's tables (SQLAlchemy ORM rows) and the records its readers get back.

`agent_world.envs.catalog.Catalog` reads and writes these; nothing else touches the rows.
"""

from __future__ import annotations

import hashlib
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from pydantic import BaseModel
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from agent_world.envs.spec import Theme


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


class Base(DeclarativeBase):
    type_annotation_map = {dict[str, Any]: sa.JSON, list[Any]: sa.JSON}


class EnvironmentRow(Base):
    __tablename__ = "environments"
    name: Mapped[str] = mapped_column(sa.String(200), primary_key=True)
    latest_version: Mapped[int] = mapped_column(default=1)
    stage: Mapped[str] = mapped_column(sa.String(40), default="manual")
    created_at: Mapped[datetime] = mapped_column(default=_now)
    updated_at: Mapped[datetime] = mapped_column(default=_now, onupdate=_now)


class EnvVersionRow(Base):
    __tablename__ = "env_versions"
    __table_args__ = (sa.UniqueConstraint("env_name", "version"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    env_name: Mapped[str] = mapped_column(sa.ForeignKey("environments.name", ondelete="CASCADE"))
    version: Mapped[int]
    fingerprint: Mapped[str] = mapped_column(sa.String(64), index=True)
    stage: Mapped[str] = mapped_column(sa.String(40))
    spec_json: Mapped[str] = mapped_column(sa.Text)
    stats: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class ThemeRow(Base):
    __tablename__ = "themes"
    id: Mapped[int] = mapped_column(primary_key=True)
    key: Mapped[str] = mapped_column(sa.String(64), unique=True)  # idempotent re-mining
    name: Mapped[str] = mapped_column(sa.String(200))
    l1: Mapped[str] = mapped_column(sa.String(200))
    l2: Mapped[str] = mapped_column(sa.String(200))
    l3: Mapped[str] = mapped_column(sa.String(200))
    source_kind: Mapped[str] = mapped_column(sa.String(40))
    source_ref: Mapped[str] = mapped_column(sa.Text)
    env_name: Mapped[str | None] = mapped_column(sa.String(200), nullable=True)
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class TaskRow(Base):
    __tablename__ = "tasks"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    env_fingerprint: Mapped[str] = mapped_column(sa.String(64), index=True)
    kind: Mapped[str] = mapped_column(sa.String(40))
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class RunRow(Base):
    __tablename__ = "runs"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    kind: Mapped[str] = mapped_column(sa.String(40))
    status: Mapped[str] = mapped_column(sa.String(20), default="running")
    started_at: Mapped[datetime] = mapped_column(default=_now)
    finished_at: Mapped[datetime | None] = mapped_column(nullable=True)
    summary: Mapped[dict[str, Any]] = mapped_column(default=dict)


class LedgerRow(Base):
    __tablename__ = "ledger"
    id: Mapped[int] = mapped_column(primary_key=True)
    run_id: Mapped[str | None] = mapped_column(sa.String(64), nullable=True, index=True)
    stage: Mapped[str] = mapped_column(sa.String(40), index=True)
    subject: Mapped[str] = mapped_column(sa.Text)
    reason: Mapped[str] = mapped_column(sa.Text)
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class SplitRow(Base):
    """Which environments are held out from training (assigned once, never moved)."""

    __tablename__ = "env_splits"
    env_name: Mapped[str] = mapped_column(sa.String(200), primary_key=True)
    split: Mapped[str] = mapped_column(sa.String(20))  # "train" | "heldout"
    created_at: Mapped[datetime] = mapped_column(default=_now)


class EvaluationRow(Base):
    """One evaluation of a policy: its summary (pass rates sliced) and its attempts."""

    __tablename__ = "evaluations"
    id: Mapped[str] = mapped_column(sa.String(64), primary_key=True)
    label: Mapped[str] = mapped_column(sa.String(200), default="")
    policy: Mapped[str] = mapped_column(sa.Text, default="")
    summary: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)


class AttemptRow(Base):
    """One scored attempt of an evaluation, with its full trace (payload["trajectory"])."""

    __tablename__ = "eval_attempts"
    id: Mapped[str] = mapped_column(sa.String(128), primary_key=True)  # the trajectory id
    evaluation_id: Mapped[str] = mapped_column(
        sa.ForeignKey("evaluations.id", ondelete="CASCADE"), index=True)
    task_id: Mapped[str] = mapped_column(sa.String(64), index=True)
    env_name: Mapped[str] = mapped_column(sa.String(200), index=True)
    passed: Mapped[bool]
    reward: Mapped[float]
    error_class: Mapped[str | None] = mapped_column(sa.String(40), nullable=True)
    payload: Mapped[dict[str, Any]] = mapped_column(default=dict)


class RoundRow(Base):
    """One self-evolution round of a thread: diagnosis, counts, curve, pass rates, checkpoint."""

    __tablename__ = "rounds"
    __table_args__ = (sa.UniqueConstraint("thread", "round"),)
    id: Mapped[int] = mapped_column(primary_key=True)
    thread: Mapped[str] = mapped_column(sa.String(200), index=True)
    round: Mapped[int]
    record: Mapped[dict[str, Any]] = mapped_column(default=dict)
    created_at: Mapped[datetime] = mapped_column(default=_now)
    updated_at: Mapped[datetime] = mapped_column(default=_now, onupdate=_now)


class EnvSummary(BaseModel):
    name: str
    version: int
    stage: str
    fingerprint: str
    theme: str
    taxonomy: str
    stats: dict[str, Any]


class LedgerEntry(BaseModel):
    stage: str
    subject: str
    reason: str
    run_id: str | None = None
    payload: dict[str, Any] = {}
    created_at: datetime


def theme_key(theme: Theme) -> str:
    raw = f"{theme.source_kind}\x00{theme.source_ref}\x00{theme.name}"
    return hashlib.sha256(raw.encode()).hexdigest()[:32]
