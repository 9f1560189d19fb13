"""The bundled example environments: they load, meet their size/quality bar, every tool test
passes on a real episode, and building an example's folder gives the spec load_example hands
out."""

from __future__ import annotations

import ast

import pytest

from agent_world.envs.authoring import build_env
from agent_world.envs.episode import EnvRuntime
from agent_world.envs.examples import example_names, example_path, load_example
from agent_world.envs.spec import EnvSpec, ToolExpectation, ToolTest
from agent_world.envs.testing import check_observation, run_tool_test
from agent_world.errors import SpecError

NAMES = ["airline", "ecommerce"]
# name -> (tables (min, max), rows (min, max), min foreign keys, tools (min, max))
BARS = {
    "airline": ((10, 10), (950, 1100), 8, (12, 16)),
    "ecommerce": ((7, 9), (500, 900), 6, (12, 16)),
}


@pytest.fixture(scope="module")
def specs() -> dict[str, EnvSpec]:
    return {name: load_example(name) for name in NAMES}


@pytest.fixture(scope="module")
def episodes(specs):
    """One runtime for the module, one episode per example; each test resets it."""
    runtime = EnvRuntime()
    eps = {name: runtime.open(spec, seed=0) for name, spec in specs.items()}
    yield eps
    for ep in eps.values():
        ep.close()
    runtime.close()


# ---- loading ------------------------------------------------------------------------------------
def test_example_names_lists_the_bundled_examples():
    assert set(NAMES) <= set(example_names())
    assert example_names() == sorted(example_names())


def test_unknown_example_names_the_available_ones():
    with pytest.raises(SpecError, match="available: .*airline.*ecommerce"):
        load_example("no_such_env")
    with pytest.raises(SpecError):
        example_path("../examples/airline")


@pytest.mark.parametrize("name", NAMES)
def test_example_loads_and_round_trips(name, specs):
    spec = specs[name]
    assert spec.name == name
    assert example_path(name).is_dir()
    assert EnvSpec.from_json(spec.to_json()).fingerprint == spec.fingerprint
    assert spec.provenance.created_by == "manual"
    assert spec.theme.taxonomy.l3 == name
    for dialect in ("sqlite", "postgresql"):
        assert len(spec.ddl(dialect)) == len(spec.tables)


@pytest.mark.parametrize("name", NAMES)
def test_example_meets_size_bar(name, specs):
    stats = specs[name].stats()
    (t_lo, t_hi), (r_lo, r_hi), min_fks, (k_lo, k_hi) = BARS[name]
    assert t_lo <= stats["tables"] <= t_hi, stats
    assert r_lo <= stats["rows"] <= r_hi, stats
    assert stats["foreign_keys"] >= min_fks, stats
    assert k_lo <= stats["tools"] <= k_hi, stats
    spec = specs[name]
    assert all(spec.rows.get(t.name) for t in spec.tables), "every table has seed rows"
    assert any(c.enum for t in spec.tables for c in t.columns)


@pytest.mark.parametrize("name", NAMES)
def test_tools_are_documented_and_tested(name, specs):
    spec = specs[name]
    assert {t.mutates for t in spec.tools} == {True, False}, "needs read and write tools"
    for tool in spec.tools:
        assert len(tool.description) >= 60, tool.name
        params = tool.parameters
        assert params.get("additionalProperties") is False, tool.name
        for prop, schema in params.get("properties", {}).items():
            assert schema.get("description"), f"{tool.name}.{prop} has no description"
        tree = ast.parse(tool.source)
        assert not any(isinstance(n, ast.ClassDef) for n in tree.body), tool.name
        assert not any(isinstance(n, (ast.Import, ast.ImportFrom)) for n in tree.body), \
            f"{tool.name}: imports belong inside the function"
        tests = [t for t in spec.tests if t.tool == tool.name]
        assert len(tests) >= 2, f"{tool.name} has {len(tests)} test(s)"
        assert any(t.expect.ok and t.expect.error_kind is None for t in tests), \
            f"{tool.name} has no positive test"
        assert any(not t.expect.ok for t in tests), f"{tool.name} has no negative test"
    assert len({t.name for t in spec.tests}) >= len(spec.tests) // 2


# ---- every tool test on a real episode -----------------------------------------------------------
def _cases() -> list:
    cases = []
    for name in NAMES:
        for i, test in enumerate(load_example(name).tests):
            cases.append(pytest.param(name, i, id=f"{name}:{test.tool}:{test.name}"))
    return cases


@pytest.mark.parametrize(("name", "index"), _cases())
def test_tool_test_passes(name, index, specs, episodes):
    spec, episode = specs[name], episodes[name]
    test = spec.tests[index]
    ok, reason = run_tool_test(episode, test)
    assert ok, reason
    tool = spec.tool(test.tool)
    changed = not episode.diff().empty
    if not tool.mutates or not test.expect.ok:
        assert not changed, f"{test.tool} changed the database: {episode.diff().counts()}"
    elif tool.mutates:
        assert changed, f"write tool {test.tool} succeeded without changing anything"


def test_run_tool_test_reports_mismatches(specs, episodes):
    episode = episodes["airline"]
    wrong = ToolTest(name="wrong status", tool="get_reservation",
                     arguments={"reservation_id": "MGX7Q2"},
                     expect=ToolExpectation(contains={"status": "cancelled"}))
    ok, reason = run_tool_test(episode, wrong)
    assert not ok and "status" in reason
    should_fail = ToolTest(name="x", tool="get_reservation",
                           arguments={"reservation_id": "MGX7Q2"},
                           expect=ToolExpectation(ok=False))
    assert run_tool_test(episode, should_fail)[0] is False
    kind = ToolTest(name="y", tool="get_reservation", arguments={"reservation_id": "1"},
                    expect=ToolExpectation(error_kind="tool_error"))
    ok, reason = run_tool_test(episode, kind)
    assert not ok and "invalid_arguments" in reason
    obs = episode.step("list_airports", {})
    assert check_observation(obs, ToolExpectation(min_items=999))[0] is False
    assert check_observation(obs, ToolExpectation(contains={"a": 1}))[0] is False
    assert check_observation(obs, ToolExpectation(equals=obs.result))[0] is True


def test_bookings_are_deterministic_per_seed(specs):
    flight = next(f["flight_id"] for f in specs["airline"].rows["flights"]
                  if f["flight_number"] == "NW100" and f["scheduled_departure"] > "2026-03-15")
    args = {"customer_id": 4, "flight_id": flight, "fare_class": "economy",
            "passengers": [{"first_name": "Daniel", "last_name": "Okafor",
                            "date_of_birth": "1995-05-30"}],
            "payment_method_id": next(p["payment_method_id"]
                                      for p in specs["airline"].rows["payment_methods"]
                                      if p["customer_id"] == 4)}
    with EnvRuntime() as runtime:
        results = []
        for _ in range(2):
            ep = runtime.open(specs["airline"], seed=7)
            obs = ep.step("book_reservation", args)
            assert obs.ok, obs.to_text()
            results.append((obs.result, ep.state_hash()))
            ep.close()
    assert results[0] == results[1]


# ---- built from the folders ---------------------------------------------------------------------
@pytest.mark.parametrize("name", NAMES)
def test_env_build_of_the_folder_gives_the_same_spec(name, specs):
    """What `agent-world env build agent_world/envs/examples/NAME` does: the data is generated
    again from its fixed seeds, and the spec is the one load_example hands out."""
    built = build_env(example_path(name))
    assert built.name == name
    assert built.content() == specs[name].content()


def test_load_example_hands_out_copies():
    first = load_example("airline")
    first.rows["airports"].clear()
    assert load_example("airline").rows["airports"]
