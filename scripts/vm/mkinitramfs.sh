#!/bin/sh
# Pack a busybox initramfs that loads enpu.ko (and the in-tree modules it
# depends on, from the Debian kernel's /lib/modules/<kver>), runs the enpu
# selftests and benchmark, unloads the module and powers off.
#
#   mkinitramfs.sh <kver> <enpu.ko> <selftest-dir> <out.cpio.gz> [insmod params]
set -eu

kver=$1 ko=$2 tests=$3 out=$4 params=${5:-}
moddir=/lib/modules/$kver
here=$(cd "$(dirname "$0")" && pwd)
busybox=$(command -v busybox)
file "$busybox" 2>/dev/null | grep -q 'statically linked' || [ -x /bin/busybox ] || {
	echo "mkinitramfs: need busybox-static" >&2; exit 1; }

root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root/bin" "$root/dev" "$root/proc" "$root/sys" "$root/tmp" "$root/mods" "$root/tests"
cp "$busybox" "$root/bin/busybox"
ln -s busybox "$root/bin/sh"

# In-tree dependencies, deepest first, found through modinfo.
order=""
visit() {
	local name deps d
	name=$1
	case " $order " in *" $name "*) return ;; esac
	deps=$(modinfo -k "$kver" -F depends "$name" 2>/dev/null | tr ',' ' ')
	for d in $deps; do visit "$d"; done
	order="$order $name"
}
for d in $(modinfo -F depends "$ko" | tr ',' ' '); do visit "$d"; done
: >"$root/mods/order"
for name in $order; do
	path=$(modinfo -k "$kver" -n "$name")
	case "$path" in
	*.ko.xz) xz -dc "$path" >"$root/mods/$name.ko" ;;
	*.ko.zst) zstd -qdc "$path" >"$root/mods/$name.ko" ;;
	*.ko) cp "$path" "$root/mods/$name.ko" ;;
	*) continue ;;	# built in
	esac
	echo "$name" >>"$root/mods/order"
done
cp "$ko" "$root/mods/enpu.ko"
echo "$params" >"$root/mods/enpu.params"
cp -r "$tests"/* "$root/tests/" 2>/dev/null || true
cp "$here/init.sh" "$root/init"
chmod +x "$root/init"

(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) >"$out"
echo "mkinitramfs: $(echo $order | wc -w) dependencies:$order"
