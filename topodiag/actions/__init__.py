"""What topodiag does to the world beyond reading it: drain and resume a node in Slurm (`slurm`)
and run a command on many nodes (`fanout`)."""
