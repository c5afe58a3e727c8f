#!/usr/bin/python3
"""plot_runs.py RUN_DIR... -o out.png [--tags REGEX] [--cols N] [--title TEXT]

Renders the scalars of TensorBoard runs (tide.utils.tensorboard's or PyTorch's event files) to
one PNG with matplotlib: a panel per tag, a line per run. A run is a directory with
events.out.tfevents.* files; its sub-directories (add_scalars' runs) are runs of their own,
named RUN_DIR/sub.

Needs only Debian's python3 and python3-matplotlib: the event files are read here with a small
reader (TFRecord framing with its CRC32C checks, the few protobuf fields of Event and Summary
that scalars use) instead of tensorboard's EventAccumulator. A record cut short by a crash ends
its file's reading with a note; the records before it are plotted."""
import argparse
import os
import re
import struct
import sys

# ---- CRC32C, as TFRecord masks it --------------------------------------------------------------
_TABLE = []
for _i in range(256):
    _c = _i
    for _ in range(8):
        _c = (_c >> 1) ^ 0x82F63B78 if _c & 1 else _c >> 1
    _TABLE.append(_c)


def crc32c(data):
    c = 0xFFFFFFFF
    for b in data:
        c = _TABLE[(c ^ b) & 0xFF] ^ (c >> 8)
    return c ^ 0xFFFFFFFF


def masked(data):
    c = crc32c(data)
    return (((c >> 15) | (c << 17)) + 0xA282EAD8) & 0xFFFFFFFF


def records(path):
    """The TFRecord payloads of a file, stopping (with a note) at a record that fails its CRC."""
    data = open(path, "rb").read()
    pos = 0
    while pos < len(data):
        head = data[pos:pos + 12]
        if len(head) < 12 or struct.unpack("<I", head[8:])[0] != masked(head[:8]):
            print("plot_runs: %s: record at byte %d cut short or damaged; stopping there" %
                  (path, pos), file=sys.stderr)
            return
        n = struct.unpack("<Q", head[:8])[0]
        body = data[pos + 12:pos + 12 + n]
        crc = data[pos + 12 + n:pos + 16 + n]
        if len(body) < n or len(crc) < 4 or struct.unpack("<I", crc)[0] != masked(body):
            print("plot_runs: %s: record at byte %d cut short or damaged; stopping there" %
                  (path, pos), file=sys.stderr)
            return
        yield body
        pos += 16 + n


# ---- protobuf: just enough of Event { wall_time 1, step 2, summary 5 } and Summary.Value
# { tag 1, simple_value 2 } -----------------------------------------------------------------------
def varint(b, pos):
    v = shift = 0
    while True:
        c = b[pos]
        pos += 1
        v |= (c & 0x7F) << shift
        if not c & 0x80:
            return v, pos
        shift += 7


def fields(b):
    pos = 0
    while pos < len(b):
        key, pos = varint(b, pos)
        num, wire = key >> 3, key & 7
        if wire == 0:
            v, pos = varint(b, pos)
        elif wire == 1:
            v, pos = b[pos:pos + 8], pos + 8
        elif wire == 5:
            v, pos = b[pos:pos + 4], pos + 4
        elif wire == 2:
            n, pos = varint(b, pos)
            v, pos = b[pos:pos + n], pos + n
        else:
            raise ValueError("unsupported wire type %d" % wire)
        yield num, wire, v


def scalars(path):
    """(tag, step, value) of every simple_value in an event file."""
    for ev in records(path):
        step, summary = 0, None
        for num, _wire, v in fields(ev):
            if num == 2:
                step = v - (1 << 64) if v >= 1 << 63 else v
            elif num == 5:
                summary = v
        if summary is None:
            continue
        for num, _wire, value in fields(summary):
            if num != 1:
                continue
            tag, simple = None, None
            for vn, vw, vv in fields(value):
                if vn == 1:
                    tag = vv.decode("utf-8", "replace")
                elif vn == 2 and vw == 5:
                    simple = struct.unpack("<f", vv)[0]
            if tag is not None and simple is not None:
                yield tag, step, simple


def runs_of(root):
    """{run name: {tag: [(step, value)]}} for root and each directory below it."""
    out = {}
    for d, _dirs, names in sorted(os.walk(root)):
        files = sorted(n for n in names if n.startswith("events.out.tfevents."))
        if not files:
            continue
        rel = os.path.relpath(d, root)
        name = os.path.basename(os.path.normpath(root)) + ("" if rel == "." else "/" + rel)
        series = out.setdefault(name, {})
        for f in files:
            for tag, step, v in scalars(os.path.join(d, f)):
                series.setdefault(tag, []).append((step, v))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1],
                                 usage=__doc__.split("\n\n")[0])
    ap.add_argument("runs", nargs="+", metavar="RUN_DIR")
    ap.add_argument("-o", "--output", required=True, help="the PNG to write")
    ap.add_argument("--tags", default=None, help="plot only tags matching this regex")
    ap.add_argument("--cols", type=int, default=3, help="panels per row (3)")
    ap.add_argument("--title", default=None)
    a = ap.parse_args()

    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    runs = {}
    for r in a.runs:
        if not os.path.isdir(r):
            ap.error("%s is not a directory" % r)
        runs.update(runs_of(r))
    tags = []
    for series in runs.values():
        for t in series:
            if t not in tags and (a.tags is None or re.search(a.tags, t)):
                tags.append(t)
    if not tags:
        print("plot_runs: no scalars found in %s" % " ".join(a.runs), file=sys.stderr)
        return 1
    cols = min(a.cols, len(tags))
    rows = (len(tags) + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.6 * cols, 2.6 * rows), squeeze=False)
    for i, tag in enumerate(tags):
        ax = axes[i // cols][i % cols]
        for name, series in runs.items():
            pts = sorted(series.get(tag, []))
            if pts:
                xs, ys = zip(*pts)
                ax.plot(xs, ys, marker="o" if len(pts) < 12 else None, markersize=3,
                        linewidth=1.2, label=name)
        ax.set_title(tag, fontsize=9)
        ax.set_xlabel("step", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.grid(alpha=0.3)
        if len(runs) > 1:
            ax.legend(fontsize=6)
    for j in range(len(tags), rows * cols):
        axes[j // cols][j % cols].axis("off")
    if a.title:
        fig.suptitle(a.title, fontsize=10)
    fig.tight_layout()
    fig.savefig(a.output, dpi=80)
    print("plot_runs: wrote %s (%d tags, %d runs)" % (a.output, len(tags), len(runs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
