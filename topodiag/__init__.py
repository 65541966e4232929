"""topodiag: diagnose the interconnect of GPU nodes (NVLink, PCIe, InfiniBand/RoCE, NCCL).

The library API (topodiag/pipeline/), imported on first use so that `import topodiag` stays cheap:

    import topodiag
    d = topodiag.diagnose(["fixtures/hosts/hgx-h100-healthy-assembled"])   # files, dirs, bundles
    d.exit_code                      # 0 ok, 1 findings at or above fail_on, 3 incomplete, 4 internal
    [f.code for f in d.findings]     # Finding: code, slug, severity, subjects, message, evidence, ...
    d.topology.graph                 # the node as a networkx MultiGraph
    d.to_json()                      # the report `topodiag check --format json` prints

`topodiag.diagnose(live=topodiag.LiveOptions(prolog=True))` checks this node live. Errors are the
classes of topodiag.errors (UsageError, InputError and their kinds).
"""

__version__ = "0.1.0"

_API = {
    "diagnose": "pipeline", "survey": "pipeline", "load": "pipeline", "collect_live": "pipeline",
    "collect_bundle": "pipeline", "Diagnosis": "pipeline", "LiveOptions": "pipeline",
    "TopodiagError": "errors", "UsageError": "errors", "InputError": "errors", "ParseError": "errors",
    "BundleError": "errors", "ConfigError": "errors", "SelectionError": "errors", "ProfileError": "errors",
}

__all__ = ["__version__", *_API]


def __getattr__(name: str):
    module = _API.get(name)
    if module is None:
        raise AttributeError(f"module 'topodiag' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{module}"), name)
