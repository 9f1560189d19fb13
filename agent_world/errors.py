"""Typed errors shared by every layer. Each carries a message a user can act on."""


class AgentWorldError(Exception):
    """Base class: the CLI prints these as one clear message instead of a traceback."""


class SpecError(AgentWorldError):
    """A malformed environment spec (file, JSON or field)."""


class CatalogError(AgentWorldError):
    """A catalog lookup or write that cannot be done (unknown environment, bad URL, ...)."""


class ContextError(AgentWorldError, ValueError):
    """A graph run's context (its configuration) holds a value of the wrong type or range. A
    ValueError too: a LangGraph server shows a ValueError's message to the client (others
    become "An internal error occurred")."""


class CheckpointError(AgentWorldError):
    """A graph thread's checkpoint cannot be written or read (disk full, I/O error, ...)."""


class WorkerError(AgentWorldError):
    """The tool worker process could not be started or answered nonsense."""


class EpisodeClosed(AgentWorldError):
    """An episode used after `close()` (its file may already serve another episode)."""


class SourceError(AgentWorldError):
    """A mining source that cannot be read (server does not start, malformed file, ...)."""


class ToolkitError(AgentWorldError):
    """An environment's authoring module cannot be compiled (missing helper, bad type hint,
    read tool that writes, ...)."""


class BuildError(AgentWorldError):
    """Designing or cross-validating an environment's tools failed as a whole."""


class SandboxError(AgentWorldError):
    """Sandboxed code could not be run (sandbox died, backend unreachable, bad request)."""


class SandboxUnavailable(SandboxError):
    """No isolation is possible on this machine (no usable bubblewrap, no E2B) and the unsafe
    opt-out was not given."""
