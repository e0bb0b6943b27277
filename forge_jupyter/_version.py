"""The package version, in a leaf module: tools (webfetch's User-Agent) read it without importing
the package's __init__, which imports them lazily (an import cycle)."""

__version__ = "0.1.0"
