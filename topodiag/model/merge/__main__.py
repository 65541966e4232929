"""`python -m topodiag.model.merge`: the merge order the modules' PROVIDES and NEEDS give, and why."""

from . import explain

print(explain())
