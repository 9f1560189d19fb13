"""The install the README gives: the user's stack imports on a CPU machine."""

from __future__ import annotations

import importlib.util

import pytest


def test_torch_is_a_cpu_compatible_build_in_range():
    import torch

    major, minor = (int(x) for x in torch.__version__.split(".")[:2])
    assert (major, minor) < (2, 14)
    assert torch.ones(2).sum().item() == 2.0


@pytest.mark.parametrize("module", [
    "langgraph", "langchain", "langchain_mcp_adapters", "langsmith", "sqlalchemy",
    "e2b_code_interpreter", "deepspeed", "mcp",
])
def test_stack_imports(module):
    assert importlib.import_module(module)


def test_openrlhf_agent_interface_imports_without_gpu_packages():
    if importlib.util.find_spec("openrlhf") is None:
        pytest.skip("openrlhf not installed: `pip install -e .[openrlhf]` then "
                    "`pip install --no-deps openrlhf==0.11.2` (see README)")
    from openrlhf.utils.agent import AgentExecutorBase, AgentInstanceBase, MultiTurnAgentExecutor

    assert issubclass(MultiTurnAgentExecutor, AgentExecutorBase)
    assert AgentInstanceBase is not None
    assert importlib.util.find_spec("vllm") is None  # nothing GPU-only was pulled in


def test_console_script_is_installed():
    from importlib.metadata import entry_points

    scripts = {e.name: e.value for e in entry_points(group="console_scripts")}
    assert scripts.get("agent-world") == "agent_world.cli:main"
