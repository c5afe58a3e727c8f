#!/bin/sh
# layering_check.sh OBJDIR [LUAOBJDIR] — two call orders, read from the objects (nm: the symbols
# a file leaves undefined against those the others define):
#   - the core files that hold tensors stack without a circle:
#       shape.c  <-  storage.c  <-  tensor.c  <-  transfer.c
#     each object may call into the files left of it, never into one right of it;
#   - the binding's files, lua/*.c (objects in LUAOBJDIR, default OBJDIR/../lua), call one way
#     only: no circle among them (lua/binding.h names the layers).
set -u
dir=${1:-build/obj/src}
ldir=${2:-$(dirname "$dir")/lua}
order="shape storage tensor transfer"
status=0
i=0
for a in $order; do
    i=$((i + 1))
    j=0
    for b in $order; do
        j=$((j + 1))
        [ "$j" -gt "$i" ] || continue
        calls=$(nm -u "$dir/$a.o" | awk '{print $2}' | sort |
            comm -12 - "$(nm --defined-only -g "$dir/$b.o" | awk '{print $3}' | sort >"$dir/.defs.$$"; echo "$dir/.defs.$$")")
        rm -f "$dir/.defs.$$"
        if [ -n "$calls" ]; then
            echo "layering: src/$a.c calls src/$b.c ($(echo $calls)); the order is $order" >&2
            status=1
        fi
    done
done
[ $status -eq 0 ] && echo "layering: shape <- storage <- tensor <- transfer"

# lua/*.c: an edge "a b" for each file a that calls a function (or reads a global) of file b;
# tsort refuses a graph with a circle and names the files on it
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
: >"$tmp/edges"
: >"$tmp/uses"
for c in lua/*.c; do
    n=$(basename "$c" .c)
    if [ ! -f "$ldir/$n.o" ]; then
        echo "layering: $ldir/$n.o not built" >&2
        exit 1
    fi
    nm --defined-only -g "$ldir/$n.o" | awk '{print $3}' | sort -u >"$tmp/$n.def"
    nm -u "$ldir/$n.o" | awk '{print $2}' | sort -u >"$tmp/$n.und"
done
for a in "$tmp"/*.und; do
    an=$(basename "$a" .und)
    for b in "$tmp"/*.def; do
        bn=$(basename "$b" .def)
        [ "$an" != "$bn" ] || continue
        syms=$(comm -12 "$a" "$b")
        [ -n "$syms" ] || continue
        echo "$an $bn" >>"$tmp/edges"
        echo "lua/$an.c -> lua/$bn.c: $(echo $syms)" >>"$tmp/uses"
    done
done
if tsort "$tmp/edges" >/dev/null 2>"$tmp/loop"; then
    echo "layering: lua/*.c call one way only ($(wc -l <"$tmp/edges") uses, no circle)"
else
    # the first circle tsort names, and the calls between its files
    loop=$(awk '/input contains a loop/ { n++; next } n == 1 { print $2 }' "$tmp/loop" | sort -u)
    echo "layering: a circle among lua/*.c: $(echo $loop); a function two files use belongs" \
        "in a file below both (lua/binding.h names the layers):" >&2
    for f in $loop; do
        for g in $loop; do
            grep "^lua/$f\.c -> lua/$g\.c:" "$tmp/uses" >&2
        done
    done
    status=1
fi
exit $status
