#include "globals.hpp"

namespace bspg {

void share_globals(MPI_Comm /*comm*/, int /*root*/) {}  // placeholder until implemented

}  // namespace bspg
