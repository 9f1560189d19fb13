"""git_diff(repo_path, target) ("shows differences between branches or commits") honours its
target: the designed tool compares the repository's head with the branch or commit the target
names (file changes of the commits in one ancestry but not the other), refuses a target naming
neither, and its designed tests fail a version that ignores the target."""

from __future__ import annotations

from typing import Any

import pytest

from agent_world.envs.spec import EnvSpec
from agent_world.envs.testing import verify_spec


@pytest.fixture(scope="module")
def git(built) -> EnvSpec:
    """The default mine (iterations 3, seed 0) of the real mcp-server-git, built offline."""
    return built["git"]


def _ancestry(commits: dict[int, dict], start: int | None) -> set[int]:
    out: set[int] = set()
    while start is not None and start not in out:
        out.add(start)
        start = commits[start]["parent_commit_id"]
    return out


def _head(spec: EnvSpec, repo_id: int) -> int:
    """The repository's head as git_commit moves it: its checked-out branch's head commit
    where branches record one (the first checked-out branch), else its newest commit."""
    checked = sorted((b for b in spec.rows["branches"] if b["repository_id"] == repo_id
                      and b["status"] == "checked_out"), key=lambda b: b["id"])
    if checked and checked[0].get("head_commit_id") is not None:
        return checked[0]["head_commit_id"]
    return max(c["id"] for c in spec.rows["commits"] if c["repository_id"] == repo_id)


def _tip(spec: EnvSpec, branch: dict) -> int | None:
    """A branch's commit: its head column where the schema has one, else its newest linked
    commit (branch_commits)."""
    if "head_commit_id" in branch:
        return branch["head_commit_id"]
    return max((bc["commit_id"] for bc in spec.rows["branch_commits"]
                if bc["branch_id"] == branch["id"]), default=None)


def _paths(spec: EnvSpec, repo_id: int, tip: int | None) -> list[str]:
    """The paths changed by the commits in the ancestry of the repository's head or of `tip`
    but not both (computed here, not by the designer)."""
    commits = {c["id"]: c for c in spec.rows["commits"]}
    apart = _ancestry(commits, _head(spec, repo_id)) ^ _ancestry(commits, tip)
    return sorted({f["path"] for f in spec.rows["commit_file_changes"]
                   if f["commit_id"] in apart})


def _case(spec: EnvSpec) -> tuple[dict, list[tuple[str, list[str]]]]:
    """A repository and two commit targets (sha prefixes) whose differences from its head
    differ."""
    for repo in spec.rows["repositories"]:
        mine = [c for c in spec.rows["commits"] if c["repository_id"] == repo["id"]]
        seen: dict[tuple[str, ...], str] = {}
        for c in mine:
            prefix = c["sha"][:8]
            if sum(x["sha"].startswith(prefix) for x in mine) == 1:
                seen.setdefault(tuple(_paths(spec, repo["id"], c["id"])), prefix)
        if len(seen) >= 2 and any(seen):
            return repo, [(p, list(paths)) for paths, p in seen.items()]
    raise AssertionError("no repository whose commits differ from its head")


def test_git_diff_compares_the_head_with_the_target(git, rt):
    repo, targets = _case(git)
    with rt.open(git) as ep:
        results = []
        for prefix, paths in targets:
            obs = ep.step("git_diff", {"repo_path": repo["path"], "target": prefix})
            assert obs.ok, obs.error
            assert obs.result["target"].startswith(prefix)
            assert [f["path"] for f in obs.result["files"]] == paths
            results.append(obs.result["files"])
        assert len({repr(r) for r in results}) >= 2  # the target changes the answer
        nothing = ep.step("git_diff", {"repo_path": repo["path"], "target": "no-such-ref"})
        assert not nothing.ok and nothing.error.kind == "tool_error"
        assert "no-such-ref" in nothing.error.message
        assert ep.diff().tables == {}  # a read


def test_git_diff_sums_a_path_over_the_commits_and_reads_branches(git, rt):
    first = {}  # a name names the first branch of that name in its repository
    for b in sorted(git.rows["branches"], key=lambda b: b["id"]):
        first.setdefault((b["repository_id"], b["name"]), b)
    commits = {c["id"]: c for c in git.rows["commits"]}
    branch = next(b for b in first.values() if _tip(git, b) not in
                  (None, _head(git, b["repository_id"])))
    repo = next(r for r in git.rows["repositories"] if r["id"] == branch["repository_id"])
    tip, head = _tip(git, branch), _head(git, repo["id"])
    apart = _ancestry(commits, head) ^ _ancestry(commits, tip)
    want: dict[str, list[int]] = {}
    for f in git.rows["commit_file_changes"]:
        if f["commit_id"] in apart:
            sums = want.setdefault(f["path"], [0, 0])
            sums[0] += f["additions"] or 0
            sums[1] += f["deletions"] or 0
    with rt.open(git) as ep:
        obs = ep.step("git_diff", {"repo_path": repo["path"], "target": branch["name"]})
        assert obs.ok, obs.error
        assert obs.result["target"] == commits[tip]["sha"]
        assert obs.result["head"] == commits[head]["sha"]
        assert {f["path"]: [f["additions"], f["deletions"]] for f in obs.result["files"]} == want


def _with_source(spec: EnvSpec, name: str, source: str) -> EnvSpec:
    return spec.model_copy(update={"tools": [
        t.model_copy(update={"source": source}) if t.name == name else t for t in spec.tools]})


def test_git_diff_tests_fail_a_tool_that_ignores_its_target(git):
    tool = git.tool("git_diff")
    assert "WITH RECURSIVE" in tool.source and "substr(\"sha\"" in tool.source
    tests = [t for t in git.tests if t.tool == "git_diff"]
    values: list[Any] = [t.arguments["target"] for t in tests if t.expect.ok is not False]
    assert len(values) >= 2
    lines = tool.source.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.strip().startswith("row = _row("))
    for value in values:  # the same target whatever the caller asks
        fixed = "\n".join([*lines[:at + 1], f"    target = {value!r}", *lines[at + 1:]])
        failures = verify_spec(_with_source(git, "git_diff", fixed))
        assert any("git_diff" in f for f in failures), value
    # and the working-tree diff it used to be (the target only checked as a branch name)
    old = '''def git_diff(ctx, repo_path, target, context_lines=None):
    row = _row(ctx, 'repositories', 'id', 'path', repo_path, 'repository')
    changes = ctx.query('SELECT * FROM "working_tree_changes" WHERE "repository_id" = ? '
                        'ORDER BY "path", "id"', (row['id'],))
    return {"files": [r['path'] for r in changes],
            "diff": "\\n".join(r['diff'] for r in changes if r['diff'])}
'''
    failures = [f for f in verify_spec(_with_source(git, "git_diff", old)) if "git_diff" in f]
    assert len(failures) >= 2
