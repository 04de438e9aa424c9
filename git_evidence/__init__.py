"""git evidence: keep the evidence path of a repository read-only for patches."""

__version__ = "0.1.0"

# `-p git_evidence` names this package when the pytest11 entry point is not installed
# (a source checkout): pytest then loads the plugin module from here.
pytest_plugins = ("git_evidence.plugin.entry",)
