#!/bin/sh
# /init of the enpu test VM (busybox). Output goes to the serial console,
# where the host-side runner judges it.
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null

for m in $(cat /mods/order); do
	insmod /mods/$m.ko || echo "ENPU-VM: insmod $m failed"
done
if insmod /mods/enpu.ko $(cat /mods/enpu.params); then
	echo "ENPU-VM: insmod enpu ok"
else
	echo "ENPU-VM: insmod enpu failed"
fi
ls -l /dev/accel/

# Trace the jobs so the tracepoints are exercised. Recording command names
# is turned off first: with it on, enabling any event also switches on the
# sched_switch tracepoint, and patching that static key in __schedule while
# the other vCPU runs through it can Oops on int3 under multi-threaded TCG.
# The enpu sites are patched only while no job runs.
tr=/sys/kernel/tracing
if [ -d $tr/events/enpu ]; then
	echo 0 >$tr/options/record-cmd
	echo 1 >$tr/events/enpu/enable
fi

# settings for the programs (scripts/vm/soak.sh: seeds and durations)
[ -r /tests/env ] && . /tests/env

for t in /tests/*_test; do
	[ -x "$t" ] || continue
	echo "ENPU-VM: running $(basename $t)"
	"$t"
	echo "ENPU-VM: $(basename $t) exit=$?"
done
if [ -x /tests/models.sh ]; then
	echo "ENPU-VM: models begin"
	/tests/models.sh
	echo "ENPU-VM: models end exit=$?"
fi
if [ -x /tests/enpu_bench ]; then
	echo "ENPU-VM: bench begin"
	/tests/enpu_bench
	echo "ENPU-VM: bench end exit=$?"
fi
if [ -d $tr/events/enpu ]; then
	echo 0 >$tr/events/enpu/enable
	echo "ENPU-VM: trace events: $(grep -c enpu_job_done $tr/trace) enpu_job_done"
fi

for f in /sys/kernel/debug/accel/*/stats; do
	[ -r "$f" ] && sed 's/^/ENPU-VM-STATS: /' "$f"
done
sync
if rmmod enpu; then
	sleep 1
	echo "ENPU-VM: rmmod enpu ok"
	[ -x /tests/models.sh ] && /tests/models.sh gone
else
	echo "ENPU-VM: rmmod enpu failed"
fi
dmesg | grep -E 'WARNING|BUG|Oops|Call Trace|leak|enpu' | sed 's/^/ENPU-VM-DMESG: /'
echo "ENPU-VM-END"
poweroff -f
