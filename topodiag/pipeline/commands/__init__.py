"""Each command's flow, a layer above fleet/, plan/, compare/ and actions/: one module per command
that is more than a diagnose (fleet, prolog, plan, compare), each a function of a request dataclass
returning a result with its report and its Outcome (topodiag/exit_codes.py). Nothing is imported
here: the prolog imports only its own flow (tests/architecture/test_import_cost.py)."""
