"""Build the bundled example environments into agent_world/envs/examples/<name>.json.

    .venv/bin/python scripts/build_examples.py            # (re)write every example
    .venv/bin/python scripts/build_examples.py --check    # fail if a shipped file is stale
    .venv/bin/python scripts/build_examples.py --verify   # also run every tool test

Each example is an environment folder in scripts/examples/<name>/ in the toolkit form
(`environment.py`: schema, seed-data generator, tool tests; `tools.py`: the @tool functions),
compiled by the same code as `agent-world env build PATH`. Output is deterministic: fixed
seeds, no wall-clock time, so running it twice gives byte-identical files.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
OUT_DIR = ROOT / "agent_world" / "envs" / "examples"
EXAMPLES = ("airline", "ecommerce")

if str(ROOT) not in sys.path:  # running from a checkout without installing the package
    sys.path.insert(0, str(ROOT))

from agent_world.envs.authoring import build_env  # noqa: E402
from agent_world.envs.spec import EnvSpec  # noqa: E402


def build_spec(name: str) -> EnvSpec:
    """Compile and validate one example environment."""
    spec = build_env(HERE / "examples" / name, name=name,
                     source_ref=f"scripts/examples/{name}")
    spec.provenance.notes = ["Bundled example; regenerate with scripts/build_examples.py."]
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
