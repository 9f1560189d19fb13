"""Build the bundled example environments into agent_world/envs/examples/<name>.json.

    .venv/bin/python scripts/build_examples.py            # (re)write every example
    .venv/bin/python scripts/build_examples.py --check    # fail if a shipped file is stale
    .venv/bin/python scripts/build_examples.py --verify   # also run every tool test

The sources live in scripts/examples/: `<name>_tools.py` has the tool functions (real Python,
linted like the rest of the tree) and `<name>.py` the schema, seed-data generator, tool
metadata and tool tests. This script copies each tool's source (plus the private helpers it
lists) into the spec, validates it as an EnvSpec and writes it. Output is deterministic: fixed
seeds, no wall-clock time, so running it twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT_DIR = ROOT / "agent_world" / "envs" / "examples"
EXAMPLES = ("airline", "ecommerce")
_PACKAGE = "_agent_world_example_sources"

if str(ROOT) not in sys.path:  # running from a checkout without installing the package
    sys.path.insert(0, str(ROOT))

from agent_world.envs.spec import EnvSpec  # noqa: E402


def _sources() -> ModuleType:
    """scripts/examples as a package under a private name (no sys.path changes needed)."""
    if _PACKAGE in sys.modules:
        return sys.modules[_PACKAGE]
    spec = importlib.util.spec_from_file_location(
        _PACKAGE, HERE / "examples" / "__init__.py",
        submodule_search_locations=[str(HERE / "examples")])
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[_PACKAGE] = module
    spec.loader.exec_module(module)
    return module


def example_module(name: str) -> ModuleType:
    _sources()
    return importlib.import_module(f"{_PACKAGE}.{name}")


def tool_source(fn: Any, helpers: list[Any] | tuple[Any, ...] = ()) -> str:
    """The shipped source of a tool: its helpers, then the function itself."""
    parts = [textwrap.dedent(inspect.getsource(h)).strip() for h in helpers]
    parts.append(textwrap.dedent(inspect.getsource(fn)).strip())
    return "\n\n\n".join(parts) + "\n"


def build_spec(name: str) -> EnvSpec:
    """Generate, assemble and validate one example environment."""
    module = example_module(name)
    rows, anchors = module.build_data()
    # each example module holds THEME, TABLES, TOOLS (with their functions under 'fn'),
    # CLOCK_START, build_data() and build_tests(); assembling them is the same for all
    data: dict[str, Any] = {"name": name, "version": 1, "theme": module.THEME,
                            "tables": module.TABLES, "rows": rows, "tools": module.TOOLS,
                            "tests": module.build_tests(rows, anchors),
                            "clock_start": module.CLOCK_START}
    tools = []
    for entry in data["tools"]:
        fn = entry["fn"]
        tools.append({"name": fn.__name__, "description": entry["description"],
                      "parameters": entry["parameters"],
                      "source": tool_source(fn, entry.get("helpers", ())),
                      "mutates": entry["mutates"]})
    data = {**data, "tools": tools}
    data["provenance"] = {
        "created_by": "manual", "source_kind": "manual",
        "source_ref": f"scripts/examples/{name}.py",
        "notes": ["Bundled example; regenerate with scripts/build_examples.py."],
    }
    spec = EnvSpec.from_dict(data, origin=f"example {name!r}")
    spec.provenance.stats = spec.stats()
    return spec


def build(names: list[str] | tuple[str, ...] = EXAMPLES) -> dict[str, EnvSpec]:
    return {name: build_spec(name) for name in names}


def render(spec: EnvSpec) -> str:
    return spec.to_json(indent=2) + "\n"


def verify(spec: EnvSpec) -> list[str]:
    """Run every tool test through a real episode; the failures as readable lines."""
    from agent_world.envs.testing import verify_spec

    return verify_spec(spec)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", default=list(EXAMPLES), help="examples to build")
    parser.add_argument("--check", action="store_true",
                        help="compare with the shipped files instead of writing them")
    parser.add_argument("--verify", action="store_true", help="run every tool test too")
    args = parser.parse_args(argv)
    status = 0
    for name, spec in build(args.names).items():
        path = OUT_DIR / f"{name}.json"
        text = render(spec)
        stats = ", ".join(f"{k} {v}" for k, v in spec.stats().items())
        if args.check:
            same = path.exists() and path.read_text() == text
            print(f"{name}: {'up to date' if same else 'STALE'} ({stats})")
            status |= 0 if same else 1
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)} ({stats}; fingerprint {spec.fingerprint})")
        if args.verify:
            failures = verify(spec)
            for line in failures:
                print("  FAIL", line)
            print(f"{name}: {len(spec.tests) - len(failures)}/{len(spec.tests)} tool tests pass")
            status |= 1 if failures else 0
    return status


if __name__ == "__main__":
    sys.exit(main())
