"""An arena environment and its tasks as an OpenEnv environment directory (`agent-world export
openenv DIR`): the files OpenEnv's tools expect, a wheel of this arena and `uv.lock`."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from urllib.parse import unquote, urlparse

from uv import find_uv_bin

import agent_world
from agent_world.envs.spec import EnvSpec
from agent_world.integrations.openenv import (
    DEFAULT_MAX_CONCURRENT,
    OpenEnvAdapterError,
    _check_servable,
)
from agent_world.tasks.model import Task


class OpenEnvLockError(OpenEnvAdapterError):
    """An export left without `uv.lock`: no arena wheel to lock against, or `uv lock` failed
    (most often: the package index is unreachable)."""


def _package_name(env_name: str) -> str:
    name = "".join(c if c.isalnum() else "_" for c in env_name.lower()).strip("_") or "env"
    return name if name[0].isalpha() else f"env_{name}"


def export_openenv(spec: EnvSpec, tasks: Sequence[Task], out: str | Path, port: int = 8000,
                   max_concurrent_envs: int = DEFAULT_MAX_CONCURRENT,
                   max_steps: int | None = None, arena: str | Path | None = None) -> Path:
    """Write an OpenEnv environment directory for `spec` and its tasks: `openenv.yaml`,
    `pyproject.toml` (the `server` entry point), `server/app.py` (the FastAPI app and
    `main()`), `server/Dockerfile` (the image `openenv build` makes: the package installed,
    the server on 127.0.0.1 unless run with `--host`), `client.py` (OpenEnv's MCP tool
    client), the environment, the tasks and a README with the local and container recipes.
    `arena`: a wheel of agent-world (`arena_wheel`), copied to `wheels/` and named as the
    arena's source in `pyproject.toml` (for `uv lock`, `lock_export`) and the image's default
    `AGENT_WORLD`; without one, both name `agent-world` on the package index.
    Returns the directory."""
    root = Path(out)
    if root.exists() and not root.is_dir():
        raise OpenEnvAdapterError(f"{root}: exists and is not a directory")
    fp = spec.fingerprint
    _check_servable(spec, tasks, fp)
    pkg = _package_name(spec.name)
    (root / "server").mkdir(parents=True, exist_ok=True)
    spec.save(root / "env.json")
    (root / "tasks.jsonl").write_text("".join(t.model_dump_json() + "\n" for t in tasks))
    (root / "settings.json").write_text(json.dumps({
        "env_file": "env.json", "env": spec.name, "fingerprint": fp, "tasks": len(tasks),
        "max_concurrent_envs": max_concurrent_envs, "max_steps": max_steps, "port": port},
        indent=2) + "\n")
    fill = {"name": pkg, "env": spec.name, "port": port, "tools": len(spec.tools),
            "tasks": len(tasks), "first": tasks[0].id if tasks else "", "arena": "agent-world",
            "uv_sources": ""}
    if arena is not None:
        wheel = Path(arena)
        if wheel.suffix != ".whl" or not wheel.is_file():
            raise OpenEnvAdapterError(f"{wheel}: not a wheel file (agent_world-*.whl)")
        (root / "wheels").mkdir(exist_ok=True)
        shutil.copyfile(wheel, root / "wheels" / wheel.name)
        fill["arena"] = f"wheels/{wheel.name}"
        fill["uv_sources"] = (
            "\n[tool.uv.sources]\n# the arena this directory was exported with (uv.lock and "
            f"the image install it)\nagent-world = {{ path = \"wheels/{wheel.name}\" }}\n")
    for rel, template in _TEMPLATES.items():
        (root / rel).write_text(template.format(**fill))
    return root


def arena_wheel(out_dir: str | Path) -> Path | None:
    """This arena as a wheel in `out_dir`, for an export's lock and image: built (an sdist, then
    the wheel from it, with the running interpreter's setuptools: no index needed) when it runs
    from a source tree (a checkout, an editable install), the wheel it was installed from when
    that was a local file, None when it came from a package index (the lock then names the
    index's agent-world)."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    source = Path(agent_world.__file__).resolve().parent.parent
    project = source / "pyproject.toml"
    if project.is_file() and tomllib.loads(project.read_text()).get(
            "project", {}).get("name") == "agent-world":
        with tempfile.TemporaryDirectory(prefix="agent-world-wheel-") as tmp:
            # through an sdist: a build from the tree directly would reuse its build/ folder,
            # files deleted from the source included
            done = subprocess.run(
                [find_uv_bin(), "build", "--no-build-isolation", "--python", sys.executable,
                 "--out-dir", tmp, str(source)], capture_output=True, text=True)
            wheels = sorted(Path(tmp).glob("agent_world-*.whl"))
            if done.returncode != 0 or not wheels:
                raise OpenEnvLockError(f"building the arena's wheel from {source} failed: "
                                       f"{_uv_reason(done.stderr)}")
            return Path(shutil.copy2(wheels[0], out / wheels[0].name))
    raw = metadata.distribution("agent-world").read_text("direct_url.json")
    if raw is None:
        return None
    url = json.loads(raw)["url"]
    parsed = urlparse(url)
    wheel = Path(unquote(parsed.path))
    if parsed.scheme == "file" and wheel.suffix == ".whl" and wheel.is_file():
        return Path(shutil.copy2(wheel, out / wheel.name))
    raise OpenEnvLockError(f"agent-world was installed from {url}: no wheel to lock the export "
                           "against (install it from a source tree or a wheel)")


def lock_export(root: str | Path) -> Path:
    """`uv lock` in an exported directory (what `openenv validate` asks for): every dependency
    pinned, from the package index and the arena's wheel in `wheels/`. Needs the index; raises
    `OpenEnvLockError` with uv's reason when it fails. Returns the lock file."""
    root = Path(root)
    done = subprocess.run([find_uv_bin(), "lock", "--directory", str(root), "--python",
                           sys.executable], capture_output=True, text=True)
    lock = root / "uv.lock"
    if done.returncode != 0 or not lock.is_file():
        raise OpenEnvLockError(f"uv lock failed ({_uv_reason(done.stderr)}); run `uv lock` in "
                               f"{root} once the package index is reachable")
    return lock


def _uv_reason(text: str) -> str:
    """What went wrong, from uv's stderr, on one line: its `error:` line, the first cause (what
    it was doing) and the last (why it failed)."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    first = next((i for i, line in enumerate(lines) if line.startswith("error:")), None)
    if first is None:
        return lines[-1] if lines else "no output"
    causes = [line.removeprefix("cause:").strip() for line in lines[first + 1:]
              if line.startswith("cause:")]
    return ": ".join([lines[first].removeprefix("error:").strip(), *causes[:1], *causes[1:][-1:]])


_TEMPLATES = {
    "openenv.yaml": """spec_version: 1
name: {name}
type: space
runtime: fastapi
app: server.app:app
port: {port}
""",
    "pyproject.toml": """[build-system]
requires = ["setuptools>=45", "wheel"]
build-backend = "setuptools.build_meta"

[project]
name = "openenv-{name}"
version = "0.1.0"
description = "The agent-world environment {env} as an OpenEnv environment"
requires-python = ">=3.11"
dependencies = [
    "openenv-core[core]>=0.2.2",
    "agent-world",
]

[project.scripts]
server = "{name}.server.app:main"

[tool.setuptools]
include-package-data = true
packages = ["{name}", "{name}.server"]
package-dir = {{ "{name}" = ".", "{name}.server" = "server" }}

[tool.setuptools.package-data]
"{name}" = ["env.json", "tasks.jsonl", "settings.json", "openenv.yaml"]
{uv_sources}""",
    "__init__.py": '''"""The agent-world environment {env} as an OpenEnv environment."""

from .client import ArenaEnvClient

__all__ = ["ArenaEnvClient"]
''',
    "client.py": '''"""Client of the {env} environment: OpenEnv's MCP tool client (reset, list_tools, call_tool,
step(CallToolAction(...)), state) reading the instruction at reset and the task check at the
end. `async with ArenaEnvClient(base_url="http://127.0.0.1:{port}") as env: ...`"""

from agent_world.integrations.openenv import ArenaEnvClient

__all__ = ["ArenaEnvClient"]
''',
    "server/__init__.py": "",
    "server/app.py": '''"""OpenEnv server of the agent-world environment {env} (`agent-world export openenv`).

    python -m server.app --port {port}          # from this directory
    uv run --project . server --port {port}     # OpenEnv's local recipe
    uvicorn server.app:app --port {port}

It listens on 127.0.0.1 only; `--host 0.0.0.0` opens it to the network, where anyone who
reaches the port can play its episodes (there is no authentication).
"""

import argparse
from pathlib import Path

import uvicorn

from agent_world.integrations.openenv import create_app_from_export

app = create_app_from_export(Path(__file__).resolve().parent.parent)


def main(argv: list[str] | None = None) -> None:
    """Serve the app; the `server` script and `python -m server.app` both read the options."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--host", default="127.0.0.1",
                        help="bind address (default: loopback only)")
    parser.add_argument("--port", type=int, default={port})
    args = parser.parse_args(argv)
    uvicorn.run(app, host=args.host, port=args.port)


if __name__ == "__main__":
    main()
''',
    "server/Dockerfile": """# The agent-world environment {env} as an OpenEnv container (`agent-world export openenv`).
#
#   docker build -t openenv-{name} -f server/Dockerfile .
#   docker run --rm -p 127.0.0.1:{port}:{port} openenv-{name} --host 0.0.0.0
#
# The server binds 127.0.0.1 unless told otherwise (`--host`): as built, it answers only from
# inside the container. Docker forwards a published port to the container's own interface, so
# serving it takes `--host 0.0.0.0` after the image name; publish it on the host's loopback
# (127.0.0.1:{port}:{port}) unless the network may play its episodes (there is no
# authentication). AGENT_WORLD: where pip gets the arena from (a version, a wheel copied into
# the build context, a git URL; default: the one the export was made with).
FROM python:3.11-slim

ARG AGENT_WORLD={arena}
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1

WORKDIR /app/env
COPY . /app/env
RUN pip install "$AGENT_WORLD" && pip install /app/env

EXPOSE {port}
HEALTHCHECK --interval=30s --timeout=3s --start-period=10s --retries=3 \\
    CMD python -c "import urllib.request; urllib.request.urlopen('http://127.0.0.1:{port}/health')"

ENTRYPOINT ["python", "-m", "server.app", "--port", "{port}"]
CMD ["--host", "127.0.0.1"]
""",
    "README.md": """# {env} (agent-world) as an OpenEnv environment

{tools} tools, {tasks} tasks. Actions are MCP tool calls (`ListToolsAction`, `CallToolAction`);
`submit_answer(answer)` ends an episode and the task's check scores it (the rubric).

Run it locally, no Docker: `pip install {arena} openenv-core`, then from this directory

    python -m server.app --port {port}

or in the environment `uv.lock` pins (`agent-world export` writes it when the package index is
reachable; `uv lock` makes it later): `uv run --project . server --port {port}`.

Or in a container (`server/Dockerfile`; the server binds 127.0.0.1 unless given `--host`,
and Docker's published ports need `--host 0.0.0.0` inside the container):

    docker build -t openenv-{name} -f server/Dockerfile .
    docker run --rm -p 127.0.0.1:{port}:{port} openenv-{name} --host 0.0.0.0

Drive it with OpenEnv's client:

    from openenv.core.mcp_client import MCPToolClient
    from openenv.core.env_server.mcp_types import CallToolAction

    async with MCPToolClient(base_url="http://127.0.0.1:{port}") as env:
        first = await env.reset(task_id="{first}")      # or reset(seed=N)
        print(first.observation.metadata["instruction"])
        tools = await env.list_tools()
        last = await env.step(CallToolAction(tool_name="submit_answer",
                                             arguments={{"answer": "..."}}))
        print(last.reward, last.done)
""",
}


__all__ = ["OpenEnvLockError", "arena_wheel", "export_openenv", "lock_export"]
