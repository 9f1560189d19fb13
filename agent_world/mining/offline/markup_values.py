"""Text columns that hold a document in a format their source names (draw.io's CSV import,
a docker-compose file, a Kubernetes manifest, a GitLab CI file, a CloudFormation template, a
Mermaid diagram, draw.io's mxGraphModel XML, an OPA Rego policy):
a small well-formed document of that format, never a chat message ('Please update the draft
by end of day.' had been the CSV a draw.io diagram was made from)."""

from __future__ import annotations

import random
import re

# (kind, what the description says) in the order they are tried: a compose file is YAML too
_SAID = (
    ("compose_yaml", re.compile(r"docker[- ]compose|compose file", re.I)),
    ("k8s_manifest", re.compile(r"\bmanifest\b", re.I)),
    ("ci_yaml", re.compile(r"\bci(?:/cd)?\b.*\byaml\b|\.gitlab-ci", re.I)),
    ("cfn_template", re.compile(r"cloudformation template", re.I)),
    ("csv_text", re.compile(r"\bcsv (?:content|data|text|rows)\b|\bcontent\b.*\bcsv\b", re.I)),
    ("mermaid_class", re.compile(r"classdiagram", re.I)),
    ("mermaid", re.compile(r"\bmermaid", re.I)),
    ("rego", re.compile(r"\brego\b", re.I)),
    ("drawio_xml", re.compile(r"mxGraphModel|draw\.io xml", re.I)),
)
# a column named for where the document is, or for how to read it, holds no document
_NOT_CONTENT = frozenset({"path", "file", "filename", "format", "url", "name", "type", "id"})
MARKUP_KINDS = frozenset(kind for kind, _ in _SAID)


def markup_kind(words: set[str], description: str) -> str | None:
    """The document format a text column holds, by its description; None for any other."""
    if words & _NOT_CONTENT:
        return None
    return next((kind for kind, said in _SAID if said.search(description)), None)


_IMAGES = ("nginx:1.27", "redis:7", "postgres:16", "node:20-alpine", "python:3.12-slim")
_APPS = ("web", "api", "worker", "cache", "db")
_PEOPLE = ("Alice", "Bruno", "Chen", "Dana", "Emeka", "Farah", "Goran", "Hana")
_ROLES = ("CEO", "CTO", "Engineer", "Designer", "Analyst", "Manager")
_STEPS = ("Start", "Login", "Validate", "Checkout", "Review", "Approve", "Ship", "Done")


def markup_value(kind: str, r: random.Random) -> str:
    """A small document of `kind` (one of `MARKUP_KINDS`), varied by `r`."""
    app, image = r.choice(_APPS), r.choice(_IMAGES)
    port = r.choice((3000, 5000, 8000, 8080))
    if kind == "compose_yaml":
        return (f"services:\n  {app}:\n    image: {image}\n    ports:\n"
                f"      - \"{port}:{port}\"\n    restart: unless-stopped\n")
    if kind == "k8s_manifest":
        return (f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {app}\nspec:\n"
                f"  replicas: {r.randint(1, 3)}\n  selector:\n    matchLabels:\n"
                f"      app: {app}\n  template:\n    metadata:\n      labels:\n"
                f"        app: {app}\n    spec:\n      containers:\n        - name: {app}\n"
                f"          image: {image}\n")
    if kind == "ci_yaml":
        return (f"stages:\n  - test\n  - build\ntest:\n  stage: test\n  image: {image}\n"
                f"  script:\n    - make test\nbuild:\n  stage: build\n  script:\n"
                f"    - docker build -t {app} .\n")
    if kind == "cfn_template":
        return ("AWSTemplateFormatVersion: '2010-09-09'\nResources:\n  "
                f"{app.capitalize()}Bucket:\n    Type: AWS::S3::Bucket\n    Properties:\n"
                "      VersioningConfiguration:\n        Status: Enabled\n")
    if kind == "mermaid_class":
        return (f"classDiagram\n    class {app.capitalize()} {{\n        id: string\n"
                f"        port: number = {port}\n    }}\n")
    if kind == "mermaid":  # one line, as the sources' own examples ('graph TD; A-->B;')
        steps = r.sample(_STEPS, 3)
        return f"graph TD; {steps[0]}-->{steps[1]}; {steps[1]}-->{steps[2]};"
    if kind == "rego":  # OPA's policy language; CloudBase's start with its own package
        return (f"package authz.user\n\ndefault allow := false\n\nallow if {{\n"
                f"    input.user.role == \"{r.choice(_ROLES).lower()}\"\n}}\n")
    if kind == "drawio_xml":
        label = r.choice(_STEPS)
        return (f'<mxGraphModel><root><mxCell id="0"/><mxCell id="1" parent="0"/>'
                f'<mxCell id="2" value="{label}" style="rounded=1;html=1;" vertex="1" '
                f'parent="1"><mxGeometry x="40" y="40" width="140" height="60" '
                f'as="geometry"/></mxCell></root></mxGraphModel>')
    people = r.sample(_PEOPLE, 4)
    rows = [f"{p},{r.choice(_ROLES)},{people[0] if i else ''}" for i, p in enumerate(people)]
    return "name,role,manager\n" + "\n".join(rows) + "\n"
