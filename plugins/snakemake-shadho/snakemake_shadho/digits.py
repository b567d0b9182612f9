"""Real objectives on scikit-learn's bundled digits data set (offline: no download).

- :func:`svm_loss`: 1 - mean k-fold cross-validated accuracy of an SVC (kernel and its
  hyperparameters from the trial's parameters), SHADHO's SVM benchmark on a data set that ships
  with scikit-learn.
- :func:`cnn_loss`: 1 - held-out accuracy of a small two-layer CNN (torch, CPU) on the 8x8
  images.
- :func:`evaluate`: dispatches on ``params["model"]`` (``svm_*`` or ``cnn``), the objective of
  ``workflows/hpo-digits``.

The data (:func:`load_data`) is the state a sticky worker keeps warm; pass it as ``data`` to
skip loading it again.
"""

from dataclasses import dataclass
from typing import Any, Optional

import numpy as np


@dataclass(frozen=True)
class Digits:
    """The digits images scaled to [0, 1], their labels, and a fixed stratified holdout split."""

    X: np.ndarray
    y: np.ndarray
    train: np.ndarray
    test: np.ndarray


def load_data(n_samples: Optional[int] = None, seed: int = 0) -> Digits:
    """The digits data (optionally a stratified subset of ``n_samples`` for quick runs)."""
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    X, y = load_digits(return_X_y=True)
    X = (X / 16.0).astype(np.float32)
    if n_samples is not None and n_samples < len(y):
        X, _, y, _ = train_test_split(X, y, train_size=n_samples, stratify=y, random_state=seed)
    index = np.arange(len(y))
    train, test = train_test_split(index, test_size=1 / 3, stratify=y, random_state=seed)
    return Digits(X, y, np.sort(train), np.sort(test))


def svm_loss(
    params: dict[str, Any], data: Optional[Digits] = None, folds: int = 3, threads: int = 1
) -> dict[str, Any]:
    """1 - mean ``folds``-fold CV accuracy of ``SVC(kernel, C, gamma, coef0, degree)``."""
    from sklearn.model_selection import cross_val_score
    from sklearn.svm import SVC

    data = data or load_data()
    kernel = params["kernel"]
    model = SVC(
        kernel=kernel,
        C=float(params["C"]),
        gamma=float(params.get("gamma", "scale")) if "gamma" in params else "scale",
        coef0=float(params.get("coef0", 0.0)),
        degree=int(params.get("degree", 3)),
        max_iter=int(params.get("max_iter", 100_000)),
    )
    # The folds run on the class's threads: libsvm releases the GIL, so a thread pool speeds
    # them up. joblib's default (process) backend started a process pool per trial, which made
    # the 2-thread class 10-50 times slower than the 1-thread one on 0.1-0.5 s fits (issue 16).
    n_jobs = min(max(1, int(threads)), folds)
    if n_jobs > 1:
        from joblib import parallel_config

        with parallel_config(backend="threading", n_jobs=n_jobs):
            scores = cross_val_score(model, data.X, data.y, cv=folds, n_jobs=n_jobs)
    else:
        scores = cross_val_score(model, data.X, data.y, cv=folds)
    return {"loss": 1.0 - float(np.mean(scores)), "accuracy": float(np.mean(scores))}


def cnn_loss(
    params: dict[str, Any], data: Optional[Digits] = None, threads: int = 1
) -> dict[str, Any]:
    """1 - holdout accuracy of a two-layer CNN trained with Adam on the 8x8 digits."""
    import torch
    from torch import nn

    torch.set_num_threads(max(1, int(threads)))
    data = data or load_data()
    torch.manual_seed(int(params.get("seed", 0)))
    channels = int(params["channels"])
    model = nn.Sequential(
        nn.Conv2d(1, channels, 3, padding=1),
        nn.ReLU(),
        nn.Conv2d(channels, 2 * channels, 3, padding=1),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.Flatten(),
        nn.Dropout(float(params.get("dropout", 0.0))),
        nn.Linear(2 * channels * 16, 10),
    )
    X = torch.from_numpy(data.X).reshape(-1, 1, 8, 8)
    y = torch.from_numpy(data.y).long()
    train, test = torch.from_numpy(data.train), torch.from_numpy(data.test)
    optimizer = torch.optim.Adam(model.parameters(), lr=float(params["lr"]))
    batch = int(params.get("batch_size", 64))
    generator = torch.Generator().manual_seed(int(params.get("seed", 0)))
    for _ in range(int(params["epochs"])):
        model.train()
        order = train[torch.randperm(len(train), generator=generator)]
        for start in range(0, len(order), batch):
            idx = order[start : start + batch]
            optimizer.zero_grad()
            nn.functional.cross_entropy(model(X[idx]), y[idx]).backward()
            optimizer.step()
    model.eval()
    with torch.no_grad():
        accuracy = float((model(X[test]).argmax(1) == y[test]).float().mean())
    return {"loss": 1.0 - accuracy, "accuracy": accuracy}


def evaluate(
    params: dict[str, Any],
    state: Any = None,
    threads: int = 1,
    folds: int = 3,
    n_samples: Optional[int] = None,
) -> dict[str, Any]:
    """The hpo-digits objective: an SVM or the CNN, by ``params["model"]``.

    ``state`` is the warm data (a :class:`Digits`) when the trial runs on a sticky worker.
    """
    data = state if isinstance(state, Digits) else load_data(n_samples)
    model = str(params.get("model", ""))
    if model.startswith("svm"):
        return svm_loss(params, data, folds=folds, threads=threads)
    if model == "cnn":
        return cnn_loss(params, data, threads=threads)
    raise ValueError(f"unknown model {model!r}: expected svm_* or cnn")
