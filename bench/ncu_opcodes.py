"""Sums Nsight Compute's per-SASS-instruction stall samples by opcode.

usage: python3 bench/ncu_opcodes.py SOURCE.csv   (ncu -i R --page source
--print-source sass --csv)
"""
import csv
import sys
from collections import Counter


def read_source_table(path):
    """The column names and rows (dicts) of ncu's source page CSV; None,
    after saying so, when the file holds no table."""
    with open(path) as f:
        lines = list(csv.reader(f))
    # ncu may print lines before the table: the header is the row naming Source.
    head = next((i for i, r in enumerate(lines) if "Source" in r), None)
    if head is None:
        print("no source table; first lines:", lines[:3])
        return None
    names = lines[head]
    return names, [dict(zip(names, r)) for r in lines[head + 1:]]


def main():
    table = read_source_table(sys.argv[1])
    if table is None:
        return
    names, rows = table
    sample_col = next((c for c in names if c.startswith("Warp Stall Sampling (All")), None)
    if sample_col is None:
        print("no sampling column; columns:", names[:20])
        return
    by_op = Counter()
    for r in rows:
        op = r.get("Source", "").strip().split(" ")[0].split(".")[0]
        if op.startswith("@"):
            op = r["Source"].strip().split(" ")[1].split(".")[0]
        try:
            by_op[op] += float(r[sample_col] or 0)
        except ValueError:
            pass
    total = sum(by_op.values()) or 1
    print("stall samples by opcode: " + ", ".join(
        f"{op} {100 * n / total:.1f}%" for op, n in by_op.most_common(12)))
    def samples(r):
        try:
            return float(r[sample_col] or 0)
        except ValueError:
            return 0.0
    top = sorted(rows, key=samples, reverse=True)[:12]
    print("hottest instructions:")
    for r in top:
        print(f"  {100 * samples(r) / total:5.1f}%  {r.get('Address', '')}  {r.get('Source', '').strip()[:90]}")


if __name__ == "__main__":
    main()
