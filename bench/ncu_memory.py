"""Where a kernel's shared- and global-memory traffic comes from, per SASS
instruction, from Nsight Compute's source counters: wavefronts (and the
excess over the ideal, bank conflicts for shared memory) summed by opcode
with its width, then the instructions with the most excess.

usage: python3 bench/ncu_memory.py SOURCE.csv   (ncu -i R --page source
--print-source sass --csv, the report taken with --section SourceCounters)
"""
import sys
from collections import defaultdict

from ncu_opcodes import read_source_table


def number(text):
    try:
        return float(str(text).replace(",", "") or 0)
    except ValueError:
        return 0.0


def main():
    table = read_source_table(sys.argv[1])
    if table is None:
        return
    names, rows = table
    wanted = [c for c in names if "Wavefronts" in c or "Sectors" in c or
              c.startswith("Instructions Executed")]
    print("memory columns:", ", ".join(wanted))

    def opcode(r):
        parts = r.get("Source", "").strip().split()
        if parts and parts[0].startswith("@"):
            parts = parts[1:]
        return parts[0] if parts else "?"

    sums = defaultdict(lambda: defaultdict(float))
    for r in rows:
        op = opcode(r)
        if not op.startswith(("LDS", "STS", "LDG", "STG", "LDSM", "STSM")):
            continue
        for c in wanted:
            sums[op][c] += number(r.get(c))
    cols = [c for c in wanted if any(sums[o][c] for o in sums)]
    print("by opcode:")
    for op in sorted(sums, key=lambda o: -max(sums[o][c] for c in cols) if cols else 0):
        print(f"  {op:24s} " + "  ".join(f"{c}={sums[op][c]:.0f}" for c in cols))
    excess = next((c for c in names if c == "L1 Wavefronts Shared Excessive"), None)
    if excess:
        top = sorted(rows, key=lambda r: number(r.get(excess)), reverse=True)[:15]
        print("most excess shared wavefronts:")
        for r in top:
            if number(r.get(excess)) == 0:
                break
            print(f"  {number(r.get(excess)):10.0f}  {r.get('Address', '')}  "
                  f"{r.get('Source', '').strip()[:80]}")


if __name__ == "__main__":
    main()
