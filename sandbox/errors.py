"""Errors a sandbox reports: each message is one line a person can act on."""


class SandboxError(Exception):
    """The sandbox cannot do what was asked; str() is a one-line explanation with the fix."""


class SandboxGone(SandboxError):
    """The sandbox stopped underneath us (container killed, temp dir removed): restart it."""
