#!/usr/bin/env python3
"""An independent client of `crossgroth serve`: Python's grpcio with stubs generated
now, by grpcio-tools, from the repository's proto/cuzk/v1/proving.proto. It proves
one 2 KiB WinningPoSt from a `crossgroth filecoin test-sector` directory, then reads
the status and the metrics, and exits non-zero on anything unexpected.

Usage: python_client.py --addr 127.0.0.1:PORT --sector-dir DIR
"""

import argparse
import importlib
import pathlib
import shlex
import sys
import tempfile

import grpc
from grpc_tools import protoc

ROOT = pathlib.Path(__file__).resolve().parents[2]
MAX_MESSAGE = 256 << 20


def stubs(out: pathlib.Path):
    """Generates proving_pb2 and proving_pb2_grpc into `out` and imports them."""
    proto_dir = ROOT / "proto"
    rc = protoc.main([
        "grpc_tools.protoc",
        f"-I{proto_dir}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        str(proto_dir / "cuzk" / "v1" / "proving.proto"),
    ])
    if rc != 0:
        sys.exit(f"error: grpcio-tools could not compile the proto (exit {rc})")
    sys.path.insert(0, str(out))
    pb2 = importlib.import_module("cuzk.v1.proving_pb2")
    grpc_mod = importlib.import_module("cuzk.v1.proving_pb2_grpc")
    return pb2, grpc_mod


def winning_inputs(sector_dir: pathlib.Path):
    """The WinningPoSt command test-sector wrote to commands.sh, as its flags."""
    for line in (sector_dir / "commands.sh").read_text().splitlines():
        if " winning-post " not in line:
            continue
        words = shlex.split(line)
        flags, key = {}, None
        for w in words:
            if w.startswith("--"):
                key = w[2:]
                flags.setdefault(key, [])
            elif key is not None:
                flags[key].append(w)
        return flags
    sys.exit(f"error: no winning-post command in {sector_dir / 'commands.sh'}")


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--addr", required=True, help="host:port of the daemon")
    ap.add_argument("--sector-dir", required=True, type=pathlib.Path,
                    help="a directory written by `crossgroth filecoin test-sector`")
    args = ap.parse_args()

    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp)
        (out / "cuzk" / "v1").mkdir(parents=True)
        for d in (out / "cuzk", out / "cuzk" / "v1"):
            (d / "__init__.py").write_text("")
        pb2, pb2_grpc = stubs(out)

        flags = winning_inputs(args.sector_dir)
        request = pb2.SubmitProofRequest(
            request_id="python-winning-1",
            proof_kind=pb2.WINNING_POST,
            registered_proof=int(flags["registered-proof"][0]),
            miner_id=int(flags["miner-id"][0]),
            randomness=bytes.fromhex(flags["randomness"][0]),
            vanilla_proofs=[pathlib.Path(p).read_bytes() for p in flags["vanilla"]],
            priority=pb2.CRITICAL,
        )
        options = [("grpc.max_send_message_length", MAX_MESSAGE),
                   ("grpc.max_receive_message_length", MAX_MESSAGE)]
        with grpc.insecure_channel(args.addr, options=options) as channel:
            stub = pb2_grpc.ProvingEngineStub(channel)
            before = stub.GetStatus(pb2.GetStatusRequest(), timeout=30)
            kinds = sorted(q.proof_kind for q in before.queues)
            assert kinds == ["porep-c2", "snap-update", "window-post", "winning-post"], kinds

            reply = stub.Prove(pb2.ProveRequest(submit=request), timeout=600).result
            if reply.status != pb2.AwaitProofResponse.COMPLETED:
                sys.exit(f"error: WinningPoSt {pb2.AwaitProofResponse.Status.Name(reply.status)}: "
                         f"{reply.error_message}")
            assert len(reply.proof) == 192, len(reply.proof)
            print(f"python: WinningPoSt job {reply.job_id}: {len(reply.proof)} bytes, "
                  f"total {reply.total_ms} ms (gpu {reply.gpu_compute_ms} ms)")

            # The same request id again: the same job, no second proof.
            again = stub.Prove(pb2.ProveRequest(submit=request), timeout=600).result
            assert again.job_id == reply.job_id and again.proof == reply.proof

            status = stub.GetStatus(pb2.GetStatusRequest(), timeout=30)
            assert status.total_proofs_completed == before.total_proofs_completed + 1, status
            loaded = [s.circuit_id for s in status.loaded_srs]
            assert "winning-2k" in loaded, loaded
            print(f"python: status: {status.total_proofs_completed} completed, "
                  f"loaded {loaded}, uptime {status.uptime_seconds} s")

            text = stub.GetMetrics(pb2.GetMetricsRequest(), timeout=30).prometheus_text
            want = 'crossgroth_proofs_total{proof_kind="winning_post",status="completed"}'
            assert want in text, text[:2000]
            print(f"python: metrics: {len(text.splitlines())} lines")

            try:
                stub.SubmitProof(pb2.SubmitProofRequest(proof_kind=42), timeout=30)
                sys.exit("error: an unknown proof kind was accepted")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e
    print("python_client: 1 passed, 0 failed")


if __name__ == "__main__":
    main()
