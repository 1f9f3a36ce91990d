#!/usr/bin/python3
"""Self-test of ort-run.js against numpy, on the model of make_model.py.

Run after ../install:  /usr/bin/python3 bench/onnxruntime/test/selftest.py
(needs onnx and numpy, and node on PATH). Checks, at 1 and 2 threads with
spinning on and off: outputs from --inputs files and from seeded inputs
against numpy; the timing JSON line; serve mode through a pipe, all commands at
once and one at a time with stdin kept open; the error for an input file of the
wrong size; and (Linux) that --spin reaches onnxruntime's thread pool: on a
larger conv at 2 threads the pool's worker blocks (voluntary context switches)
after each parallel section with spinning off, and hardly ever with it on.
onnxruntime accepts a misspelt config key without a word, so only such an
effect shows the entry was taken. Prints "N passed, N failed".
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ORT_RUN = os.path.join(HERE, "..", "ort-run.js")
RESULTS = {"passed": 0, "failed": 0}


def check(name, ok, detail=""):
    RESULTS["passed" if ok else "failed"] += 1
    print(("ok    " if ok else "FAIL  ") + name + (f": {detail}" if detail else ""), flush=True)


def run(args, stdin=None):
    return subprocess.run(["node", ORT_RUN] + args, input=stdin, capture_output=True, text=True, timeout=120)


def mulberry32_inputs(seed, counts):
    """The seeded inputs of ort-run.js (see its README), in numpy."""
    s = seed & 0xFFFFFFFF
    out = []
    for count in counts:
        vals = np.empty(count, np.float32)
        for j in range(count):
            s = (s + 0x6D2B79F5) & 0xFFFFFFFF
            t = ((s ^ (s >> 15)) * (s | 1)) & 0xFFFFFFFF
            t ^= (t + (((t ^ (t >> 7)) * (t | 61)) & 0xFFFFFFFF)) & 0xFFFFFFFF
            u = (t ^ (t >> 14)) & 0xFFFFFFFF
            vals[j] = (u >> 8) / 8388608.0 - 1.0
        out.append(vals)
    return out


def reference(x, a, w, b, m):
    n, c, h, wd = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    y = np.zeros((n, w.shape[0], h, wd))
    for ky in range(3):
        for kx in range(3):
            patch = xp[:, :, ky:ky + h, kx:kx + wd]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, ky, kx].astype(np.float64))
    y += b.astype(np.float64)[None, :, None, None]
    y = np.maximum(y, 0)
    z = a.astype(np.float64) @ m.astype(np.float64)
    return [y, z]


def compare(name, prefix, ref):
    for i, r in enumerate(ref):
        path = f"{prefix}.out{i}.f32"
        got = np.fromfile(path, dtype="<f4")
        if got.size != r.size:
            check(f"{name} out{i}", False, f"{got.size} values, expected {r.size}")
            continue
        err = float(np.max(np.abs(got.astype(np.float64) - r.ravel())))
        check(f"{name} out{i}", err < 1e-4, f"max abs err {err:.2e}")


def thread_stats(pid):
    """{tid: (cpu ticks, voluntary context switches)} of a process's threads."""
    out = {}
    for tid in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{tid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            with open(f"/proc/{pid}/task/{tid}/status") as f:
                vcs = next(int(l.split()[1]) for l in f if l.startswith("voluntary_ctxt_switches"))
            out[tid] = (int(fields[11]) + int(fields[12]), vcs)
        except (FileNotFoundError, StopIteration):
            pass
    return out


def worker_blocks(model, spin, runs):
    """Voluntary context switches, during `runs` timed runs at 2 threads, of
    the busiest thread other than the main one (the intra-op pool's worker)."""
    p = subprocess.Popen(["node", ORT_RUN, model, "--threads", "2", "--spin", spin, "--serve", "--warmup", "5"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        json.loads(p.stdout.readline())
        before = thread_stats(p.pid)
        p.stdin.write(f"time {runs}\n")
        p.stdin.flush()
        json.loads(p.stdout.readline())
        after = thread_stats(p.pid)
        p.stdin.write("quit\n")
        p.stdin.flush()
        p.wait(timeout=60)
    finally:
        if p.poll() is None:
            p.kill()
    deltas = [(after[t][0] - before[t][0], after[t][1] - before[t][1])
              for t in after if t in before and t != str(p.pid)]
    return max(deltas)[1]


def make_big_conv(path):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    w = (np.random.default_rng(0).standard_normal((64, 64, 3, 3)) * 0.05).astype(np.float32)
    g = helper.make_graph(
        [helper.make_node("Conv", ["X", "W"], ["Y"], pads=[1, 1, 1, 1])], "big",
        [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, 64, 56, 56])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, 64, 56, 56])],
        [numpy_helper.from_array(w, "W")])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    onnx.save(m, path)


def main():
    tmp = tempfile.mkdtemp(prefix="ort-selftest-")
    try:
        return tests(tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def tests(tmp):
    model = os.path.join(tmp, "t.onnx")
    subprocess.run([sys.executable, os.path.join(HERE, "make_model.py"), model], check=True)
    params = np.load(os.path.join(tmp, "t.npz"))
    w, b, m = params["W"], params["B"], params["M"]

    rng = np.random.default_rng(7)
    x = rng.standard_normal((1, 3, 8, 8)).astype(np.float32)
    a = rng.standard_normal((4, 32)).astype(np.float32)
    fx, fa = os.path.join(tmp, "x.f32"), os.path.join(tmp, "a.f32")
    x.astype("<f4").tofile(fx)
    a.astype("<f4").tofile(fa)
    ref_files = reference(x, a, w, b, m)
    sx, sa = mulberry32_inputs(5, [x.size, a.size])
    ref_seeded = reference(sx.reshape(x.shape), sa.reshape(a.shape), w, b, m)

    for threads in (1, 2):
        for spin in ("on", "off"):
            tag = f"t{threads}-{spin}"
            common = ["--threads", str(threads), "--spin", spin, "--warmup", "2", "--repeats", "5"]
            p = run([model, "--inputs", f"{fx},{fa}", "--write-outputs", os.path.join(tmp, tag)] + common)
            check(f"{tag} files exit 0", p.returncode == 0, p.stderr.strip())
            if p.returncode == 0:
                lines = p.stdout.strip().splitlines()
                rec = json.loads(lines[-1])
                keys = {"ort_version", "threads", "spin", "runs", "median_ms", "min_ms", "mean_ms", "times_ms"}
                check(f"{tag} json", len(lines) == 1 and keys <= rec.keys() and rec["runs"] == 5
                      and rec["threads"] == threads and rec["spin"] == spin and len(rec["times_ms"]) == 5
                      and rec["min_ms"] <= rec["median_ms"], lines[-1][:160])
                compare(f"{tag} files", os.path.join(tmp, tag), ref_files)
            p = run([model, "--seed", "5", "--write-outputs", os.path.join(tmp, tag + "-seed")] + common)
            check(f"{tag} seeded exit 0", p.returncode == 0, p.stderr.strip())
            if p.returncode == 0:
                compare(f"{tag} seeded", os.path.join(tmp, tag + "-seed"), ref_seeded)

    p = run([model, "--threads", "2", "--serve", "--warmup", "2"], stdin="time 5\ntime 3 1\nbogus\nquit\n")
    lines = p.stdout.strip().splitlines()
    recs = [json.loads(s) for s in lines]
    check("serve", p.returncode == 0 and len(recs) == 4 and recs[0].get("ready") is True
          and recs[1]["runs"] == 5 and recs[2]["runs"] == 3 and "error" in recs[3],
          f"rc {p.returncode}, {len(recs)} lines")
    p = run([model, "--serve", "--warmup", "0"], stdin="time 2\n")
    check("serve exits at end of input", p.returncode == 0 and len(p.stdout.strip().splitlines()) == 2,
          f"rc {p.returncode}")

    p = subprocess.Popen(["node", ORT_RUN, model, "--serve", "--warmup", "1"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    ready = json.loads(p.stdout.readline())
    replies = []
    for n in (3, 4):
        p.stdin.write(f"time {n}\n")
        p.stdin.flush()
        replies.append(json.loads(p.stdout.readline()).get("runs"))
    p.stdin.write("quit\n")
    p.stdin.flush()
    rc = p.wait(timeout=60)
    check("serve one command at a time", ready.get("ready") is True and replies == [3, 4] and rc == 0,
          f"replies {replies}, rc {rc}")

    if sys.platform.startswith("linux"):
        big = os.path.join(tmp, "big.onnx")
        make_big_conv(big)
        off = worker_blocks(big, "off", 100)
        on = worker_blocks(big, "on", 100)
        check("spin reaches the thread pool", off >= 50 and on * 4 < off,
              f"worker blocked {off}x with spin off, {on}x with spin on, in 100 runs")

    short = os.path.join(tmp, "short.f32")
    np.zeros(10, "<f4").tofile(short)
    p = run([model, "--inputs", f"{fx},{short}"])
    check("size mismatch", p.returncode != 0 and short in p.stderr and "40 bytes" in p.stderr
          and "expected 512" in p.stderr, p.stderr.strip())

    print(f"{RESULTS['passed']} passed, {RESULTS['failed']} failed")
    return 0 if RESULTS["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
