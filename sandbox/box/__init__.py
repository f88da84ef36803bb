"""Code that runs inside the sandbox: standard library only."""
