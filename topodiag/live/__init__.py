"""Live collection on this node: commands with timeouts (`commands`), the NVML, sysfs and pyverbs
probes, and `collection`, which runs every source concurrently under one deadline."""
