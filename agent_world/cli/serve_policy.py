"""`agent-world serve-policy`: a trained policy as an OpenAI-compatible chat-completions
endpoint."""

from __future__ import annotations

from typing import Annotated

import typer

from agent_world.cli.common import err_console
from agent_world.integrations.policy_server import DEFAULT_PORT, load_served, serve
from agent_world.serving import TOKEN_ENV, announce_token, resolve_token


def serve_policy(
    checkpoint: Annotated[str, typer.Argument(
        help="The policy: a directory written by save_pretrained (a checkpoint of "
             "`agent-world train` or `evolve`, or its model/ directory; a LoRA adapter is "
             "merged into its base model), smollm2, or tiny (random, untrained: a smoke "
             "test).", show_default=False)],
    base: Annotated[str | None, typer.Option(
        help="A LoRA adapter's base model (directory or Hugging Face Hub id); default: the "
             "training run's base/ beside the checkpoint, else the one the adapter config "
             "names.", show_default=False)] = None,
    host: Annotated[str, typer.Option(help="Bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port.")] = DEFAULT_PORT,
    token: Annotated[str | None, typer.Option(
        envvar=TOKEN_ENV, show_default=False,
        help="The bearer token clients must send as their API key (default: a new one, "
             "printed).")] = None,
    no_token: Annotated[bool, typer.Option(
        "--no-token", help="Serve without a token: any local process (or web page, through "
        "DNS rebinding) may use the policy. It runs no commands and reads no files.")] = False,
    served_model_name: Annotated[str | None, typer.Option(
        help="The model name clients ask for (default: CHECKPOINT as given).",
        show_default=False)] = None,
    device: Annotated[str, typer.Option(
        help="auto (the GPU when torch sees one), cpu, cuda or cuda:N.")] = "auto",
) -> None:
    """Serve a trained policy as an OpenAI-compatible endpoint (/v1/models,
    /v1/chat/completions): tools offered in a request are shown to the policy as in the
    arena's rollouts, and its calls come back in OpenAI's tool_calls format."""
    if no_token and token:
        raise typer.BadParameter(f"--no-token and a token (--token / ${TOKEN_ENV}) exclude "
                                 "each other", param_hint="--no-token")
    required, made = (None, False) if no_token else resolve_token(token)
    with err_console.status(f"loading {checkpoint}…"):
        served = load_served(checkpoint, device=device, name=served_model_name, base=base)
    if required is None:
        err_console.print("no bearer token: any local process may use this policy")
    else:
        announce_token(required, made)
    serve(served, host=host, port=port, token=required)


__all__ = ["serve_policy"]
