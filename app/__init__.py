"""Babelfind's front ends: the PySide6 GUI and the `babelfind` command line."""
