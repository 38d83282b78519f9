cd /src/tests/recovery
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc -O1 -Wall -o /tmp/ip ulfm_iprobe.c || exit 1
for mode in 1; do for poll in 1000 100; do
  echo "--- 4 ranks on one node, one killed, poll every $poll us, mode $mode (0 Iprobe, 1 posted Irecv + Test)"
  timeout 30 mpirun --with-ft ulfm --oversubscribe --mca btl_tcp_if_include lo -np 4 /tmp/ip $poll $mode 2>&1 | grep -a "^\["
done; done
