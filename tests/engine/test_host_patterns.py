"""Host patterns (engine/host_pattern.py): globs and node ranges matched without a regex engine,
ranges never expanded, old /regex/ patterns translated when simple and refused in one line when not."""

from __future__ import annotations

import re

import pytest

from topodiag.engine.host_pattern import MAX_HOST, MAX_PATTERN, Glob, PatternError, from_regex
from topodiag.engine.runner import ConfigError
from topodiag.engine.site_config import HostPattern


def matches(pattern: str, host: str) -> bool:
    return Glob.parse(pattern).matches(host)


@pytest.mark.parametrize("pattern, yes, no", [
    # zero padding: the lower bound's width is the number's width
    ("gpu[001-064]", ["gpu001", "gpu010", "gpu064"], ["gpu1", "gpu01", "gpu065", "gpu0001", "gpu000", "gpu"]),
    ("gpu[08-100]", ["gpu08", "gpu09", "gpu10", "gpu99", "gpu100"], ["gpu8", "gpu099", "gpu0100", "gpu101"]),
    ("n[00-09]", ["n00", "n05"], ["n0", "n5", "n10"]),
    # unpadded: the number as written, no leading zero
    ("gpu[1-64]", ["gpu1", "gpu17", "gpu64"], ["gpu0", "gpu017", "gpu01", "gpu65"]),
    ("gpu[0-9]", ["gpu0", "gpu9"], ["gpu00", "gpu10", "gpu"]),
    # lists, and widths mixed in one bracket
    ("gpu[001-004,100,7]", ["gpu003", "gpu100", "gpu7"], ["gpu3", "gpu007", "gpu101"]),
    ("x[1-9,010-012]", ["x5", "x010", "x012"], ["x10", "x05", "x013"]),
    ("x[ 1 - 3 , 5 ]", ["x2", "x5"], ["x4"]),
    # several ranges in one pattern, adjacent or not
    ("rack[1-2]-n[01-16]", ["rack1-n01", "rack2-n16"], ["rack3-n16", "rack2-n17", "rack2-n1", "rack1n01"]),
    ("gpu0[0-9][0-9]", ["gpu017", "gpu000"], ["gpu0123", "gpu01", "gpu0x7"]),
    ("r[1-3]n[1-12]", ["r1n12", "r3n1"], ["r4n1", "r1n13"]),
    # brackets of digits only are a number: [13] is thirteen
    ("gpu[13]", ["gpu13"], ["gpu1", "gpu3"]),
    ("gpu[1,3]", ["gpu1", "gpu3"], ["gpu13", "gpu2"]),
    # globs
    ("*.rack3", ["gpu017.rack3", ".rack3"], ["gpu017.rack30", "gpu017.rack"]),
    ("gpu*", ["gpu", "gpu017.cluster"], ["xgpu"]),
    ("gpu0?7", ["gpu017", "gpu0x7"], ["gpu07", "gpu0117"]),
    ("*-ib*", ["gpu1-ib", "gpu1-ib0"], ["gpu1"]),
    ("n[a-c]1", ["na1", "nc1"], ["nd1", "n11"]),
    ("n[!a-c]1", ["nd1", "n11"], ["na1", "n1"]),
    ("n[^0-9-]", ["nx"], ["n1", "n-"]),
    ("[]x]y", ["]y", "xy"], ["y"]),
    ("a**b", ["ab", "axxb"], ["a"]),
    # a glob and a range together
    ("*gpu[001-004]*", ["rack1-gpu003.local", "gpu001"], ["gpu005", "gpu3"]),
    ("gpu[1-8]*", ["gpu1", "gpu8-ib"], ["gpu9", "gpu01"]),
    ("node017", ["node017"], ["node0170", "Node017", "node01"]),
])
def test_ranges_and_globs(pattern, yes, no):
    for host in yes:
        assert matches(pattern, host), (pattern, host)
    for host in no:
        assert not matches(pattern, host), (pattern, host)


@pytest.mark.parametrize("pattern, says", [
    ("gpu[9-1]", "9-1 runs backwards"),
    ("gpu[1-2-3]", "not a list of numbers and ranges"),
    ("gpu[1-]", "not a list of numbers and ranges"),
    ("gpu[001-064", "never closed"),
    ("gpu[]", "never closed"),
    ("a" * (MAX_PATTERN + 1), f"longer than {MAX_PATTERN} characters"),
])
def test_bad_patterns_are_one_line_config_errors(pattern, says):
    with pytest.raises(PatternError, match=re.escape(says)):
        Glob.parse(pattern)
    with pytest.raises(ConfigError) as info:
        HostPattern.parse(pattern, "site.toml: hosts[0]")
    text = str(info.value)
    assert text.startswith("site.toml: hosts[0]: match: ") and says in text and "\n" not in text
    assert len(text) < 700  # the pattern is shown bounded


def test_a_huge_range_is_never_expanded():
    """A range of 10**400 numbers costs what [0-9] costs: the steps depend on the digits, not the count."""
    small = Glob.parse("n[0-999999]")
    huge = Glob.parse("n[0-" + "9" * 400 + "]")
    for host in ("n123456", "n12345x", "n" + "7" * 200):
        assert small.run(host)[0] == (host[1:].isdigit() and len(host) <= 7)
        assert huge.run(host)[0] == host[1:].isdigit()
    assert small.run("n123456")[1] == huge.run("n123456")[1]
    many = Glob.parse("n[" + ",".join(str(i) for i in range(0, 400, 2)) + "]")  # 200 numbers, listed
    assert many.matches("n398") and not many.matches("n397")


@pytest.mark.parametrize("pattern", ["*a*a*a*a*a*a*a*a*b", "*?*?*?*?*?*?*?*?*?*!", "*[a-z]*[a-z]*[a-z]*[a-z]*1",
                                     "*[0-9]*[0-99]*[0-999]*[0-9999]*x"])
def test_hostile_globs_take_steps_linear_in_the_host(pattern):
    """fnmatch's regex backtracks on these (*a*a*...*b against aaaa...); here each host character
    visits each pattern position at most once, so doubling the host at most doubles the steps."""
    glob = Glob.parse(pattern)
    short, long_ = glob.run("a" * 100), glob.run("a" * 200)
    assert not short[0] and not long_[0]
    assert long_[1] <= 2.1 * short[1]
    assert long_[1] <= (len(glob.tokens) + 1) * 201


def test_a_host_longer_than_a_dns_name_matches_nothing():
    assert matches("*", "a" * MAX_HOST) and not matches("*", "a" * (MAX_HOST + 1))


# --- old /regex/ patterns -------------------------------------------------------------------------

HOSTS = ["login02", "gpu-login", "rack1-n07", "gpu017.rack3", "gpu017.rack30", "gpu1-a", "gpu3-b", "gpu2-a",
         "gpu13-a", "gpux", "gpu7", "n07", "a.cluster", "acluster", "", "gpu"]


@pytest.mark.parametrize("regex, glob", [
    (r"^login", "login*"), (r"n0[0-9]$", "*n0[0-9]"), (r"\.rack3$", "*.rack3"), (r"^gpu.*\.rack3$", "gpu*.rack3"),
    (r"^gpu[13]-[a-z]$", "gpu[1,3]-[a-z]"), (r"gpu[^0-9]", "*gpu[!0-9]*"), (r"^gpu\d$", "gpu[0-9]"),
    (r"^gpu.$", "gpu?"), (r"^gpu.+", "gpu?*"), (r"login", "*login*"), (r"^gpu$", "gpu"), (r"", "*"),
    (r"^a\.cluster$", "a.cluster"), (r"^gpu[0-9a-f]", "gpu[0-9a-f]*"),
])
def test_simple_regexes_become_globs_that_answer_as_re_did(regex, glob):
    assert from_regex(regex) == glob
    pattern = HostPattern.parse(f"/{regex}/", "t")
    for host in HOSTS:
        assert pattern.matches(host) == (re.search(regex, host) is not None), (regex, host)


@pytest.mark.parametrize("regex, why, hint", [
    (r"^gpu\d+$", "the repeat + has no glob form", "the nearest glob, broader, is gpu*"),
    (r"^n0[0-9]{2}$", "the repeat { has no glob form", "the nearest glob, broader, is n0*"),
    (r"(gpu|dgx)01", "one [[hosts]] block per alternative", None),
    (r"(a)\1", "one [[hosts]] block per alternative", None),
    (r"a(?=b)", "one [[hosts]] block per alternative", None),
    (r"(?i)^gpu", "one [[hosts]] block per alternative", None),
    (r"(a+)+$", "one [[hosts]] block per alternative", None),
    (r"\w+\.local$", r"\w has no glob form", "the nearest glob, broader, is *.local"),
    (r"^gpu\b", r"\b has no glob form", None),
    (r"gpu[0-9-]", "a class of digits with -", "the nearest glob, broader, is *gpu?*"),
])
def test_other_regexes_are_refused_saying_how_to_write_the_glob(regex, why, hint):
    with pytest.raises(ConfigError) as info:
        HostPattern.parse(f"/{regex}/", "site.toml: hosts[2]")
    text = str(info.value)
    assert text.startswith(f"site.toml: hosts[2]: match: /{regex}/: /regex/ patterns are no longer read")
    assert why in text and "gpu[001-064,100]" in text and "\n" not in text
    assert (hint in text) if hint else ("nearest glob" not in text)
