import distea.autotrace  # noqa: F401

# isort: split

from concurrent.futures import ThreadPoolExecutor

from textkit.corpus import read_corpus, write_clean
from textkit.normalize import get_normalizer

header, records = read_corpus(snakemake.input[0])
min_len = max(snakemake.params.min_len, header.min_len)
normalize = get_normalizer(snakemake.config["normalizer"], min_len=min_len)

with ThreadPoolExecutor(max_workers=2) as pool:
    token_lists = list(pool.map(lambda record: normalize(record.text), records))

rows = [
    (record.label, tokens) for record, tokens in zip(records, token_lists, strict=False) if tokens
]
write_clean(snakemake.output[0], header, rows)
