"""The bundle format: what `topodiag collect` writes and `check --from` reads.

`manifest` reads and validates manifest.json and locates members; `archive` packs and unpacks
the tar.gz form safely; `writer` writes a bundle directory from collected records; `redact`
replaces identifiers consistently across every member. See `manifest` for the layout.
"""

from ..errors import BundleError
from .archive import ARCHIVE_SUFFIXES, MAX_ARCHIVE_BYTES, MAX_MEMBER_BYTES, MAX_MEMBERS, pack, unpack
from .manifest import (MANIFEST, SCHEMA_VERSION, STATUSES, Manifest, SourceEntry, is_bundle_dir, member_path,
                       read_manifest, sha256_of)
from .writer import write_bundle_dir

__all__ = ["BundleError", "ARCHIVE_SUFFIXES", "MAX_ARCHIVE_BYTES", "MAX_MEMBER_BYTES", "MAX_MEMBERS", "pack",
           "unpack", "MANIFEST", "SCHEMA_VERSION", "STATUSES", "Manifest", "SourceEntry", "is_bundle_dir",
           "member_path", "read_manifest", "sha256_of", "write_bundle_dir"]
