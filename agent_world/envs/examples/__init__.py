"""Bundled example environments, one authoring folder each next to this module.

    from agent_world.envs.examples import example_names, load_example
    spec = load_example("airline")

Each folder (`airline/`, `ecommerce/`) is an environment in the toolkit form; load_example
compiles it with the same code as `agent-world env build PATH` (about 0.2 s each, once per
process) and hands out copies.
"""

from __future__ import annotations

import functools
import threading
from pathlib import Path

from agent_world.envs.authoring import ENV_MODULE, build_env
from agent_world.envs.spec import EnvSpec
from agent_world.errors import SpecError

_DIR = Path(__file__).resolve().parent
_BUILD_LOCK = threading.Lock()  # the first build imports the folder as a package


def example_names() -> list[str]:
    """Names of the bundled examples, sorted."""
    return sorted(p.name for p in _DIR.iterdir() if (p / f"{ENV_MODULE}.py").is_file())


def example_path(name: str) -> Path:
    """The folder of a bundled example; SpecError naming the available ones if unknown."""
    path = _DIR / name
    if "/" in name or "\\" in name or not (path / f"{ENV_MODULE}.py").is_file():
        names = ", ".join(example_names()) or "(none)"
        raise SpecError(f"unknown example environment {name!r}; available: {names}")
    return path


@functools.cache
def _built(name: str) -> EnvSpec:
    spec = build_env(example_path(name), name=name,
                     source_ref=f"agent_world/envs/examples/{name}")
    spec.provenance.notes = ["Bundled example; built from its folder by load_example."]
    return spec


def load_example(name: str) -> EnvSpec:
    """A fresh EnvSpec of a bundled example (callers may modify it freely)."""
    with _BUILD_LOCK:
        spec = _built(name)
    return spec.model_copy(deep=True)


def tour_calls(spec: EnvSpec, reads: int = 2, writes: int = 2,
               errors: int = 1) -> list[dict[str, object]]:
    """A short, meaningful sequence of calls taken from the spec's own tool tests: a few
    successful reads, a few successful writes, and one call the environment must refuse."""
    mutates = {t.name: t.mutates for t in spec.tools}
    picked: list[dict[str, object]] = []
    seen: set[str] = set()
    quotas = {"read": reads, "write": writes, "error": errors}
    for test in spec.tests:
        expects_error = not test.expect.ok or test.expect.error_kind is not None
        group = "error" if expects_error else ("write" if mutates[test.tool] else "read")
        if quotas[group] and (test.tool not in seen or group == "error"):
            quotas[group] -= 1
            seen.add(test.tool)
            picked.append({"tool": test.tool, "arguments": test.arguments})
    return picked


__all__ = ["example_names", "example_path", "load_example", "tour_calls"]
