"""Where raw text comes from: live commands, probes, bundle members, files the user names."""
