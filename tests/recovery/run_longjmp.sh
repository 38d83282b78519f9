cd /src/tests/recovery
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpicc -O1 -Wall -o /tmp/lj ulfm_longjmp.c || exit 1
for spec in "1|2:50" "2|1:30,3:90" "2|1:30,2:30" "1|1:30,2:70" "1|"; do
  spares=${spec%%|*}; kill=${spec#*|}
  echo "--- 4 working + $spares spare(s), KILL=$kill"
  s=$(date +%s%N)
  KILL=$kill timeout 30 mpirun --with-ft ulfm --oversubscribe --mca btl_tcp_if_include lo -x KILL -np $((4 + spares)) /tmp/lj $spares 2>&1 | grep -a -E "recovery|PASS|FAIL|spares|rror"
  echo "rc=${PIPESTATUS[0]} $(( ($(date +%s%N) - s) / 1000000 )) ms"
done
