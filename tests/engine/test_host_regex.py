"""/regex/ host patterns are matched in linear time, with `re`'s meaning (issue 16: an adversarial
pattern and host list took 34 s)."""

from __future__ import annotations

import random
import re
import time

import pytest

from topodiag.engine.host_regex import MAX_HOST, HostRegex, PatternError
from topodiag.engine.runner import ConfigError
from topodiag.engine.site_config import HostPattern

PATTERNS = [
    r"^login", r"n0[0-9]$", r"^gpu-[a-z]+-\d+\.cluster$", r"(gpu|dgx)\d{2,3}", r"(?i)^gpu[0-9]+$",
    r"a|b|c", r"^$", r"", r"^a*$", r"x?y+z*", r"\bgpu\b", r"\Bpu", r"[^0-9]+\Z", r"\Agpu", r"gpu.", r"(?s)gpu.",
    r"[\w-]+\.local$", r"[\s]", r"\S+", r"(ab){2}", r"(ab){1,3}c", r"a{0,2}b", r"(a|)+b", r"(a*)*$", r"(a+)+$",
    r"a*?b", r"(?:ab)+?", r"[a-c-]{2,}", r"[]a]", r"(?a)\w+$", r"\d\D", r"n(0|1)(?:2|3)", r"^(a|ab)(c|bcd)$",
    r"é", r"(?i)É", r"[^a]", r"a++b", r"(?>a+)b", r"\.$", r"gpu\$", r"^\.",
]
HOSTS = ["login02", "gpu-login", "rack1-n07", "gpu-abc-12.cluster", "GPU17", "gpu017", "dgx123", "", "a", "b", "aaa",
         "ab", "abab", "ababc", "abcd", "xyyz", "gpu", "gpu x", "x.local", "my-host.local", "gpu\n", "\n", "aab",
         "aaaa!", "éte", "ÉTÉ", "1a", "n13", "abcd\n", "gpu$", ".x", "x.", "ab\nc"]


@pytest.mark.parametrize("pattern", PATTERNS)
def test_same_answers_as_re(pattern):
    rx, ours = re.compile(pattern), HostRegex(pattern)
    for host in HOSTS:
        assert ours.search(host) == (rx.search(host) is not None), (pattern, host)


def test_random_patterns_agree_with_re():
    rnd = random.Random(16)
    atoms = ["a", "b", ".", "[ab]", "[^a]", r"\d", "1", "(a|b)", "(ab)", "(a|)", "^", "$", r"\b"]
    quants = ["", "", "*", "+", "?", "{1,2}", "{2}", "*?"]
    for _ in range(400):
        pattern = "".join(rnd.choice(atoms) + rnd.choice(quants) for _ in range(rnd.randint(1, 5)))
        try:
            rx = re.compile(pattern)
        except re.error:
            continue
        ours = HostRegex(pattern)
        for _ in range(10):
            host = "".join(rnd.choice("ab1 ") for _ in range(rnd.randint(0, 8)))
            assert ours.search(host) == (rx.search(host) is not None), (pattern, host)


HOSTILE = ("a" * 40 + "!", "a" * MAX_HOST, "ab" * 126 + "!", "a b " * 63)


@pytest.mark.parametrize("pattern, answers", [
    (r"(a+)+$", (False, True, False, False)), (r"(a|a)*$", (True, True, True, True)),
    (r"(a*)*b", (False, False, True, True)), (r"(.*a){12}$", (False, True, False, False)),
    (r".*.*.*.*.*.*.*x", (False, False, False, False)), (r"(\w+\s?)+$", (False, True, False, True)),
])
def test_catastrophic_patterns_answer_fast(pattern, answers):
    """`re` takes hours on some of these (e.g. (a+)+$ against 40 a's and a '!')."""
    ours = HostPattern.parse(f"/{pattern}/", "t")
    started = time.process_time()
    assert tuple(ours.matches(h) for h in HOSTILE) == answers
    assert time.process_time() - started < 5


def test_a_host_longer_than_a_dns_name_matches_no_regex():
    assert not HostRegex("a").search("a" * (MAX_HOST + 1))


@pytest.mark.parametrize("pattern, says", [
    (r"(a)\1", "backreferences"), (r"a(?=b)", "lookarounds"), (r"(?<!x)a", "lookarounds"),
    (r"(a)?(?(1)b|c)", "conditionals"), ("a" * 1001, "longer than 1000 characters"),
    (r"(abcdefghij){1000}", "more than 2000 states"), (r"a{0,65535}", "more than 2000 states"),
    (r"(", "not a valid regular expression"),
])
def test_refused_patterns_are_config_errors_in_one_line(pattern, says):
    with pytest.raises(PatternError, match=re.escape(says)):
        HostRegex(pattern)
    with pytest.raises(ConfigError) as info:
        HostPattern.parse(f"/{pattern}/", "site.toml: hosts[0]")
    assert says in str(info.value) and "\n" not in str(info.value)
