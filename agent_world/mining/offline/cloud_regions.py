"""Cloud regions as the service's own provider names them. A region column of a cloud service
had drawn from one list mixing providers: a GCP project in 'eu-central-1', a DigitalOcean
volume in 'us-west-2', a CloudBase agent's bucket in 'us-central1'. The provider is read from
the source's text (`described_cloud`); a service whose text names none gets AWS's names, one
style for the whole database."""

from __future__ import annotations

import random
import re
from collections.abc import Mapping
from typing import Any

from agent_world.envs.table_spec import TableSpec
from agent_world.mining.offline.column_semantics import CLOUD_THINGS, column_semantic
from agent_world.mining.offline.naming import singular
from agent_world.mining.offline.reference_data import CLOUD_REGIONS as REGIONS

# words that name a provider in a source's text; the most named provider is the service's
_NAMED = {
    "aws": re.compile(r"\baws\b|amazon|\bs3\b|\bec2\b|cloudwatch|cloudformation|\blambda\b|"
                      r"dynamodb|\biam\b"),
    "gcp": re.compile(r"\bgcp\b|google cloud|\bgke\b|bigquery|cloud run|\bgcs\b|"
                      r"compute engine|firebase"),
    "azure": re.compile(r"\bazure\b"),
    "digitalocean": re.compile(r"digitalocean|digital ocean|\bdroplets?\b"),
    "tencent": re.compile(r"tencent|cloudbase|腾讯"),
    "alibaba": re.compile(r"alibaba|aliyun|阿里"),
}


def described_cloud(text: str) -> str | None:
    """The cloud provider a source's text names most, or None."""
    low = text.lower()
    counts = {p: len(rx.findall(low)) for p, rx in _NAMED.items()}
    best = max(counts, key=lambda p: counts[p])
    return best if counts[best] else None


def cloud_region(provider: str | None, r: random.Random) -> str:
    """One region of the provider (AWS's names where the source names no provider)."""
    return r.choice(REGIONS.get(provider or "aws", REGIONS["aws"]))


def cloud_service(tables: Mapping[str, TableSpec], memo: dict[Any, Any]) -> bool:
    """Whether a service runs in a cloud: it holds buckets, clusters or volumes, or a column
    its source says holds cloud regions (`memo`: where the answer is kept per row factory)."""
    if ("cloud", "") not in memo:
        memo[("cloud", "")] = any(
            singular(t).split("_")[-1] in CLOUD_THINGS or
            any(column_semantic(t, c) == "cloud_region" for c in spec.columns)
            for t, spec in tables.items())
    return memo[("cloud", "")]
