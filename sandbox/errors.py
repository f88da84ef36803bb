"""Errors a sandbox reports: each message is one line a person can act on."""


class SandboxError(Exception):
    """The sandbox cannot do what was asked; str() is a one-line explanation with the fix."""


class SandboxGone(SandboxError):
    """The sandbox stopped underneath us (container killed, temp dir removed): restart it."""


def short_error(e: BaseException) -> str:
    """One line for an engine failure: the engine's explanation, else the exception's gist."""
    import docker

    if isinstance(e, docker.errors.APIError) and e.explanation:
        text = str(e.explanation)
    else:
        text = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
    return " ".join(text.split())[:300]
