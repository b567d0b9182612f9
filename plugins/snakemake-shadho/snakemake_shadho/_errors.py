"""Exceptions of the shadho package (factored out to avoid import loops)."""


class ShadhoError(Exception):
    """Base class of every error shadho raises on purpose."""


class SpecError(ShadhoError, ValueError):
    """A search spec is invalid. ``key`` is the dotted path of the offending entry."""

    def __init__(self, key: str, problem: str, fix: str = "") -> None:
        self.key = key
        self.problem = problem
        self.fix = fix
        message = f"invalid search spec at {key!r}: {problem}"
        super().__init__(f"{message}. {fix}" if fix else message)

    def __reduce__(self) -> tuple[object, ...]:
        return (type(self), (self.key, self.problem, self.fix))


class StoreError(ShadhoError):
    """A trial-history file is unreadable or inconsistent with the spec."""


class TrialFailed(Exception):
    """Raise it from an objective for a trial that fails as the objective expects (training
    diverged, these parameters do not fit in memory): the trial is recorded as failed, TPE
    counts it as a very bad result, and the search goes on. Any other exception is an error in
    the objective (a missing module, a typo): it fails the run unless ``max_failed_trials``
    allows it."""


class TrialsFailedError(ShadhoError):
    """More trials failed with undeclared errors than ``max_failed_trials`` allows."""
