"""The chat-model extras (`pip install -e .[llm]`): `AGENT_WORLD_MODEL=openai:…` (any
OpenAI-compatible server through OPENAI_BASE_URL), `ollama:…` and `anthropic:…` give every role
a working model through LangChain's real integration packages, here against local stand-ins."""

from __future__ import annotations

import pytest

from agent_world.models import chat_model
from tests.integration.chat_standins import ChatStandIn

pytestmark = pytest.mark.integration

PROVIDERS = {
    "openai": ("langchain_openai", "/v1/chat/completions",
               lambda s: {"OPENAI_BASE_URL": s.openai_url, "OPENAI_API_KEY": "unused"}),
    "ollama": ("langchain_ollama", "/api/chat", lambda s: {"OLLAMA_HOST": s.base}),
    "anthropic": ("langchain_anthropic", "/v1/messages",
                  lambda s: {"ANTHROPIC_BASE_URL": s.base, "ANTHROPIC_API_KEY": "unused"}),
}


@pytest.mark.parametrize("provider", sorted(PROVIDERS))
def test_each_backend_extra_gives_every_role_a_model(provider, monkeypatch):
    module, path, env = PROVIDERS[provider]
    pytest.importorskip(module, reason=f"{module} is not installed: pip install -e .[llm]")
    with ChatStandIn(lambda body: f"reply to {len(body.get('messages', []))} message(s)") as s:
        for key, value in env(s).items():
            monkeypatch.setenv(key, value)
        monkeypatch.setenv("AGENT_WORLD_MODEL", f"{provider}:stand-in-model")
        for role in ("miner", "designer", "synthesizer", "verifier", "diagnoser", "judge"):
            reply = chat_model(role).invoke("Name one tool.")
            assert reply.content == "reply to 1 message(s)"
        assert len(s.requests) == 6
        assert {r["path"] for r in s.requests} == {path}
        assert {r["model"] for r in s.requests} == {"stand-in-model"}
