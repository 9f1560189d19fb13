"""Arena environments and tasks through other libraries' own interfaces (one module each).

Adapters are thin layers over episodes and the one task check; each imports its library only
when used, so `agent_world.integrations` itself needs none of them.
"""
