"""Numeric helpers of the snakehelpers subject."""
