#!/bin/sh
# A starter that prints a warning before it starts the processes, and then starts them: the real
# starter ($REAL_STARTER) with the arguments bsprun gave. Stands in for it through BSPG_MPIRUN.
echo "starter warning: nothing serious" >&2
exec "${REAL_STARTER:?}" "$@"
