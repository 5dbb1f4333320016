#!/bin/bash
# Boot systemd in a container of its own (tests/systemd_box.py runs this under
# `unshare --mount --propagation private`, so no mount made here reaches the machine):
#   - its root is an overlay of / whose writes land in a tmpfs: the machine's files are only read;
#   - systemd-nspawn gives it fresh /tmp, /run and /dev, and a network namespace with loopback only;
#   - /var/tmp is a fresh tmpfs too. systemd at boot cleans /tmp and /var/tmp (systemd-tmpfiles):
#     here it cleans only these.
# Usage: systemd_box.sh BASE [nspawn options…]  (BASE: an empty folder for the tmpfs)
set -eu
base=$1
shift
mount -t tmpfs -o size=1g,mode=0700 routine-box "$base"
mkdir "$base/upper" "$base/work" "$base/root"
mount -t overlay routine-box -o "lowerdir=/,upperdir=$base/upper,workdir=$base/work" "$base/root"
root=$base/root
mount -t tmpfs -o mode=1777 routine-box-var-tmp "$root/var/tmp"
tr -d - < /proc/sys/kernel/random/uuid > "$root/etc/machine-id"
echo routine-box > "$root/etc/hostname"
# Unified cgroups, and bpf() for systemd's IP filter (IPAddressDeny=): nspawn leaves both out by default.
export SYSTEMD_NSPAWN_UNIFIED_HIERARCHY=1
exec systemd-nspawn --quiet --directory="$root" --boot --private-network --register=no --keep-unit \
    --console=read-only --capability=CAP_BPF --system-call-filter=bpf "$@" systemd.unit=basic.target
