"""Reading a big input in pieces: the only code that knows chunks, line cuts and worker processes.

    chunks.py    a file (or text, or lines) cut into chunks of whole lines; a giant line is cut
                 rather than held whole, so memory is a few chunks whatever the input
    lines.py     whole-chunk line scans (compiled from _cscan.c where the install could build it)
    workers.py   how many processes work at once (the usable CPUs, TOPODIAG_WORKERS) and the pool
    parallel.py  a reader's state-free per-chunk `digest` mapped over the workers, merged in order
    onepass.py   one read of a file for every parser that reads it in chunks
    memory.py    a big input's freed chunk-sized blocks kept by malloc for the next (glibc)

A reader plugs in by duck typing (`iter_chunks`, `digest`, `parse_chunks`, `ChunkReader`: the
nccl_debug and nccl_tests parsers); this package never imports a parser, and what a line means
stays with its parser. A base layer: it imports the standard library and topodiag.errors only.
"""
