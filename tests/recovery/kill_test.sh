#!/bin/bash
# inside the D13 root: run ckpt_counter with a spare, kill rank $1 after $2 s
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
B=/build-openmpi
P=${B}/tests/bsplib/progs/ckpt_counter
ls -la $P >/dev/null || exit 1
cd /tmp
rm -rf /tmp/ck; mkdir -p /tmp/ck
ref=$(mpirun --oversubscribe -np 4 -x BSPG_CHECKPOINT_DIR=/tmp/ck $P 300 10 slow 10 2>&1 | grep RESULT)
echo "reference: $ref"
rm -rf /tmp/ck; mkdir -p /tmp/ck
( timeout 60 mpirun --with-ft ulfm --oversubscribe -np 5 -x BSPG_SPARES=1 -x BSPG_CHECKPOINT_DIR=/tmp/ck $P 300 10 slow 10 > /tmp/out.txt 2>&1; echo "exit $?" >> /tmp/out.txt ) &
sleep $2
for p in $(pgrep -f "ckpt_counter 300"); do
  r=$(tr '\0' '\n' < /proc/$p/environ | grep '^OMPI_COMM_WORLD_RANK=' | cut -d= -f2)
  if [ "$r" = "$1" ]; then echo "killing rank $r pid $p"; kill -9 $p; fi
done
wait
cat /tmp/out.txt | tail -15
