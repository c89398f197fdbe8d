"""Sums Nsight Compute's per-SASS-instruction samples by .tile source line.

A cubin built with `kiln compile --lineinfo` (through PTX or CUDA) carries
the line of the .tile op each instruction came from; `nvdisasm -gi` prints
it (for an inlined CUDA helper's instruction, the line it was inlined at:
the op's). This joins ncu's
source page (one row per SASS instruction, by runtime address: the
kernel's first instruction is offset 0) with that map, and prints the
lines taking the most stall samples and issued instructions (with
--shared, the most shared-memory wavefronts and how many of them bank
conflicts added), with their source text.

usage: python3 bench/ncu_lines.py SOURCE.csv DISASM.txt [--kernel NAME] [--top N] [--shared]
  SOURCE.csv: ncu -i R --page source --print-source sass --csv (one kernel)
  DISASM.txt: nvdisasm -gi -c KERNEL.cubin (with --kernel NAME where the
              cubin holds several kernels)
"""
import argparse
import re
from collections import defaultdict
from pathlib import Path

from ncu_memory import number
from ncu_opcodes import read_source_table

LINE = re.compile(r'File "([^"]+)", line (\d+)')
INSTR = re.compile(r"/\*([0-9a-f]{4,})\*/\s+(\S.*?)\s*;")
FUNC = re.compile(r"^\s*\.text\.(\S+):")


def line_map(disasm, kernel=None):
    """Offset -> (file, line) for every instruction of `kernel` (the only
    one, or the one named) in nvdisasm -g output."""
    where, current, inside = {}, None, kernel is None
    for text in disasm.splitlines():
        f = FUNC.match(text)
        if f:
            inside = kernel is None or f.group(1) == kernel
            current = None
            continue
        if not inside:
            continue
        m = LINE.findall(text)
        if m:  # "File A, line x inlined at B, line y": the op's is the last
            current = (m[-1][0], int(m[-1][1]))
            continue
        i = INSTR.search(text)
        if i and current:
            where[int(i.group(1), 16)] = current
    return where


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("source_csv")
    ap.add_argument("disasm")
    ap.add_argument("--kernel", help="the kernel's name, when DISASM holds several")
    ap.add_argument("--top", type=int, default=25)
    ap.add_argument("--shared", action="store_true",
                    help="rank lines by shared-memory wavefronts (the source page's memory columns)")
    args = ap.parse_args()
    table = read_source_table(args.source_csv)
    if table is None:
        return
    names, rows = table
    samples = next(c for c in names if c.startswith("Warp Stall Sampling (All"))
    issued = "Instructions Executed"
    where = line_map(Path(args.disasm).read_text(), args.kernel)
    addrs = [int(r["Address"], 16) for r in rows if r.get("Address", "").startswith("0x")]
    base = min(addrs)
    if args.shared:
        samples, issued = "L1 Wavefronts Shared", "L1 Wavefronts Shared Excessive"
        if samples not in names:
            print("no shared-memory columns: profile with --section SourceCounters")
            return
    by_line = defaultdict(lambda: [0.0, 0.0, 0])
    for r in rows:
        if not r.get("Address", "").startswith("0x"):
            continue
        key = where.get(int(r["Address"], 16) - base, ("?", 0))
        acc = by_line[key]
        acc[0] += number(r.get(samples))
        acc[1] += number(r.get(issued))
        acc[2] += 1
    total_s = sum(v[0] for v in by_line.values())
    total_i = sum(v[1] for v in by_line.values())
    sources = {}
    if args.shared:
        print(f"{len(where)} instructions mapped to lines; shared wavefronts {total_s:.0f}, "
              f"of them added by bank conflicts {total_i:.0f}")
        print("  shared conflicts  instrs  line   (conflicts: of the line's wavefronts)")
    else:
        print(f"{len(where)} instructions mapped to lines; samples {total_s:.0f}, "
              f"warp-instructions issued {total_i:.0f}")
        print(" samples  issued  instrs  line")
    for (path, line), (s, i, n) in sorted(by_line.items(), key=lambda kv: -kv[1][0])[:args.top]:
        if path not in sources:
            p = Path(path)
            sources[path] = p.read_text().splitlines() if p.is_file() else []
        text = sources[path][line - 1].strip() if 0 < line <= len(sources[path]) else ""
        second = 100 * i / max(s, 1) if args.shared else 100 * i / max(total_i, 1)
        print(f"{100 * s / max(total_s, 1):6.1f}% {second:6.1f}% {n:6d}  "
              f"{Path(path).name}:{line}  {text[:80]}")


if __name__ == "__main__":
    main()
