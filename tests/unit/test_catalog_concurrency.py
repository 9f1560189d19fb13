"""The catalog shared by processes started at the same moment on a fresh home."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec


def _variant(spec: EnvSpec, k: int) -> EnvSpec:
    raw = json.loads(spec.to_json())
    raw["rows"]["users"].append({"id": 100 + k, "name": f"user {k}"})
    return EnvSpec.from_dict(raw)


def test_one_version_per_distinct_fingerprint(tmp_path, notes_spec):
    cat = Catalog(f"sqlite:///{tmp_path / 'c.sqlite'}")
    try:
        a, b = notes_spec, _variant(notes_spec, 1)
        assert [cat.put_env(s).version for s in (a, b, a, b, a)] == [1, 2, 1, 2, 1]
        assert [v for v, _, _ in cat.versions("notes")] == [1, 2]
        assert cat.get_env("notes").fingerprint == a.fingerprint  # the latest write wins
        assert cat.put_env(_variant(notes_spec, 2)).version == 3
    finally:
        cat.close()


def test_commands_started_together_on_a_fresh_home(tmp_path, notes_spec):
    """Was: 'table already exists' / IntegrityError tracebacks, lost imports."""
    home = tmp_path / "home"
    files = []
    for k in range(3):
        f = tmp_path / f"notes_{k}.json"
        f.write_text(_variant(notes_spec, k).to_json())
        files.append(f)
    env = {**os.environ, "AGENT_WORLD_HOME": str(home)}
    env.pop("AGENT_WORLD_CATALOG_URL", None)
    cli = [sys.executable, "-m", "agent_world.cli"]
    commands = [[*cli, "env", "list"] for _ in range(3)]
    commands += [[*cli, "env", "import", str(files[k % 3])] for k in range(5)]
    procs = [subprocess.Popen(c, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for c in commands]
    results = [(p.wait(timeout=240), p.stderr.read()) for p in procs]
    for p in procs:
        p.stdout.close()
        p.stderr.close()
    assert [rc for rc, _ in results] == [0] * len(commands), [e for _, e in results]
    cat = Catalog.open(home)
    try:
        fps = [fp for _, fp, _ in cat.versions("notes")]
        assert sorted(fps) == sorted({f.fingerprint for f in map(EnvSpec.load, files)})
        assert {"airline", "notes"} <= {e.name for e in cat.list_envs()}
    finally:
        cat.close()


def test_soak_of_parallel_writers(tmp_path):
    """The benchmark's soak, small: parallel imports, mine runs and tasks lose nothing."""
    from benchmarks.catalog_bench import soak

    r = soak(f"sqlite:///{tmp_path / 'soak.sqlite'}", procs=3, writes=12)
    assert (r["failures"], r["lost"], r["duplicated"]) == ([], 0, 0)
    assert r["ok"] == 36
