"""The claim workload on a peer system (bench/peers.py): Dask or Ray, model loaded once a worker.

``python bench/_peer_runner.py dask|ray WORKFLOW_DIR OUT_DIR --claims TSV --ids-file FILE
[--workers 2]`` verifies the listed claims with one task (Dask) or actor call (Ray) per claim,
each doing what the workflow's verify invocation does at ``batch_size=1``: the claim's
features and the head's prediction (``claimcheck.features`` + ``predict``) and one verdict
file, written atomically. The encoder, the head and the claims table load once per worker
process:

- **Dask**: a ``distributed.LocalCluster`` of N single-threaded worker processes and a
  ``WorkerPlugin`` whose ``setup`` loads them on each worker; ``client.map`` submits every
  claim at once.
- **Ray**: N actors (``num_cpus=1``) that load them in ``__init__``; calls assigned round
  robin, all submitted at once.

The whole command is timed by the caller: start-up, model loads and shutdown included, as in
the sticky run and the limit loop.
"""

import argparse
import sys
from pathlib import Path


class Verifier:
    """One worker's state: encoder, head, claims by id; verifies one claim into a file."""

    def __init__(self, workflow: str, claims: str, out_dir: str) -> None:
        sys.path.insert(0, str(Path(workflow) / "scripts"))
        import claimcheck

        self.claimcheck = claimcheck
        self.encoder = claimcheck.load_encoder()  # sets torch to one thread
        self.head = claimcheck.load_head(Path(workflow) / "results" / "head.npz")
        self.claims = {c.claim_id: c for c in claimcheck.read_claims(claims, split="test")}
        self.out_dir = Path(out_dir)
        self.out_dir.mkdir(parents=True, exist_ok=True)

    def verify(self, claim_id: str) -> str:
        cc = self.claimcheck
        claim = self.claims[claim_id]
        (label,), (conf,) = cc.predict(self.head, cc.features(self.encoder, [claim]))

        def write(tmp: Path) -> None:
            tmp.write_text(
                "claim_id\tlabel\tpredicted\tconfidence\n"
                f"{claim.claim_id}\t{claim.label}\t{label}\t{conf:.4f}\n"
            )

        cc.write_atomically(self.out_dir / f"{claim_id}.tsv", write)
        return claim_id


def run_dask(args: argparse.Namespace, ids: list[str]) -> None:
    from distributed import Client, LocalCluster, WorkerPlugin, get_worker

    class LoadOnce(WorkerPlugin):
        name = "claim-verifier"

        def __init__(self, workflow: str, claims: str, out_dir: str) -> None:
            self.state = (workflow, claims, out_dir)

        def setup(self, worker) -> None:  # type: ignore[no-untyped-def]
            worker.claim_verifier = Verifier(*self.state)

    def verify(claim_id: str) -> str:
        return get_worker().claim_verifier.verify(claim_id)

    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            host="127.0.0.1",
        ) as cluster,
        Client(cluster) as client,
    ):
        client.register_plugin(LoadOnce(str(args.workflow), str(args.claims), str(args.out_dir)))
        done = client.gather(client.map(verify, ids, pure=False))
    if len(done) != len(ids):
        sys.exit(f"dask verified {len(done)} of {len(ids)} claims")


def run_ray(args: argparse.Namespace, ids: list[str]) -> None:
    import ray

    ray.init(
        num_cpus=args.workers,
        include_dashboard=False,
        log_to_driver=False,
        configure_logging=False,
    )
    try:
        actor = ray.remote(num_cpus=1)(Verifier)
        actors = [
            actor.remote(str(args.workflow), str(args.claims), str(args.out_dir))
            for _ in range(args.workers)
        ]
        refs = [actors[i % len(actors)].verify.remote(c) for i, c in enumerate(ids)]
        done = ray.get(refs)
    finally:
        ray.shutdown()
    if len(done) != len(ids):
        sys.exit(f"ray verified {len(done)} of {len(ids)} claims")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("peer", choices=["dask", "ray"])
    parser.add_argument("workflow", type=Path)
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--claims", type=Path, required=True)
    parser.add_argument("--ids-file", type=Path, required=True)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    ids = args.ids_file.read_text().split()
    (run_dask if args.peer == "dask" else run_ray)(args, ids)


if __name__ == "__main__":
    main()
