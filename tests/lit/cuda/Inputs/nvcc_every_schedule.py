"""Builds every bundled GPU schedule (ops/*/schedules and tests/gpu) through
CUDA C++: kiln compile --emit cubin --via cuda, where nvcc treats any
warning as an error. Prints one line per kernel (registers, spills) and,
for each op's launcher header, whether a translation unit including it
compiles. Exits 1 on any failure, or on a spill in an sm_100a kernel.

usage: nvcc_every_schedule.py KILN REPO OUTDIR
"""
import concurrent.futures
import os
import re
import subprocess
import sys

kiln, repo, out = sys.argv[1:4]
nvcc = os.environ.get("KILN_NVCC", "nvcc")
jobs = []


def source_of_op(directory, schedule):
    """The .tile file of `directory` whose kernel or op the schedule names."""
    op = re.search(r"^op:\s*(\w+)", open(schedule).read(), re.M).group(1)
    for t in sorted(os.listdir(directory)):
        if t.endswith(".tile") and re.search(rf"^(kernel|op) {op}\(",
                                             open(os.path.join(directory, t)).read(), re.M):
            return os.path.join(directory, t)
    sys.exit(f"no .tile in {directory} defines {op}, which {schedule} names")


for root, tests in ((os.path.join(repo, "ops"), False), (os.path.join(repo, "tests/gpu"), True)):
    for dirpath, _, files in os.walk(root):
        for f in sorted(files):
            # (Not an op's selections, ops/*/select: they name schedules.)
            if f.endswith(".yaml") and "_sm_" in f and os.path.basename(dirpath) != "select":
                op_dir = os.path.dirname(dirpath) if dirpath.endswith("schedules") else dirpath
                if tests:  # the tests/gpu source defining the schedule's op
                    tile = source_of_op(op_dir, os.path.join(dirpath, f))
                elif f.startswith("decode"):
                    tile = os.path.join(op_dir, "decode.tile")
                elif f.startswith("mtp"):
                    tile = os.path.join(op_dir, "decode_mtp.tile")
                elif f.startswith("prefill"):
                    tile = os.path.join(op_dir, "prefill.tile")
                else:
                    tile = os.path.join(op_dir, os.path.basename(op_dir) + ".tile")
                jobs.append((tile, os.path.join(dirpath, f)))
jobs.sort()


def build(job):
    tile, schedule = job
    name = os.path.basename(schedule)[:-5]
    target = "sm_100a" if "sm_100a" in name else "sm_90a"
    cu = os.path.join(out, name + ".cu")
    lines, ok = [], True
    done = subprocess.run([kiln, "compile", tile, "-s", schedule, "--emit", "cuda", "-o", cu],
                          capture_output=True, text=True)
    if done.returncode:
        return name, False, [f"FAIL {name}: {done.stderr.strip()}"]
    done = subprocess.run([kiln, "compile", tile, "-s", schedule, "--emit", "cubin", "--via", "cuda",
                           "-o", os.path.join(out, name + ".cubin")], capture_output=True, text=True)
    if done.returncode:
        return name, False, [f"FAIL {name}: {done.stderr.strip()}"]
    for m in re.finditer(r"kiln: (\w+) \(.*?\) for (\w+): (\d+) registers.*?, (\d+) bytes spill stores, "
                         r"(\d+) bytes spill loads", done.stderr):
        spills = int(m.group(4)) + int(m.group(5))
        bad = target == "sm_100a" and spills
        ok &= not bad
        lines.append(f"{'FAIL' if bad else 'ok'} {name} {m.group(1)} {m.group(2)}: "
                     f"{m.group(3)} registers, {spills} bytes spilled")
    # The launcher header compiles in a translation unit of its own.
    use = os.path.join(out, name + "_use.cu")
    with open(use, "w") as f:
        f.write(f'#include "{name}.h"\n')
    done = subprocess.run([nvcc, "-c", "-std=c++17", f"-gencode=arch=compute_{target[3:]},code={target}",
                           "-Werror", "all-warnings", "-I", out, use, "-o", use + ".o"],
                          capture_output=True, text=True)
    ok &= done.returncode == 0
    lines.append(f"{'ok' if done.returncode == 0 else 'FAIL'} {name} header"
                 + ("" if done.returncode == 0 else ": " + done.stderr.strip()))
    return name, ok, lines


failed = 0
with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
    for name, ok, lines in pool.map(build, jobs):
        failed += not ok
        print("\n".join(lines))
print(f"{len(jobs)} schedules through nvcc, {failed} failed")
sys.exit(1 if failed else 0)
