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

# One host thread for both vCPUs (thread=single): with multi-threaded TCG the
# guest once took an int3 Oops in __schedule while perf_event_open patched a
# static key (text_poke_bp), the other vCPU running the patched code (the
# twelfth session of 2026-11-27, once in some twenty runs of the suite; the
# rerun passed). Interleaved on one thread, a vCPU never runs translated code
# while another rewrites it. The VM's part of 60-kernel-vm takes about 90 s
# instead of 72 on the 2-CPU machines.
timeout -k 10 "$limit" qemu-system-x86_64 \
	-accel tcg,thread=single -cpu max -smp 2 -m 1G \
	-kernel "$kernel" -initrd "$initrd" \
	-append "console=ttyS0 panic=-1 oops=panic loglevel=5" \
	-display none -monitor none -serial "file:$log" \
	-no-reboot -nodefaults \
	</dev/null || true
