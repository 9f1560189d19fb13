"""Building an EnvSpec from an environment written by hand (`agent-world env build PATH`).

An environment is a folder (a Python package without needing `__init__.py`) or one module:

    library/
      environment.py   THEME, TABLES, CLOCK_START (optional), NAME (optional),
                       ROWS or build_data() -> rows | (rows, anchors),
                       TESTS or build_tests(rows, anchors) -> list of ToolTest dicts
      tools.py         the @tool functions and their helpers (agent_world.envs.toolkit)
      ...              any other modules environment.py imports (data generators, helpers)

Tools are the @tool functions defined in `environment.py`, the folder's `tools.py` and the
folder's other modules `environment.py` imports, in module then source order. A single-module environment holds all of this in one
file. The result is validated like any other spec; the JSON EnvSpec stays the one artefact
episodes, the catalog and MCP read. Output is deterministic when the module is.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

from agent_world.envs.spec import EnvSpec
from agent_world.envs.toolkit import CompiledTools, compile_tools, tools_in
from agent_world.errors import SpecError, ToolkitError

ENV_MODULE = "environment"
TOOLS_MODULE = "tools"


def supports_shared_helpers() -> bool:
    """Whether EnvSpec carries one shared helper module per environment."""
    return "helpers" in EnvSpec.model_fields


def _package_name(folder: Path) -> str:
    digest = hashlib.sha256(str(folder.resolve()).encode()).hexdigest()[:10]
    return f"_agent_world_env_{folder.name}_{digest}"


def load_module(path: str | Path) -> ModuleType:
    """Import an environment's module (a folder's environment.py, or a .py file), without
    touching sys.path: the folder becomes a package under a private name."""
    p = Path(path)
    if not p.exists():
        raise SpecError(f"{p}: no such file or folder")
    if p.is_dir():
        folder, module_name = p, ENV_MODULE
        if not (folder / f"{ENV_MODULE}.py").is_file():
            raise SpecError(f"{p}: an environment folder needs an {ENV_MODULE}.py")
    elif p.suffix == ".py":
        folder, module_name = p.parent, p.stem
    else:
        raise SpecError(f"{p}: expected an environment folder or a .py module")
    package = _package_name(folder)
    if package not in sys.modules:
        init = folder / "__init__.py"
        if init.is_file():
            spec = importlib.util.spec_from_file_location(
                package, init, submodule_search_locations=[str(folder)])
        else:  # a plain folder: a package with no code of its own
            spec = importlib.machinery.ModuleSpec(package, None, is_package=True)
            spec.submodule_search_locations = [str(folder)]
        if spec is None:
            raise SpecError(f"{folder}: cannot be imported as a package")
        pkg = importlib.util.module_from_spec(spec)
        sys.modules[package] = pkg
        if spec.loader is not None:
            try:
                spec.loader.exec_module(pkg)
            except Exception as exc:
                sys.modules.pop(package, None)
                raise SpecError(f"{init}: import failed: {type(exc).__name__}: {exc}") from None
    try:
        return importlib.import_module(f"{package}.{module_name}")
    except SpecError:
        raise
    except Exception as exc:
        raise SpecError(f"{p}: import failed: {type(exc).__name__}: {exc}") from None


def environment_tools(module: ModuleType) -> list[Callable]:
    """The environment's @tool functions: its own, then those of its folder's tools.py, then
    those of other sibling modules it imports (in the order it names them)."""
    package = module.__name__.rpartition(".")[0]
    modules = [module]
    folder = Path(module.__file__ or "").parent
    if (folder / f"{TOOLS_MODULE}.py").is_file() and module.__name__ != f"{package}.{TOOLS_MODULE}":
        try:
            modules.append(importlib.import_module(f"{package}.{TOOLS_MODULE}"))
        except Exception as exc:
            raise SpecError(f"{folder / TOOLS_MODULE}.py: import failed: "
                            f"{type(exc).__name__}: {exc}") from None
    for value in vars(module).values():
        if isinstance(value, ModuleType) and value.__name__.startswith(package + ".") \
                and value not in modules:
            modules.append(value)
    for value in vars(module).values():  # `from .tools import a, b` brings functions in
        mod = sys.modules.get(getattr(value, "__module__", "") or "")
        if mod is not None and mod.__name__.startswith(package + ".") and mod not in modules:
            modules.append(mod)
    found: list[Callable] = []
    for m in modules:
        for fn in tools_in(m):
            if fn not in found:
                found.append(fn)
    return found


def _call_or_value(module: ModuleType, value_name: str, fn_name: str, *args: Any) -> Any:
    if hasattr(module, value_name):
        return getattr(module, value_name)
    if hasattr(module, fn_name):
        return getattr(module, fn_name)(*args)
    return None


def build_env(path: str | Path, *, name: str | None = None,
              source_ref: str | None = None) -> EnvSpec:
    """Compile an authoring folder/module into a validated EnvSpec."""
    p = Path(path)
    module = load_module(p)
    for required in ("THEME", "TABLES"):
        if not hasattr(module, required):
            raise SpecError(f"{p}: the environment module defines no {required}")
    tools = environment_tools(module)
    if not tools:
        raise ToolkitError(f"{p}: no @tool functions found")
    compiled = compile_tools(tools, inline_helpers=not supports_shared_helpers())
    data = _call_or_value(module, "ROWS", "build_data")
    rows, anchors = data if isinstance(data, tuple) else (data or {}, {})
    tests = _call_or_value(module, "TESTS", "build_tests", rows, anchors) or []
    env_name = name or getattr(module, "NAME", None) or (p.name if p.is_dir() else p.stem)
    ref = source_ref or str(p)
    return assemble(env_name, module.THEME, module.TABLES, rows, compiled, tests,
                    clock_start=getattr(module, "CLOCK_START", None), source_ref=ref,
                    notes=getattr(module, "NOTES", None))


def assemble(name: str, theme: Any, tables: Any, rows: dict[str, list[dict[str, Any]]],
             compiled: CompiledTools, tests: list[Any], *, clock_start: str | None = None,
             source_ref: str = "", notes: list[str] | None = None,
             created_by: str = "manual") -> EnvSpec:
    """One EnvSpec from its parts (the compiled tools put their helpers where the spec
    format keeps them)."""
    data: dict[str, Any] = {"name": name, "version": 1, "theme": theme, "tables": tables,
                            "rows": rows,
                            "tools": [t.model_dump() for t in compiled.tools],
                            "tests": tests}
    if clock_start:
        data["clock_start"] = clock_start
    if supports_shared_helpers():
        data["helpers"] = compiled.helpers
    data["provenance"] = {"created_by": created_by, "source_kind": "manual",
                          "source_ref": source_ref, "notes": list(notes or [])}
    spec = EnvSpec.from_dict(data, origin=f"environment {name!r}")
    spec.provenance.stats = spec.stats()
    return spec


__all__ = ["assemble", "build_env", "environment_tools", "load_module",
           "supports_shared_helpers"]
