export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_mpi_yield_when_idle=1
cmake --build /build-openmpi -j2 --target bspg 2>&1 | grep -E "error|warning"
for i in 1 2 3 4 5 6 7 8; do
rm -rf /tmp/ck2; mkdir -p /tmp/ck2
( timeout 60 mpirun --oversubscribe --mca btl_tcp_if_include lo --with-ft ulfm -np 6 -x BSPG_TRACE_RECOVERY=1 -x BSPG_SPARES=2 -x BSPG_CHECKPOINT_DIR=/tmp/ck2 /build-openmpi/tests/bsplib/progs/ckpt_counter 300 10 slow 10 > /tmp/two.out 2>&1; echo "exit $?" >> /tmp/two.out) &
sleep 1.2
for p in $(pgrep -f "ckpt_counter 300"); do r=$(tr '\0' '\n' </proc/$p/environ | sed -n 's/^OMPI_COMM_WORLD_RANK=//p'); case $r in 2) kill -9 $p;; esac; done
sleep 1.2
for p in $(pgrep -f "ckpt_counter 300"); do r=$(tr '\0' '\n' </proc/$p/environ | sed -n 's/^OMPI_COMM_WORLD_RANK=//p'); case $r in 1) kill -9 $p;; esac; done
wait
tr -d '\0' < /tmp/two.out | grep -E "bspg|RESULT|exit|FAIL"
echo ----
done
