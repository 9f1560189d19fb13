from __future__ import annotations

import os
from pathlib import Path

import pytest

os.environ.setdefault("LANGSMITH_TRACING", "false")
os.environ.pop("AGENT_WORLD_MODEL", None)

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture(scope="session")
def notes_spec():
    from agent_world.envs.spec import EnvSpec

    return EnvSpec.load(FIXTURES / "notes_env.json")


@pytest.fixture(scope="module")
def runtime():
    from agent_world.envs.episode import EnvRuntime

    rt = EnvRuntime(tool_timeout_s=1.0)
    yield rt
    rt.close()


@pytest.fixture()
def home(tmp_path, monkeypatch):
    """An empty arena home for CLI/catalog tests."""
    monkeypatch.setenv("AGENT_WORLD_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("AGENT_WORLD_CATALOG_URL", raising=False)
    return tmp_path / "home"
