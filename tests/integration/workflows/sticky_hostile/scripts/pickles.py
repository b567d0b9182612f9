# Objects of classes defined in the script pickle as __main__.<name>, as in a fresh process.
import pickle

import probe


class Record:
    def __init__(self, value):
        self.value = value


with open(snakemake.output[0], "w") as out:
    out.write(probe.report(globals()))
    blob = pickle.dumps(Record(snakemake.params.value), protocol=4)
    out.write(f"pickle: {blob.hex()}\n{pickle.loads(blob).value}\n")
