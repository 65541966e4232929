"""The bundle format: what `topodiag collect` writes and `check --from` reads.

`manifest` reads and validates manifest.json and locates members; `archive` packs and unpacks
the tar.gz form safely; `writer` writes a bundle directory from collected records; `redact`
replaces identifiers consistently across every member. See `manifest` for the layout.
"""

from ..errors import BundleError

ARCHIVE_SUFFIXES = (".tar.gz", ".tgz", ".tar")  # a bundle's archive forms (here: told apart by name, nothing loaded)

# The members load when a name is asked for (PEP 562): `bundle.shown` (one-line errors) is imported on
# paths that never read a bundle, the prolog's among them, and must not bring tarfile and hashlib along.
_WHERE = {"MAX_ARCHIVE_BYTES": "archive", "MAX_MEMBER_BYTES": "archive",
          "MAX_MEMBERS": "archive", "pack": "archive", "unpack": "archive", "MANIFEST": "manifest",
          "SCHEMA_VERSION": "manifest", "STATUSES": "manifest", "Manifest": "manifest", "SourceEntry": "manifest",
          "is_bundle_dir": "manifest", "member_path": "manifest", "read_manifest": "manifest",
          "sha256_of": "manifest", "write_bundle_dir": "writer"}

__all__ = ["ARCHIVE_SUFFIXES", "BundleError", *_WHERE]


def __getattr__(name: str):
    import importlib

    if name in ("archive", "manifest", "writer"):  # `bundle.archive.place_dir` as before
        return importlib.import_module(f".{name}", __name__)
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value
