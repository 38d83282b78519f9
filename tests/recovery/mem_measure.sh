#!/bin/bash
# mem_measure.sh BUILD_DIR - what in-memory checkpoint copies (recovery in place) cost: ckpt_job at
# p = 4 on this machine with 16 and 256 MiB persisted per process, with and without a spare (the
# spare turns the in-memory copies on), under mpirun: the peak of the machine's shared memory
# (the copies live in memfd files) above its level before, and the median checkpoint time. Needs
# Open MPI with ULFM; run in the Debian 13 root: tests/distros/debian13.sh bash /src/tests/recovery/mem_measure.sh /build-openmpi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
job=${1:-/build-openmpi}/tests/launcher/progs/ckpt_job
shmem() { awk '/^Shmem:/ {print $2}' /proc/meminfo; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "nan"; else print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
for mib in 16 256; do
 for mode in off on; do
  rm -rf /var/tmp/ckm; mkdir -p /var/tmp/ckm
  base=$(shmem); peak=$base
  if [ $mode = on ]; then extra="--with-ft ulfm -np 5 -x BSPG_SPARES=1"; else extra="-np 4"; fi
  ( mpirun --oversubscribe --mca btl_tcp_if_include lo $extra -x BSPG_CHECKPOINT_DIR=/var/tmp/ckm $job 60 10 --ms 20 --mib $mib > /tmp/mem.out 2>&1 ) &
  r=$!
  while kill -0 $r 2>/dev/null; do s=$(shmem); [ $s -gt $peak ] && peak=$s; sleep 0.1; done
  t=$(sed -n 's/^checkpoint \([2-9]\) at step .* took \([0-9.]*\) s$/\2/p' /tmp/mem.out | median)
  echo "MiB=$mib memory-copies=$mode: shmem peak +$(( (peak - base) / 1024 )) MiB (4 processes), checkpoint median $t s; $(grep -c '^checkpoint' /tmp/mem.out) checkpoints; $(grep RESULT /tmp/mem.out)"
 done
done
