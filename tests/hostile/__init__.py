"""Hostile inputs, round 2: each test file rebuilds, at test time and small, one reproducer of an
attack pass on topodiag and checks the defence (memory bombs run in a child process under
RLIMIT_AS; growth is counted in steps, never timed):

    test_bug_report_bombs.py        nvidia-bug-report padding and gzip bombs (N1, N2)
    test_manifest_amplification.py  a member listed many times in a manifest (N3)
    test_fleet_dir.py               links, FIFOs, devices and non-reports in a fleet directory;
                                    a node with an error finding (N5, N6, N20)
    test_pci_acs_growth.py          the ACS rule on a large lspci -vvv (N7)
    test_tools_die_with_topodiag.py a SIGKILLed topodiag's tools (N12)
    test_numbers.py                 1e308, NaN, inf and runaway sizes in plan/compare/charts (N13-N15, N22)
    test_terminal_escapes.py        control characters of device names on the terminal (N19)
    test_kmsg_device.py             a /dev/zero as the kernel log (N21)
    test_prometheus_labels.py       control characters in Prometheus label values (N23)
    test_collect_force.py           collect -o over an existing archive (N24)
    test_redaction_names.py         redaction of file suffixes, model-named hosts, private-use
                                    characters and what else named a site (N16, N17, N25, N18 in part)
"""
