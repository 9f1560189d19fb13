"""The held-out split: seeded, at least one environment on each side, and never moved once
assigned (held-out environments stay out of training whatever joins later)."""

from __future__ import annotations

import pytest

from agent_world.envs.catalog import Catalog
from agent_world.errors import AgentWorldError, CatalogError
from agent_world.evolution.heldout import split_environments


def test_split_is_seeded_sticky_and_two_sided(tmp_path):
    names = [f"env{i}" for i in range(6)]
    a = split_environments(Catalog.open(tmp_path / "a"), names, 0.34, seed=1)
    b = split_environments(Catalog.open(tmp_path / "b"), names, 0.34, seed=1)
    assert a == b and len(a[1]) == 2 and len(a[0]) == 4
    cat = Catalog.open(tmp_path / "a")
    # new environments join; earlier assignments never move
    train, held = split_environments(cat, [*names, "env6", "env7", "env8"], 0.34, seed=1)
    assert set(a[1]) <= set(held) and set(a[0]) <= set(train)
    assert len(held) == 3
    assert cat.splits()["env0"] in ("train", "heldout")
    # two environments: one each; one environment: nothing held out
    t2, h2 = split_environments(Catalog.open(tmp_path / "c"), ["x", "y"], 0.34)
    assert len(t2) == 1 and len(h2) == 1
    t1, h1 = split_environments(Catalog.open(tmp_path / "d"), ["solo"], 0.34)
    assert t1 == ["solo"] and h1 == []


def test_bad_split_inputs(tmp_path):
    cat = Catalog.open(tmp_path)
    with pytest.raises(AgentWorldError, match="between 0 and 1"):
        split_environments(cat, ["a", "b"], 1.5)
    with pytest.raises(CatalogError, match="unknown split"):
        cat.assign_split({"a": "test"})


def test_whole_categories_are_held_out_and_stay_so(tmp_path):
    """`--arena corpus`: no environment of a held-out category is trained on; a new
    environment of a category already split takes its side."""
    groups = {"git": "Dev / VCS", "gitlab": "Dev / VCS", "time": "Util / Time",
              "clock": "Util / Time", "fetch": "Web / Fetch", "crawl": "Web / Fetch",
              "sqlite": "Data / SQL"}
    cat = Catalog.open(tmp_path)
    first = ["git", "time", "clock", "fetch", "crawl", "sqlite"]
    train, held = split_environments(cat, first, 0.34, seed=3, groups=groups)
    assert held and train
    held_groups = {groups[n] for n in held}
    assert not held_groups & {groups[n] for n in train}  # a category is on one side only
    assert len(held) >= round(0.34 * len(first))
    train2, held2 = split_environments(cat, [*first, "gitlab"], 0.34, seed=3, groups=groups)
    assert ("gitlab" in held2) == ("git" in held)  # it joins git's side
    assert set(held) <= set(held2)
    with pytest.raises(AgentWorldError, match="two or more categories"):
        split_environments(Catalog.open(tmp_path / "one"), ["git", "gitlab"], 0.34,
                           groups=groups)


def test_a_small_environment_leaves_its_shortfall_to_the_others():
    from agent_world.evolution.heldout import fill_quota

    by_env = {"excel": ["e1", "e2"], "git": ["g1", "g2", "g3", "g4", "g5"],
              "word": ["w1", "w2", "w3"], "jira": ["j1", "j2", "j3", "j4"]}
    chosen = fill_quota(by_env, 3)
    assert len(chosen) == 12 and len(set(chosen)) == 12
    # each environment's own first, then one spare at a time in environment order
    assert chosen == ["e1", "e2", "g1", "g2", "g3", "g4", "w1", "w2", "w3", "j1", "j2", "j3"]
    assert fill_quota(by_env, 5) == [i for ids in by_env.values() for i in ids]  # all there is
    assert fill_quota({"a": ["a1", "a2", "a3"]}, 2) == ["a1", "a2"]
