"""Many tasks at once: task sets, trials, scoring, the run directory, executors and the report.

A layer of its own above the session and the agent (nothing here is imported by the app): a
trial is a plain function of its spec (`trial.run_trial(spec) -> TrialOutcome`), so any executor
(a local pool, Ray) can run it anywhere, and only the driver writes the run directory.
See spec.py for the contract and docs/run-dir.md for the files a run leaves.
"""
