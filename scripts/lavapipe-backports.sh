#!/bin/sh
# lavapipe-backports.sh DIR: Mesa's lavapipe from bookworm-backports
# (mesa-vulkan-drivers 25.x, which has VK_EXT_external_memory_dma_buf, unlike
# Debian 12's 22.3) unpacked into DIR without installing anything, and an
# ICD file for it; prints the variable that points the Vulkan loader at it.
# tests/suites/38-vulkan.sh runs build/test-vk-import again with it when
# ERT_LVP_BACKPORTS=DIR (docs/vulkan.md, "Zero copy with the NPU"): the
# dma-buf import itself, which Debian 12's lavapipe cannot do. Needs the
# network once; apt's lists and cache stay under DIR.
set -eu
dir=${1:?usage: lavapipe-backports.sh DIR}
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/root"
dir=$(cd "$dir" && pwd)
echo "deb http://deb.debian.org/debian bookworm-backports main" >"$dir/apt/sources.list"
set -- -o "Dir::Etc::sourcelist=$dir/apt/sources.list" -o Dir::Etc::sourceparts=/nonexistent \
	-o "Dir::State::Lists=$dir/apt/lists" -o "Dir::Cache=$dir/apt/cache" -o Debug::NoLocking=1
apt-get "$@" -qq update
rm -f "$dir"/mesa-vulkan-drivers_*.deb
(cd "$dir" && apt-get "$@" -qq download mesa-vulkan-drivers/bookworm-backports)
dpkg -x "$dir"/mesa-vulkan-drivers_*.deb "$dir/root"
lib=$(find "$dir/root" -name libvulkan_lvp.so | head -n 1)
[ -n "$lib" ] || { echo "no libvulkan_lvp.so in the package" >&2; exit 1; }
printf '{ "file_format_version": "1.0.0", "ICD": { "library_path": "%s", "api_version": "1.3.0" } }\n' \
	"$lib" >"$dir/lvp_icd.json"
echo "VK_ICD_FILENAMES=$dir/lvp_icd.json"
