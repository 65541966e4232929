"""Host names and their domains: node017 -> host-0001, node017.cluster.local ->
host-0001.domain-01.invalid, wherever the name is a whole token, message bodies included, in any
case (NODE017 is the same host): not inside a longer identifier (no letter, digit or '_' on either
side, not a later label of a dotted name; '-' is a boundary: node017-ib0 -> host-0001-ib0); a
registered domain also after another label (node017-ib.cluster.local). A host name that is also an
ordinary word (names.is_word: master, node, gpu, ubuntu, h100...) is replaced only where it is used
as a host (names.word_host_at), so the word stays a word elsewhere. A host name followed by dotted
labels takes them as its domain only when that domain is registered or ends in a DNS or site
top-level domain, never a file suffix (nccl-node12.log keeps ".log"). The names come from the
caller and from find_hosts.hostnames_in."""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Callable, Optional

from .names import is_domain_tail, is_word, plausible_host, word_host_at
from .text import Hold

if TYPE_CHECKING:
    from .core import Redactor

# After a host name: "-label" parts, then a domain (node017-ib0.cluster.local)
_LABEL_DOMAIN_RE = re.compile(r"(?:-[A-Za-z0-9]+)+((?:\.[A-Za-z][\w-]*)+)(?![\w-])")
_JSON_KEY_AFTER_RE = re.compile(r'"[ \t]*:')


class HostNames:
    """Host names and domains -> their tokens, for a whole bundle."""

    def __init__(self) -> None:
        self.hosts: dict[str, str] = {}  # lower-case short name -> token
        self.domains: dict[str, str] = {}  # lower-case domain -> token
        self._spelled: dict[str, str] = {}  # lower-case name -> as first seen (for mapping())
        self._key: Optional[tuple[int, int]] = None
        self._regexes: tuple = (None, None, None)

    def add(self, name: str) -> None:
        name = (name or "").strip().rstrip(".")
        if not plausible_host(name):
            return
        short, _, domain = name.partition(".")  # DNS names: one host whatever the case
        if short.lower() not in self.hosts:
            self.hosts[short.lower()] = f"host-{len(self.hosts) + 1:04d}"
            self._spelled[short.lower()] = short
        if domain:
            self.domain(domain)

    def domain(self, domain: str) -> str:
        """The token of a domain, registered on first sight."""
        spelled, domain = domain, domain.lower()
        if domain not in self.domains:
            self._spelled[domain] = spelled
            self.domains[domain] = f"domain-{len(self.domains) + 1:02d}.invalid"
        return self.domains[domain]

    def is_domain(self, dom: str) -> bool:
        """Whether the dotted labels after a host name are a domain: one seen as such (a host name
        given or found as an FQDN registered it), or one ending in a top-level domain of DNS or of
        a site (local, cluster, internal...) that is not a file suffix (log, txt, json, gz...)."""
        dom = dom.lower()
        return dom in self.domains or is_domain_tail(dom)

    def regexes(self) -> tuple[Optional[re.Pattern], Optional[re.Pattern], Optional[re.Pattern]]:
        """(names anywhere, domains after a dotted label, word hosts in host positions), compiled
        once per set of names (each a trie: a big fabric's thousand names cost one pass)."""
        key = (len(self.hosts), len(self.domains))
        if self._key != key:
            words = [h for h in self.hosts if is_word(h)]
            anywhere = [h for h in self.hosts if not is_word(h)]
            anywhere += [d for d in self.domains if not is_word(d)]
            # The names are lower case and matched in the lower-cased text (str.lower, in C: twice
            # as fast as re.IGNORECASE over a big trie); IGNORECASE only where lower() would move
            # positions (a character whose lower case is longer, as U+0130).
            host_re = re.compile(
                rf"(?<!\w)(?<!\w\.)({trie_pattern(anywhere)})((?:\.[A-Za-z][\w-]*)*)(?!\w)") if anywhere else None
            domain_re = re.compile(
                rf"(?<=[\w-]\.)({trie_pattern(list(self.domains))})(?![\w-]|\.[A-Za-z])") if self.domains else None
            # A word host: each of its occurrences as a whole token, judged by its context (word_host_at)
            doms = rf"(\.(?:{trie_pattern(list(self.domains))}))?" if self.domains else "()"
            word_re = re.compile(rf"(?<![\w.-])({trie_pattern(words)}){doms}(?![\w-])") if words else None
            self._regexes, self._key = (host_re, domain_re, word_re), key
        return self._regexes

    def mapping(self) -> dict[str, str]:
        out = {self._spelled.get(k, k): v for k, v in self.hosts.items()}
        out.update((self._spelled.get(k, k), v) for k, v in self.domains.items())
        return out


def redact_hosts(r: Redactor, text: str, hold: Hold) -> str:
    """Host names (see the module's docstring for the rule), with the domain that follows them."""
    names = r.hosts
    if not names.hosts and not names.domains:
        return text
    anywhere, domains, words = names.regexes()
    if words is not None:
        text = sub_any_case(words, text, lambda m: _word_host(names, m, hold))
    if anywhere is not None:
        text = sub_any_case(anywhere, text, lambda m: _host(names, m, hold))
        domains = names.regexes()[1]  # with the domains just met
    if domains is not None:
        text = sub_any_case(domains, text, lambda m: hold(names.domain(m[1].lower())))
    return text


def _word_host(names: HostNames, m: re.Match, hold: Hold) -> Optional[str]:
    """A word host's occurrence: its token where it is used as a host, None where it is a word."""
    if m[2]:  # the FQDN form with a registered domain: a host, domain and all
        return hold(names.hosts[m[1].lower()] + "." + names.domain(m[2][1:]))
    if not word_host_at(m.string, m.start(), m.end()):
        return None  # an ordinary word here
    return hold(names.hosts[m[1].lower()])


def _host(names: HostNames, m: re.Match, hold: Hold) -> Optional[str]:
    """A name that is no word (or a registered domain's own label), with the dotted labels after it."""
    name, dom = m[1].lower(), m[2].lower()
    s, i, j = m.string, m.start(), m.end()
    if s[i - 1:i] == '"' and _JSON_KEY_AFTER_RE.match(s[j:j + 3]):
        return None  # a JSON key ("hostname": ...), never a value to redact
    if dom and not names.is_domain(dom[1:]):  # node12.log: a file's suffix, not a domain
        keep = m.string[m.start(2):m.end(2)]
        if name in names.hosts:
            return hold(names.hosts[name]) + keep
        return hold(names.domain(name)) + keep  # a registered domain's own label
    if name in names.domains and name not in names.hosts:
        return hold(names.domain(name + dom))
    if dom:
        return hold(names.hosts[name] + "." + names.domain(dom[1:]))
    if name in names.hosts and s[j:j + 1] == "-":  # node017-ib.cluster.local: the host's domain
        tail = _LABEL_DOMAIN_RE.match(s, j)
        if tail:
            names.domain(tail[1][1:])  # replaced by the domain pass after this one
    return hold(names.hosts[name])


def sub_any_case(rx: re.Pattern, text: str, fn: Callable[[re.Match], Optional[str]]) -> str:
    """rx (lower-case literals) matched in any case: over text.lower() when it keeps every position
    (each character's lower case is one character: then the lengths are equal), else with
    IGNORECASE; fn(match) gives the replacement, or None to keep the text as it is."""
    low = text.lower()
    if len(low) != len(text):
        ci = re.compile(rx.pattern, rx.flags | re.IGNORECASE)
        return ci.sub(lambda m: (lambda r: m[0] if r is None else r)(fn(m)), text)
    if low == text:
        return rx.sub(lambda m: (lambda r: m[0] if r is None else r)(fn(m)), text)
    out: list[str] = []
    last = 0
    for m in rx.finditer(low):
        new = fn(m)
        if new is not None:
            out.append(text[last:m.start()])
            out.append(new)
            last = m.end()
    out.append(text[last:])
    return "".join(out)


def trie_pattern(words: list[str]) -> str:
    """A regex matching any of `words`, longest first, built as a trie (shared prefixes once)."""
    trie: dict = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def build(node: dict) -> str:
        alts = [re.escape(ch) + build(node[ch]) for ch in sorted(k for k in node if k)]
        if not alts:
            return ""
        body = alts[0] if len(alts) == 1 else "(?:" + "|".join(alts) + ")"
        if "" in node:  # a word ends here: the longer ones are tried first
            return f"(?:{body})?"
        return body

    return build(trie) or "(?!)"
