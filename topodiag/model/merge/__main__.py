"""`python -m topodiag.model.merge`: the merge order the modules' PROVIDES and NEEDS give, and why;
then each capability and the inputs that give it."""

from . import explain

print(explain())
