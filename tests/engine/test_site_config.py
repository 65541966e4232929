"""The site config: host patterns NHC- and ClusterShell-style, blocks applied in order, errors."""

from __future__ import annotations

import pytest

from topodiag.engine.runner import ConfigError
from topodiag.engine.site_config import HostPattern, load


@pytest.mark.parametrize("pattern, host, matches", [
    ("gpu[001-064]", "gpu001", True),
    ("gpu[001-064]", "gpu064", True),
    ("gpu[001-064]", "gpu065", False),
    ("gpu[001-064]", "gpu1", False),       # zero-padded range: three digits
    ("gpu[001-064]", "gpu0010", False),
    ("gpu[1-64]", "gpu17", True),          # unpadded: any width
    ("gpu[001-064,100]", "gpu100", True),
    ("gpu[001-004]-ib", "gpu003-ib", True),
    ("gpu[001-004]-ib", "gpu003", False),
    ("rack[1-2]-n[01-16]", "rack2-n16", True),
    ("rack[1-2]-n[01-16]", "rack3-n16", False),
    ("gpu*", "gpu017.cluster", True),
    ("*.cluster", "gpu017.cluster", True),
    ("*.cluster", "gpu017", False),
    ("gpu0?7", "gpu017", True),
    ("/^login/", "login02", True),
    ("/^login/", "gpu-login", False),
    ("/n0[0-9]$/", "rack1-n07", True),
    ("node017", "node017", True),
    ("node017", "node0170", False),
])
def test_host_patterns(pattern, host, matches):
    assert HostPattern.parse(pattern, "t").matches(host) is matches


def write(tmp_path, text):
    path = tmp_path / "site.toml"
    path.write_text(text)
    return str(path)


SITE = """
profile = "dgx-h100"

[rules.TOPO003]
severity = "error"
params.max_path = "PXB"

[[hosts]]
match = "gpu[001-064]"
profile = "hgx-h200"
[hosts.rules.IB002.params]
expected_rate_gbps = 200

[[hosts]]
match = "gpu0[0-9][0-9]"
[hosts.rules.TOPO003]
params.max_path = "PIX"
[hosts.rules.NCCL001]
enabled = false
"""


def test_blocks_apply_in_order_over_the_top_level(tmp_path):
    site = load(write(tmp_path, SITE))
    rules, profile, matched = site.for_host("gpu017")
    assert profile == "hgx-h200" and matched == ["gpu[001-064]", "gpu0[0-9][0-9]"]
    assert rules["TOPO003"] == {"severity": "error", "params": {"max_path": "PIX"}}
    assert rules["IB002"] == {"params": {"expected_rate_gbps": 200}} and rules["NCCL001"] == {"enabled": False}
    rules, profile, matched = site.for_host("gpu100")
    assert profile == "dgx-h100" and matched == []  # gpu100: outside 001-064 and not gpu0NN
    rules, profile, matched = site.for_host("login1")
    assert matched == [] and rules == {"TOPO003": {"severity": "error", "params": {"max_path": "PXB"}}}
    assert site.for_host(None)[2] == []  # a host nobody named matches no block
    # the config itself is not changed by asking
    assert site.for_host("login1")[0]["TOPO003"]["params"] == {"max_path": "PXB"}


@pytest.mark.parametrize("text, where", [
    ("colour = 1", "colour: unknown key"),
    ("[[hosts]]\nprofile = 'x'", "hosts[0]: match: missing"),
    ("[[hosts]]\nmatch = 'gpu[9-1]'", "runs backwards"),
    ("[[hosts]]\nmatch = '/gpu[/'", "is never closed"),
    ("[[hosts]]\nmatch = '/^gpu\\d+$/'", "no exact glob (the repeat + has no glob form)"),
    ("[[hosts]]\nmatch = 'a'\nwhat = 1", "hosts[0]: what: unknown key"),
    ("hosts = 3", "hosts: expected [[hosts]] tables"),
    ("rules = 3", "rules: must be [rules.CODE] tables"),
    ("profile = 3", "profile: must be a profile name"),
    ("x = [", "not valid TOML"),
])
def test_config_errors_name_the_file_and_key(tmp_path, text, where):
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    assert str(info.value).startswith(path) and where in str(info.value)


@pytest.mark.parametrize("text, where", [
    ("[rules.IB002.params]\nexpected_rate_gbps = nan", "rules.IB002.params.expected_rate_gbps: nan is not a number"),
    ("[rules.IB002.params]\nexpected_rate_gbps = inf", "rules.IB002.params.expected_rate_gbps: inf is not a usable"),
    ("[rules.PERF001.params]\nmin_fraction = -0.5", "rules.PERF001.params.min_fraction: -0.5 is negative"),
    ("[rules.IB009.params]\nmin_changes = -1", "rules.IB009.params.min_changes: -1 is negative"),
    ("[[hosts]]\nmatch = 'gpu*'\n[hosts.rules.IB002.params]\nexpected_rate_gbps = -inf",
     "hosts[0]: rules.IB002.params.expected_rate_gbps: -inf is not a usable"),
    ("[rules.IB001.params]\nexpected_ports = [1, nan]", "rules.IB001.params.expected_ports[1]: nan"),
])
def test_a_threshold_that_is_nan_inf_or_negative_is_refused_by_name(tmp_path, text, where):
    """A nan threshold made every comparison false: the rule (IB002) silently never fired."""
    path = write(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load(path)
    assert where in str(info.value) and "\n" not in str(info.value)


def test_zero_and_positive_thresholds_load(tmp_path):
    cfg = load(write(tmp_path, "[rules.IB002.params]\nexpected_rate_gbps = 0\n[rules.PERF001.params]\nmin_fraction = 0.7"))
    assert cfg.rules["PERF001"]["params"]["min_fraction"] == 0.7


def test_a_config_that_is_not_utf8_is_a_config_error(tmp_path):
    path = tmp_path / "site.toml"
    path.write_bytes(b"\xff\xfe[rules")
    with pytest.raises(ConfigError) as info:
        load(str(path))
    assert str(info.value).startswith(str(path)) and "not valid TOML" in str(info.value)


def test_a_fifo_or_a_huge_file_as_config_is_refused_not_waited_for(tmp_path):
    import os

    fifo = tmp_path / "site.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ConfigError) as info:
        load(str(fifo))  # it blocked forever in open()
    assert "not a regular file" in str(info.value)
    big = tmp_path / "big.toml"
    big.write_text("# " + "x" * (5 * 1024 * 1024) + "\n")
    with pytest.raises(ConfigError) as info:
        load(str(big))
    assert "larger than 4 MB" in str(info.value)
