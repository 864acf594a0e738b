"""The package version, in one place (saved in artifacts and in cache keys)."""

__version__ = "0.1.0"
