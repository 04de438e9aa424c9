"""git evidence: keep the evidence path of a repository read-only for patches."""

__version__ = "0.1.0"
