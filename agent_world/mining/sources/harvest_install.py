"""Installing a harvest entry into its own folder of the cache (npm, a virtual environment per
PyPI package, or a local folder as it is), and finding its executable and licence."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from agent_world.mining.sources.harvest_models import HarvestEntry, _Failed, _tail

_MARKER = ".aw-installed.json"  # written last: an install without it is redone


def _folder(entry: HarvestEntry) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", f"{entry.registry}-{entry.package}-{entry.version}")


def _run_install(argv: list[str], timeout: float, env: dict[str, str], what: str) -> None:
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout, env=env,
                              stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired as exc:
        raise _Failed("install", f"{what} did not finish within {timeout:g} s") from exc
    except OSError as exc:
        raise _Failed("install", f"{what} could not run ({exc})") from exc
    if proc.returncode != 0:
        raise _Failed("install", f"{what} failed (exit {proc.returncode}): "
                                 f"{_tail(proc.stderr or proc.stdout)}")


def _install(entry: HarvestEntry, cache: Path, timeout: float) -> Path:
    """Install the entry into its own folder of `cache` (once); returns the folder."""
    if entry.registry == "local":
        folder = Path(entry.package)
        if not folder.is_dir():
            raise _Failed("install", f"local server folder {str(folder)!r} not found")
        return folder
    prefix = cache / _folder(entry)
    if (prefix / _MARKER).is_file():
        return prefix
    if prefix.exists():  # a half-done install: start again
        shutil.rmtree(prefix)
    prefix.mkdir(parents=True)
    env = dict(os.environ, PUPPETEER_SKIP_DOWNLOAD="1", PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD="1",
               npm_config_update_notifier="false", PIP_DISABLE_PIP_VERSION_CHECK="1")
    if entry.registry == "npm":
        npm = shutil.which("npm")
        if npm is None:
            raise _Failed("install", "npm is not installed (needed for npm packages)")
        # pinned versions: cached metadata is good enough (--prefer-offline skips revalidation)
        argv = [npm, "install", "--prefix", str(prefix), "--no-audit", "--no-fund",
                "--prefer-offline", "--omit=dev", "--loglevel=error",
                f"{entry.package}@{entry.version}"]
        if not entry.install_scripts:
            argv.insert(2, "--ignore-scripts")
        _run_install(argv, timeout, env, f"npm install {entry.package}@{entry.version}")
    else:
        venv = prefix / "venv"
        _run_install([sys.executable, "-m", "venv", "--without-pip", str(venv)], 120, env,
                     "python -m venv")
        _run_install([sys.executable, "-m", "pip", "--python", str(venv / "bin" / "python"),
                      "install", "--no-input", "--quiet", "--no-compile",
                      f"{entry.package}=={entry.version}"],
                     timeout, env, f"pip install {entry.package}=={entry.version}")
    (prefix / _MARKER).write_text(json.dumps({"package": entry.package,
                                              "version": entry.version}))
    return prefix


def _npm_package_json(prefix: Path, package: str) -> dict[str, Any]:
    path = prefix / "node_modules" / package / "package.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise _Failed("install", f"installed, but {path} cannot be read ({exc})") from exc


def _pick(commands: Sequence[str], entry: HarvestEntry, what: str) -> str:
    if entry.command is not None:
        if entry.command not in commands:
            raise _Failed("install", f"the package installs no {what} {entry.command!r} "
                                     f"(it has: {', '.join(commands) or 'none'})")
        return entry.command
    if len(commands) == 1:
        return commands[0]
    base = entry.package.rsplit("/", 1)[-1].lower()
    named = [c for c in commands if c.lower() == base] or [c for c in commands if "mcp" in c]
    if len(named) == 1:
        return named[0]
    raise _Failed("install", f"the package installs {len(commands)} {what}s "
                             f"({', '.join(commands) or 'none'}); name one as 'command'")


def _resolve(entry: HarvestEntry, prefix: Path) -> tuple[str, str, str | None]:
    """(path of the executable, its name, licence) of an installed entry."""
    if entry.registry == "local":
        assert entry.command is not None
        path = prefix / entry.command
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise _Failed("install", f"{str(path)!r} is not an executable file")
        return str(path), entry.command, None
    if entry.registry == "npm":
        pkg = _npm_package_json(prefix, entry.package)
        bins = pkg.get("bin")
        if isinstance(bins, str):
            bins = {entry.package.rsplit("/", 1)[-1]: bins}
        name = _pick(sorted(bins or {}), entry, "bin")
        path = prefix / "node_modules" / ".bin" / name
        return str(path), name, _npm_license(pkg.get("license"),
                                             prefix / "node_modules" / entry.package)
    venv = prefix / "venv"
    site = sorted(venv.glob("lib/python*/site-packages"))
    want = re.sub(r"[-_.]+", "-", entry.package).lower()
    dist = next((d for d in importlib_metadata.distributions(path=[str(s) for s in site])
                 if re.sub(r"[-_.]+", "-", d.metadata["Name"] or "").lower() == want), None)
    if dist is None:
        raise _Failed("install", f"installed, but no distribution {entry.package!r} in {venv}")
    scripts = sorted(ep.name for ep in dist.entry_points if ep.group == "console_scripts")
    name = _pick(scripts, entry, "console script")
    return str(venv / "bin" / name), name, _pypi_license(dist.metadata)


def _npm_license(value: Any, folder: Path) -> str | None:
    """The package.json licence; "SEE LICENSE IN FILE" is resolved to that file's title."""
    if isinstance(value, dict):
        value = value.get("type")
    if not isinstance(value, str):
        return None
    see = re.match(r"(?i)see licen[sc]e in (\S+)", value.strip())
    if see:
        try:
            lines = (folder / see.group(1)).read_text(encoding="utf-8", errors="replace")
        except OSError:
            return value
        title = next((ln.strip() for ln in lines.splitlines() if ln.strip()), "")
        return title[:80] or value
    return value


def _pypi_license(meta: Any) -> str | None:
    expression = meta.get("License-Expression")
    if expression:
        return str(expression)
    classifiers = [c.split("::")[-1].strip() for c in meta.get_all("Classifier") or []
                   if c.startswith("License ::")]
    if classifiers:
        return ", ".join(classifiers)
    text = (meta.get("License") or "").strip()
    return text.splitlines()[0][:80] if text else None
