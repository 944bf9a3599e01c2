"""contend: Python layer (results loading, analysis, emulated cluster tooling)."""

__version__ = "0.1.0"
