"""Fixtures several unit modules share."""

from __future__ import annotations

import json
import shutil
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
from tests.conftest import made_once


@pytest.fixture(scope="session")
def examples_synthesized(tmp_path_factory):
    """Both bundled examples, 12 tasks each (what the main job asks per environment),
    synthesized once per test run in run "run-1" (`made_once`); each worker gets its own copy
    of the catalog: (catalog, {name: run summary})."""

    def make(folder: Path) -> None:
        stats = {}
        with EnvRuntime() as rt, Catalog.open(folder / "home") as cat:
            for name in ("airline", "ecommerce"):
                spec = load_example(name)
                cat.put_env(spec, stage="example")
                stats[name] = synthesize_env(spec, SynthesisConfig(per_env=12), cat, rt,
                                             run_id="run-1")
        (folder / "stats.json").write_text(json.dumps(stats, default=str))

    made = made_once(tmp_path_factory, "examples-synthesized", make)
    home = tmp_path_factory.mktemp("examples-synthesized") / "home"
    shutil.copytree(made / "home", home)
    cat = Catalog.open(home)
    yield cat, json.loads((made / "stats.json").read_text())
    cat.close()


SOURCES = ("book-lending-prd", "git", "sqlite", "time", "clinic-booking-openapi", "fetch")
BIKESHARE = Path(__file__).resolve().parents[1] / "fixtures" / "sources" / "unseen" / \
    "bikeshare_openapi.yaml"


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> dict[str, EnvSpec]:
    """The default mine (iterations 3, seed 0) of the six default sources and the unseen
    bike-share OpenAPI, built offline: once per test run (`made_once`), for every test of
    built tools."""

    def make(folder: Path) -> None:
        refs = {r.name: r for r in default_sources(folder / "home")}
        compiler, runtime = SandboxCompiler(), validation_runtime()
        try:
            for name in (*SOURCES, "bikeshare"):
                doc = read_source(refs[name] if name in refs else f"file:{BIKESHARE}")
                spec = mine_theme(doc, iterations=3, seed=0).spec
                validation, spec_built, _ = cross_validate(
                    spec, design_tools(spec, model=None), compiler=compiler, runtime=runtime)
                assert spec_built is not None, validation.dropped
                spec_built.save(folder / f"{name}.json")
        finally:
            compiler.close()
            runtime.close()

    made = made_once(tmp_path_factory, "built", make)
    return {name: EnvSpec.load(made / f"{name}.json") for name in (*SOURCES, "bikeshare")}


@pytest.fixture(scope="session")
def rt():
    runtime = EnvRuntime(tool_timeout_s=2.0)
    yield runtime
    runtime.close()
