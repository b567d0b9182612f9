"""Shared helpers of the DISTEA subject workflow."""
