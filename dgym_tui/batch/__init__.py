"""Many tasks at once: task sets, trials, scoring, the run directory, executors and the report.

A layer of its own above the session and the agent (nothing here is imported by the app): a
trial is a plain function of its spec (`trial.run_trial(spec) -> TrialOutcome`), so any executor
(a local pool, Ray) can run it anywhere, and only the driver writes the run directory.
See spec.py for the contract and docs/run-dir.md for the files a run leaves.
"""

# The Python API (README, "Python API"): loaded on first use, so `import dgym_tui.batch` stays cheap.
_API = {"TaskEnv": "env", "Step": "env", "load_tasks": "tasks", "run_trial": "trial", "Task": "spec",
        "Arm": "spec", "TrialSpec": "spec", "TrialOutcome": "spec"}


def __getattr__(name):
    if name in _API:
        import importlib

        return getattr(importlib.import_module(f"dgym_tui.batch.{_API[name]}"), name)
    raise AttributeError(name)
