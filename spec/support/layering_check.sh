#!/bin/sh
# layering_check.sh OBJDIR — the core files that hold tensors stack without a circle:
#   shape.c  <-  storage.c  <-  tensor.c  <-  transfer.c
# each object may call into the files left of it, never into one right of it (nm: the
# symbols a file leaves undefined against those the others define).
set -u
dir=${1:-build/obj/src}
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
exit $status
