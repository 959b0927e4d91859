#!/bin/sh
# The USDT probes (issue 12): every probe that docs/tracing.md lists is in
# the ELF notes (.note.stapsdt, provider "edgert") of libedgert.so and of the
# edgert CLI (linked with libedgert.a), at every site with the documented
# number of arguments, and every probe in the notes is documented.
: "${ERT_BUILD:=build}"
p=0 f=0
pass() { p=$((p + 1)); echo "ok   $1"; }
fail() { f=$((f + 1)); echo "FAIL $1"; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# "| `name` | N | ..." rows of the probe table: name and argument count
sed -n 's/^| `\([a-z_0-9]*\)` | \([0-9]*\) |.*/\1 \2/p' docs/tracing.md | sort -u >"$tmp/doc"
if [ ! -s "$tmp/doc" ]; then
	fail "docs/tracing.md lists probes"
	echo "probes: $p passed, $f failed"
	exit 1
fi
if ! command -v readelf >/dev/null 2>&1; then
	fail "readelf installed (binutils)"
	echo "probes: $p passed, $f failed"
	exit 1
fi
for bin in "$ERT_BUILD/libedgert.so" "$ERT_BUILD/edgert"; do
	if [ ! -f "$bin" ]; then
		fail "$bin built"
		continue
	fi
	# one "name argc" line per probe site of provider edgert
	readelf -n "$bin" | awk '
		/^ *Provider: / { prov = $2 }
		/^ *Name: / { name = $2 }
		/^ *Arguments:/ { if (prov == "edgert") print name, NF - 1; prov = "" }' |
		sort -u >"$tmp/got"
	if [ ! -s "$tmp/got" ]; then
		fail "$bin has USDT probes (built without <sys/sdt.h>? install systemtap-sdt-dev)"
		continue
	fi
	while read -r name argc; do
		sites=$(awk -v n="$name" '$1 == n' "$tmp/got")
		if [ -z "$sites" ]; then
			fail "$bin: probe $name missing"
		elif [ "$sites" != "$name $argc" ]; then
			fail "$bin: probe $name has $(echo "$sites" | awk '{print $2}' | tr '\n' ' ')arguments, documented $argc"
		else
			pass "$bin: probe $name, $argc arguments"
		fi
	done <"$tmp/doc"
	cut -d' ' -f1 "$tmp/got" | sort -u >"$tmp/got-names"
	cut -d' ' -f1 "$tmp/doc" >"$tmp/doc-names"
	extra=$(comm -23 "$tmp/got-names" "$tmp/doc-names" | tr '\n' ' ')
	if [ -z "$extra" ]; then
		pass "$bin: every probe is documented"
	else
		fail "$bin: probes not in docs/tracing.md: $extra"
	fi
done
echo "probes: $p passed, $f failed"
[ "$f" -eq 0 ]
