#!/bin/sh
# Prepare what scripts/gpu-bench.sh needs on the NVIDIA machine, in .devrun/
# at the repository root (ignored by git through .git/info/exclude; the
# device runner carries it with carry=[".devrun"]):
#   .devrun/bin/edgert     this tree's CLI, built here, debug info stripped
#   .devrun/lib/           the shared libraries it links that are not glibc's
#                          (libOpenCL.so.1, the ICD loader; libprotobuf-c,
#                          libdrm, libz): the device machine lacks some of them
#   .devrun/MANIFEST       what was packed, from which commit, with sizes
# Models are not carried (resnet50 alone is 100 MB): gpu-bench.sh builds
# them there with `edgert zoo`.
#
# USAGE: sh scripts/gpu-bench-pack.sh [BUILD_DIR]   (default: build)
# Then, on the device (run tool, carry [".devrun"]):
#   sh scripts/gpu-bench.sh
set -eu

die() { echo "gpu-bench-pack: $*" >&2; exit 1; }

root=$(git rev-parse --show-toplevel 2>/dev/null) || die "not inside the edgert git tree"
cd "$root"
build=${1:-build}
carry=.devrun
limit=$((60 * 1024 * 1024))     # the runner carries 64 MiB at most

command -v ldd >/dev/null || die "ldd is missing (libc-bin)"
echo "gpu-bench-pack: building $build/edgert"
make -s --no-print-directory -j2 BUILD="$build" "$build/edgert" || die "make $build/edgert failed"
[ -x "$build/edgert" ] || die "$build/edgert was not built"

# .devrun/ must stay out of commits: the main checkout's info/exclude covers worktrees too
exclude="$(git rev-parse --git-common-dir)/info/exclude"
if ! grep -qx '\.devrun/\|/\.devrun/\|\.devrun' "$exclude" 2>/dev/null; then
	mkdir -p "$(dirname "$exclude")"
	echo '.devrun/' >>"$exclude" || die "cannot add .devrun/ to $exclude"
	echo "gpu-bench-pack: added .devrun/ to $exclude"
fi
git check-ignore -q "$carry/x" || die "$carry/ is not ignored by git; add '.devrun/' to $exclude"

rm -rf "$carry"
mkdir -p "$carry/bin" "$carry/lib"
if command -v strip >/dev/null; then
	strip --strip-debug -o "$carry/bin/edgert" "$build/edgert" || die "strip failed"
else
	cp "$build/edgert" "$carry/bin/edgert"
fi
chmod 755 "$carry/bin/edgert"

# every library ldd resolves, but glibc's own (the device has its own glibc)
missing=$(ldd "$build/edgert" | awk '/not found/ { print $1 }')
[ -z "$missing" ] || die "libraries edgert needs are missing here: $missing"
ldd "$build/edgert" | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' |
while read -r name path; do
	case "$name" in
	libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*|libgcc_s.so*)
		continue ;;
	esac
	# the soname the binary asks for, as a real file (not a link to one)
	cp -L "$path" "$carry/lib/$name" || die "cannot copy $path"
done
[ -f "$carry/lib/libOpenCL.so.1" ] || die "edgert does not link libOpenCL.so.1 (built without the OpenCL backend?)"

size=$(du -sb "$carry" | cut -f1)
[ "$size" -le "$limit" ] || die "$carry is $size bytes, over the $limit the runner carries"
{
	echo "commit $(git rev-parse HEAD)$(git diff --quiet HEAD -- . ':!.devrun' || echo ' (with uncommitted changes)')"
	echo "packed $(date -u +%Y-%m-%dT%H:%M:%SZ) from $build/edgert"
	(cd "$carry" && find bin lib -type f -exec ls -l {} + | awk '{ print $5, $NF }')
	echo "total $size bytes"
} >"$carry/MANIFEST"
cat "$carry/MANIFEST"
echo "gpu-bench-pack: ready; on the device run: sh scripts/gpu-bench.sh  (carry: .devrun)"
