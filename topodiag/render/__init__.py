"""Turning results into text for people and data for programs."""
