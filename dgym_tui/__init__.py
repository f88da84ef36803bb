"""dgym-tui: debug a Python repository side by side with an AI agent, in a sandboxed live pdb."""

__version__ = "0.1.0"
