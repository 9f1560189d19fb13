"""The catalog: where environments (with versions), themes, tasks, runs and ledgers live.

SQLAlchemy ORM over a SQLite file by default (`<home>/catalog.sqlite`); any SQLAlchemy URL works
(`postgresql+psycopg://...` for a shared deployment). Every write is one transaction. Big
artefacts (specs, task payloads) are JSON documents in a column; graph state refers to them by
name, fingerprint or id. The tables live in `catalog_tables`; the engine's set-up and the retry
policy in `catalog_engine`.
"""

from __future__ import annotations

import difflib
import json
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any, TypeVar

import sqlalchemy as sa
from sqlalchemy.orm import Session, sessionmaker

from agent_world.config import catalog_url, protect, resolve_home
from agent_world.envs.catalog_engine import (
    _RETRIES,
    _backoff,
    _reason,
    _sqlite_folder,
    _sqlite_pragmas,
    _transient,
)
from agent_world.envs.catalog_tables import (
    AttemptRow,
    Base,
    EnvironmentRow,
    EnvSummary,
    EnvVersionRow,
    EvaluationRow,
    LedgerEntry,
    LedgerRow,
    RoundRow,
    RunRow,
    SplitRow,
    TaskRow,
    ThemeRow,
    _now,
    theme_key,
)
from agent_world.envs.spec import EnvSpec, Theme
from agent_world.errors import CatalogError

T = TypeVar("T")


class Catalog:
    """All persistent arena state behind one SQLAlchemy engine. Safe to share between
    processes: every write is one transaction, retried when another writer conflicts."""

    def __init__(self, url: str):
        self.url = url
        try:
            self.engine = sa.create_engine(url)
        except (sa.exc.ArgumentError, ImportError) as exc:
            raise CatalogError(f"cannot open catalog {url!r}: {exc}") from None
        if self.engine.dialect.name == "sqlite":
            _sqlite_pragmas(self.engine)
            folder = _sqlite_folder(self.engine.url.database)
            if folder is not None:  # sandboxed code must never read the gold answers
                protect(folder)
        self._create_schema()
        self._sessions = sessionmaker(self.engine, expire_on_commit=False)

    def _create_schema(self) -> None:
        """Create missing tables. Several processes may open a fresh catalog at once: whoever
        loses the race to create a table sees "already exists" and simply checks again."""
        for attempt in range(_RETRIES):
            try:
                Base.metadata.create_all(self.engine)
                return
            except sa.exc.DBAPIError as exc:
                if attempt + 1 < _RETRIES and _transient(exc):
                    _backoff(attempt)
                    continue
                raise CatalogError(f"cannot open catalog {self.url!r}: "
                                   f"{_reason(exc)}") from None

    @classmethod
    def open(cls, home: str | Path | None = None) -> Catalog:
        return cls(catalog_url(resolve_home(home)))

    @contextmanager
    def _tx(self) -> Iterator[Session]:
        """A read transaction (or a single write that needs no retry)."""
        try:
            with self._sessions.begin() as session:
                yield session
        except sa.exc.DBAPIError as exc:
            raise CatalogError(f"catalog {self.url!r}: {_reason(exc)}") from None

    def _write(self, fn: Callable[[Session], T]) -> T:
        """Run `fn` in one write transaction, retried from the start when another writer got
        there first (see _TRANSIENT). On SQLite the transaction takes the write lock at BEGIN,
        so a read-then-write never fails half-way on a lock upgrade."""
        for attempt in range(_RETRIES):
            try:
                with self._sessions.begin() as session:
                    session.connection(execution_options={"catalog_write": True})
                    return fn(session)
            except sa.exc.DBAPIError as exc:
                if attempt + 1 < _RETRIES and _transient(exc):
                    _backoff(attempt)
                    continue
                raise CatalogError(f"catalog {self.url!r}: {_reason(exc)}") from None
        raise AssertionError("unreachable")

    def close(self) -> None:
        self.engine.dispose()

    def __enter__(self) -> Catalog:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- environments -----------------------------------------------------------------------
    def put_env(self, spec: EnvSpec, stage: str = "manual") -> EnvSummary:
        """Store `spec` under its name. Content already stored under that name (same
        fingerprint, any version) keeps its version and becomes the latest again; new content
        becomes a new version. However many writers race, one fingerprint gets one version."""
        fp = spec.fingerprint

        def write(s: Session) -> EnvSummary:
            env = s.get(EnvironmentRow, spec.name)
            if env is not None:
                same = s.scalars(sa.select(EnvVersionRow).where(
                    EnvVersionRow.env_name == spec.name, EnvVersionRow.fingerprint == fp)
                    .order_by(EnvVersionRow.version.desc()).limit(1)).one_or_none()
                if same is not None:
                    if env.latest_version != same.version:
                        env.latest_version = same.version
                        env.stage = same.stage
                    return self._summary(env, same)
                version = (s.scalar(sa.select(sa.func.max(EnvVersionRow.version)).where(
                    EnvVersionRow.env_name == spec.name)) or 0) + 1
                env.latest_version = version
                env.stage = stage
            else:
                version = 1
                env = EnvironmentRow(name=spec.name, latest_version=1, stage=stage)
                s.add(env)
                s.flush()  # the version row references it
            stored = spec.model_copy(update={"version": version})
            row = EnvVersionRow(env_name=spec.name, version=version, fingerprint=fp, stage=stage,
                                spec_json=stored.to_json(indent=None), stats=spec.stats())
            s.add(row)
            s.flush()
            return self._summary(env, row)

        return self._write(write)

    def remove_env(self, name: str) -> int:
        """Delete an environment with all its versions; returns how many versions went."""
        def write(s: Session) -> int:
            env = s.get(EnvironmentRow, name)
            if env is None:
                raise CatalogError(self._unknown(s, name))
            n = s.execute(sa.delete(EnvVersionRow).where(EnvVersionRow.env_name == name)).rowcount
            s.execute(sa.update(ThemeRow).where(ThemeRow.env_name == name).values(env_name=None))
            s.delete(env)
            return n

        return self._write(write)

    def get_env(self, name: str, version: int | None = None) -> EnvSpec:
        with self._tx() as s:
            env = s.get(EnvironmentRow, name)
            if env is None:
                raise CatalogError(self._unknown(s, name))
            v = version or env.latest_version
            row = s.scalars(sa.select(EnvVersionRow).where(
                EnvVersionRow.env_name == name, EnvVersionRow.version == v)).one_or_none()
            if row is None:
                raise CatalogError(f"environment {name!r} has no version {v}")
            return EnvSpec.from_json(row.spec_json, origin=f"catalog:{name}@{v}")

    @staticmethod
    def _unknown(s: Session, name: str) -> str:
        names = list(s.scalars(sa.select(EnvironmentRow.name).order_by(EnvironmentRow.name)))
        close = difflib.get_close_matches(name, names, n=1, cutoff=0.6)
        if close:
            return f"no environment named {name!r} in the catalog (did you mean {close[0]!r}?)"
        known = ", ".join(names[:20]) + (", ..." if len(names) > 20 else "")
        return f"no environment named {name!r} in the catalog (known: {known or 'none'})"

    def get_env_at_stage(self, name: str, stage: str) -> EnvSpec | None:
        """The latest version of `name` stored with `stage` (e.g. the `mined` version the
        build stage designs tools for), or None."""
        with self._tx() as s:
            row = s.scalars(sa.select(EnvVersionRow).where(
                EnvVersionRow.env_name == name, EnvVersionRow.stage == stage)
                .order_by(EnvVersionRow.version.desc()).limit(1)).one_or_none()
            return EnvSpec.from_json(row.spec_json, origin=f"catalog:{name}@{row.version}") \
                if row else None

    def find_env(self, fingerprint: str) -> EnvSpec | None:
        with self._tx() as s:
            row = s.scalars(sa.select(EnvVersionRow).where(
                EnvVersionRow.fingerprint == fingerprint).limit(1)).one_or_none()
            return EnvSpec.from_json(row.spec_json) if row else None

    def has_env(self, name: str) -> bool:
        with self._tx() as s:
            return s.get(EnvironmentRow, name) is not None

    def list_envs(self, stage: str | None = None) -> list[EnvSummary]:
        with self._tx() as s:
            q = (sa.select(EnvironmentRow, EnvVersionRow)
                 .join(EnvVersionRow, sa.and_(EnvVersionRow.env_name == EnvironmentRow.name,
                                              EnvVersionRow.version == EnvironmentRow.latest_version))
                 .order_by(EnvironmentRow.name))
            if stage:
                q = q.where(EnvironmentRow.stage == stage)
            return [self._summary(e, v) for e, v in s.execute(q).all()]

    def versions(self, name: str) -> list[tuple[int, str, datetime]]:
        with self._tx() as s:
            rows = s.scalars(sa.select(EnvVersionRow).where(EnvVersionRow.env_name == name)
                             .order_by(EnvVersionRow.version))
            return [(r.version, r.fingerprint, r.created_at) for r in rows]

    @staticmethod
    def _summary(env: EnvironmentRow, row: EnvVersionRow) -> EnvSummary:
        spec = json.loads(row.spec_json)
        tax = spec["theme"]["taxonomy"]
        return EnvSummary(name=env.name, version=row.version, stage=row.stage,
                          fingerprint=row.fingerprint, theme=spec["theme"]["name"],
                          taxonomy=f"{tax['l1']} / {tax['l2']} / {tax['l3']}", stats=row.stats)

    # -- themes -----------------------------------------------------------------------------
    def put_theme(self, theme: Theme, env_name: str | None = None,
                  payload: dict[str, Any] | None = None, key: str | None = None
                  ) -> tuple[int, bool]:
        """Insert or update a theme; returns (id, created). `key` identifies it (mining uses
        the source's content key; default: kind, reference and name). Re-mining the same
        source updates the existing row instead of adding a duplicate (and shows it again)."""
        key = key or theme_key(theme)
        tax = theme.taxonomy

        def write(s: Session) -> tuple[int, bool]:
            row = s.scalars(sa.select(ThemeRow).where(ThemeRow.key == key)).one_or_none()
            created = row is None
            if row is None:
                row = ThemeRow(key=key)
                s.add(row)
            row.name, row.l1, row.l2, row.l3 = theme.name, tax.l1, tax.l2, tax.l3
            row.source_kind, row.source_ref = theme.source_kind, theme.source_ref
            row.env_name = env_name
            row.payload = {"theme": theme.model_dump(mode="json"), **(payload or {})}
            s.flush()
            return row.id, created

        return self._write(write)

    def merge_theme(self, theme: Theme, into: str, key: str | None = None) -> None:
        """Mark `theme` (stored under `key`) a near-duplicate of the theme named `into`;
        listings hide it."""
        def write(s: Session) -> None:
            row = s.scalars(sa.select(ThemeRow).where(ThemeRow.key == (key or theme_key(theme)))
                            ).one_or_none()
            if row is None:
                raise CatalogError(f"no theme {theme.name!r} to merge")
            row.payload = {**row.payload, "merged_into": into}

        self._write(write)

    def claim_env_name(self, base: str, key: str, theme: Theme) -> str:
        """The environment name for the theme keyed `key`, decided in one write transaction:
        the name it got before, else `base` or the first free `base_2`, `base_3`, ... (free:
        no environment and no other theme holds it). Until its first `put_theme` the claimed
        row is pending and hidden from listings."""
        def write(s: Session) -> str:
            row = s.scalars(sa.select(ThemeRow).where(ThemeRow.key == key)).one_or_none()
            if row is not None and row.env_name:
                return row.env_name
            n = 1
            while True:
                name = base if n == 1 else f"{base}_{n}"
                taken = s.get(EnvironmentRow, name) is not None or s.scalar(
                    sa.select(sa.func.count()).select_from(ThemeRow).where(
                        ThemeRow.env_name == name, ThemeRow.key != key))
                if not taken:
                    break
                n += 1
            if row is None:
                tax = theme.taxonomy
                row = ThemeRow(key=key, name=theme.name, l1=tax.l1, l2=tax.l2, l3=tax.l3,
                               source_kind=theme.source_kind, source_ref=theme.source_ref,
                               payload={"pending": True})
                s.add(row)
            row.env_name = name
            return name

        return self._write(write)

    def find_theme(self, key: str | None = None, env_name: str | None = None
                   ) -> dict[str, Any] | None:
        """The theme stored under `key`, or the one whose environment is `env_name`."""
        with self._tx() as s:
            q = sa.select(ThemeRow)
            q = q.where(ThemeRow.key == key) if key else q.where(ThemeRow.env_name == env_name)
            r = s.scalars(q.limit(1)).one_or_none()
            return None if r is None else {"id": r.id, "key": r.key, "name": r.name,
                                           "env_name": r.env_name, "payload": r.payload}

    def list_themes(self, include_merged: bool = False) -> list[dict[str, Any]]:
        with self._tx() as s:
            rows = s.scalars(sa.select(ThemeRow).order_by(ThemeRow.l1, ThemeRow.l2, ThemeRow.l3))
            if not include_merged:
                rows = [r for r in rows if not r.payload.get("merged_into")]
            rows = [r for r in rows if not r.payload.get("pending")]
            return [{"id": r.id, "name": r.name, "l1": r.l1, "l2": r.l2, "l3": r.l3,
                     "source_kind": r.source_kind, "source_ref": r.source_ref,
                     "env_name": r.env_name, "payload": r.payload} for r in rows]

    # -- tasks ------------------------------------------------------------------------------
    def put_task(self, task_id: str, env_fingerprint: str, kind: str,
                 payload: dict[str, Any]) -> None:
        self._write(lambda s: s.merge(TaskRow(id=task_id, env_fingerprint=env_fingerprint,
                                              kind=kind, payload=payload)))

    def list_tasks(self, env_fingerprint: str | None = None) -> list[dict[str, Any]]:
        with self._tx() as s:
            q = sa.select(TaskRow).order_by(TaskRow.created_at)
            if env_fingerprint:
                q = q.where(TaskRow.env_fingerprint == env_fingerprint)
            return [{"id": r.id, "env_fingerprint": r.env_fingerprint, "kind": r.kind,
                     "payload": r.payload} for r in s.scalars(q)]

    def get_task(self, task_id: str) -> dict[str, Any] | None:
        """One task by id, or by a unique id prefix (None: no such task)."""
        with self._tx() as s:
            row = s.get(TaskRow, task_id)
            if row is None and task_id:
                rows = list(s.scalars(sa.select(TaskRow).where(
                    TaskRow.id.startswith(task_id, autoescape=True)).limit(2)))
                row = rows[0] if len(rows) == 1 else None
            return None if row is None else {"id": row.id, "env_fingerprint": row.env_fingerprint,
                                             "kind": row.kind, "payload": row.payload}

    # -- runs and the ledger ----------------------------------------------------------------
    def start_run(self, kind: str, run_id: str | None = None,
                  summary: dict[str, Any] | None = None) -> str:
        run_id = run_id or uuid.uuid4().hex[:16]

        def write(s: Session) -> None:
            row = s.get(RunRow, run_id)
            if row is None:
                s.add(RunRow(id=run_id, kind=kind, summary=summary or {}))
            else:  # a resumed run
                row.status, row.finished_at = "running", None

        self._write(write)
        return run_id

    def finish_run(self, run_id: str, status: str = "done",
                   summary: dict[str, Any] | None = None) -> None:
        def write(s: Session) -> None:
            row = s.get(RunRow, run_id)
            if row is None:
                raise CatalogError(f"no run {run_id!r}")
            row.status, row.finished_at = status, _now()
            row.summary = {**row.summary, **(summary or {})}

        self._write(write)

    def get_run(self, run_id: str) -> dict[str, Any] | None:
        with self._tx() as s:
            r = s.get(RunRow, run_id)
            return None if r is None else {"id": r.id, "kind": r.kind, "status": r.status,
                                           "started_at": r.started_at,
                                           "finished_at": r.finished_at, "summary": r.summary}

    def list_runs(self, kind: str | None = None, limit: int = 50) -> list[dict[str, Any]]:
        """The most recent runs first."""
        with self._tx() as s:
            q = sa.select(RunRow).order_by(RunRow.started_at.desc()).limit(limit)
            if kind:
                q = q.where(RunRow.kind == kind)
            return [{"id": r.id, "kind": r.kind, "status": r.status, "started_at": r.started_at,
                     "finished_at": r.finished_at, "summary": r.summary} for r in s.scalars(q)]

    def record(self, stage: str, subject: str, reason: str, run_id: str | None = None,
               payload: dict[str, Any] | None = None) -> None:
        """Add a ledger entry: something rejected or failed, and why."""
        self._write(lambda s: s.add(LedgerRow(stage=stage, subject=subject, reason=reason,
                                              run_id=run_id, payload=payload or {})))

    def ledger(self, stage: str | None = None, run_id: str | None = None) -> list[LedgerEntry]:
        with self._tx() as s:
            q = sa.select(LedgerRow).order_by(LedgerRow.id)
            if stage:
                q = q.where(LedgerRow.stage == stage)
            if run_id:
                q = q.where(LedgerRow.run_id == run_id)
            return [LedgerEntry(stage=r.stage, subject=r.subject, reason=r.reason,
                                run_id=r.run_id, payload=r.payload, created_at=r.created_at)
                    for r in s.scalars(q)]

    # -- held-out split ---------------------------------------------------------------------
    def assign_split(self, assignments: dict[str, str]) -> dict[str, str]:
        """Record env → "train"/"heldout" for environments not assigned yet; an environment
        keeps its first split forever (held-out never leaks into training). Returns all."""
        bad = {v for v in assignments.values()} - {"train", "heldout"}
        if bad:
            raise CatalogError(f"unknown split(s) {sorted(bad)}; use 'train' or 'heldout'")
        with self._tx() as s:
            known = {r.env_name for r in s.scalars(sa.select(SplitRow))}
            for name, split in sorted(assignments.items()):
                if name not in known:
                    s.add(SplitRow(env_name=name, split=split))
        return self.splits()

    def splits(self) -> dict[str, str]:
        with self._tx() as s:
            return {r.env_name: r.split
                    for r in s.scalars(sa.select(SplitRow).order_by(SplitRow.env_name))}

    # -- evaluations ------------------------------------------------------------------------
    def put_evaluation(self, evaluation_id: str, attempts: list[dict[str, Any]],
                       summary: dict[str, Any], label: str = "", policy: str = "") -> None:
        """Store an evaluation and its attempts (each a dict with trajectory_id, task_id,
        env_name, passed, reward, error_class, ...; "trajectory" holds the trace). Storing the
        same id again replaces it as a whole, so a resumed evaluation never duplicates."""
        with self._tx() as s:
            old = s.get(EvaluationRow, evaluation_id)
            if old is not None:
                s.execute(sa.delete(AttemptRow).where(AttemptRow.evaluation_id == evaluation_id))
                s.delete(old)
                s.flush()
            s.add(EvaluationRow(id=evaluation_id, label=label, policy=policy, summary=summary))
            s.flush()
            for a in attempts:
                s.add(AttemptRow(id=a["trajectory_id"], evaluation_id=evaluation_id,
                                 task_id=a["task_id"], env_name=a["env_name"],
                                 passed=bool(a["passed"]), reward=float(a["reward"]),
                                 error_class=a.get("error_class"), payload=a))

    def get_evaluation(self, evaluation_id: str) -> dict[str, Any] | None:
        with self._tx() as s:
            r = s.get(EvaluationRow, evaluation_id)
            return None if r is None else {"id": r.id, "label": r.label, "policy": r.policy,
                                           "summary": r.summary, "created_at": r.created_at}

    def list_evaluations(self) -> list[dict[str, Any]]:
        with self._tx() as s:
            return [{"id": r.id, "label": r.label, "policy": r.policy, "summary": r.summary,
                     "created_at": r.created_at}
                    for r in s.scalars(sa.select(EvaluationRow).order_by(EvaluationRow.created_at))]

    def evaluation_attempts(self, evaluation_id: str, failed_only: bool = False
                            ) -> list[dict[str, Any]]:
        """The attempts of an evaluation (payloads, traces included)."""
        with self._tx() as s:
            q = sa.select(AttemptRow).where(AttemptRow.evaluation_id == evaluation_id)
            if failed_only:
                q = q.where(AttemptRow.passed.is_(False))
            return [r.payload for r in s.scalars(q.order_by(AttemptRow.id))]

    # -- self-evolution rounds --------------------------------------------------------------
    def put_round(self, thread: str, round_no: int, record: dict[str, Any]) -> None:
        """Insert or replace the record of round `round_no` of `thread` (idempotent)."""
        with self._tx() as s:
            row = s.scalars(sa.select(RoundRow).where(RoundRow.thread == thread,
                                                      RoundRow.round == round_no)).one_or_none()
            if row is None:
                s.add(RoundRow(thread=thread, round=round_no, record=record))
            else:
                row.record = record

    def list_rounds(self, thread: str | None = None) -> list[dict[str, Any]]:
        with self._tx() as s:
            q = sa.select(RoundRow).order_by(RoundRow.thread, RoundRow.round)
            if thread:
                q = q.where(RoundRow.thread == thread)
            return [{"thread": r.thread, "round": r.round, "record": r.record,
                     "created_at": r.created_at} for r in s.scalars(q)]
