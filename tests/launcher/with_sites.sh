#!/bin/sh
# with_sites.sh "S0 S1 ..." PROGRAM [ARGS...] - run under mpirun/mpiexec: the process of MPI rank r
# gets BSPG_SUBJOB=Sr (the subjob, as bsprun gives each site) and the two-sided transport (unless
# BSPG_TRANSPORT says otherwise), then becomes PROGRAM. Lets the tests run the transport's by-sites
# reductions on one machine.
sites=$1
shift
rank=${OMPI_COMM_WORLD_RANK:-${PMI_RANK:-${PMIX_RANK:-}}}
[ -n "$rank" ] || { echo "with_sites.sh: no MPI rank in the environment" >&2; exit 2; }
i=0
for site in $sites; do
  if [ "$i" = "$rank" ]; then
    BSPG_SUBJOB=$site BSPG_TRANSPORT=${BSPG_TRANSPORT:-two-sided} exec "$@"
  fi
  i=$((i + 1))
done
echo "with_sites.sh: no site for rank $rank in '$sites'" >&2
exit 2
