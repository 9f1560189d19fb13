"""Families of real values a description's lone example belongs to. A source that says "Provider
namespace (e.g. 'hashicorp')" or "Trading pair symbol (e.g., BTC/USDT)" gives one value of a
kind its users type many of; copied into every row it made a column of one value (every
Terraform provider in 'hashicorp', every ccxt ticker 'BTC/USDT'), and a task filtering on it
matched every record. An example found in one of these families stands for the family: the
rows draw from it, the example first among equals."""

from __future__ import annotations

from agent_world.mining.offline.reference_data import (
    COUNTRIES,
    CURRENCIES,
    DEPLOY_ENVIRONMENTS,
    FONT_NAMES,
)

# each list: values of one kind as the service's users write them (registries, codes, configs)
FAMILIES: dict[str, list[str]] = {
    "trading_pair": ["BTC/USDT", "ETH/USDT", "SOL/USDT", "BNB/USDT", "XRP/USDT", "ETH/BTC",
                     "DOGE/USDT", "ADA/USDT", "BTC/USD", "ETH/USD"],
    "airport_iata": ["LHR", "JFK", "CDG", "FRA", "AMS", "DXB", "HND", "SIN", "LAX", "ORD",
                     "ATL", "SFO", "MAD", "IST"],
    "airline_iata": ["BA", "AA", "DL", "UA", "LH", "AF", "KL", "EK", "QF", "SQ"],
    "airline_icao": ["BAW", "AAL", "DAL", "UAL", "DLH", "AFR", "KLM", "UAE", "QFA", "SIA"],
    # the Terraform Registry's publishers, providers and module namespaces
    "terraform_namespace": ["hashicorp", "integrations", "cloudflare", "datadog", "mongodb",
                            "grafana", "newrelic"],
    "terraform_provider": ["aws", "azurerm", "google", "kubernetes", "helm", "random",
                           "null", "local"],
    "module_namespace": ["terraform-aws-modules", "terraform-google-modules", "Azure",
                         "cloudposse", "gruntwork-io"],
    "helm_chart": ["nginx", "redis", "postgresql", "prometheus", "grafana", "cert-manager",
                   "ingress-nginx", "mysql"],
    "cron": ["*/5 * * * *", "0 * * * *", "0 0 * * *", "0 9 * * 1-5", "*/15 * * * *",
             "30 2 * * 0", "0 6 1 * *"],
    "label_selector": ["app=nginx", "app=nginx,tier=frontend", "app=api", "tier=backend",
                       "app=redis,tier=cache", "env=production"],
    "field_selector": ["metadata.name=my-pod", "metadata.name=my-pod,status.phase=Running",
                       "status.phase=Running", "spec.nodeName=node-1",
                       "metadata.namespace=default"],
    "font": [*FONT_NAMES, "Inter", "Roboto", "Open Sans", "Lato"],
    "environment": DEPLOY_ENVIRONMENTS,
    "country_code": [code for code, _name, _region in COUNTRIES],
    "currency_code": [code for code, *_rest in CURRENCIES],
    "column_name": ["created_at", "updated_at", "status", "type", "category", "email",
                    "name", "user_id", "country", "total"],
    "defined_name": ["TaxRate", "SalesTotal", "Region", "StartDate", "Discount", "Headcount",
                     "ExchangeRate"],
    "design_variable": ["primary-blue", "spacing-md", "radius-sm", "neutral-900", "accent-green",
                        "font-size-body"],
    "design_token": ["color/primary", "color/secondary", "spacing/md", "radius/lg",
                     "font/body", "shadow/card"],
    "site": ["github.com", "stackoverflow.com", "docs.python.org", "developer.mozilla.org",
             "arxiv.org", "en.wikipedia.org"],
    "model_ref": ["stability-ai/sdxl", "black-forest-labs/flux-schnell",
                  "meta/meta-llama-3-8b-instruct", "openai/whisper", "bytedance/sdxl-lightning-4step"],
    "credential_type": ["slackApi", "githubApi", "notionApi", "googleSheetsOAuth2Api",
                        "httpBasicAuth", "postgres"],
}
_MEMBER = {value: name for name, values in reversed(FAMILIES.items()) for value in values}


def family_of(example: str) -> list[str] | None:
    """The values of the family `example` is one of, the example first; None outside them."""
    name = _MEMBER.get(example)
    if name is None:
        return None
    return [example, *(v for v in FAMILIES[name] if v != example)]


__all__ = ["FAMILIES", "family_of"]
