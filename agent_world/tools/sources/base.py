"""The one record every mining source produces, whatever it was read from."""

from __future__ import annotations

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


class EntityHint(BaseModel):
    """An entity a product document names, with the fields it mentions."""

    model_config = ConfigDict(extra="forbid")

    name: str
    fields: list[str] = Field(default_factory=list)
    description: str = ""


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

    def text(self) -> str:
        """Everything the source says, as plain text (for LLM prompts and keyword evidence)."""
        parts = [self.title, self.description, *self.features]
        parts += [f"{t.name}: {t.description}" for t in self.tools]
        parts += [f"{e.name}: {', '.join(e.fields)} {e.description}" for e in self.entities]
        return "\n".join(p for p in parts if p)
