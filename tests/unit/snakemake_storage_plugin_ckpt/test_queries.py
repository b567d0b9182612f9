"""Which ``ckpt://`` queries are valid, and why the others are not."""

import pytest

from snakemake_storage_plugin_ckpt import StorageProvider


@pytest.mark.parametrize(
    "query",
    [
        "ckpt://results/model.bin",
        "ckpt://a.txt",
        "ckpt://results/{sample}/counts.{ext}",
        "ckpt://results/{sample,[A-Z]+}.txt",
        "ckpt://.hidden/x",
    ],
)
def test_relative_paths_and_wildcards_are_valid(query):
    result = StorageProvider.is_valid_query(query)
    assert result.valid and result.reason is None


@pytest.mark.parametrize(
    ("query", "reason"),
    [
        ("results/a.txt", "starts with 'ckpt://'"),
        ("s3://bucket/a.txt", "starts with 'ckpt://'"),
        ("ckpt://", "empty"),
        ("ckpt:///etc/passwd", "absolute"),
        ("ckpt://results/../../etc/passwd", "'..'"),
        ("ckpt://..", "'..'"),
        ("ckpt://results//a.txt", "empty or '.' component"),
        ("ckpt://results/./a.txt", "empty or '.' component"),
        ("ckpt://results/", "empty or '.' component"),
    ],
)
def test_invalid_queries_say_why(query, reason):
    result = StorageProvider.is_valid_query(query)
    assert not result.valid
    assert reason in result.reason
    assert reason in str(result)  # what Snakemake prints to the user
