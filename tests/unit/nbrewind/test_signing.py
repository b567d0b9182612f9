"""Record signatures: trusted, tampered, another key, unsigned; the key file's safety."""

import os
import stat

import pytest

from nbrewind import Trust
from nbrewind._signing import SigningKeyError, load_key, sign, verify

RECORD = {
    "source": "sha256:ab",
    "reads": {"x": "sha256:01"},
    "writes": {
        "y": {"kind": "pickle", "hash": "sha256:02", "digest": "sha256:03", "inline": "AA=="}
    },
    "status": "executed",
    "reason": "audit",
}


@pytest.fixture
def key(tmp_path, monkeypatch):
    monkeypatch.setenv("NBREWIND_KEY_FILE", str(tmp_path / "k" / "key"))
    return load_key()


def signed(key):
    record = {k: (dict(v) if isinstance(v, dict) else v) for k, v in RECORD.items()}
    record["sig"] = sign(record, key)
    return record


def test_key_is_created_private_and_reused(key, tmp_path):
    path = tmp_path / "k" / "key"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert load_key() == key


def test_a_key_others_can_read_is_refused(key, tmp_path):
    os.chmod(tmp_path / "k" / "key", 0o644)
    with pytest.raises(SigningKeyError, match="chmod 600"):
        load_key()


def test_own_signature_is_trusted_and_status_changes_do_not_matter(key):
    record = signed(key)
    record["status"], record["reason"] = "restored", "unchanged"
    assert verify(record, key) is Trust.TRUSTED


def test_moving_a_blob_between_inline_and_store_keeps_the_signature(key):
    record = signed(key)
    del record["writes"]["y"]["inline"]
    record["writes"]["y"]["object"] = "sha256:03"
    assert verify(record, key) is Trust.TRUSTED


@pytest.mark.parametrize(
    "edit",
    [
        lambda r: r["writes"]["y"].update(digest="sha256:ff"),
        lambda r: r["reads"].update(x="sha256:ff"),
        lambda r: r.update(source="sha256:cd"),
    ],
)
def test_any_signed_fact_changed_is_tampering(key, edit):
    record = signed(key)
    edit(record)
    assert verify(record, key) is Trust.TAMPERED


def test_other_keys_and_missing_signatures_are_not_trusted(key, tmp_path, monkeypatch):
    record = signed(key)
    monkeypatch.setenv("NBREWIND_KEY_FILE", str(tmp_path / "other"))
    assert verify(record, load_key()) is Trust.OTHER_KEY
    assert verify(dict(RECORD), key) is Trust.UNSIGNED
