"""Fixtures several unit modules share."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_world.design.cross_validation import SandboxCompiler, cross_validate, validation_runtime
from agent_world.design.tool_designer import design_tools
from agent_world.envs import EnvRuntime, load_example
from agent_world.envs.catalog import Catalog
from agent_world.envs.spec import EnvSpec
from agent_world.mining.llm_miner import mine_theme
from agent_world.mining.sources import default_sources, read_source
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


SOURCES = ("book-lending-prd", "git", "sqlite", "time", "clinic-booking-openapi", "fetch")
BIKESHARE = Path(__file__).resolve().parents[1] / "fixtures" / "sources" / "unseen" / \
    "bikeshare_openapi.yaml"


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, EnvSpec]:
    """The default mine (iterations 3, seed 0) of the six default sources and the unseen
    bike-share OpenAPI, built offline: once a session, for every test of built tools."""
    home = tmp_path_factory.mktemp("home")
    refs = {r.name: r for r in default_sources(home)}
    compiler, runtime = SandboxCompiler(), validation_runtime()
    out = {}
    try:
        for name in (*SOURCES, "bikeshare"):
            doc = read_source(refs[name] if name in refs else f"file:{BIKESHARE}")
            spec = mine_theme(doc, iterations=3, seed=0).spec
            validation, spec_built, _ = cross_validate(spec, design_tools(spec, model=None),
                                                       compiler=compiler, runtime=runtime)
            assert spec_built is not None, validation.dropped
            out[name] = spec_built
    finally:
        compiler.close()
        runtime.close()
    return out


@pytest.fixture(scope="session")
def rt():
    runtime = EnvRuntime(tool_timeout_s=2.0)
    yield runtime
    runtime.close()
