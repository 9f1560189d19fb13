"""Rows a fresh row factory makes for one table of given columns (an integer id first)."""

from __future__ import annotations

from typing import Any

from agent_world.envs.table_spec import ColumnSpec, TableSpec
from agent_world.mining.offline.rows import RowFactory


def made_rows(name: str, columns: list[ColumnSpec], n: int, seed: int = 0,
              **factory: Any) -> list[dict[str, Any]]:
    table = TableSpec(name=name, columns=[
        ColumnSpec(name="id", type="integer", primary_key=True), *columns])
    f = RowFactory([table], None, seed=seed, **factory)
    return [f.make(name) for _ in range(n)]
