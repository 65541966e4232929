"""Every module imports where `re` has no possessive quantifiers and no atomic groups (Python 3.10,
which pyproject.toml supports): each module of the package is imported in a fresh process in which
parsers/_possessive.py is told that `re` lacks them and `re` refuses them, as 3.10's does ("multiple
repeat"). A kernel-log line pattern written possessive once made the kernel-log parser fail to import
on 3.10: this catches that class, whatever module a new pattern is in. (Patterns compiled later, in a
function, are held by tests/parsers/test_possessive.py for the ones known.)"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import importlib, importlib.util, pkgutil, re, sys

# parsers/_possessive.py loaded first, by its path (its package not yet imported: nothing compiled
# before `re` is patched), and told that `re` lacks possessive quantifiers
spec = importlib.util.spec_from_file_location("topodiag.parsers._possessive", "topodiag/parsers/_possessive.py")
_possessive = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = _possessive
spec.loader.exec_module(_possessive)
_possessive.SUPPORTED = False
_compile = re._compile

def _as_310(pattern, flags):
    if isinstance(pattern, (str, bytes)):
        text = pattern.decode("latin-1") if isinstance(pattern, bytes) else pattern
        if _possessive.greedy(text) != text or "(?>" in text:
            raise re.error("a possessive quantifier or an atomic group (Python 3.11 and later): %r" % text[:80])
    return _compile(pattern, flags)

re._compile = _as_310
import topodiag
failed = []
for info in pkgutil.walk_packages(topodiag.__path__, "topodiag."):
    if info.name.endswith(".__main__"):  # (it runs the program)
        continue
    try:
        importlib.import_module(info.name)
    except re.error as exc:
        failed.append("%s: %s" % (info.name, exc))
    except Exception:  # (an optional dependency missing is another test's business)
        pass
print("\n".join(failed))
sys.exit(1 if failed else 0)
"""


def test_every_module_imports_with_the_re_of_python_310() -> None:
    done = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]


def test_the_check_refuses_a_possessive_pattern() -> None:
    """The same script fails on a module-level possessive pattern (one made up for this test)."""
    script = SCRIPT.replace("failed = []", "failed = []\ntry:\n    re.compile(r'[0-9]++')\n"
                                           "except re.error as exc:\n    failed.append(str(exc))")
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 1 and "possessive" in done.stdout
