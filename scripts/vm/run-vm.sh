#!/bin/sh
# Boot the Debian kernel in QEMU (TCG) with an initramfs made by
# mkinitramfs.sh and copy the serial console to a log file.
#
#   run-vm.sh <kver> <initramfs.cpio.gz> <console.log> [timeout-seconds]
#
# QEMU is killed after the timeout (it may exit 0 when killed, so callers
# judge the log, not the exit status).
set -eu

kver=$1 initrd=$2 log=$3 limit=${4:-600}
kernel=/boot/vmlinuz-$kver
[ -r "$kernel" ] || { echo "run-vm: no $kernel" >&2; exit 1; }

timeout -k 10 "$limit" qemu-system-x86_64 \
	-accel tcg -cpu max -smp 2 -m 1G \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=5" \
	-display none -monitor none -serial "file:$log" \
	-no-reboot -nodefaults \
	</dev/null || true
