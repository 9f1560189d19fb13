"""Fixtures several unit modules share."""

from __future__ import annotations

import pytest

from agent_world.envs import EnvRuntime, load_example
from agent_world.envs.catalog import Catalog
from agent_world.synthesis.loop import SynthesisConfig, synthesize_env


@pytest.fixture(scope="session")
def examples_synthesized(tmp_path_factory):
    """Both bundled examples, 12 tasks each (what the main job asks per environment),
    synthesized once for the session in run "run-1": (catalog, {name: run summary})."""
    cat = Catalog.open(tmp_path_factory.mktemp("examples-synthesized"))
    stats = {}
    with EnvRuntime() as rt:
        for name in ("airline", "ecommerce"):
            spec = load_example(name)
            cat.put_env(spec, stage="example")
            stats[name] = synthesize_env(spec, SynthesisConfig(per_env=12), cat, rt,
                                         run_id="run-1")
    yield cat, stats
    cat.close()
