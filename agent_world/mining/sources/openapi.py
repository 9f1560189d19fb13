"""OpenAPI 3.x specs (JSON or YAML) as mining sources.

One ToolDescription per operation:

* name: the ``operationId`` made an identifier, else ``<method>_<path>`` in snake case
  (``GET /patients/{patientId}/visits`` -> ``get_patients_by_patient_id_visits``);
* description: summary + description;
* input_schema: an object schema of the path and query parameters plus the JSON request body
  (an object body's properties are merged in when no name clashes, else it is a ``body``
  property); properties marked ``readOnly`` are left out of request bodies;
* output_schema: the JSON schema of the first 2xx response, where there is one;
* read_only: GET/HEAD.

Local ``$ref``s (``#/components/...``) are inlined, with cycle protection (a recursive reference
becomes ``{"type": "object", "description": "recursive reference to X"}``); external refs are
left as a note. ``components.schemas`` become EntityHints (with ``allOf`` merged). Swagger 2.0 and
other documents are refused with a SourceError.
"""

from __future__ import annotations

import keyword
import os
import re
from pathlib import Path
from typing import Any

from agent_world.errors import SourceError
from agent_world.mining.sources._io import load_structured, name_from_path
from agent_world.mining.sources.base import (
    EntityHint,
    FieldSpec,
    SourceDocument,
    ToolDescription,
)

__all__ = ["looks_like_openapi", "parse_openapi", "read_openapi", "RefResolver"]

HTTP_METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")
READ_ONLY_METHODS = {"get", "head"}
_MAX_DEPTH = 32
_DROP_KEYS = {"xml", "externalDocs", "discriminator"}


def looks_like_openapi(data: Any) -> bool:
    """An OpenAPI (or Swagger) document, as far as its top-level keys tell."""
    return isinstance(data, dict) and ("openapi" in data or "swagger" in data)


# --------------------------------------------------------------------------- $ref resolution


class RefResolver:
    """Inlines local JSON-pointer ``$ref``s of one document, with cycle protection."""

    def __init__(self, document: dict[str, Any], label: str) -> None:
        self.document = document
        self.label = label

    def lookup(self, ref: str) -> Any:
        if not ref.startswith("#"):
            raise SourceError(f"{self.label}: only local $refs are supported, got {ref!r}")
        node: Any = self.document
        pointer = ref[1:].lstrip("/")
        if not pointer:
            return node
        for raw in pointer.split("/"):
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, dict) and part in node:
                node = node[part]
            elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
                node = node[int(part)]
            else:
                raise SourceError(f"{self.label}: $ref {ref!r} points at nothing")
        return node

    def resolve(self, node: Any, _stack: tuple[str, ...] = (), _depth: int = 0) -> Any:
        """A deep copy of ``node`` with every local $ref inlined."""
        if _depth > _MAX_DEPTH:
            return {"description": "(nesting too deep, truncated)"}
        if isinstance(node, list):
            return [self.resolve(v, _stack, _depth + 1) for v in node]
        if not isinstance(node, dict):
            return node
        ref = node.get("$ref")
        if isinstance(ref, str):
            if not ref.startswith("#"):
                return {"description": f"external reference {ref} (not resolved)"}
            target_name = ref.rsplit("/", 1)[-1]
            if ref in _stack:
                return {"type": "object", "description": f"recursive reference to {target_name}"}
            target = self.resolve(self.lookup(ref), (*_stack, ref), _depth + 1)
            siblings = {k: v for k, v in node.items() if k != "$ref"}  # OpenAPI 3.1 allows them
            if siblings and isinstance(target, dict):
                target = {**target, **self.resolve(siblings, _stack, _depth + 1)}
            return target
        return {
            k: self.resolve(v, _stack, _depth + 1) for k, v in node.items() if k not in _DROP_KEYS
        }


# --------------------------------------------------------------------------- schema helpers


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _merge_all_of(schema: Any) -> Any:
    """Flatten ``allOf`` of object schemas into one object schema (properties + required)."""
    if not isinstance(schema, dict) or "allOf" not in schema:
        return schema
    parts = [_merge_all_of(p) for p in _list(schema.get("allOf")) if isinstance(p, dict)]
    merged: dict[str, Any] = {k: v for k, v in schema.items() if k != "allOf"}
    props: dict[str, Any] = dict(merged.get("properties") or {})
    required: list[str] = [r for r in _list(merged.get("required")) if isinstance(r, str)]
    for part in parts:
        props.update(part.get("properties") or {})
        required += [
            r for r in _list(part.get("required")) if isinstance(r, str) and r not in required
        ]
        for key, value in part.items():
            if key not in ("properties", "required") and key not in merged:
                merged[key] = value
    if props:
        merged["properties"] = props
        merged.setdefault("type", "object")
    if required:
        merged["required"] = required
    return merged


def _strip_flagged(schema: Any, flag: str) -> Any:
    """Drop properties marked ``readOnly`` (request bodies) / ``writeOnly`` (responses)."""
    if isinstance(schema, list):
        return [_strip_flagged(s, flag) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {k: _strip_flagged(v, flag) for k, v in schema.items() if k != "properties"}
    if isinstance(schema.get("properties"), dict):
        props = {
            k: _strip_flagged(v, flag)
            for k, v in schema["properties"].items()
            if not (isinstance(v, dict) and v.get(flag) is True)
        }
        out["properties"] = props
        if isinstance(out.get("required"), list):
            out["required"] = [r for r in out["required"] if r in props]
            if not out["required"]:
                del out["required"]
    return out


def _json_content_schema(content: Any) -> dict[str, Any] | None:
    """The schema of the JSON media type of a ``content`` map (else form, else the first)."""
    if not isinstance(content, dict) or not content:
        return None

    def rank(media: str) -> int:
        media = media.lower()
        if media == "application/json":
            return 0
        if media.endswith("+json") or "json" in media:
            return 1
        if media in ("application/x-www-form-urlencoded", "multipart/form-data"):
            return 2
        return 3

    for media in sorted(content, key=rank):
        entry = content[media]
        if isinstance(entry, dict) and isinstance(entry.get("schema"), dict):
            return entry["schema"]
    return None


_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def _snake(text: str) -> str:
    text = _CAMEL.sub("_", text)
    return re.sub(r"[^0-9a-zA-Z]+", "_", text).strip("_").lower()


def identifier(text: str) -> str:
    """Any string -> a Python/JSON-friendly identifier (letters, digits, underscores)."""
    ident = re.sub(r"[^0-9a-zA-Z_]+", "_", text).strip("_")
    ident = re.sub(r"_+", "_", ident)
    if not ident:
        ident = "operation"
    if ident[0].isdigit():
        ident = f"op_{ident}"
    if keyword.iskeyword(ident):
        ident += "_"
    return ident


def operation_name(method: str, path: str, operation_id: str | None) -> str:
    if operation_id and operation_id.strip():
        return identifier(operation_id.strip())
    parts = [method.lower()]
    for segment in path.strip("/").split("/"):
        if not segment:
            continue
        m = re.fullmatch(r"\{(.+)\}", segment)
        parts.append(f"by_{_snake(m.group(1))}" if m else _snake(segment))
    return identifier("_".join(p for p in parts if p))


# --------------------------------------------------------------------------- operations


def _operation_tool(
    *,
    method: str,
    path: str,
    operation: dict[str, Any],
    path_params: list[Any],
    resolver: RefResolver,
) -> tuple[ToolDescription, dict[str, Any]]:
    label = f"{resolver.label} operation {method.upper()} {path}"
    params: dict[tuple[str, str], dict[str, Any]] = {}
    for raw in [*_list(path_params), *_list(operation.get("parameters"))]:
        param = resolver.resolve(raw)
        if not (
            isinstance(param, dict)
            and isinstance(param.get("name"), str)
            and isinstance(param.get("in"), str)
        ):
            raise SourceError(f"{label}: a parameter has no 'name'/'in'")
        params[(param["name"], param["in"])] = param  # operation-level overrides path-level

    properties: dict[str, Any] = {}
    required: list[str] = []
    locations: dict[str, str] = {}
    for (pname, where), param in params.items():
        if where not in ("path", "query"):
            continue  # headers and cookies are transport details (auth, tracing), not inputs
        schema = param.get("schema")
        if not isinstance(schema, dict):
            schema = _json_content_schema(param.get("content")) or {"type": "string"}
        schema = dict(_merge_all_of(schema))
        if param.get("description") and "description" not in schema:
            schema["description"] = param["description"]
        properties[pname] = schema
        locations[pname] = where
        if where == "path" or param.get("required") is True:
            required.append(pname)

    body_info: dict[str, Any] = {}
    body = resolver.resolve(operation.get("requestBody")) if operation.get("requestBody") else None
    if isinstance(body, dict):
        body_schema = _json_content_schema(body.get("content"))
        if body_schema is not None:
            body_schema = _strip_flagged(_merge_all_of(body_schema), "readOnly")
            body_required = body.get("required") is True
            body_props = body_schema.get("properties") if isinstance(body_schema, dict) else None
            if (
                isinstance(body_props, dict)
                and body_props
                and body_schema.get("type", "object") == "object"
                and not set(body_props) & set(properties)
            ):
                properties.update(body_props)
                locations.update({k: "body" for k in body_props})
                if body_required:
                    required += [r for r in _list(body_schema.get("required")) if r in body_props]
                body_info = {"body": "merged"}
            else:
                properties["body"] = body_schema
                locations["body"] = "body"
                if body_required:
                    required.append("body")
                body_info = {"body": "property"}

    input_schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required:
        input_schema["required"] = list(dict.fromkeys(required))

    output_schema = None
    responses = operation.get("responses") or {}
    if isinstance(responses, dict):
        for code in sorted(responses, key=str):
            if str(code).startswith("2") or str(code).upper() == "2XX":
                response = resolver.resolve(responses[code])
                schema = (
                    _json_content_schema(response.get("content"))
                    if isinstance(response, dict)
                    else None
                )
                if schema is not None:
                    output_schema = _strip_flagged(_merge_all_of(schema), "writeOnly")
                    break

    summary = str(operation.get("summary") or "").strip()
    details = str(operation.get("description") or "").strip()
    if summary and details and details != summary:
        description = (
            f"{summary}. {details}" if not summary.endswith(".") else f"{summary} {details}"
        )
    else:
        description = summary or details
    if operation.get("deprecated") is True:
        description = f"(deprecated) {description}".strip()
    tags = [str(t) for t in _list(operation.get("tags")) if isinstance(t, str | int | float)]
    tool = ToolDescription(
        name=operation_name(
            method,
            path,
            op_id if isinstance(op_id := operation.get("operationId"), str) else None,
        ),
        description=description,
        input_schema=input_schema,
        output_schema=output_schema,
        read_only=method in READ_ONLY_METHODS,
        tags=tags,
    )
    return tool, {"method": method.upper(), "path": path, "in": locations, **body_info}


_REFERENCES = re.compile(r"\breferences?\s+`?([A-Z][A-Za-z0-9_]*)(?:\.\w+)?", re.I)
_FIELD_KEYS = ("minimum", "maximum", "pattern")


def _ref_name(node: Any) -> str | None:
    if isinstance(node, dict) and isinstance(node.get("$ref"), str):
        return node["$ref"].rsplit("/", 1)[-1]
    return None


def _raw_properties(raw: Any, resolver: RefResolver) -> dict[str, Any]:
    """A component's properties before $refs are inlined (so references keep their names)."""
    if not isinstance(raw, dict):
        return {}
    if isinstance(raw.get("$ref"), str):
        try:
            return _raw_properties(resolver.lookup(raw["$ref"]), resolver)
        except SourceError:
            return {}
    props: dict[str, Any] = dict(raw.get("properties") or {})
    for part in _list(raw.get("allOf")):
        for k, v in _raw_properties(part, resolver).items():
            props.setdefault(k, v)
    return props


def field_spec(name: str, schema: dict[str, Any], raw: Any, required: bool,
               schemas: dict[str, Any]) -> FieldSpec:
    """One property of a component schema as a typed FieldSpec."""
    jtype = schema.get("type")
    if isinstance(jtype, list):
        jtype = next((t for t in jtype if t != "null"), None)
    if jtype is None:
        for key in ("anyOf", "oneOf"):
            for b in _list(schema.get(key)):
                if isinstance(b, dict) and b.get("type") not in (None, "null"):
                    schema = {**b, **{k: v for k, v in schema.items() if k != key}}
                    jtype = b.get("type")
                    break
    desc = str(schema.get("description") or "").strip()
    ref = _ref_name(raw)
    items_ref = _ref_name(raw.get("items")) if isinstance(raw, dict) else None
    references = None
    for cand in (ref, items_ref):  # a $ref to an object schema is a relation
        target = schemas.get(cand) if cand else None
        if isinstance(target, dict) and (target.get("type") == "object"
                                         or target.get("properties") or target.get("allOf")):
            references = cand
    if references is None:
        m = _REFERENCES.search(desc) or (
            re.search(r"\(([A-Z][A-Za-z0-9_]*)\.id\)", desc))
        if m and m.group(1) in schemas:
            references = m.group(1)
    items = schema.get("items") if isinstance(schema.get("items"), dict) else {}
    enum = schema.get("enum") or (items.get("enum") if jtype == "array" else None)
    return FieldSpec(
        name=name, type=str(jtype) if jtype else None,
        format=schema.get("format") if isinstance(schema.get("format"), str) else None,
        enum=[str(e) for e in enum] if isinstance(enum, list) and enum else None,
        required=required, unique=bool(schema.get("x-unique") or schema.get("uniqueItems")
                                       and jtype != "array"
                                       or re.search(r"\bunique\b", desc, re.I)),
        references=references, description=desc,
        **{k: schema[k] for k in _FIELD_KEYS if isinstance(schema.get(k), int | float | str)
           and not (k == "pattern" and not isinstance(schema[k], str))})


def _entities(document: dict[str, Any], resolver: RefResolver) -> list[EntityHint]:
    schemas = (document.get("components") or {}).get("schemas") or {}
    if not isinstance(schemas, dict):
        return []
    entities = []
    for name, raw in schemas.items():
        schema = _merge_all_of(resolver.resolve(raw))
        if not isinstance(schema, dict):
            continue
        props = schema.get("properties")
        if not isinstance(props, dict) or not props:
            continue
        description = str(schema.get("description") or schema.get("title") or "").strip()
        required = {r for r in _list(schema.get("required")) if isinstance(r, str)}
        raw_props = _raw_properties(raw, resolver)
        specs = [field_spec(str(k), v if isinstance(v, dict) else {}, raw_props.get(k),
                            k in required, schemas) for k, v in props.items()]
        entities.append(EntityHint(name=str(name), fields=list(props), description=description,
                                   field_specs=specs))
    return entities


def parse_openapi(data: Any, *, reference: str, name: str | None = None) -> SourceDocument:
    """Parsed OpenAPI 3.x data -> SourceDocument(kind 'openapi')."""
    label = f"OpenAPI spec {reference!r}"
    try:
        return _parse_openapi(data, reference=reference, name=name, label=label)
    except SourceError:
        raise
    except (TypeError, AttributeError, ValueError, KeyError, IndexError, RecursionError) as exc:
        raise SourceError(f"{label}: malformed document ({type(exc).__name__}: {exc})") from exc


def _parse_openapi(data: Any, *, reference: str, name: str | None, label: str) -> SourceDocument:
    if not isinstance(data, dict):
        raise SourceError(
            f"{label}: expected a mapping at the top level, got {type(data).__name__}"
        )
    if "swagger" in data and "openapi" not in data:
        raise SourceError(
            f"{label}: Swagger {data.get('swagger')} is not supported - only OpenAPI 3.x; "
            "convert it first (for example with swagger2openapi)"
        )
    version = data.get("openapi")
    if version is None:
        raise SourceError(f"{label}: not an OpenAPI document (no 'openapi' version key)")
    if not str(version).startswith("3."):
        raise SourceError(f"{label}: OpenAPI version {version!r} is not supported - only 3.x")
    paths = data.get("paths")
    if paths is None:
        paths = {}
    if not isinstance(paths, dict):
        raise SourceError(f"{label}: 'paths' must be a mapping, got {type(paths).__name__}")

    resolver = RefResolver(data, label)
    tools: list[ToolDescription] = []
    operations: dict[str, Any] = {}
    for path, raw_item in paths.items():
        item = resolver.resolve(raw_item) if isinstance(raw_item, dict) else None
        if not isinstance(item, dict):
            raise SourceError(f"{label}: path {path!r} is not a mapping")
        path_params = item.get("parameters") or []
        for method in HTTP_METHODS:
            operation = item.get(method)
            if operation is None:
                continue
            if not isinstance(operation, dict):
                raise SourceError(f"{label}: {method.upper()} {path} is not a mapping")
            tool, info = _operation_tool(
                method=method,
                path=str(path),
                operation=operation,
                path_params=path_params,
                resolver=resolver,
            )
            base, n = tool.name, 2
            while tool.name in operations:  # duplicate operationIds / colliding generated names
                tool.name = f"{base}_{n}"
                n += 1
            tools.append(tool)
            operations[tool.name] = info
    if not tools and not (data.get("components") or {}).get("schemas"):
        raise SourceError(f"{label}: has no operations under 'paths' and no component schemas")

    info = data.get("info") if isinstance(data.get("info"), dict) else {}
    title = str(info.get("title") or "").strip()
    features = []
    for tag in _list(data.get("tags")):
        if isinstance(tag, dict) and tag.get("name"):
            desc = str(tag.get("description") or "").strip()
            features.append(f"{tag['name']}: {desc}" if desc else str(tag["name"]))
    servers = [
        s.get("url") for s in _list(data.get("servers")) if isinstance(s, dict) and s.get("url")
    ]
    metadata: dict[str, Any] = {
        "openapi_version": str(version),
        "api_version": str(info.get("version") or ""),
        "operations": operations,
    }
    if servers:
        metadata["servers"] = servers
    return SourceDocument(
        name=name or name_from_path(reference),
        kind="openapi",
        reference=reference,
        title=title,
        description=str(info.get("description") or "").strip(),
        tools=tools,
        features=features,
        entities=_entities(data, resolver),
        metadata=metadata,
    )


def read_openapi(path: str | os.PathLike[str], *, name: str | None = None) -> SourceDocument:
    """Read an OpenAPI 3.x JSON/YAML file."""
    data = load_structured(path, "OpenAPI spec")
    return parse_openapi(data, reference=str(Path(path)), name=name)
