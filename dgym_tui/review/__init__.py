"""The review inbox: a person approves, rejects or sends back a batch's proposed fixes (docs/run-dir.md)."""
