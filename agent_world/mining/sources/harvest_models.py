"""What an MCP harvest works on: one package to harvest (`HarvestEntry`), what harvesting it
gave (`HarvestResult`), and the failure that ends an entry early with its stage and reason."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

__all__ = ["HarvestEntry", "HarvestResult"]

_TAIL = 1200  # characters of stderr / install output quoted in a reason
_SERVICE = re.compile(r"^[a-z0-9][a-z0-9-]{0,63}$")


class HarvestEntry(BaseModel):
    """One package to harvest."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    service: str  # short distinct name of what the server is for: the corpus file's name
    # npm, PyPI, or "local": a folder holding a server (package: its path, relative to the
    # list file; command: the executable in it), harvested as it is, with nothing installed
    registry: Literal["npm", "pypi", "local"]
    package: str
    version: str
    # the executable the package installs (npm bin / console script); None: its only one
    command: str | None = None
    args: tuple[str, ...] = ()  # "{workdir}" is the scratch folder the server runs in
    env: dict[str, str] = Field(default_factory=dict)  # dummy credentials it needs to start
    # dummy files it needs to start (a credentials JSON), by path in its scratch folder
    files: dict[str, str] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0)
    install_scripts: bool = False  # npm: run the packages' install scripts
    downloads_a_month: int | None = None  # popularity when chosen (npm list), for the record
    rank: int | None = None  # PyPI: rank among the most downloaded packages, when chosen

    @field_validator("service")
    @classmethod
    def _service(cls, value: str) -> str:
        if not _SERVICE.match(value):
            raise ValueError(f"service {value!r}: lower-case letters, digits and '-' only")
        return value

    @field_validator("package", "version")
    @classmethod
    def _plain(cls, value: str) -> str:
        if not value.strip() or any(c.isspace() for c in value) or value.startswith("-"):
            raise ValueError(f"{value!r} is not a package name or version")
        return value

    @model_validator(mode="after")
    def _local(self) -> HarvestEntry:
        if self.registry == "local" and not self.command:
            raise ValueError("a local entry names its executable as 'command'")
        for name in self.files:
            if Path(name).is_absolute() or ".." in Path(name).parts:
                raise ValueError(f"file {name!r}: a path inside the scratch folder")
        return self

    @property
    def key(self) -> str:
        return f"{self.registry}:{self.package}"

    @property
    def label(self) -> str:
        sep = {"npm": "@", "pypi": "=="}.get(self.registry, " ")
        return f"{self.registry}:{self.package}{sep}{self.version}"


class HarvestResult(BaseModel):
    """What harvesting one entry gave: a document written, skipped (already there), or a
    failure with its reason."""

    entry: HarvestEntry
    status: Literal["harvested", "skipped", "failed"]
    stage: Literal["install", "start", "list", "done"] = "done"
    reason: str = ""
    path: str | None = None
    tools: int = 0
    seconds: float = 0.0


class _Failed(Exception):
    """Ends one entry early: the stage it failed at and why (a `failed` HarvestResult)."""

    def __init__(self, stage: str, reason: str):
        super().__init__(reason)
        self.stage, self.reason = stage, reason


def _tail(text: str) -> str:
    text = text.strip()
    return text if len(text) <= _TAIL else "..." + text[-_TAIL:]
