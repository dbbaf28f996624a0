"""ace-engine: a local, self-improving context engine for coding agents."""

__version__ = "0.1.0"
