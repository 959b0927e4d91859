#!/bin/sh
# Install the Debian packages edgert needs. Idempotent and quiet when all are
# present. Package lists live in scripts/deps.d/*.list (one package per line,
# '#' starts a comment), so each part of the tree owns its own list.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
lists=${ERT_DEPS_LISTS:-$(ls "$here"/deps.d/*.list)}

missing=""
for pkg in $(cat $lists | sed 's/#.*//'); do
	status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
	case "$status" in
	"install ok installed") ;;
	*) missing="$missing $pkg" ;;
	esac
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null 2>&1; then
		SUDO=sudo
	else
		echo "install-deps: need root (or sudo) to install:$missing" >&2
		exit 1
	fi
else
	SUDO=
fi

echo "install-deps: installing:$missing"
# INITRD=No: the kernel package's hooks build no initramfs (the test VM boots
# its own); env passes both variables through sudo.
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086
$SUDO env DEBIAN_FRONTEND=noninteractive INITRD=No \
	apt-get install -y -qq --no-install-recommends $missing >/dev/null
