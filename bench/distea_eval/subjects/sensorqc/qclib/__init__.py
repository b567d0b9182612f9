"""Helpers of the sensorqc subject."""
