"""What names a person or a site's naming scheme: a user's home (/home/alice77 -> /home/user-0001,
/Users/alice77), an e-mail address (alice77@example.com -> user-0001@domain-02.invalid; an address
whose domain starts with a known host is left to the host pass), and a Slurm node list
(SLURM_JOB_NODELIST=gpu[01-04],login7 -> SLURM_JOB_NODELIST=nodelist-01: the whole value, one
token). root and the system's own users are kept."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Optional

from .text import Hold

if TYPE_CHECKING:
    from .core import Redactor

HOME_RE = re.compile(r"(?<![\w.-])(/(?:home|Users|users|u)/)([A-Za-z0-9_][A-Za-z0-9._-]{0,63})(?=/|[\s\"',;:)\]}]|\Z)")
EMAIL_RE = re.compile(r"(?<![\w.+%-])([A-Za-z0-9][A-Za-z0-9._%+-]{0,63})@([A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,})(?![\w-])")
KEEP_USERS = frozenset({"root", "nobody", "daemon", "shared", "linuxbrew"})
NODELIST_RE = re.compile(r"\b(SLURM_(?:JOB_|STEP_)?NODELIST|SLURM_JOB_NODES?|SLURM_NODELIST)([ \t]*[=:][ \t]*\"?)"
                         r"([^\s\"']+)")


class People:
    """User names and node lists -> their tokens, for a whole bundle."""

    def __init__(self) -> None:
        self.users: dict[str, str] = {}  # user name (as printed) -> user-NNNN
        self.nodelists: dict[str, str] = {}  # a Slurm node list -> nodelist-NN

    def user(self, name: str) -> str:
        return self.users.setdefault(name, f"user-{len(self.users) + 1:04d}")

    def nodelist(self, value: str) -> str:
        return self.nodelists.setdefault(value, f"nodelist-{len(self.nodelists) + 1:02d}")

    def mapping(self) -> dict[str, str]:
        out = {f"user {k}": v for k, v in self.users.items()}
        out.update({f"node list {k}": v for k, v in self.nodelists.items()})
        return out


def redact_people(r: Redactor, text: str, hold: Hold) -> str:
    """Slurm node lists, e-mail addresses (user and domain) and the user of a home directory;
    before the host names (see the module's docstring)."""
    people, hosts = r.people, r.hosts
    if "NODE" in text:
        text = NODELIST_RE.sub(lambda m: m[1] + m[2] + hold(people.nodelist(m[3])), text)

    def email(m: re.Match) -> Optional[str]:
        if m[2].split(".")[0].lower() in hosts.hosts:
            return m[0]
        user = m[1] if m[1].lower() in KEEP_USERS else hold(people.user(m[1]))
        return f"{user}@{hold(hosts.domain(m[2]))}"

    if "@" in text:
        text = EMAIL_RE.sub(email, text)
    if "/" in text:
        text = HOME_RE.sub(lambda m: m[0] if m[2] in KEEP_USERS else m[1] + hold(people.user(m[2])), text)
    return text
