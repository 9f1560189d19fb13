"""The package version, one place for the CLI, the harvest client and the package itself."""

__version__ = "0.1.0"
