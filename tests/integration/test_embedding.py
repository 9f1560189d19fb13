"""The embedding API: `import agent_world` stays cheap, the names resolve, and every script in
examples/ runs as another app would run it."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import agent_world

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], home: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, AGENT_WORLD_HOME=str(home))
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_import_is_lazy_and_every_name_resolves(tmp_path):
    done = _run(["-c", "import sys, agent_world; "
                 "print(sorted(m for m in sys.modules if m.startswith('agent_world.')))"],
                tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "['agent_world.version']"  # the package and its version only
    assert set(agent_world.__all__) == {"__version__", *agent_world._EXPORTS}
    for name in agent_world.__all__:
        assert getattr(agent_world, name) is not None, name
    with pytest.raises(AttributeError):
        agent_world.no_such_name  # noqa: B018


def test_embed_episode_example(tmp_path):
    done = _run(["examples/embed_episode.py"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "add_baggage: ok" in done.stdout
    assert "cancel_reservation: refused" in done.stdout
    assert "'passengers': {'inserted': 0, 'updated': 1, 'deleted': 0}" in done.stdout


def test_embed_tasks_and_attempt_example(tmp_path):
    done = _run(["examples/embed_tasks_and_attempt.py"], tmp_path)
    assert done.returncode == 0, done.stderr[-2000:]
    assert "synthesized 2 task(s)" in done.stdout
    assert "passed=" in done.stdout and "check=" in done.stdout
    # the tasks went to the app's catalog (AGENT_WORLD_HOME), not elsewhere
    from agent_world.envs.catalog import Catalog

    cat = Catalog.open(tmp_path)
    try:
        assert len(cat.list_tasks()) == 2
    finally:
        cat.close()
