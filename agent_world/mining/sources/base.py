"""The one record every mining source produces, whatever it was read from."""

from __future__ import annotations

import hashlib
import json
import shlex
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

SourceKind = Literal["mcp", "mcp-url", "tool-list", "openapi", "prd"]


class ToolDescription(BaseModel):
    """One tool/operation/feature as the source describes it."""

    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    input_schema: dict[str, Any] = Field(default_factory=dict)  # JSON schema, where known
    output_schema: dict[str, Any] | None = None
    read_only: bool | None = None  # from MCP annotations / HTTP method, where known
    tags: list[str] = Field(default_factory=list)


class FieldSpec(BaseModel):
    """One field of an entity as the source declares it (OpenAPI schema property, PRD field
    line or table row): JSON type, format, allowed values, constraints and references."""

    model_config = ConfigDict(extra="forbid")

    name: str
    type: str | None = None  # JSON type: string, integer, number, boolean, array, object
    format: str | None = None  # date, date-time, email, uri, uuid, time, ...
    enum: list[str] | None = None
    required: bool = False
    unique: bool = False
    minimum: float | None = None
    maximum: float | None = None
    pattern: str | None = None
    references: str | None = None  # the entity a foreign key points at
    description: str = ""

    def json_schema(self) -> dict[str, Any]:
        """The field as a JSON schema (what the miner reads tool arguments as)."""
        out: dict[str, Any] = {k: v for k, v in (
            ("type", self.type), ("format", self.format), ("enum", self.enum),
            ("minimum", self.minimum), ("maximum", self.maximum), ("pattern", self.pattern),
            ("description", self.description)) if v not in (None, "")}
        return out

    def hint(self) -> dict[str, Any]:
        """What semantic validation checks the column against (``field_hints`` entry)."""
        out = {k: v for k, v in self.json_schema().items() if k != "description"}
        if self.unique:
            out["unique"] = True
        if self.required:
            out["required"] = True
        return out


class EntityHint(BaseModel):
    """An entity a source names, with the fields it mentions (``fields``: names) and, where the
    source types them, their declarations (``field_specs``)."""

    model_config = ConfigDict(extra="forbid")

    name: str
    fields: list[str] = Field(default_factory=list)
    description: str = ""
    field_specs: list[FieldSpec] = Field(default_factory=list)


class SourceDocument(BaseModel):
    """What a source says about a tool ecosystem: its tools (with argument schemas where
    known), features and entities. Mining turns these into themes and databases."""

    model_config = ConfigDict(extra="forbid")

    name: str  # short, human: "time", "petstore"
    kind: SourceKind
    reference: str  # the command line, URL or file path it was read from
    title: str = ""
    description: str = ""
    tools: list[ToolDescription] = Field(default_factory=list)
    features: list[str] = Field(default_factory=list)
    entities: list[EntityHint] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)

    def content_key(self) -> str:
        """A hash of what the source says (name, tools, features, entities), not of where it
        was read from: the same file in another folder, or the same server started from
        another path, has the same key. Mining keys themes on it."""
        data = self.model_dump(mode="json", exclude={"reference", "metadata"})
        blob = json.dumps(data, sort_keys=True, separators=(",", ":"), default=str)
        return hashlib.sha256(blob.encode()).hexdigest()[:32]

    def portable_reference(self) -> str:
        """Where the source came from, without the folder it sat in: the file name, the server
        command with base names for its program and path arguments, the URL. A theme keeps
        this one: the theme is part of an environment's fingerprint, and a path there (the
        default sqlite server's database lives in the arena home) gave the same source other
        fingerprints, and other tasks, per home."""
        if self.kind in ("openapi", "prd", "tool-list"):
            return Path(self.reference).name
        if self.kind == "mcp":
            try:
                argv = shlex.split(self.reference)
            except ValueError:
                return self.reference
            return shlex.join([Path(a).name if a.startswith("/") else a for a in argv]) \
                if argv else self.reference
        return self.reference

    def text(self) -> str:
        """Everything the source says, as plain text (for LLM prompts and keyword evidence)."""
        parts = [self.title, self.description, *self.features]
        parts += [f"{t.name}: {t.description}" for t in self.tools]
        parts += [f"{e.name}: {', '.join(e.fields)} {e.description}" for e in self.entities]
        return "\n".join(p for p in parts if p)
