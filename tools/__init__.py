"""Command-line tools: mlc-opt, and the registry of dialects they load."""
